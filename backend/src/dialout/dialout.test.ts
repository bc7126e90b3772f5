import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { CALL_JOBS_CONSUMER_GROUP, CALL_JOBS_STREAM_KEY, FLEET_RESERVATIONS_KEY, streamEntries } from '@voice-platform/schemas';
import { adminToken, createBot, createTrunk, createKey, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { findCalls } from '../calls/store.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let key: string;
let botId: string;
let inactiveBotId: string;

const BOT = {
  prompt: 'Remind {{customer_name}} about {{amount_due}}.',
  variables: [
    { name: 'customer_name', required: true, description: '' },
    { name: 'amount_due', required: false, description: '' },
  ],
};
const FAR = () => h.clock.ms + 3_600_000;

beforeAll(async () => {
  env = await startTestEnv(['redis']); // capacity and rate limits need a Redis of their own
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '1000', DIALOUT_RATE_PER_SECOND: '1000', RESERVATION_TTL_SECONDS: '60' } });
  auth = await adminToken(h);
  await createTrunk(h, auth);
  key = (await createKey(h, auth)).key;
  botId = await createBot(h, auth, BOT);
  inactiveBotId = await createBot(h, auth, { ...BOT, active: false });
});
afterAll(async () => {
  await h.close();
  await env.stop();
});
beforeEach(async () => {
  await h.redis.del('vp:fleet:workers', FLEET_RESERVATIONS_KEY);
  await heartbeat(h.redis, 'w1', { max_calls: 100 }, FAR());
});

const dial = (body: unknown, k: string | null = key) => {
  const req = h.http.post('/api/v1/sip/dialout');
  if (k !== null) req.set('X-API-Key', k);
  return typeof body === 'string' ? req.set('Content-Type', 'application/json').send(body) : req.send(body as object);
};
const good = { bot_id: '', to_number: '+4915112345678', variables: { customer_name: 'Ada' } };
const body = (over: Record<string, unknown> = {}) => ({ ...good, bot_id: botId, ...over });

async function code(res: Promise<{ status: number; body: { error?: { code: string } } }>): Promise<[number, string | undefined]> {
  const r = await res;
  return [r.status, r.body.error?.code];
}

