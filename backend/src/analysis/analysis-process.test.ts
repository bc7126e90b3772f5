// Post-call analysis as it runs in production (docs/design.md §10): real backend processes (dist/main.js, built by
// `tsc -b` before jest runs) with ROLES=dialler on the stores of a harness, a local OpenAI-compatible server (chat
// completions with a json_schema response_format) reached through OPENAI_BASE_URL and OPENAI_API_KEY, and two real
// webhook receivers (one with include_transcript). The dialler working on a call's analysis is killed with SIGKILL
// while its request is unanswered, right after the answer, and while it posts call.analyzed; two fresh replicas,
// racing, take over (a job after ANALYSIS_LEASE_MS, a delivery after its lease). Each time the call ends with one
// analysis, and each webhook with one call.analyzed event (posted twice, the same bytes, only after a kill mid-post).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { saveLogs, startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import type { AnalysisSettings } from '@voice-platform/schemas';
import { adminToken, createBot, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { startBackendProcess, type BackendProcess } from '../../testing/process.js';
import { calls, endingCalls, findCall } from '../calls/store.js';
import { deliveries } from '../webhooks/store.js';
import { callEventId } from '../webhooks/outbox.js';
import { ANALYSIS_DUE_KEY } from './jobs.js';

/** The backend's key for the LLM provider: sent to OPENAI_BASE_URL, never logged. */
const OPENAI_KEY = 'sk-analysis-process-test-0123456789';
/** An attempt's limit, and the lease a dead dialler's job waits out before another takes it. */
const ATTEMPT_MS = 10_000;
const LEASE_MS = 12_000;

interface Got {
  id: string;
  type: string;
  data: Record<string, unknown>;
  /** The body as it came, to tell a repeat of one delivery from a second one. */
  raw: string;
}
interface Receiver {
  url: string;
  /** Every POST that came in, answered or not. */
  got: Got[];
  /** Answers the POSTs held so far (those whose sender is alive) and every later one at once. */
  release(): void;
  close(): Promise<void>;
}
/** A webhook receiver answering 200; with `hold`, POSTs of that event type are left unanswered until release(). */
async function receiver(opts: { hold?: string } = {}): Promise<Receiver> {
  const got: Got[] = [];
  let holding = opts.hold !== undefined;
  const held: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const g = { ...(JSON.parse(raw) as Omit<Got, 'raw'>), raw };
      got.push(g);
      const ok = () => void (res.destroyed || req.socket.destroyed || res.writeHead(200).end('ok'));
      if (holding && g.type === opts.hold) held.push(ok);
      else ok();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    got,
    release() {
      holding = false;
      for (const ok of held.splice(0)) ok();
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** The answer to the n-th chat request (from 1): each tells which request it answered. */
const answer = (n: number) => ({ data: { outcome: 'promised', amount: 40, note: `answer ${n}` }, summary: `Answer ${n}: the caller promised 40 dollars.`, success: true });

interface StandIn {
  url: string;
  /** Every chat request, in order. */
  chats: Array<{ authorization: string | undefined; body: any }>;
  /** Request numbers whose answer was written out in full. */
  answered: number[];
  /** Requests wait here before they are answered (resolved from the start unless `held`). */
  release(): void;
  /** Resolves when the first request has come in, and when its answer was written out. */
  firstAsked: Promise<void>;
  firstAnswered: Promise<void>;
  close(): Promise<void>;
}
/** A local OpenAI-compatible server: POST /v1/chat/completions answered with `answer(n)` as the message content. */
async function standIn(opts: { held: boolean }): Promise<StandIn> {
  const chats: StandIn['chats'] = [];
  const answered: number[] = [];
  let release!: () => void;
  const gate = opts.held ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  if (!opts.held) release = () => undefined;
  let asked!: () => void;
  let first!: () => void;
  const firstAsked = new Promise<void>((resolve) => (asked = resolve));
  const firstAnswered = new Promise<void>((resolve) => (first = resolve));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      chats.push({ authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const n = chats.length;
      if (n === 1) asked();
      void gate.then(() => {
        if (res.destroyed || req.socket.destroyed) return; // its dialler is dead
        res.once('finish', () => {
          answered.push(n);
          if (n === 1) first();
        });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify(answer(n)) } }] }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    chats,
    answered,
    release: () => release(),
    firstAsked,
    firstAnswered,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let env: TestEnv;
let h: Harness;
let auth: string;
const cleanups: Array<() => Promise<unknown>> = [];
const children: BackendProcess[] = [];
/** Names the children's saved logs after the test. */
let label = 'analysis';
beforeAll(async () => {
  env = await startTestEnv(['redis']); // the due set and the outbox stream are global: a Redis of our own
});
afterAll(() => env.stop());
beforeEach(async () => {
  const r = new Redis(env.env.REDIS_URL!);
  await r.flushall();
  r.disconnect();
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  auth = await adminToken(h);
});
afterEach(async () => {
  for (const [i, c] of children.splice(0).entries()) {
    await killed(c.child);
    saveLogs(`analysis-dialler-${label}-${i}`, c.log());
  }
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await h?.close();
});

/** SIGKILL, and its exit awaited. */
async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** A dialler process on the harness's stores, its LLM provider `llmUrl`; resolves once it answers /health. */
async function dialler(llmUrl: string): Promise<BackendProcess> {
  const p = await startBackendProcess(h, env.env.REDIS_URL!, {
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: OPENAI_KEY,
    ANALYSIS_TIMEOUT_MS: String(ATTEMPT_MS),
    ANALYSIS_LEASE_MS: String(LEASE_MS),
    ANALYSIS_POLL_INTERVAL_MS: '100',
    ANALYSIS_RETRY_DELAY_MS: '200',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    // A delivery a dead dialler was making is due again after this and 30 s.
    WEBHOOK_TIMEOUT_MS: '2000',
    SWEEP_INTERVAL_SECONDS: '1',
  });
  children.push(p);
  return p;
}

const listen = async (opts: { hold?: string } = {}): Promise<Receiver> => {
  const r = await receiver(opts);
  cleanups.push(() => r.close());
  return r;
};
const hook = async (url: string, body: object = {}) =>
  (await h.http.post('/api/v1/webhooks').set('Authorization', auth).send({ url, events: ['call.ended', 'call.analyzed'], ...body }).expect(201)).body.id as string;

const ANALYSIS: AnalysisSettings = {
  summary: true,
  fields: [
    { name: 'outcome', type: 'enum', values: ['promised', 'refused', 'callback'], description: 'what the caller agreed to' },
    { name: 'amount', type: 'number' },
    { name: 'note', type: 'string' },
  ],
  success: 'The caller promised to pay.',
};
const SAID = [
  { role: 'bot' as const, text: 'Hello, this is Acme about your balance.' },
  { role: 'user' as const, text: 'I will pay forty dollars on Friday' },
  { role: 'bot' as const, text: 'Thank you.' },
];

/** An ended WebSocket call of an OpenAI-compatible bot, reported the worker's way: created, answered, ended with its
 *  transcript, its recording reported (so call.ended is not held for it). Its analysis is pending. */
async function endedCall(): Promise<string> {
  const botId = await createBot(h, auth, { llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0 }, analysis: ANALYSIS });
  const worker = `Bearer ${WORKER_TOKEN}`;
  const created = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201);
  const id = created.body.call_id as string;
  const at = (s: number) => new Date(h.clock.ms + s * 1000).toISOString();
  const event = (body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body).expect(200);
  await event({ status: 'in_progress', at: at(1) });
  await event({ status: 'completed', end_reason: 'caller_hangup', at: at(5), transcript: SAID.map((t, i) => ({ ...t, at: at(2 + i * 0.5) })) });
  await event({ status: 'completed', recording_key: `recordings/${id}.wav` });
  const doc = await findCall(h.db, id);
  expect(doc!.analysis!.status).toBe('pending');
  expect(await h.redis.zscore(ANALYSIS_DUE_KEY, id)).not.toBeNull();
  return id;
}

const ofCall = (r: Receiver, id: string, type: string) => r.got.filter((g) => g.type === type && g.data.call_id === id);
/** The call's deliveries of `type` recorded delivered (one per webhook at most: their id is the event's and the webhook's). */
const delivered = (id: string, type: 'call.ended' | 'call.analyzed') => deliveries(h.db).find({ type, status: 'delivered', event_id: callEventId(id, type) }).toArray();
/** `"msg":"call analysed"` lines for the call in a process's log: results it wrote. */
const analysedLines = (log: string, id: string) => log.split('\n').filter((l) => l.includes('"call analysed"') && l.includes(id)).length;

/**
 * Waits until the call has settled and its call.ended and call.analyzed deliveries are recorded delivered (nothing of
 * the call is left to send after that: the due set, the marks and the outbox hold nothing of it), then checks what
 * the issue asks: one analysis, the one call.analyzed event per webhook carries it (every copy the same bytes; the
 * webhook with include_transcript gets the transcript, the other none), the call moved from calls_ending to calls.
 */
async function settledWithOneResult(id: string, plain: Receiver, full: Receiver, llm: StandIn): Promise<void> {
  await waitUntil(
    async () =>
      (await calls(h.db).findOne({ _id: id })) !== null &&
      (await delivered(id, 'call.analyzed')).length === 2 &&
      (await delivered(id, 'call.ended')).length === 2 &&
      [plain, full].every((r) => ofCall(r, id, 'call.analyzed').length >= 1 && ofCall(r, id, 'call.ended').length >= 1),
    { what: 'the call settled, call.ended and call.analyzed delivered to both webhooks', timeoutMs: 150_000 },
  );
  expect(await endingCalls(h.db).findOne({ _id: id })).toBeNull();
  expect(await h.redis.zscore(ANALYSIS_DUE_KEY, id)).toBeNull();
  const doc = (await findCall(h.db, id))!;
  expect(doc.webhook_due ?? []).toEqual([]);
  const stored = (await h.http.get(`/api/v1/calls/${id}`).set('Authorization', auth).expect(200)).body;
  // Done with one of the answers the stand-in gave out in full (`answer(n)` names its request).
  const n = llm.answered.find((k) => stored.analysis.summary === answer(k).summary);
  expect(n).toBeDefined();
  expect(stored.analysis).toEqual({ status: 'done', ...answer(n!), error: null, completed_at: expect.any(String) });
  expect(doc.analysis).toMatchObject({ status: 'done', ...answer(n!), error: null });
  // The requests went to OPENAI_BASE_URL with OPENAI_API_KEY and the strict json_schema response_format.
  for (const c of llm.chats) {
    expect(c.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(c.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0, stream: false, response_format: { type: 'json_schema', json_schema: { name: 'call_analysis', strict: true } } });
  }

  for (const [r, withTranscript] of [[plain, false], [full, true]] as const) {
    const got = ofCall(r, id, 'call.analyzed');
    // Deduplicated by event id: one event. Every copy that came is the same event with the same body (a repeat the
    // at-least-once contract allows: never a second result).
    expect([...new Set(got.map((g) => g.id))]).toEqual([callEventId(id, 'call.analyzed')]);
    expect(new Set(got.map((g) => g.raw)).size).toBe(1);
    expect(got[0]!.data.analysis).toEqual(stored.analysis);
    if (withTranscript) expect(got[0]!.data.transcript).toEqual(stored.transcript);
    else expect(got[0]!.data).not.toHaveProperty('transcript');
    // call.ended too, with the transcript where asked for.
    const ended = ofCall(r, id, 'call.ended');
    expect([...new Set(ended.map((g) => g.id))]).toEqual([callEventId(id, 'call.ended')]);
    for (const e of ended) expect('transcript' in e.data).toBe(withTranscript);
  }
  for (const c of children) {
    expect(c.log()).not.toContain(OPENAI_KEY);
    expect(c.log()).toContain(`"lease_ms":${LEASE_MS}`); // ANALYSIS_LEASE_MS, not ANALYSIS_TIMEOUT_MS + 30 s
  }
}

it('a dialler killed (SIGKILL) while its analysis request is unanswered: two replicas take the job over; one analysis, one call.analyzed per webhook', async () => {
  label = 'unanswered';
  const [plain, full] = [await listen(), await listen()];
  await hook(plain.url);
  await hook(full.url, { include_transcript: true });
  const llm = await standIn({ held: true });
  cleanups.push(() => llm.close());
  const id = await endedCall();

  const first = await dialler(llm.url);
  await llm.firstAsked;
  // call.ended is delivered and recorded first, so the kill leaves no delivery of it half made.
  await waitUntil(async () => (await delivered(id, 'call.ended')).length === 2, { what: 'call.ended delivered to both webhooks', timeoutMs: 60_000 });
  await killed(first.child);
  expect(llm.answered).toEqual([]);
  expect((await findCall(h.db, id))!.analysis).toMatchObject({ status: 'pending', attempts: 1 });

  await Promise.all([dialler(llm.url), dialler(llm.url)]);
  llm.release();
  await settledWithOneResult(id, plain, full, llm);
  // The dead dialler's request was never answered; one replica, after the lease, asked again and wrote the result.
  expect(llm.answered).not.toContain(1);
  expect(llm.chats.length).toBeGreaterThanOrEqual(2);
  expect(children.map((c) => analysedLines(c.log(), id))).toEqual([0, expect.any(Number), expect.any(Number)]);
  expect(analysedLines(children[1]!.log() + children[2]!.log(), id)).toBe(1);
  // No dialler died holding call.analyzed or call.ended: each was posted to each webhook exactly once.
  for (const r of [plain, full]) {
    expect(ofCall(r, id, 'call.analyzed')).toHaveLength(1);
    expect(ofCall(r, id, 'call.ended')).toHaveLength(1);
  }
  for (const d of await delivered(id, 'call.analyzed')) expect(d.attempts).toBe(1);
}, 360_000);

it('a dialler killed (SIGKILL) right after its analysis request was answered: one analysis, one call.analyzed per webhook', async () => {
  label = 'answered';
  const [plain, full] = [await listen(), await listen()];
  await hook(plain.url);
  await hook(full.url, { include_transcript: true });
  const llm = await standIn({ held: false });
  cleanups.push(() => llm.close());
  const id = await endedCall();

  const first = await dialler(llm.url);
  await llm.firstAnswered;
  await killed(first.child);
  // Wherever the kill landed (before the result's write, between it and call.analyzed, mid-delivery), the
  // replicas finish: the job after the lease, a mark left by the deliverer's scan, an outbox entry by reclaim.
  await Promise.all([dialler(llm.url), dialler(llm.url)]);
  await settledWithOneResult(id, plain, full, llm);
  // One result written: by the dead dialler (then nobody asked again), or by one replica after the lease.
  const lines = children.map((c) => analysedLines(c.log(), id));
  expect(lines.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1);
  const stored = (await findCall(h.db, id))!.analysis!;
  if (stored.summary === answer(1).summary) expect(llm.chats).toHaveLength(1);
  else expect(lines[1]! + lines[2]!).toBe(1);
}, 360_000);

it('a dialler killed (SIGKILL) while it delivers call.analyzed: its result stays, a replica delivers the same event again (at least once), nobody analyses again', async () => {
  label = 'delivering';
  // The receivers take call.analyzed in but do not answer it: the dialler that wrote the result is mid-delivery.
  const [plain, full] = [await listen({ hold: 'call.analyzed' }), await listen({ hold: 'call.analyzed' })];
  await hook(plain.url);
  await hook(full.url, { include_transcript: true });
  const llm = await standIn({ held: false });
  cleanups.push(() => llm.close());
  const id = await endedCall();

  const first = await dialler(llm.url);
  await waitUntil(async () => [plain, full].every((r) => ofCall(r, id, 'call.analyzed').length === 1) && (await delivered(id, 'call.ended')).length === 2, {
    what: 'call.analyzed posted to both webhooks (held), call.ended delivered',
    timeoutMs: 60_000,
  });
  await killed(first.child);
  expect((await findCall(h.db, id))!.analysis).toMatchObject({ status: 'done', ...answer(1) });
  expect(await delivered(id, 'call.analyzed')).toEqual([]);

  await Promise.all([dialler(llm.url), dialler(llm.url)]);
  for (const r of [plain, full]) r.release();
  await settledWithOneResult(id, plain, full, llm);
  // The dead dialler's result is the one; nobody asked the LLM again or wrote another.
  expect(llm.chats).toHaveLength(1);
  expect(children.map((c) => analysedLines(c.log(), id))).toEqual([1, 0, 0]);
  // Its unanswered POST is made again after the delivery's lease: two copies of one event, the same bytes.
  for (const r of [plain, full]) {
    expect(ofCall(r, id, 'call.analyzed')).toHaveLength(2);
    expect(ofCall(r, id, 'call.ended')).toHaveLength(1);
  }
}, 360_000);
