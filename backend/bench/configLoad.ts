// The bench's config-read figure: the read a worker makes when it starts a call (GET /api/v1/config), timed
// while calls are placed at a sustained rate, each as a worker would carry it (dial-out through the API,
// then the worker's config read, then the call's events dialing → ringing → in_progress → completed), beside
// the same read with no load, measured in the same run.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { ObjectId, type CommandFailedEvent, type CommandStartedEvent, type CommandSucceededEvent, type Db, type MongoClient } from 'mongodb';
import { COLLECTIONS } from '../dist/core/collections.js';
import type { CallDoc } from '../dist/calls/store.js';

export interface ConfigLoadOptions {
  base: string;
  apiKey: string;
  botId: string;
  workerToken: string;
  ratePerSecond: number;
  seconds: number;
  /** Told when the unloaded run starts ('no load'), the loaded one ('under load'), and the end (null). */
  onPhase?: (phase: string | null) => void;
}

export interface Figures {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Requests not answered 2xx (or not at all). */
  failed: number;
  /** What the failed ones got: status and error code, or the network error. */
  why: Record<string, number>;
}

/** A request of the load not answered within this long is given up (counted as failed), as a worker gives up and
 *  retries later: the load stays the rate, however slow the backend gets. */
const GIVE_UP_MS = 10_000;

/** When each event of a placed call is sent, ms after its config read (a short call: the load is the rate). */
const EVENTS: Array<{ status: string; afterMs: number }> = [
  { status: 'dialing', afterMs: 0 },
  { status: 'ringing', afterMs: 300 },
  { status: 'in_progress', afterMs: 1200 },
  { status: 'completed', afterMs: 4000 },
];

function figures(latencies: number[], failed: number, why: Record<string, number>): Figures {
  const s = [...latencies].sort((a, b) => a - b);
  const q = (p: number) => Math.round((s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] ?? 0) * 10) / 10;
  return { n: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: q(1), failed, why };
}

class Sample {
  readonly ms: number[] = [];
  failed = 0;
  readonly why: Record<string, number> = {};
  private fail(reason: string): void {
    this.failed += 1;
    this.why[reason] = (this.why[reason] ?? 0) + 1;
  }
  /** Times `fn` and the read of its body; a non-2xx answer or a network error counts as failed (null). */
  async time(fn: () => Promise<Response>): Promise<unknown> {
    const t = performance.now();
    try {
      const res = await fn();
      const text = await res.text();
      const elapsed = performance.now() - t;
      const body = JSON.parse(text) as { error?: { code?: string } };
      if (res.ok) {
        this.ms.push(elapsed);
        return body;
      }
      this.fail(`${res.status} ${body.error?.code ?? ''}`.trim());
    } catch (err) {
      this.fail(err instanceof Error ? err.name : 'error');
    }
    return null;
  }
  figures(): Figures {
    return figures(this.ms, this.failed, this.why);
  }
}

/** Runs `tick` every 1/rate s for `seconds` (not waiting for it), then waits for every tick still running. */
async function atRate(ratePerSecond: number, seconds: number, tick: () => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  const interval = 1000 / ratePerSecond;
  const start = performance.now();
  for (let i = 0; i < ratePerSecond * seconds; i++) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await delay(wait);
    const p = tick().finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
}