describe('POST /api/v1/sip/dialout', () => {
  it('queues a call: 201, a call record, a capacity reservation and a job on the stream', async () => {
    const res = await dial(body({ variables: { customer_name: 'Ada', amount_due: '12 EUR' } })).expect(201);
    expect(res.body).toEqual({ call_id: expect.any(String), status: 'queued', bot_id: botId, to_number: '+4915112345678', from_number: '+15550001000', created_at: new Date(h.clock.ms).toISOString() });
    expect(res.headers.location).toBe(`/api/v1/calls/${res.body.call_id}`);
    const callId = res.body.call_id as string;

    const call = await h.http.get(`/api/v1/calls/${callId}`).set('X-API-Key', key).expect(200);
    expect(call.body).toMatchObject({ call_id: callId, bot_id: botId, direction: 'outbound', status: 'queued', variables: { customer_name: 'Ada', amount_due: '12 EUR' } });
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBe(String(h.clock.ms + 60_000));

    const groups = (await h.redis.xinfo('GROUPS', CALL_JOBS_STREAM_KEY)) as unknown[][];
    expect(groups.some((g) => g.includes(CALL_JOBS_CONSUMER_GROUP))).toBe(true);
    const read = streamEntries(await h.redis.xreadgroup('GROUP', CALL_JOBS_CONSUMER_GROUP, 'test-consumer', 'COUNT', 100, 'STREAMS', CALL_JOBS_STREAM_KEY, '>'));
    const jobs = read.map(([, f]) => f ?? []).map((fields) => Object.fromEntries(fields.reduce<string[][]>((acc, v, i) => (i % 2 ? acc : [...acc, [v, fields[i + 1]!]]), [])));
    expect(jobs).toContainEqual({
      call_id: callId,
      bot_id: botId,
      to_number: '+4915112345678',
      variables: JSON.stringify({ customer_name: 'Ada', amount_due: '12 EUR' }),
      sip_trunk_id: expect.stringMatching(/^ST_/),
      from_number: '+15550001000',
    });
  });

  it('answers each error code of the table, checked in the documented order', async () => {
    await h.redis.del('vp:fleet:workers'); // no capacity either: every earlier check must win over it
    const bad = 'vx_' + 'B'.repeat(32);
    // key → JSON → schema → bot exists → bot active → variables → capacity
    expect(await code(dial('{not json', null))).toEqual([401, 'missing_api_key']);
    expect(await code(dial('{not json', bad))).toEqual([401, 'invalid_api_key']);
    expect(await code(dial('{not json'))).toEqual([400, 'invalid_json']);
    expect(await code(h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).set('Content-Type', 'text/plain').send('x'))).toEqual([415, 'unsupported_media_type']);
    expect(await code(dial({ ...body({ bot_id: 'nope' }), extra: 1, to_number: 'x' }))).toEqual([422, 'validation_failed']);
    expect(await code(dial(body({ bot_id: 'nope', to_number: '0049151', connected_event: {} })))).toEqual([422, 'invalid_phone_number']);
    expect(await code(dial(body({ bot_id: 'nope', connected_event: { customer_name: 'Ada' } })))).toEqual([422, 'conflicting_fields']);
    expect(await code(dial(body({ bot_id: 'nope', variables: { bogus: 'x' } })))).toEqual([404, 'bot_not_found']);
    expect(await code(dial(body({ bot_id: inactiveBotId, variables: { bogus: 'x' } })))).toEqual([409, 'bot_inactive']);
    const mismatch = await dial(body({ variables: { amount_due: '1', bogus: 'x' } }));
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.error).toEqual({ code: 'variables_mismatch', message: expect.any(String), details: { missing: ['customer_name'], unknown: ['bogus'] } });
    const full = await dial(body());
    expect(full.status).toBe(503);
    expect(full.body.error.code).toBe('fleet_at_capacity');
    expect(full.headers['retry-after']).toBe('5');
  });

  it('names every invalid field and refuses over-long bodies and variable maps', async () => {
    const res = await dial({ to_number: 5, variables: { customer_name: 7 }, extra: true }).expect(422);
    expect(res.body.error.code).toBe('validation_failed');
    const fields = (res.body.error.details as Array<{ field: string }>).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['bot_id', 'to_number', 'variables.customer_name', 'extra']));
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x']));
    expect(await code(dial(body({ variables: many })))).toEqual([422, 'validation_failed']);
    const huge = JSON.stringify(body({ variables: { customer_name: 'x'.repeat(70_000) } }));
    expect(await code(dial(huge))).toEqual([413, 'payload_too_large']);
  });

  it('refuses variable names that are no variable names, whatever their values, as validation_failed', async () => {
    // The schema named only the values of well-named keys: other keys passed with any value, then were
    // reported as undeclared (variables_mismatch) rather than as malformed.
    for (const variables of [{ '': 'x' }, { 'first name': 'Ada' }, { customer_name: 'Ada', '9lives': { nested: true } }]) {
      for (const field of ['variables', 'connected_event']) {
        const res = await dial({ bot_id: botId, to_number: good.to_number, [field]: variables });
        expect([variables, res.status, res.body.error?.code]).toEqual([variables, 422, 'validation_failed']);
        expect(res.body.error.details).toEqual(expect.arrayContaining([{ field: expect.stringMatching(new RegExp(`^${field}(\\.|$)`)), message: 'is not allowed' }]));
      }
    }
  });

  it('accepts variables and its alias connected_event alike, and refuses both together', async () => {
    const a = await dial(body({ variables: { customer_name: 'Ada' } })).expect(201);
    const b = await dial({ bot_id: botId, to_number: '+4915112345678', connected_event: { customer_name: 'Bob' } }).expect(201);
    for (const [res, name] of [[a, 'Ada'], [b, 'Bob']] as const) {
      const call = await h.http.get(`/api/v1/calls/${res.body.call_id}`).set('X-API-Key', key).expect(200);
      expect(call.body.variables).toEqual({ customer_name: name });
    }
    const both = await dial({ bot_id: botId, to_number: '+4915112345678', variables: { customer_name: 'A' }, connected_event: { customer_name: 'A' } }).expect(422);
    expect(both.body.error.code).toBe('conflicting_fields');
    expect(both.body.error.details).toEqual([
      { field: 'variables', message: expect.any(String) },
      { field: 'connected_event', message: expect.any(String) },
    ]);
  });

  it('replays an Idempotency-Key with the first response and refuses it with another body', async () => {
    const first = await dial(body()).set('Idempotency-Key', 'order-1').expect(201);
    const again = await dial({ variables: { customer_name: 'Ada' }, to_number: '+4915112345678', bot_id: botId }).set('Idempotency-Key', 'order-1').expect(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await findCalls(h.db, { bot_id: botId, 'variables.customer_name': 'Ada', _id: first.body.call_id })).toHaveLength(1);
    expect(await h.redis.zcard(FLEET_RESERVATIONS_KEY)).toBe(1);

    const other = await dial(body({ to_number: '+4915199999999' })).set('Idempotency-Key', 'order-1').expect(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    // Keys are per API key: another key may use the same Idempotency-Key for its own call.
    const otherKey = (await createKey(h, auth)).key;
    const mine = await dial(body(), otherKey).set('Idempotency-Key', 'order-1').expect(201);
    expect(mine.body.call_id).not.toBe(first.body.call_id);
    // After 24 h the key is free again.
    h.clock.advance(24 * 3600 * 1000 + 1);
    await heartbeat(h.redis, 'w1', { max_calls: 100 }, FAR());
    const fresh = await dial(body({ to_number: '+4915199999999' })).set('Idempotency-Key', 'order-1').expect(201);
    expect(fresh.body.call_id).not.toBe(first.body.call_id);
    expect((await dial(body()).set('Idempotency-Key', 'x'.repeat(256)).expect(422)).body.error.details[0].field).toBe('Idempotency-Key');
  });

  it('places exactly one call for concurrent duplicates of one Idempotency-Key', async () => {
    const before = (await findCalls(h.db, {})).length;
    const results = await Promise.all(Array.from({ length: 8 }, () => dial(body({ to_number: '+4915100000001' })).set('Idempotency-Key', 'burst-1')));
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.call_id)).size).toBe(1);
    for (const r of results.filter((r) => r.status !== 201)) {
      expect([r.status, r.body.error.code]).toEqual([409, 'conflict']);
    }
    expect(await findCalls(h.db, {})).toHaveLength(before + 1);
  });

  it('frees the Idempotency-Key when the request fails, so a retry can succeed', async () => {
    await h.redis.del('vp:fleet:workers');
    await dial(body()).set('Idempotency-Key', 'retry-me').expect(503);
    await heartbeat(h.redis, 'w1', { max_calls: 100 }, FAR());
    await dial(body()).set('Idempotency-Key', 'retry-me').expect(201);
  });

  it('rate limits per key with a token bucket and Retry-After', async () => {
    const limited = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '3', DIALOUT_RATE_PER_SECOND: '1' } });
    try {
      const admin = await adminToken(limited);
      const k1 = (await createKey(limited, admin)).key;
      const k2 = (await createKey(limited, admin)).key;
      const send = (k: string) => limited.http.post('/api/v1/sip/dialout').set('X-API-Key', k).send({});
      for (let i = 0; i < 3; i++) expect((await send(k1)).status).toBe(422);
      const refused = await send(k1).expect(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.headers['retry-after']).toBe('1');
      expect((await send(k2)).status).toBe(422); // another key has its own bucket
      limited.clock.advance(1000);
      expect((await send(k1)).status).toBe(422);
      expect((await send(k1)).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('fleet capacity', () => {
  const worker = (path: string) => h.http.post(path).set('Authorization', `Bearer ${WORKER_TOKEN}`);

  it('refuses with 503 when no worker is live, or all are draining, dead or full', async () => {
    await h.redis.del('vp:fleet:workers');
    expect((await dial(body()).expect(503)).body.error).toMatchObject({ code: 'fleet_at_capacity', details: { live_workers: 0 } });
    await heartbeat(h.redis, 'w-drain', { max_calls: 5, draining: true }, FAR());
    await heartbeat(h.redis, 'w-dead', { max_calls: 5 }, h.clock.ms - 1);
    await heartbeat(h.redis, 'w-full', { max_calls: 5, active_calls: 5 }, FAR());
    expect((await dial(body()).expect(503)).body.error).toMatchObject({ code: 'fleet_at_capacity', details: { live_workers: 1 } });
    expect(await h.redis.zscore('vp:fleet:workers', 'w-dead')).toBeNull();
  });

  it('counts reservations against free slots and releases exactly once on a terminal event', async () => {
    await h.redis.del('vp:fleet:workers');
    await heartbeat(h.redis, 'w2', { max_calls: 3, active_calls: 1 }, FAR());
    const a = await dial(body()).expect(201);
    const b = await dial(body()).expect(201);
    await dial(body()).expect(503);
    expect(await h.redis.zrange(FLEET_RESERVATIONS_KEY, '0', '-1')).toEqual(expect.arrayContaining([a.body.call_id, b.body.call_id]));

    const ended = await worker(`/api/v1/calls/${a.body.call_id}/events`).send({ status: 'failed', end_reason: 'no_worker_reply' }).expect(200);
    expect(ended.headers['x-slot-released']).toBe('true');
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, a.body.call_id)).toBeNull();
    const repeat = await worker(`/api/v1/calls/${a.body.call_id}/events`).send({ status: 'failed' }).expect(200);
    expect(repeat.headers['x-slot-released']).toBe('false');

    const c = await dial(body()).expect(201); // the released slot is free again …
    await dial(body()).expect(503); // … and only that one
    const metrics = await h.http.get('/metrics').expect(200);
    expect(metrics.text).toMatch(/backend_capacity_slot_releases_total\{outcome="released"\} 1\b/);
    expect(metrics.text).toMatch(/backend_capacity_slot_releases_total\{outcome="already_gone"\} 1\b/);
    expect(metrics.text).toMatch(/backend_dialout_requests_total\{result="fleet_at_capacity"\} \d+/);
    expect(c.body.call_id).toBeDefined();
  });

  it('a reservation nobody claims expires, so a lost worker cannot leak capacity', async () => {
    await h.redis.del('vp:fleet:workers');
    await heartbeat(h.redis, 'w3', { max_calls: 1 }, FAR());
    const lost = await dial(body()).expect(201);
    await dial(body()).expect(503);
    h.clock.advance(60_000); // RESERVATION_TTL_SECONDS
    const next = await dial(body()).expect(201);
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, lost.body.call_id)).toBeNull();
    // The lost call's late terminal event must not free the slot the new call holds.
    const late = await worker(`/api/v1/calls/${lost.body.call_id}/events`).send({ status: 'failed' }).expect(200);
    expect(late.headers['x-slot-released']).toBe('false');
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, next.body.call_id)).not.toBeNull();
    await dial(body()).expect(503);
  });

  it('a worker claim (ZREM) followed by its terminal event releases nothing twice', async () => {
    await h.redis.del('vp:fleet:workers');
    await heartbeat(h.redis, 'w4', { max_calls: 1 }, FAR());
    const call = await dial(body()).expect(201);
    // The worker takes the job: its heartbeat now counts the call and it drops the reservation.
    await heartbeat(h.redis, 'w4', { max_calls: 1, active_calls: 1 }, FAR());
    expect(await h.redis.zrem(FLEET_RESERVATIONS_KEY, call.body.call_id)).toBe(1);
    await dial(body()).expect(503);
    const done = await worker(`/api/v1/calls/${call.body.call_id}/events`).send({ status: 'completed' }).expect(200);
    expect(done.headers['x-slot-released']).toBe('false');
    await heartbeat(h.redis, 'w4', { max_calls: 1, active_calls: 0 }, FAR());
    await dial(body()).expect(201);
  });

  it('admits on what the load of the workers leaves room for, not on free slots (admittable, docs/design.md §15)', async () => {
    await h.redis.del('vp:fleet:workers', FLEET_RESERVATIONS_KEY);
    // 29 slots free, but the worker's CPU has room for no other call: refused, Retry-After, nothing reserved.
    await heartbeat(h.redis, 'w-hot', { max_calls: 30, active_calls: 1, load: 0.82, admittable: 0 }, FAR());
    const before = await h.redis.zcard(FLEET_RESERVATIONS_KEY);
    const refused = await dial(body()).expect(503);
    expect(refused.body.error).toMatchObject({ code: 'fleet_at_capacity', details: { live_workers: 1 } });
    expect(refused.headers['retry-after']).toBe('5');
    expect(await h.redis.zcard(FLEET_RESERVATIONS_KEY)).toBe(before);
    // Room for two calls on a second worker: exactly two are admitted, their reservations counted against it.
    await heartbeat(h.redis, 'w-cool', { max_calls: 30, active_calls: 3, load: 0.4, admittable: 2 }, FAR());
    const a = await dial(body()).expect(201);
    const b = await dial(body()).expect(201);
    await dial(body()).expect(503);
    // A worker without the field (older) counts its free slots, as before.
    await heartbeat(h.redis, 'w-old', { max_calls: 1 }, FAR());
    const c = await dial(body()).expect(201);
    await dial(body()).expect(503);
    for (const call of [a, b, c]) await worker(`/api/v1/calls/${call.body.call_id}/events`).send({ status: 'failed', end_reason: 'no_worker_reply' }).expect(200);
  });
});
