// Webhook events are never lost (docs/design.md §8), against this file's own FerretDB and Redis, which it
// freezes (SIGSTOP) and thaws, and a real HTTP receiver on loopback: what the API accepted while Redis was
// frozen is delivered once after the thaw; a move that landed without its event (a process killed between
// the write and the emit) is sent by the worker's retry; the deliverer drains the MongoDB fallback, and an
// event in both stores is delivered once; with both stores frozen an event waits in memory, and only one
// still held when the process stops is lost.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startTestEnv, waitUntil, type Service, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { createLogger } from '../core/logger.js';
import { COLLECTIONS } from '../core/collections.js';
import { findCall, findCalls, liveCalls } from '../calls/store.js';
import { ENDED_PENDING_KEY, WEBHOOK_EVENTS_STREAM } from './keys.js';
import { callEventId, emitWebhookEvent, flushHeldWebhookEvents, type EmitDeps } from './outbox.js';
import type { WebhookDeliverer } from './deliverer.js';

interface Got {
  id: string;
  type: string;
  data: Record<string, unknown>;
}
interface Receiver {
  url: string;
  got: Got[];
  close(): Promise<void>;
}
async function receiver(): Promise<Receiver> {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Got);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    got,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How long Redis stays frozen under traffic, and how often a round of requests is sent meanwhile. */
const FREEZE_MS = 3000;
const ROUND_MS = 100;
const ALL_EVENTS = ['call.queued', 'call.ringing', 'call.in_progress', 'call.ended', 'campaign.started', 'campaign.completed'];
const worker = `Bearer ${WORKER_TOKEN}`;

let env: TestEnv;
let redisSvc: Service;
let mongoSvc: Service;
/** A client of the test's own, to look into Redis (the app's may be waiting on a frozen one). */
let probe: Redis;
let h: Harness;
let auth: string;
let r: Receiver;
let botId: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  env = await startTestEnv(['mongodb', 'redis']);
  redisSvc = env.services.redis!;
  mongoSvc = env.services.mongodb!;
  probe = new Redis(redisSvc.env.REDIS_URL!);
}, 120_000);
afterAll(async () => {
  probe?.disconnect();
  await env?.stop();
});
beforeEach(async () => {
  await probe.flushall();
  h = await startHarness({
    mongoUri: mongoSvc.env.MONGODB_URI,
    redisUrl: redisSvc.env.REDIS_URL,
    env: {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      WEBHOOK_TIMEOUT_MS: '2000',
      REDIS_COMMAND_TIMEOUT_MS: '500',
      // A request waits this long on a frozen FerretDB before its 503 (the in-flight move below waits less).
      MONGODB_SOCKET_TIMEOUT_MS: '3000',
      MONGODB_OPERATION_TIMEOUT_MS: '3000',
      MONGODB_SERVER_SELECTION_TIMEOUT_MS: '3000',
    },
  });
  auth = await adminToken(h);
  r = await receiver();
  cleanups.push(() => r.close());
  botId = await createBot(h, auth, {});
});
afterEach(async () => {
  redisSvc.thaw();
  mongoSvc.thaw();
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await flushHeldWebhookEvents({ timeoutMs: 0, redis: h.redis });
  await h?.close();
});

function deliverer(): WebhookDeliverer {
  const d = h.deliverer();
  cleanups.push(() => d.stop());
  return d;
}
async function hook(events = ALL_EVENTS): Promise<string> {
  const res = await h.http.post('/api/v1/webhooks').set('Authorization', auth).send({ url: r.url, events }).expect(201);
  return res.body.id as string;
}
const newCall = async () => (await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201)).body.call_id as string;
const move = (id: string, body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body);
/** Calls in progress (calls/store.ts): where a move's write lands. */
const liveDocs = () => liveCalls(h.db);
const metric = async (m: { get(): Promise<{ values: Array<{ value: number }> }> }) => (await m.get()).values[0]?.value ?? 0;
/** Thaws Redis and waits until the app's client is connected again (it drops a connection that timed out). */
async function thawRedis(): Promise<void> {
  redisSvc.thaw();
  await waitUntil(async () => (await h.redis.ping()) === 'PONG', { what: "the app's Redis client back", timeoutMs: 20_000 });
}
/** How many times the receiver got each event id. */
function counts(): Map<string, number> {
  const c = new Map<string, number>();
  for (const x of r.got) c.set(x.id, (c.get(x.id) ?? 0) + 1);
  return c;
}
/** Emit deps as the app's (its stores, clock and metrics), logging into `lines`. */
function emitDeps(lines: string[]): EmitDeps {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { redis: h.redis, db: h.db, logger: createLogger('info', sink), clock: h.clock.now, metrics: h.app.metrics };
}

