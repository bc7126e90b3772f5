// Call webhooks (docs/design.md §8) against real stores, a real LiveKit (trunks) and real HTTP receivers on
// loopback (node:http): the admin API, the address rules, signed deliveries of a call driven through
// the API, retries on the test clock, a receiver that never answers, and two deliverers side by side.
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { freePort, saveLogs, startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { ADMIN, adminToken, bodyText, createBot, createKey, createTrunk, heartbeat, JWT_SECRET, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { seedAdmin } from '../auth/seed.js';
import { COLLECTIONS } from '../core/collections.js';
import { deliveryLeaseKey, ENDED_PENDING_KEY } from './keys.js';
import type { WebhookDeliverer } from './deliverer.js';

// --- an independent verifier: what a receiver would write, from the README ---------------------------
function verify(secret: string, header: string | undefined, raw: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

// --- a real receiver ------------------------------------------------------------------------------
interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; created_at: string; data: Record<string, unknown> };
  res: ServerResponse;
}
interface Receiver {
  url: string;
  got: Delivery[];
  close(): Promise<void>;
}
/** `answer` null: never answers (the request hangs until the test ends). */
async function receiver(answer: number | null = 200): Promise<Receiver> {
  const got: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      got.push({ headers: req.headers, raw, body: JSON.parse(raw), res });
      if (answer !== null) res.writeHead(answer, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/voice?token=abc`,
    got,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let env: TestEnv;
let h: Harness;
let auth: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  env = await startTestEnv(['redis']); // the outbox stream and capacity are global: a Redis of our own
});
afterAll(() => env.stop());
beforeEach(async () => {
  const r = new Redis(env.env.REDIS_URL!);
  await r.flushall();
  r.disconnect();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await h?.close();
});

async function start(extra: Record<string, string> = {}): Promise<void> {
  h = await startHarness({
    redisUrl: env.env.REDIS_URL,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', DIALOUT_BURST: '1000', DIALOUT_RATE_PER_SECOND: '1000', ...extra },
  });
  auth = await adminToken(h);
}
const post = (body: unknown) => h.http.post('/api/v1/webhooks').set('Authorization', auth).send(body as object);
const patch = (id: string, body: unknown) => h.http.patch(`/api/v1/webhooks/${id}`).set('Authorization', auth).send(body as object);
const deliveriesOf = async (id: string, query = '') => (await h.http.get(`/api/v1/webhooks/${id}/deliveries${query}`).set('Authorization', auth).expect(200)).body;
const CALL_EVENTS = ['call.queued', 'call.ringing', 'call.in_progress', 'call.ended'];

async function hook(url: string, events = CALL_EVENTS): Promise<{ id: string; secret: string }> {
  const res = await post({ url, events }).expect(201);
  return { id: res.body.id, secret: res.body.secret };
}
function deliverer(opts: { consumerName?: string } = {}): WebhookDeliverer {
  const d = h.deliverer(opts);
  cleanups.push(() => d.stop());
  return d;
}
async function listen(answer: number | null = 200): Promise<Receiver> {
  const r = await receiver(answer);
  cleanups.push(() => r.close());
  return r;
}
/** A trunk in the suite's LiveKit (dial-outs need one), removed after the test. */
async function trunk(): Promise<void> {
  const t = await createTrunk(h, auth);
  cleanups.push(() => h.http.delete(`/api/v1/sip/outbound-trunks/${t.id}`).set('Authorization', auth));
}

describe('webhooks admin API', () => {
  it('creates, lists, reads, updates and deletes a webhook; the secret is shown once and never again', async () => {
    await start();
    const res = await post({ url: 'https://93.184.216.34/hooks', events: ['call.ended', 'call.queued'], description: 'CRM' }).expect(201);
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    const now = new Date(h.clock.ms).toISOString();
    expect(res.body).toEqual({ id: expect.any(String), url: 'https://93.184.216.34/hooks', events: ['call.ended', 'call.queued'], description: 'CRM', secret, active: true, include_transcript: false, created_at: now, updated_at: now });
    expect(res.headers.location).toBe(`/api/v1/webhooks/${res.body.id}`);
    const id = res.body.id as string;
    const { secret: _shownOnce, ...shape } = res.body;

    const list = await h.http.get('/api/v1/webhooks').set('Authorization', auth).expect(200);
    const one = await h.http.get(`/api/v1/webhooks/${id}`).set('Authorization', auth).expect(200);
    expect(list.body).toEqual({ items: [shape] });
    expect(one.body).toEqual(shape);

    h.clock.advance(1000);
    const changed = await patch(id, { events: ['call.in_progress'], active: false, description: null, url: 'https://[2606:4700::1111]/v2' }).expect(200);
    expect(changed.body).toEqual({ ...shape, events: ['call.in_progress'], active: false, description: null, url: 'https://[2606:4700::1111]/v2', updated_at: new Date(h.clock.ms).toISOString() });
    expect((await patch(id, { active: true }).expect(200)).body.active).toBe(true);
    expect((await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(202)).body).toEqual({ id: expect.stringMatching(/^evt_/), type: 'webhook.test', created_at: expect.any(String) });

    // Never again: not in any response, not in the database in the clear, not in a log.
    const stored = JSON.stringify(await h.db.collection(COLLECTIONS.webhooks).findOne({ _id: id as never }));
    for (const text of [bodyText(list), bodyText(one), bodyText(changed), stored, h.logs.join('')]) expect(text).not.toContain(secret);
    expect(stored).toContain('secret_sealed');

    await h.http.delete(`/api/v1/webhooks/${id}`).set('Authorization', auth).expect(204);
    await h.http.get(`/api/v1/webhooks/${id}`).set('Authorization', auth).expect(404);
    await h.http.delete(`/api/v1/webhooks/${id}`).set('Authorization', auth).expect(404);
    expect((await h.http.get('/api/v1/webhooks').set('Authorization', auth).expect(200)).body).toEqual({ items: [] });
    // Two webhooks never share a secret.
    const [a, b] = [await hook('http://127.0.0.1:1/a'), await hook('http://127.0.0.1:1/b')];
    expect(a.secret).not.toBe(b.secret);
  });

  it('refuses bad requests in the documented error shape, naming the field', async () => {
    await start();
    const cases: Array<[unknown, string]> = [
      [{ url: 'ftp://93.184.216.34/x', events: ['call.ended'] }, 'url'],
      [{ url: '93.184.216.34/x', events: ['call.ended'] }, 'url'],
      [{ url: 'https://user:pw@93.184.216.34/x', events: ['call.ended'] }, 'url'],
      [{ url: 'https://host.invalid/x', events: ['call.ended'] }, 'url'],
      [{ url: 'https://93.184.216.34/x', events: [] }, 'events'],
      [{ url: 'https://93.184.216.34/x', events: ['call.nope'] }, 'events.0'],
      [{ url: 'https://93.184.216.34/x', events: ['call.ended', 'call.ended'] }, 'events'],
      [{ url: 'https://93.184.216.34/x', events: ['webhook.test'] }, 'events.0'],
      [{ events: ['call.ended'] }, 'url'],
      [{ url: 'https://93.184.216.34/x', events: ['call.ended'], secret: 'whsec_mine' }, 'secret'],
      [{ url: 'https://93.184.216.34/x', events: ['call.ended'], description: 'x'.repeat(501) }, 'description'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), 422, 'validation_failed']);
      expect(res.body.error).toEqual({ code: 'validation_failed', message: expect.any(String), details: expect.arrayContaining([{ field, message: expect.any(String) }]) });
    }
    expect((await post({ url: 'https://host.invalid/x', events: ['call.ended'] })).body.error.details).toEqual([{ field: 'url', message: 'host does not resolve' }]);
    expect((await h.http.post('/api/v1/webhooks').set('Authorization', auth).set('Content-Type', 'application/json').send('{nope')).body.error.code).toBe('invalid_json');
    expect((await h.http.post('/api/v1/webhooks').set('Authorization', auth).set('Content-Type', 'text/plain').send('x')).status).toBe(415);
    expect((await h.http.post('/api/v1/webhooks').send({ url: 'https://93.184.216.34/x', events: ['call.ended'] })).status).toBe(401);
    expect(await h.db.collection(COLLECTIONS.webhooks).countDocuments()).toBe(0);

    const { id } = await hook('https://93.184.216.34/x');
    expect((await patch(id, {}).expect(422)).body.error.code).toBe('validation_failed');
    expect((await patch(id, { active: 'no' }).expect(422)).body.error.details[0].field).toBe('active');
    await patch('no-such-hook', { active: false }).expect(404);
    await h.http.get('/api/v1/webhooks/no-such-hook/deliveries').set('Authorization', auth).expect(404);
    await h.http.post('/api/v1/webhooks/no-such-hook/test').set('Authorization', auth).expect(404);
    for (const [query, field] of [['?limit=0', 'limit'], ['?limit=x', 'limit'], ['?cursor=nope', 'cursor'], ['?status=dead', 'status']]) {
      const res = await h.http.get(`/api/v1/webhooks/${id}/deliveries${query}`).set('Authorization', auth).expect(422);
      expect(res.body.error.details).toEqual([{ field, message: expect.any(String) }]);
    }
    // A paused webhook gets no test event.
    await patch(id, { active: false }).expect(200);
    expect((await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(409)).body.error.code).toBe('conflict');
  });

  it('refuses loopback, private, link-local and unique-local hosts (IPv4, IPv6, IPv4-mapped) without WEBHOOK_ALLOW_PRIVATE', async () => {
    await start({ WEBHOOK_ALLOW_PRIVATE: 'false' });
    const refused = [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook', // by name: resolved
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[::]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a00:1]/',
      'http://[fc00::1]/',
      'http://[fd12:3456::1]/',
      'http://[fe80::1]/',
      'http://[64:ff9b::a9fe:a9fe]/', // NAT64 of 169.254.169.254
      'http://[2002:c0a8:101::1]/', // 6to4 of 192.168.1.1
    ];
    for (const url of refused) {
      const res = await post({ url, events: ['call.ended'] });
      expect([url, res.status, res.body.error?.details]).toEqual([url, 422, [{ field: 'url', message: expect.stringMatching(/non-public address$/) }]]);
    }
    expect(await h.db.collection(COLLECTIONS.webhooks).countDocuments()).toBe(0);
    // Public addresses pass; a PATCH to a private one is refused like a create.
    const { id } = await hook('https://93.184.216.34/hooks');
    await hook('https://[2606:4700::1111]/hooks');
    expect((await patch(id, { url: 'http://[::ffff:192.168.0.1]/' }).expect(422)).body.error.details[0].field).toBe('url');

    // Checked again at delivery time: the host now resolves to loopback (as after a DNS change).
    const r = await listen();
    const port = new URL(r.url).port;
    await h.db.collection(COLLECTIONS.webhooks).updateOne({ _id: id as never }, { $set: { url: `http://localhost:${port}/hook` } });
    await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(202);
    expect(await deliverer().runOnce()).toEqual({ fannedOut: 1, attempted: 1 });
    const [attempt] = (await deliveriesOf(id)).items;
    expect(attempt).toMatchObject({ attempt: 1, status: 'failed', status_code: null, error: expect.stringMatching(/^resolves to 127\.0\.0\.1, a loopback/) });
    expect(r.got).toHaveLength(0);
  });

  it('accepts loopback and private hosts with WEBHOOK_ALLOW_PRIVATE=true', async () => {
    await start({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    for (const url of ['http://127.0.0.1:9999/x', 'http://localhost/x', 'http://10.0.0.1/x', 'http://[::1]:8080/x', 'http://[fd00::1]/x']) await post({ url, events: ['call.ended'] }).expect(201);
  });
});

describe('webhook deliveries', () => {
  const BOT = { variables: [{ name: 'customer_name', required: true, description: '' }] };
  const worker = `Bearer ${WORKER_TOKEN}`;
  const event = (id: string, body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body).expect(200);
  const types = (r: Receiver) => r.got.map((d) => d.body.type);

  it('signs and delivers call.queued, call.ringing, call.in_progress and call.ended of a dial-out driven through the API', async () => {
    await start();
    const r = await listen();
    const { id: hookId, secret } = await hook(r.url);
    await trunk();
    await heartbeat(h.redis, 'w1', { max_calls: 10 }, h.clock.ms + 3_600_000);
    const key = (await createKey(h, auth)).key;
    const botId = await createBot(h, auth, BOT);
    const d = deliverer();
    d.start();

    const dial = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+15550109999', variables: { customer_name: 'Ada' } }).expect(201);
    const callId = dial.body.call_id as string;
    const t0 = h.clock.ms;
    await event(callId, { status: 'dialing', at: new Date(t0 + 100).toISOString() });
    await event(callId, { status: 'ringing', at: new Date(t0 + 500).toISOString() });
    await event(callId, { status: 'in_progress', at: new Date(t0 + 2_000).toISOString() });
    const action = { type: 'tool', name: 'record_promise', at: new Date(t0 + 8_000).toISOString(), duration_ms: 40, status: 'ok', arguments: { amount: '42' }, result: '{"reference":"PTP-1"}', error: null };
    await event(callId, { status: 'completed', end_reason: 'bot_hangup', at: new Date(t0 + 9_500).toISOString(), actions: [action] });
    await waitUntil(() => r.got.length === 3, { what: 'call.queued, call.ringing and call.in_progress', timeoutMs: 20_000 });
    // The end of an answered call waits for the worker's recording report, which follows the end.
    expect(await h.redis.zscore(ENDED_PENDING_KEY, callId)).not.toBeNull();
    await event(callId, { status: 'completed', recording_key: `recordings/2030/01/01/${callId}.wav` });
    await waitUntil(() => r.got.length === 4, { what: 'call.ended', timeoutMs: 20_000 });
    expect(await h.redis.zscore(ENDED_PENDING_KEY, callId)).toBeNull();

    expect([...types(r)].sort()).toEqual([...CALL_EVENTS].sort());
    const byType = Object.fromEntries(r.got.map((x) => [x.body.type, x]));
    for (const x of r.got) {
      expect(x.headers['content-type']).toBe('application/json');
      expect(x.headers['x-voice-event-id']).toBe(x.body.id);
      expect(x.body.id).toMatch(/^evt_[0-9a-f]{24}$/);
      expect(Object.keys(x.body)).toEqual(['id', 'type', 'created_at', 'data']);
      expect(verify(secret, x.headers['x-voice-signature'] as string, x.raw)).toBe(true);
      const t = Number(/^t=(\d+),/.exec(x.headers['x-voice-signature'] as string)![1]);
      expect(t).toBe(Math.floor(h.clock.ms / 1000)); // the signing time, on the deliverer's clock
      expect(x.body.data).toMatchObject({ call_id: callId, bot_id: botId, direction: 'outbound', to_number: '+15550109999', from_number: '+15550001000', variables: { customer_name: 'Ada' }, campaign_id: null });
    }
    expect(byType['call.queued']!.body.data).toMatchObject({ status: 'queued', started_at: null, ended_at: null, duration_ms: null });
    expect(byType['call.ringing']!.body.data).toMatchObject({ status: 'ringing' });
    expect(byType['call.in_progress']!.body.data).toMatchObject({ status: 'in_progress', started_at: new Date(t0 + 2_000).toISOString() });
    expect(byType['call.ended']!.body.data).toEqual({
      call_id: callId,
      bot_id: botId,
      direction: 'outbound',
      to_number: '+15550109999',
      from_number: '+15550001000',
      status: 'completed',
      end_reason: 'bot_hangup',
      sip_status_code: null,
      created_at: new Date(t0).toISOString(),
      started_at: new Date(t0 + 2_000).toISOString(),
      ended_at: new Date(t0 + 9_500).toISOString(),
      duration_ms: 7_500,
      recording_key: `recordings/2030/01/01/${callId}.wav`,
      recording_error: null,
      variables: { customer_name: 'Ada' },
      campaign_id: null,
      status_times: {
        queued: new Date(t0).toISOString(),
        dialing: new Date(t0 + 100).toISOString(),
        ringing: new Date(t0 + 500).toISOString(),
        in_progress: new Date(t0 + 2_000).toISOString(),
        completed: new Date(t0 + 9_500).toISOString(),
      },
      actions: [action],
      transfer: null,
    });

    // A receiver's verifier refuses a tampered body, another secret, or another time.
    const ended = byType['call.ended']!;
    const sig = ended.headers['x-voice-signature'] as string;
    expect(verify(secret, sig, ended.raw.replace('"bot_hangup"', '"callee_hangup"'))).toBe(false);
    expect(verify(secret, sig, `${ended.raw} `)).toBe(false);
    expect(verify(secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), sig, ended.raw)).toBe(false);
    expect(verify(secret, sig.replace(/^t=(\d+)/, (_m, t: string) => `t=${Number(t) + 1}`), ended.raw)).toBe(false);

    // The deliveries log: one delivered attempt per event.
    const log = await deliveriesOf(hookId);
    expect(log.next_cursor).toBeNull();
    expect(log.items.map((i: { type: string }) => i.type).sort()).toEqual([...CALL_EVENTS].sort());
    for (const item of log.items) {
      expect(item).toEqual({
        id: expect.any(String),
        event_id: expect.stringMatching(/^evt_/),
        type: item.type,
        attempt: 1,
        status: 'delivered',
        status_code: 200,
        error: null,
        duration_ms: expect.any(Number),
        attempted_at: new Date(h.clock.ms).toISOString(),
        next_attempt_at: null,
        delivered_at: new Date(h.clock.ms).toISOString(),
      });
    }
    expect(new Set(log.items.map((i: { event_id: string }) => i.event_id))).toEqual(new Set(r.got.map((x) => x.body.id)));
    // Never the secret or a signature in the logs; nor the URL (its token).
    const logs = h.logs.join('');
    expect(logs).toContain('webhook delivered');
    for (const x of [secret, sig.slice(-64), 'token=abc']) expect(logs).not.toContain(x);
  });

  it('retries a failing receiver 1, 2, 4 … 64 minutes apart on the test clock, then marks it dead after 8 attempts', async () => {
    await start();
    const r = await listen(500);
    const { id, secret } = await hook(r.url);
    const queued = (await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(202)).body;
    const d = deliverer();
    expect(await d.runOnce()).toEqual({ fannedOut: 1, attempted: 1 });
    for (let n = 1; n < 8; n++) {
      const delay = 60_000 * 2 ** (n - 1);
      h.clock.advance(delay - 1);
      expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 }); // not due yet
      h.clock.advance(1);
      expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 1 });
    }
    h.clock.advance(24 * 3_600_000);
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 }); // dead: no more attempts
    auth = await adminToken(h); // the day on the test clock outlived the admin token

    expect(r.got).toHaveLength(8);
    for (const x of r.got) {
      expect(x.body).toMatchObject({ id: queued.id, type: 'webhook.test', data: { webhook_id: id } });
      expect(x.raw).toBe(r.got[0]!.raw); // the same bytes every time
      expect(verify(secret, x.headers['x-voice-signature'] as string, x.raw)).toBe(true);
    }
    const { items, next_cursor } = await deliveriesOf(id);
    expect(next_cursor).toBeNull();
    expect(items.map((i: { attempt: number }) => i.attempt)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]); // newest first
    expect(items.map((i: { status: string }) => i.status)).toEqual(['dead', ...Array(7).fill('failed')]);
    const gaps = items
      .slice(1)
      .reverse()
      .map((i: { attempted_at: string; next_attempt_at: string }) => Date.parse(i.next_attempt_at) - Date.parse(i.attempted_at));
    expect(gaps).toEqual([1, 2, 4, 8, 16, 32, 64].map((m) => m * 60_000));
    for (const i of items) expect(i).toMatchObject({ event_id: queued.id, type: 'webhook.test', status_code: 500, error: 'HTTP 500', delivered_at: null });
    expect(items[0].next_attempt_at).toBeNull();
    // Each attempt happened when the previous one said it would.
    const chron = [...items].reverse();
    for (let n = 1; n < 8; n++) expect(chron[n].attempted_at).toBe(chron[n - 1].next_attempt_at);

    // Cursor pagination walks the same list.
    const p1 = await deliveriesOf(id, '?limit=3');
    const p2 = await deliveriesOf(id, `?limit=3&cursor=${p1.next_cursor}`);
    const p3 = await deliveriesOf(id, `?limit=3&cursor=${p2.next_cursor}`);
    expect([p1.items.length, p2.items.length, p3.items.length, p3.next_cursor]).toEqual([3, 3, 2, null]);
    expect([...p1.items, ...p2.items, ...p3.items]).toEqual(items);
    expect(await h.app.metrics.registry.getSingleMetricAsString('backend_webhook_attempts_total')).toMatch(/result="dead"} 1\n[\s\S]*result="failed"} 7|result="failed"} 7[\s\S]*result="dead"} 1/);
  });

  it('a receiver that never answers slows no API call: dial-outs complete while its deliveries hang', async () => {
    await start({ WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_CONCURRENCY_PER_WEBHOOK: '2' });
    const slow = await listen(null);
    const fast = await listen();
    const slowHook = await hook(slow.url, ['call.queued']);
    await hook(fast.url, ['call.queued']);
    await trunk();
    await heartbeat(h.redis, 'w1', { max_calls: 50 }, h.clock.ms + 3_600_000);
    const key = (await createKey(h, auth)).key;
    const botId = await createBot(h, auth, BOT);
    const d = deliverer();
    d.start();
    const dial = () => h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+15550109999', variables: { customer_name: 'Ada' } }).expect(201);
    await dial();
    await waitUntil(() => slow.got.length === 1, { what: 'a delivery hanging at the receiver', timeoutMs: 20_000 });
    // The receiver holds that request open; the API answers regardless.
    for (let i = 0; i < 6; i++) {
      const res = await dial();
      await h.http.get(`/api/v1/calls/${res.body.call_id}`).set('X-API-Key', key).expect(200);
    }
    await waitUntil(() => slow.got.length === 2, { what: 'a second hanging delivery', timeoutMs: 20_000 });
    // Another webhook's receiver gets every event meanwhile: the slow one's backlog does not starve it.
    await waitUntil(() => fast.got.length === 7, { what: 'all seven events at the other receiver', timeoutMs: 20_000 });
    expect(slow.got.every((x) => !x.res.writableEnded)).toBe(true); // none answered
    // At most WEBHOOK_CONCURRENCY_PER_WEBHOOK sockets to it: its other five events wait their turn.
    await waitUntil(async () => (await h.db.collection(COLLECTIONS.webhookDeliveries).countDocuments({ status: 'pending' })) === 7, { what: 'seven queued deliveries', timeoutMs: 20_000 });
    expect(slow.got.length).toBeLessThanOrEqual(2);
    // Stopping cuts the hanging attempts short without counting them: the deliveries stay due.
    await d.stop();
    expect(await h.db.collection(COLLECTIONS.webhookAttempts).countDocuments({ webhook_id: slowHook.id })).toBe(0);
    expect(await h.db.collection(COLLECTIONS.webhookDeliveries).countDocuments({ webhook_id: slowHook.id, status: 'pending', attempts: 0 })).toBe(7);
  });

  it('an attempt without an answer within WEBHOOK_TIMEOUT_MS fails and is retried', async () => {
    await start({ WEBHOOK_TIMEOUT_MS: '300' });
    const slow = await listen(null);
    const { id } = await hook(slow.url);
    await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(202);
    expect(await deliverer().runOnce()).toEqual({ fannedOut: 1, attempted: 1 });
    expect((await deliveriesOf(id)).items).toEqual([
      expect.objectContaining({ attempt: 1, status: 'failed', status_code: null, error: 'no answer within 300 ms', next_attempt_at: new Date(h.clock.ms + 60_000).toISOString() }),
    ]);
    expect(slow.got).toHaveLength(1);
  });

  it('two deliverers side by side never send the same attempt twice', async () => {
    await start({ WEBHOOK_CONCURRENCY_PER_WEBHOOK: '64', WEBHOOK_CONCURRENCY: '64' });
    const r = await listen(500);
    const { id } = await hook(r.url);
    const events = 15;
    for (let i = 0; i < events; i++) await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(202);
    const a = deliverer({ consumerName: 'replica-a' });
    const b = deliverer({ consumerName: 'replica-b' });
    const counts = () => {
      const c = new Map<string, number>();
      for (const x of r.got) c.set(x.body.id, (c.get(x.body.id) ?? 0) + 1);
      return [...c.values()];
    };
    for (let round = 1; round <= 3; round++) {
      const passes = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
      expect(passes.reduce((n, p) => n + p.attempted, 0)).toBe(events);
      if (round === 1) expect(passes.reduce((n, p) => n + p.fannedOut, 0)).toBe(events);
      expect(counts()).toEqual(Array(events).fill(round));
      h.clock.advance(60_000 * 2 ** (round - 1));
    }
    const log = await h.db.collection(COLLECTIONS.webhookAttempts).find({}).toArray();
    expect(log).toHaveLength(events * 3);
    expect(new Set(log.map((x) => `${x.event_id}#${x.attempt}`)).size).toBe(events * 3);
    // A delivery whose lease another replica holds (its attempt in flight there) is left to it.
    const held = (await h.db.collection(COLLECTIONS.webhookDeliveries).find({}).sort({ _id: 1 }).limit(1).toArray())[0]!;
    await h.redis.set(deliveryLeaseKey(held._id as unknown as string), 'another-replica', 'PX', 60_000);
    expect(await a.runOnce()).toMatchObject({ attempted: events - 1 });
    await h.redis.del(deliveryLeaseKey(held._id as unknown as string));
    expect(await b.runOnce()).toMatchObject({ attempted: 1 });
    expect(counts()).toEqual(Array(events).fill(4));
  });

  it('sends each webhook only what it subscribes to; a paused webhook holds its deliveries; call.ended of the sweeper and after the recording wait', async () => {
    await start({ WEBHOOK_RECORDING_WAIT_SECONDS: '60' });
    const ended = await listen();
    const queued = await listen(500);
    const e = await hook(ended.url, ['call.ended']);
    const q = await hook(queued.url, ['call.queued']);
    const d = deliverer();
    const botId = await createBot(h, auth, {});

    // A worker's WebSocket call: answered, ended, and no recording report ever comes.
    const call = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201);
    const callId = call.body.call_id as string;
    await event(callId, { status: 'in_progress' });
    await event(callId, { status: 'completed', end_reason: 'caller_hangup' });
    expect(await d.runOnce()).toMatchObject({ attempted: 1 }); // call.queued to `q` only (it answers 500)
    expect([types(ended), types(queued)]).toEqual([[], ['call.queued']]);
    h.clock.advance(60_000);
    await d.runOnce(); // the wait is over: call.ended goes out without the recording (and `q` is retried)
    expect(types(ended)).toEqual(['call.ended']);
    expect(ended.got[0]!.body.data).toMatchObject({ call_id: callId, status: 'completed', end_reason: 'caller_hangup', recording_key: null, duration_ms: 0 });
    expect(types(queued)).toEqual(['call.queued', 'call.queued']);

    // Paused: its pending retry waits, and it gets no new events; resumed: the retry goes out.
    await patch(q.id, { active: false }).expect(200);
    h.clock.advance(120_000);
    await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201);
    expect(await d.runOnce()).toMatchObject({ fannedOut: 1, attempted: 0 });
    expect(types(queued)).toHaveLength(2);
    await patch(q.id, { active: true }).expect(200);
    expect(await d.runOnce()).toMatchObject({ attempted: 1 });
    expect(types(queued)).toHaveLength(3);

    // A dial-out no worker claims: the sweeper fails it, and its call.ended goes out at once.
    await trunk();
    await heartbeat(h.redis, 'w1', { max_calls: 10 }, h.clock.ms + 3_600_000);
    const key = (await createKey(h, auth)).key;
    const dial = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+15550109999' }).expect(201);
    h.clock.advance((h.settings.QUEUED_CALL_TIMEOUT_SECONDS + 1) * 1000);
    expect(await h.sweeper().runOnce()).toBeGreaterThanOrEqual(1);
    await d.runOnce();
    const swept = ended.got.find((x) => x.body.data.call_id === dial.body.call_id)?.body;
    expect(swept).toMatchObject({ type: 'call.ended', data: { status: 'failed', end_reason: 'not_claimed', duration_ms: 0, started_at: null } });
    expect((await deliveriesOf(e.id)).items.every((i: { status: string }) => i.status === 'delivered')).toBe(true);
  });
});