export async function configUnderLoad(o: ConfigLoadOptions): Promise<{ idle: Figures; loaded: Figures; dialouts: Figures; events: Figures }> {
  const worker = { Authorization: `Bearer ${o.workerToken}` };
  const readConfig = (callId: string) => fetch(`${o.base}/api/v1/config?bot_id=${o.botId}&call_id=${callId}`, { headers: worker, signal: AbortSignal.timeout(GIVE_UP_MS) });

  const placeCall = () =>
    fetch(`${o.base}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': o.apiKey },
      body: JSON.stringify({ bot_id: o.botId, to_number: '+4915112345678', variables: { customer_name: 'Ada' } }),
      signal: AbortSignal.timeout(GIVE_UP_MS),
    });

  // The baseline reads a call placed now, as the loaded reads do: where a call was stored can matter (FerretDB
  // v1 finds a document by _id by reading the collection in insertion order up to it), so an old call's read
  // would flatter the baseline.
  const fresh = (await (await placeCall()).json()) as { call_id: string };
  const idle = new Sample();
  console.log(`   config read with no load: ${o.ratePerSecond}/s for ${o.seconds} s`);
  o.onPhase?.('no load');
  await atRate(o.ratePerSecond, o.seconds, async () => void (await idle.time(() => readConfig(fresh.call_id))));


  const loaded = new Sample();
  const dialouts = new Sample();
  const events = new Sample();
  let n = 0;
  console.log(`   config reads under ${o.ratePerSecond} dial-outs/s for ${o.seconds} s (and the calls' events after)`);
  o.onPhase?.('under load');
  await atRate(o.ratePerSecond, o.seconds, async () => {
    const placed = (await dialouts.time(placeCall)) as { call_id: string } | null;
    if (!placed) return;
    const callId = placed.call_id;
    if (!(await loaded.time(() => readConfig(callId)))) return;
    const started = performance.now();
    const id = n++;
    for (const e of EVENTS) {
      const wait = started + e.afterMs - performance.now();
      if (wait > 0) await delay(wait);
      const transcript =
        e.status === 'completed'
          ? Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'user' : 'bot', text: `Line ${i} of a short reminder call, said in about as many words as a turn.`, at: new Date().toISOString() }))
          : undefined;
      await events.time(() =>
        fetch(`${o.base}/api/v1/calls/${callId}/events`, {
          method: 'POST',
          headers: { ...worker, 'Content-Type': 'application/json' },
          body: JSON.stringify({ status: e.status, event_id: `bench-${id}-${e.status}`, ...(e.status === 'completed' ? { end_reason: 'bot_hangup', transcript } : {}) }),
          signal: AbortSignal.timeout(GIVE_UP_MS),
        }),
      );
    }
  });
  o.onPhase?.(null);
  return { idle: idle.figures(), loaded: loaded.figures(), dialouts: dialouts.figures(), events: events.figures() };
}

export function printConfigLoad(o: Pick<ConfigLoadOptions, 'ratePerSecond' | 'seconds'> & { storedCalls: number }, r: Awaited<ReturnType<typeof configUnderLoad>>): void {
  const row = (name: string, f: Figures) =>
    `${name.padEnd(30)} ${String(f.n).padStart(5)} ${[f.p50, f.p95, f.p99, f.max].map((x) => x.toFixed(1).padStart(8)).join('')} ${String(f.failed).padStart(7)}${f.failed ? `  ${JSON.stringify(f.why)}` : ''}`;
  const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '-').padStart(8);
  console.log(`\nconfig read at ${o.ratePerSecond} dial-outs/s for ${o.seconds} s (each dial-out followed by its worker's config read and ${EVENTS.length} call events), beside the same read with no load; ${o.storedCalls} calls stored before`);
  console.log(`${'run'.padEnd(30)} ${'n'.padStart(5)}   p50 ms  p95 ms  p99 ms  max ms  failed`);
  console.log(row('config read, no load', r.idle));
  console.log(row('config read, under load', r.loaded));
  console.log(`${'  under load / no load'.padEnd(30)} ${''.padStart(5)} ${ratio(r.loaded.p50, r.idle.p50)}${ratio(r.loaded.p95, r.idle.p95)}${ratio(r.loaded.p99, r.idle.p99)}${ratio(r.loaded.max, r.idle.max)}`);
  console.log(row('dial-out (the load)', r.dialouts));
  console.log(row('call event (the load)', r.events));
}

/** `count` ended calls of the bot from the past days, each with its transcript, written straight to the database. */
export async function seedPastCalls(db: Db, botId: string, count: number): Promise<void> {
  console.log(`   storing ${count} ended calls`);
  const col = db.collection<CallDoc>(COLLECTIONS.calls);
  const dayMs = 86_400_000;
  for (let done = 0; done < count; ) {
    const batch = Array.from({ length: Math.min(1000, count - done) }, (_, i) => {
      const created = new Date(Date.now() - 7 * dayMs + Math.floor(((done + i) / count) * 6 * dayMs));
      const started = new Date(created.getTime() + 5000);
      const ended = new Date(started.getTime() + 60_000);
      return {
        _id: new ObjectId().toHexString(),
        bot_id: botId,
        direction: 'outbound',
        to_number: '+4915112345678',
        from_number: '+15550100000',
        status: 'completed',
        variables: { customer_name: 'Ada' },
        api_key_id: null,
        created_at: created,
        started_at: started,
        ended_at: ended,
        end_reason: 'bot_hangup',
        recording_key: `recordings/${created.toISOString().slice(0, 10).replaceAll('-', '/')}/x.wav`,
        recording_error: null,
        sip_status_code: null,
        transcript: Array.from({ length: 8 }, (_, t) => ({ role: t % 2 ? 'user' : 'bot', text: `Line ${t} of a short reminder call, said in about as many words as a turn.`, at: started })),
        status_times: { queued: created, dialing: created, ringing: created, in_progress: started, completed: ended },
      } as unknown as CallDoc;
    });
    await col.insertMany(batch, { ordered: false });
    done += batch.length;
  }
}