it('Redis frozen under traffic: every event the API accepted meanwhile is delivered once after the thaw, none lost', async () => {
  const hookId = await hook();
  const d = deliverer();
  d.start();
  const expected = new Set<string>();
  const early = await newCall();
  expect((await move(early, { status: 'ringing' })).status).toBe(200);
  expected.add(callEventId(early, 'call.queued')).add(callEventId(early, 'call.ringing'));
  // Delivered and recorded so (a delivery whose record a stalled store missed is sent again: at least once).
  await waitUntil(async () => r.got.length === 2 && (await h.db.collection(COLLECTIONS.webhookDeliveries).countDocuments({ status: 'delivered' })) === 2, {
    what: 'the events before the freeze',
    timeoutMs: 20_000,
  });

  // A move in flight when Redis stalls: it holds the call's lock while FerretDB is frozen for a moment;
  // Redis freezes, FerretDB resumes, the write lands and the XADD times out: the event goes to MongoDB.
  const inFlightCall = await newCall();
  expected.add(callEventId(inFlightCall, 'call.queued'));
  mongoSvc.freeze();
  const inFlight = move(inFlightCall, { status: 'in_progress' }).then((res) => res);
  await waitUntil(async () => (await probe.exists(`vp:lock:call:${inFlightCall}`)) === 1, { what: 'the move holding its lock', timeoutMs: 10_000 });
  redisSvc.freeze();
  mongoSvc.thaw();
  const landed = await inFlight;
  expect([landed.status, landed.body.status]).toEqual([200, 'in_progress']);
  expected.add(callEventId(inFlightCall, 'call.in_progress'));

  // More traffic while Redis stays frozen (FREEZE_MS, and on a busy machine until 8 events were accepted
  // meanwhile, at most 4 × FREEZE_MS): worker-created calls, moves, test events, one round every ROUND_MS.
  // Those accepted must arrive.
  const refused: number[] = [];
  const frozenAt = Date.now();
  const before = expected.size;
  while (Date.now() - frozenAt < FREEZE_MS || (expected.size - before < 8 && Date.now() - frozenAt < 4 * FREEZE_MS)) {
    const round = delay(ROUND_MS);
    const created = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' });
    if (created.status === 201) expected.add(callEventId(created.body.call_id as string, 'call.queued'));
    else refused.push(created.status);
    const moved = await move(early, { status: 'in_progress' });
    if (moved.status === 200) expected.add(callEventId(early, 'call.in_progress'));
    else refused.push(moved.status);
    const test = await h.http.post(`/api/v1/webhooks/${hookId}/test`).set('Authorization', auth);
    if (test.status === 202) expected.add(test.body.id as string);
    else refused.push(test.status);
    await round;
  }
  expect(refused.every((s) => s === 503 || s === 409)).toBe(true); // refused, never a 500
  const fallbacks = await metric(h.app.metrics.webhookFallbacks);
  expect(fallbacks).toBeGreaterThanOrEqual(expected.size - 3); // all but the two events before the freeze and the in-flight call's call.queued
  redisSvc.thaw();

  // A delivery lease the deliverer asked for as Redis froze may have been granted without its answer: that
  // delivery waits for the lease to expire (WEBHOOK_TIMEOUT_MS + 30 s), hence the long wait.
  await waitUntil(() => [...expected].every((id) => counts().has(id)), { what: `all ${expected.size} accepted events at the receiver`, timeoutMs: 50_000 });
  // Timed-out XADDs that Redis applied on resuming put some events in both stores: still delivered once.
  const drained = async () =>
    (await h.db.collection(COLLECTIONS.webhookOutbox).countDocuments()) === 0 &&
    (await probe.xlen(WEBHOOK_EVENTS_STREAM)) === 0 &&
    (await h.db.collection(COLLECTIONS.webhookDeliveries).countDocuments({ status: { $ne: 'delivered' } })) === 0;
  await waitUntil(drained, { what: 'both outboxes drained and every delivery made', timeoutMs: 20_000 });
  expect(expected.size - before).toBeGreaterThanOrEqual(8); // much of the traffic was accepted while Redis was frozen
  expect([...counts().entries()].filter(([, n]) => n !== 1)).toEqual([]);
  expect(new Set(r.got.map((x) => x.id))).toEqual(expected);
  expect(await metric(h.app.metrics.webhookEmitFailures)).toBe(0);
  expect(await metric(h.app.metrics.webhookHeld)).toBe(0);
  expect(h.logs.join('')).not.toContain('webhook events lost');
}, 180_000);