describe('the dialler role of the real entry point', () => {
  it('delivers from dist/main.js, and SIGTERM ends it while a delivery hangs', async () => {
    await start(); // only for its Redis flush and cleanup; the process below has stores of its own
    const port = await freePort();
    const dbName = `wh_boot_${process.pid}`;
    const mongo = new MongoClient(process.env.MONGODB_URI!);
    await mongo.connect();
    cleanups.push(async () => {
      await mongo.db(dbName).dropDatabase();
      await mongo.close();
    });
    await seedAdmin(mongo.db(dbName), ADMIN.email, ADMIN.password);
    const child = spawn(process.execPath, [fileURLToPath(new URL('../../dist/main.js', import.meta.url))], {
      env: {
        PATH: process.env.PATH ?? '',
        MONGODB_URI: process.env.MONGODB_URI!,
        MONGODB_DB: dbName,
        REDIS_URL: env.env.REDIS_URL!,
        JWT_SECRET,
        WORKER_AUTH_TOKEN: WORKER_TOKEN,
        HOST: '127.0.0.1',
        PORT: String(port),
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '200',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      child.kill('SIGKILL');
      saveLogs('webhooks-boot', out);
    });
    const base = `http://127.0.0.1:${port}`;
    await waitUntil(async () => (await fetch(`${base}/health`)).status === 200, { what: 'backend', timeoutMs: 30_000 });
    const login = (await (await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as { access_token: string };
    const api = async (path: string, body?: object) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${login.access_token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const ok = await listen();
    const slow = await listen(null);
    const created = (await (await api('/api/v1/webhooks', { url: ok.url, events: ['call.ended'] })).json()) as { id: string; secret: string };
    const hanging = (await (await api('/api/v1/webhooks', { url: slow.url, events: ['call.ended'] })).json()) as { id: string };
    expect((await api(`/api/v1/webhooks/${created.id}/test`)).status).toBe(202);
    expect((await api(`/api/v1/webhooks/${hanging.id}/test`)).status).toBe(202);
    await waitUntil(() => ok.got.length === 1 && slow.got.length === 1, { what: 'both test events at their receivers', timeoutMs: 30_000 });
    expect(verify(created.secret, ok.got[0]!.headers['x-voice-signature'] as string, ok.got[0]!.raw)).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('webhook deliverer started');
    expect(out).not.toContain(created.secret);
  });
});