/** The shape of a command's filter: its field names (and operators), values left out, e.g. `{_id}`, `{status,created_at:{$lt}}`. */
function shape(x: unknown, depth = 0): string {
  if (x === null || typeof x !== 'object' || Array.isArray(x) || x instanceof Date || x instanceof ObjectId || depth > 2) return '';
  const keys = Object.keys(x as object);
  return `{${keys.map((k) => { const inner = shape((x as Record<string, unknown>)[k], depth + 1); return inner ? `${k}:${inner}` : k; }).join(',')}}`;
}

/** What a command does, values left out: `find calls {_id}`, `update calls {_id} $set,$push`. */
function describe(e: CommandStartedEvent): string {
  const c = e.command as Record<string, unknown>;
  const coll = typeof c[e.commandName] === 'string' ? String(c[e.commandName]) : '';
  const first = (k: string) => (Array.isArray(c[k]) ? (c[k] as Array<Record<string, unknown>>)[0] : undefined);
  let what = '';
  if (e.commandName === 'find' || e.commandName === 'count' || e.commandName === 'findAndModify') what = shape(c.filter ?? c.query);
  else if (e.commandName === 'update') what = `${shape(first('updates')?.q)} ${Object.keys(first('updates')?.u ?? {}).join(',')}`;
  else if (e.commandName === 'delete') what = shape(first('deletes')?.q);
  else if (e.commandName === 'aggregate') what = JSON.stringify((c.pipeline as object[] | undefined)?.map((st) => Object.keys(st)[0]));
  return `${e.commandName} ${coll} ${what}`.trim();
}

/** Each MongoDB command's duration while a phase is set, by phase and what it does (the client must have monitorCommands). */
export class CommandTimes {
  phase: string | null = null;
  private readonly started = new Map<number, string>();
  private readonly times = new Map<string, number[]>();
  constructor(client: MongoClient) {
    client.on('commandStarted', (e: CommandStartedEvent) => {
      if (this.phase) this.started.set(e.requestId, `${this.phase}: ${describe(e)}`);
    });
    const done = (e: CommandSucceededEvent | CommandFailedEvent) => {
      const what = this.started.get(e.requestId);
      if (what === undefined) return;
      this.started.delete(e.requestId);
      const key = 'failure' in e ? `${what} (failed)` : what;
      const list = this.times.get(key) ?? [];
      list.push(e.duration);
      this.times.set(key, list);
    };
    client.on('commandSucceeded', done);
    client.on('commandFailed', done);
  }
  print(title: string): void {
    const phases = [...new Set([...this.times.keys()].map((k) => k.slice(0, k.indexOf(':'))))];
    const rows = [...this.times]
      .map(([what, ms]) => ({ what, f: figures(ms, 0, {}), total: ms.reduce((a, b) => a + b, 0) }))
      .sort((a, b) => phases.indexOf(a.what.slice(0, a.what.indexOf(':'))) - phases.indexOf(b.what.slice(0, b.what.indexOf(':'))) || b.total - a.total);
    console.log(`\n${title}`);
    console.log(`${'phase: command'.padEnd(80)} ${'n'.padStart(5)}   p50 ms  p95 ms  p99 ms  max ms  total s`);
    for (const r of rows) {
      console.log(`${r.what.slice(0, 80).padEnd(80)} ${String(r.f.n).padStart(5)} ${[r.f.p50, r.f.p95, r.f.p99, r.f.max].map((x) => x.toFixed(1).padStart(8)).join('')} ${(r.total / 1000).toFixed(1).padStart(8)}`);
    }
  }
}
