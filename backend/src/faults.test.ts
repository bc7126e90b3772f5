// Faults under load: dial-outs arrive at a steady rate while this file's own Redis, then its own
// FerretDB, is stopped for a few seconds and started again (same port, same data). While a store is
// down every answer is a prompt 503 naming it; afterwards the service recovers by itself; and no
// outage leaves a call placed without its record, a record without its job, or a 503 that placed a call.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startTestEnv, waitUntil, type Service, type TestEnv } from '@voice-platform/tests/infra';
import { CALL_JOBS_STREAM_KEY, TERMINAL_CALL_STATUSES } from '@voice-platform/schemas';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, type Harness } from '../testing/harness.js';
import { findCalls } from './calls/store.js';

const INTERVAL_MS = 25; // one dial-out every 25 ms, whatever the previous ones are doing
const OUTAGE_MS = 3000; // each store stays down at least this long…
const ANSWERS_IN_OUTAGE = 20; // …and until this many requests were both sent and answered inside the outage
const RECOVERY_DEADLINE_MS = 30_000;
const SETTLED = 5; // recovered: this many dial-outs in a row placed again

type Store = 'redis' | 'mongodb';
interface Outcome {
  sentAt: number;
  answeredAt: number;
  status: number | 'no_answer';
  retryAfter: string | null;
  body: { call_id?: string; error?: { code?: string; message?: string; details?: { failed?: string[] } } } | null;
}
interface Outage {
  store: Store;
  /** From the moment the stop was asked for… */
  from: number;
  /** …until the process was gone (answers sent after this and received before `startAt` must all be 503). */
  downAt: number;
  startAt: number;
  /** …until the app was seen whole again (see recovered()): answers overlapping [from, upAt] may name this store. */
  upAt: number;
}

let env: TestEnv;
let redis: Service;
let mongo: Service;
let h: Harness;
let server: http.Server;
let base: string;
let key: string;
let botId: string;