it('a move that landed without its event (a process killed between the write and the emit) is sent by the retry, once', async () => {
  await hook(['call.ringing', 'call.in_progress', 'call.ended']);
  const d = deliverer();
  const id = await newCall();
  expect(await d.runOnce()).toEqual({ fannedOut: 1, attempted: 0 }); // its call.queued: not subscribed
  const t0 = h.clock.ms;
  const at = (ms: number) => new Date(t0 + ms);
  // As a backend killed right after the write leaves it: moved, the event marked due, nothing in the outbox.
  await liveDocs().updateOne({ _id: id }, { $set: { status: 'ringing', 'status_times.ringing': at(100) }, $push: { webhook_due: 'call.ringing' } });
  expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 });
  // The worker's retry of the same move: a repeat, answered as before, and now the event goes out.
  expect((await move(id, { status: 'ringing', at: at(100).toISOString() })).status).toBe(200);
  expect(await d.runOnce()).toEqual({ fannedOut: 1, attempted: 1 });
  expect(r.got).toEqual([{ id: callEventId(id, 'call.ringing'), type: 'call.ringing', created_at: expect.any(String), data: expect.objectContaining({ call_id: id, status: 'ringing' }) }]);
  expect((await findCall(h.db, id))!.webhook_due).toEqual([]);
  // A further repeat sends nothing more.
  expect((await move(id, { status: 'ringing', at: at(100).toISOString() })).status).toBe(200);
  expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 });

  // An answered call's end, moved but never handed off (its hold for the recording never made either).
  expect((await move(id, { status: 'in_progress', at: at(1000).toISOString() })).status).toBe(200);
  await liveDocs().updateOne(
    { _id: id },
    { $set: { status: 'completed', end_reason: 'bot_hangup', ended_at: at(5000), 'status_times.completed': at(5000) }, $push: { webhook_due: 'call.ended' } },
  );
  // The retried end holds call.ended for the recording, as the first try would have.
  expect((await move(id, { status: 'completed', end_reason: 'bot_hangup', at: at(5000).toISOString() })).status).toBe(200);
  expect(await probe.zscore(ENDED_PENDING_KEY, id)).not.toBeNull();
  await d.runOnce();
  expect(r.got.map((x) => x.type)).toEqual(['call.ringing', 'call.in_progress']);
  expect((await move(id, { status: 'completed', recording_key: `recordings/${id}.wav` })).status).toBe(200);
  await d.runOnce();
  expect(r.got.map((x) => x.type)).toEqual(['call.ringing', 'call.in_progress', 'call.ended']);
  expect(r.got[2]).toMatchObject({ id: callEventId(id, 'call.ended'), data: { status: 'completed', end_reason: 'bot_hangup', recording_key: `recordings/${id}.wav`, duration_ms: 4000 } });
  expect((await findCall(h.db, id))!.webhook_due).toEqual([]);
  expect([...counts().values()]).toEqual([1, 1, 1]);
});

it('a move stranded without its event and with no retry to come (its process died) is sent by the scan of the deliverer', async () => {
  await hook(['call.ringing', 'call.ended']);
  const ringing = await newCall();
  const swept = await newCall();
  const at = new Date(h.clock.ms + 100);
  // As a dialler killed between its sweeper's write and the emit leaves a call, and a backend killed after a ringing move the worker then gave up on.
  await liveDocs().updateOne({ _id: swept }, { $set: { status: 'failed', end_reason: 'not_claimed', ended_at: at, 'status_times.failed': at }, $push: { webhook_due: 'call.ended' } });
  await liveDocs().updateOne({ _id: ringing }, { $set: { status: 'ringing', 'status_times.ringing': at }, $push: { webhook_due: 'call.ringing' } });
  expect(await deliverer().runOnce()).toMatchObject({ attempted: 2 });
  expect(r.got.map((x) => [x.id, x.type, x.data.status]).sort()).toEqual(
    [
      [callEventId(swept, 'call.ended'), 'call.ended', 'failed'],
      [callEventId(ringing, 'call.ringing'), 'call.ringing', 'ringing'],
    ].sort(),
  );
  expect(await findCalls(h.db, { webhook_due: { $in: ['call.ringing', 'call.ended'] } })).toEqual([]);
  // A later scan (another replica's) finds nothing left to send.
  expect(await deliverer().runOnce()).toEqual({ fannedOut: 0, attempted: 0 });
  expect(r.got).toHaveLength(2);
});