beforeAll(async () => {
  // Private stores, so stopping them disturbs no other test file. Redis keeps its data across the
  // restart (append-only file), like the chart's Redis: queued jobs survive a Redis restart.
  env = await startTestEnv(['mongodb']);
  mongo = env.services.mongodb!;
  redis = await env.add('redis', 'redis', { durable: true });
  h = await startHarness({
    mongoUri: mongo.env.MONGODB_URI,
    redisUrl: redis.env.REDIS_URL,
    env: {
      LOG_LEVEL: 'info',
      DIALOUT_RATE_PER_SECOND: '1000000', // the test clock stands still: the bucket must never run dry
      DIALOUT_BURST: '1000000',
      MONGODB_SERVER_SELECTION_TIMEOUT_MS: '1500',
      MONGODB_SOCKET_TIMEOUT_MS: '3000',
      REDIS_COMMAND_TIMEOUT_MS: '1000',
    },
  });
  const auth = await adminToken(h);
  await createTrunk(h, auth);
  key = (await createKey(h, auth)).key;
  botId = await createBot(h, auth);
  server = http.createServer(h.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
  await env?.stop();
});

/** Dial-outs at a steady rate, each answer recorded with when it was sent and answered. */
function startLoad(hangMs: number) {
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  const fire = () => {
    const sentAt = performance.now();
    const p = fetch(`${base}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ bot_id: botId, to_number: '+4915112345678' }),
      signal: AbortSignal.timeout(hangMs),
    })
      .then(async (res) => {
        const text = await res.text();
        let body: Outcome['body'] = null;
        try {
          body = JSON.parse(text) as Outcome['body'];
        } catch {
          /* kept as null: the assertions name it */
        }
        outcomes.push({ sentAt, answeredAt: performance.now(), status: res.status, retryAfter: res.headers.get('retry-after'), body });
      })
      .catch(() => {
        outcomes.push({ sentAt, answeredAt: performance.now(), status: 'no_answer', retryAfter: null, body: null });
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const timer = setInterval(fire, INTERVAL_MS);
  return {
    outcomes,
    async stop() {
      clearInterval(timer);
      while (inFlight.size) await Promise.all([...inFlight]);
    },
  };
}

/** Throws (waitUntil's "not yet", with the reason it reports on timeout) until /health is 200 and the
 *  last SETTLED dial-outs sent after `since` all got 201. */
async function recovered(outcomes: Outcome[], since: number): Promise<boolean> {
  const health = await fetch(`${base}/health`);
  const answers = outcomes.filter((o) => o.sentAt >= since);
  const last = [...answers].sort((a, b) => a.sentAt - b.sentAt).slice(-SETTLED);
  if (health.status === 200 && last.length === SETTLED && last.every((o) => o.status === 201)) return true;
  const tally: Record<string, number> = {};
  for (const o of answers) {
    const what = `${o.status} ${o.body?.error?.message ?? ''}`.trim();
    tally[what] = (tally[what] ?? 0) + 1;
  }
  throw new Error(`health ${health.status} ${JSON.stringify(((await health.json()) as { checks?: unknown }).checks)}; dial-outs since the restart: ${JSON.stringify(tally)}`);
}

async function outage(store: Store, svc: Service, outcomes: Outcome[]): Promise<Outage> {
  const from = performance.now();
  await svc.stop();
  const downAt = performance.now();
  const inside = () => outcomes.filter((o) => o.sentAt >= downAt).length;
  await waitUntil(() => performance.now() - downAt >= OUTAGE_MS && inside() >= ANSWERS_IN_OUTAGE, {
    what: `${ANSWERS_IN_OUTAGE} answers while ${store} is down`,
    timeoutMs: OUTAGE_MS + RECOVERY_DEADLINE_MS,
    intervalMs: 50,
  });
  // The outage is seen by the probe too, naming the store.
  const health = await fetch(`${base}/health`);
  expect([health.status, ((await health.json()) as { checks: Record<Store, string> }).checks[store]]).toEqual([503, 'unreachable']);
  const startAt = performance.now();
  await svc.start();
  // Recovery without a restart of the app: the probe turns green and dial-outs are placed again.
  await waitUntil(() => recovered(outcomes, startAt), { what: `recovery after ${store} returns`, timeoutMs: RECOVERY_DEADLINE_MS, intervalMs: 100 });
  return { store, from, downAt, startAt, upAt: performance.now() };
}

describe('dial-outs while the stores fail', () => {
  it('answer 503 naming the store, promptly, recover without a restart, and leave no orphan', async () => {
    // The longest a request may take with a store gone or swamped. One MongoDB operation waits at most
    // the server selection timeout for a server, as long again for a pooled connection, and the socket
    // timeout for its reply; a retryable one may do all that twice. A Redis command fails at once on a
    // closed connection, else after the command timeout. A request stops at its first store failure, but
    // a dial-out failing after its record was written first runs its compensations (Redis, then MongoDB).
    const s = h.settings;
    const mongoOpMs = 2 * s.MONGODB_SERVER_SELECTION_TIMEOUT_MS + s.MONGODB_SOCKET_TIMEOUT_MS;
    const boundMs = 2 * mongoOpMs + 2 * s.REDIS_COMMAND_TIMEOUT_MS + 2000; // + 2 s for a busy 2-core machine
    const beat = () => heartbeat(h.redis, 'w1', { max_calls: 1_000_000 }, h.clock.ms + 3_600_000).catch(() => undefined);
    await beat();
    const beating = setInterval(() => void beat(), 1000); // a live worker heartbeats every 2 s
    const load = startLoad(boundMs + 5000);
    const outages: Outage[] = [];
    try {
      await waitUntil(() => load.outcomes.filter((o) => o.status === 201).length >= 10, { what: 'dial-outs placed before the faults', timeoutMs: 20_000 });
      outages.push(await outage('redis', redis, load.outcomes));
      outages.push(await outage('mongodb', mongo, load.outcomes));
      const end = performance.now();
      await waitUntil(() => load.outcomes.filter((o) => o.sentAt >= end && o.status === 201).length >= 10, { what: 'dial-outs placed after the faults', timeoutMs: 20_000 });
    } finally {
      await load.stop();
      clearInterval(beating);
    }
    const { outcomes } = load;
    const show = (list: Outcome[]) => JSON.stringify(list.slice(0, 5).map((o) => ({ ...o, ms: Math.round(o.answeredAt - o.sentAt) })));

    // Never a 500, never a hang: a 201, or a 503 service_unavailable naming a store that was down meanwhile.
    const overlapping = (o: Outcome) => outages.filter((x) => o.sentAt <= x.upAt && o.answeredAt >= x.from).map((x) => x.store);
    const wrong = outcomes.filter((o) => {
      if (o.status === 201) return !o.body?.call_id;
      if (o.status !== 503 || o.body?.error?.code !== 'service_unavailable' || o.retryAfter === null) return true;
      const failed = o.body.error.details?.failed ?? [];
      return failed.length !== 1 || !overlapping(o).includes(failed[0] as Store) || !o.body.error.message?.includes(failed[0]!);
    });
    expect(`${wrong.length} wrong answers ${show(wrong)}`).toBe('0 wrong answers []');
    const slow = outcomes.filter((o) => o.answeredAt - o.sentAt > boundMs);
    expect(`${slow.length} answers slower than ${boundMs} ms ${show(slow)}`).toBe(`0 answers slower than ${boundMs} ms []`);

    // While a store was down (sent after it was gone, answered before it was started again): all 503 naming it.
    for (const x of outages) {
      const inside = outcomes.filter((o) => o.sentAt >= x.downAt && o.answeredAt <= x.startAt);
      expect(inside.length).toBeGreaterThanOrEqual(ANSWERS_IN_OUTAGE);
      const notNamed = inside.filter((o) => o.status !== 503 || o.body?.error?.details?.failed?.[0] !== x.store);
      expect(`${x.store}: ${notNamed.length} not 503 naming it ${show(notNamed)}`).toBe(`${x.store}: 0 not 503 naming it []`);
    }
    expect(h.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]); // no unexpected error was logged

    // Consistency: every record has its job or a terminal state (a dial-out whose insert landed although
    // its reply was lost with the connection is closed by the backend once MongoDB answers again: awaited);
    // every 201 has its record (queued) and its job; every queued call was answered 201 (a client told to
    // retry never has a call placed).
    const placed = new Set(outcomes.filter((o) => o.status === 201).map((o) => o.body!.call_id!));
    const jobs = new Set(((await h.redis.xrange(CALL_JOBS_STREAM_KEY, '-', '+')) as Array<[string, string[]]>).map(([, f]) => f[f.indexOf('call_id') + 1]!));
    const readCalls = () => findCalls(h.db, {}, { projection: { status: 1, end_reason: 1, created_at: 1 } });
    await waitUntil(
      async () => {
        const orphans = (await readCalls()).filter((c) => !jobs.has(c._id) && !TERMINAL_CALL_STATUSES.includes(c.status));
        if (orphans.length) throw new Error(`records without a job or a terminal state: ${JSON.stringify(orphans)}`);
        return true;
      },
      { what: 'every record has its job or a terminal state', timeoutMs: 15_000, intervalMs: 200 },
    );
    const calls = await readCalls();
    const byId = new Map(calls.map((c) => [c._id, c]));
    const missing = [...placed].filter((id) => byId.get(id)?.status !== 'queued' || !jobs.has(id));
    expect(missing).toEqual([]);
    const unannounced = calls.filter((c) => c.status === 'queued' && !placed.has(c._id));
    expect(unannounced).toEqual([]);
    expect(placed.size).toBeGreaterThanOrEqual(30);
  }, 180_000);
});