it('the deliverer fans out the MongoDB fallback and deletes it; an event in the stream and the fallback both is delivered once', async () => {
  await hook(['campaign.started']);
  const lines: string[] = [];
  const deps = emitDeps(lines);
  redisSvc.freeze();
  const a = await emitWebhookEvent(deps, 'campaign.started', { campaign_id: 'a' });
  const b = await emitWebhookEvent(deps, 'campaign.started', { campaign_id: 'b' });
  expect([a?.handoff, b?.handoff]).toEqual(['fallback', 'fallback']);
  const fallback = h.db.collection(COLLECTIONS.webhookOutbox);
  expect((await fallback.find({}).sort({ created_at: 1, _id: 1 }).toArray()).map((x) => x._id)).toEqual([a!.id, b!.id]);
  expect(lines.join('')).toContain('webhook event kept in MongoDB');
  await thawRedis();
  // An XADD that timed out on the client may still be applied when Redis resumes (the first one sent may
  // have been): here the first event is in the stream too, whatever Redis did.
  const kept = (await fallback.findOne({ _id: a!.id as never }))!;
  await probe.xadd(WEBHOOK_EVENTS_STREAM, '*', 'id', kept._id as unknown as string, 'type', kept.type, 'body', kept.body);
  const inStream = await probe.xlen(WEBHOOK_EVENTS_STREAM);

  const d = deliverer();
  expect(await d.runOnce()).toEqual({ fannedOut: 2 + inStream, attempted: 2 });
  expect(r.got.map((x) => x.id).sort()).toEqual([a!.id, b!.id].sort());
  expect(r.got.map((x) => x.data.campaign_id).sort()).toEqual(['a', 'b']);
  expect(await fallback.countDocuments()).toBe(0);
  expect(await probe.xlen(WEBHOOK_EVENTS_STREAM)).toBe(0);
  expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 });
  expect(r.got).toHaveLength(2);
});

it('with Redis and FerretDB both frozen an event waits in memory until a store takes it; one still held when the process stops is lost, and counted', async () => {
  await hook(['campaign.completed']);
  const lines: string[] = [];
  const deps = emitDeps(lines);
  redisSvc.freeze();
  mongoSvc.freeze();
  const kept = await emitWebhookEvent(deps, 'campaign.completed', { campaign_id: 'kept' });
  expect(kept?.handoff).toBe('held');
  expect(await metric(h.app.metrics.webhookHeld)).toBe(1);
  expect(lines.join('')).toContain('webhook event held in memory');
  redisSvc.thaw();
  mongoSvc.thaw();
  await waitUntil(async () => (await metric(h.app.metrics.webhookHeld)) === 0, { what: 'the held event stored', timeoutMs: 30_000 });
  const d = deliverer();
  await waitUntil(async () => (await d.runOnce()).attempted > 0 || r.got.length > 0, { what: 'its delivery', timeoutMs: 20_000 });
  expect(r.got.map((x) => x.id)).toEqual([kept!.id]);
  expect(await metric(h.app.metrics.webhookEmitFailures)).toBe(0);

  // Stores still away when the process stops: the event was stored nowhere, and says so.
  redisSvc.freeze();
  mongoSvc.freeze();
  const gone = await emitWebhookEvent(deps, 'campaign.completed', { campaign_id: 'gone' });
  expect(gone?.handoff).toBe('held');
  expect(await flushHeldWebhookEvents({ timeoutMs: 300, redis: h.redis })).toBe(1);
  expect(await metric(h.app.metrics.webhookEmitFailures)).toBe(1);
  expect(await metric(h.app.metrics.webhookHeld)).toBe(0);
  expect(lines.join('')).toContain('webhook events lost: stored nowhere');
  expect(lines.join('')).toContain(gone!.id);
}, 90_000);
