// The dialler's stale-call sweeper on real stores. Time moves with the harness clock and passes run
// through runOnce(), so nothing waits for the timer.
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { RoomServiceClient } from 'livekit-server-sdk';
import { CALL_FINAL_EVENTS_KEY, CALL_LEASE_TTL_MS, CALL_LEASES_KEY, FLEET_RESERVATIONS_KEY } from '@voice-platform/schemas';
import { adminToken, createBot, createTrunk, createKey, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { createMetrics, type Metrics } from '../core/metrics.js';
import { findCall } from './store.js';

// The reservation TTL is long here so that dialling a younger call (whose Lua script drops expired
// reservations) leaves the older calls' reservations in place for the sweeper to release.
const TTL_S = 600;
const TIMEOUT_S = 900;

let env: TestEnv;
let h: Harness;
let key: string;
let botId: string;
const worker = `Bearer ${WORKER_TOKEN}`;

beforeAll(async () => {
  env = await startTestEnv(['redis']); // private Redis: the reservation set is global
});
afterAll(() => env.stop());
// A fresh database per test, so one test's leftover queued calls never count in another's sweep.
beforeEach(async () => {
  h = await startHarness({
    redisUrl: env.env.REDIS_URL,
    env: { DIALOUT_BURST: '1000', RESERVATION_TTL_SECONDS: String(TTL_S), QUEUED_CALL_TIMEOUT_SECONDS: String(TIMEOUT_S) },
  });
  const auth = await adminToken(h);
  key = (await createKey(h, auth)).key;
  await createTrunk(h, auth);
  botId = await createBot(h, auth);
  await heartbeat(h.redis, 'w1', { max_calls: 1000 }, h.clock.ms + 3_600_000);
});
afterEach(() => h.close());

const dial = async (): Promise<string> =>
  (await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+14155550100' }).expect(201)).body.call_id as string;
const event = (id: string, body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body);
const read = async (id: string) => (await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200)).body;
const reservation = (id: string) => h.redis.zscore(FLEET_RESERVATIONS_KEY, id);
const released = async (m: Metrics) => (await m.slotReleases.get()).values.find((v) => v.labels.outcome === 'released')?.value ?? 0;
const swept = async (m: Metrics) => (await m.callsSwept.get()).values[0]?.value ?? 0;

describe('calls whose worker was lost', () => {
  const rooms = () => new RoomServiceClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!);
  const lost = async (m: Metrics) => (await m.callsLost.get()).values[0]?.value ?? 0;

  it('fails a call whose lease expired with worker_lost, deletes its room, and leaves live calls alone', async () => {
    await h.redis.del(CALL_LEASES_KEY);
    const dead = await dial();
    const live = await dial();
    const ended = await dial();
    for (const id of [dead, live, ended]) await event(id, { status: 'in_progress' }).expect(200);
    await event(ended, { status: 'completed', end_reason: 'bot_hangup' }).expect(200);
    // Leases hold the workers' wall-clock expiry: the dead worker's ran out a second ago.
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() - 1000, dead, Date.now() + 60_000, live, Date.now() - 1000, ended);
    // The dead call's room, with the callee still in it as far as LiveKit knows.
    await rooms().createRoom({ name: dead, emptyTimeout: 300 });
    expect((await rooms().listRooms([dead])).map((r) => r.name)).toEqual([dead]);
    expect(await reservation(dead)).not.toBeNull();

    const sweeper = h.sweeper();
    expect(await sweeper.runOnce()).toBe(1);
    expect(await read(dead)).toMatchObject({ status: 'failed', end_reason: 'worker_lost', ended_at: new Date(h.clock.ms).toISOString() });
    expect(await reservation(dead)).toBeNull();
    expect(await rooms().listRooms([dead])).toEqual([]);
    expect(await h.redis.zscore(CALL_LEASES_KEY, dead)).toBeNull();
    // The call that ended normally keeps its outcome; only its stale lease goes.
    expect(await read(ended)).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(await h.redis.zscore(CALL_LEASES_KEY, ended)).toBeNull();
    // The call whose worker still renews its lease is untouched.
    expect(await read(live)).toMatchObject({ status: 'in_progress', ended_at: null });
    expect(await h.redis.zscore(CALL_LEASES_KEY, live)).not.toBeNull();
    expect(await lost(h.app.metrics)).toBe(1);
    expect(h.logs.some((l) => l.includes('call lost with its worker: ended'))).toBe(true);
    // Nothing twice.
    expect(await sweeper.runOnce()).toBe(0);
    expect(await lost(h.app.metrics)).toBe(1);
    await h.redis.del(CALL_LEASES_KEY);
  });
});

describe('no call stays live without a worker', () => {
  const lost = async (m: Metrics) => (await m.callsLost.get()).values[0]?.value ?? 0;
  beforeEach(() => h.redis.del(CALL_LEASES_KEY, CALL_FINAL_EVENTS_KEY));

  it('closes a dialing, ringing or in-progress call that holds no lease once its last move is older than twice the lease TTL', async () => {
    const ids = { dialing: await dial(), ringing: await dial(), in_progress: await dial() };
    for (const [status, id] of Object.entries(ids)) await event(id, { status }).expect(200);
    const leased = await dial();
    await event(leased, { status: 'in_progress' }).expect(200);
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() + 60_000, leased);
    const sweeper = h.sweeper();
    h.clock.advance(2 * CALL_LEASE_TTL_MS - 1000); // a lease lost to a Redis outage may yet be written again
    expect(await sweeper.runOnce()).toBe(0);
    // The scan (every live call: a full read on FerretDB) runs at most every half of that age.
    h.clock.advance(2000);
    expect(await sweeper.runOnce()).toBe(0);
    h.clock.advance(CALL_LEASE_TTL_MS);
    expect(await sweeper.runOnce()).toBe(3);
    for (const id of Object.values(ids)) {
      expect(await read(id)).toMatchObject({ status: 'failed', end_reason: 'worker_lost', ended_at: new Date(h.clock.ms).toISOString() });
      expect(await reservation(id)).toBeNull();
    }
    expect(await read(leased)).toMatchObject({ status: 'in_progress', ended_at: null });
    expect(await lost(h.app.metrics)).toBe(3);
    expect(h.logs.some((l) => l.includes('live calls without a lease closed'))).toBe(true);
    expect(await sweeper.runOnce()).toBe(0);
  });

  it('closes a lost call its worker had ended as it ended (the parked final event), and the worker\'s late retry of that event changes nothing', async () => {
    const id = await dial();
    await event(id, { status: 'in_progress', event_id: 'ev-1' }).expect(200);
    const at = new Date(h.clock.ms + 5000).toISOString();
    const final = { status: 'completed', end_reason: 'bot_hangup', event_id: 'ev-2', at, transcript: [{ role: 'bot', text: 'Hello Sam.', at }] };
    await h.redis.hset(CALL_FINAL_EVENTS_KEY, id, JSON.stringify(final));
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() - 1000, id); // the worker died before the backend took the end
    expect(await h.sweeper().runOnce()).toBe(1);
    const call = await read(id);
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'bot_hangup',
      ended_at: at,
      transcript: [{ role: 'bot', text: 'Hello Sam.', at }],
      recording_key: null,
      recording_error: 'the worker stopped before uploading the recording',
    });
    expect(await h.redis.hexists(CALL_FINAL_EVENTS_KEY, id)).toBe(0);
    expect(await h.redis.zscore(CALL_LEASES_KEY, id)).toBeNull();
    expect(await reservation(id)).toBeNull();
    // The same event sent again (its worker's outbox retrying) and an earlier one: taken, nothing moves.
    expect((await event(id, final).expect(200)).body).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect((await event(id, { status: 'in_progress', event_id: 'ev-1' }).expect(200)).body).toMatchObject({ status: 'completed' });
    // A new event that would move it back is still a conflict.
    await event(id, { status: 'in_progress', event_id: 'ev-3' }).expect(409);
  });

  it('an unreadable parked event closes the call worker_lost', async () => {
    const id = await dial();
    await event(id, { status: 'in_progress' }).expect(200);
    await h.redis.hset(CALL_FINAL_EVENTS_KEY, id, '{"status":"completed","end_reason":');
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() - 1000, id);
    expect(await h.sweeper().runOnce()).toBe(1);
    expect(await read(id)).toMatchObject({ status: 'failed', end_reason: 'worker_lost' });
  });

  it('leaves a queued call alone while a live worker holds its lease (its dialing report is on the way), and closes it when the lease expires', async () => {
    const id = await dial();
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() + 60_000, id);
    h.clock.advance((TIMEOUT_S + 1) * 1000);
    const sweeper = h.sweeper();
    expect(await sweeper.runOnce()).toBe(0);
    expect(await read(id)).toMatchObject({ status: 'queued' });
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() - 1000, id);
    expect(await sweeper.runOnce()).toBe(1);
    expect(await read(id)).toMatchObject({ status: 'failed', end_reason: 'worker_lost' });
  });
});

describe('stale-call sweeper', () => {
  it('fails calls queued past the timeout (dial-outs not_claimed, test calls not_started), and frees each reservation once', async () => {
    const old = await dial();
    const dialing = await dial();
    await event(dialing, { status: 'dialing' }).expect(200);
    await h.redis.zadd(CALL_LEASES_KEY, Date.now() + 60_000, dialing); // its worker lives
    const ws = (await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201)).body.call_id as string;
    h.clock.advance(500_000);
    const young = await dial();
    h.clock.advance((TIMEOUT_S - 500 + 1) * 1000); // old (and dialing, ws) are TIMEOUT_S + 1 s old; young is not
    expect(await reservation(old)).not.toBeNull();

    const sweeper = h.sweeper();
    expect(await sweeper.runOnce()).toBe(2);
    const now = new Date(h.clock.ms).toISOString();
    const failed = await read(old);
    expect(failed).toMatchObject({ status: 'failed', end_reason: 'not_claimed', ended_at: now, started_at: null });
    expect(failed.status_times).toEqual({ queued: failed.created_at, failed: now });
    expect(await reservation(old)).toBeNull();
    expect(await released(h.app.metrics)).toBe(1);
    expect(await swept(h.app.metrics)).toBe(2);

    expect(await read(young)).toMatchObject({ status: 'queued', ended_at: null, end_reason: null });
    expect(await reservation(young)).not.toBeNull();
    expect(await read(dialing)).toMatchObject({ status: 'dialing', ended_at: null, end_reason: null });
    // A WebSocket call its worker recorded and never started (the worker died at once) ends too.
    expect(await findCall(h.db, ws)).toMatchObject({ status: 'failed', end_reason: 'not_started' });

    // A second pass finds nothing and releases nothing again.
    expect(await sweeper.runOnce()).toBe(0);
    expect(await released(h.app.metrics)).toBe(1);
    expect(await swept(h.app.metrics)).toBe(2);
    const line = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'stale queued calls swept');
    expect(line).toMatchObject({ found: 2, swept: 2, lost_race: 0 });
    expect((line!.call_ids as string[]).sort()).toEqual([old, ws].sort());
    expect(JSON.stringify(line)).not.toContain('+1415');
    await h.redis.zrem(CALL_LEASES_KEY, dialing);
  });

  it('handles at most one batch per pass, oldest first', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await dial());
      h.clock.advance(1000);
    }
    h.clock.advance(TIMEOUT_S * 1000);
    const sweeper = h.sweeper({ batchSize: 2 });
    expect(await sweeper.runOnce()).toBe(2);
    expect((await read(ids[0]!)).status).toBe('failed');
    expect((await read(ids[1]!)).status).toBe('failed');
    expect((await read(ids[2]!)).status).toBe('queued');
    expect(await sweeper.runOnce()).toBe(1);
    expect(await sweeper.runOnce()).toBe(0);
  });

  it('two dialler replicas sweeping at once fail each call exactly once', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, () => dial()));
    h.clock.advance((TIMEOUT_S + 1) * 1000);
    const [ma, mb] = [createMetrics(), createMetrics()];
    const [a, b] = await Promise.all([h.sweeper({ metrics: ma }).runOnce(), h.sweeper({ metrics: mb }).runOnce()]);
    expect(a + b).toBe(ids.length);
    expect((await released(ma)) + (await released(mb))).toBe(ids.length);
    expect((await swept(ma)) + (await swept(mb))).toBe(ids.length);
    for (const id of ids) {
      const call = await read(id);
      expect(call).toMatchObject({ status: 'failed', end_reason: 'not_claimed' });
      expect(Object.keys(call.status_times).sort()).toEqual(['failed', 'queued']);
      expect(await reservation(id)).toBeNull();
    }
    expect(h.logs.some((l) => l.includes('"level":"error"') || l.includes('stale-call sweep failed'))).toBe(false);
  });

  it('a worker dialing while the sweep runs: exactly one of them wins and the record agrees', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, () => dial()));
    h.clock.advance((TIMEOUT_S + 1) * 1000);
    // The sweeper goes oldest first; the workers' events go newest first, so they meet in the middle.
    const [count, ...events] = await Promise.all([h.sweeper().runOnce(), ...[...ids].reverse().map((id) => event(id, { status: 'dialing' }))]);
    const byId = new Map([...ids].reverse().map((id, i) => [id, events[i]!]));
    let dialed = 0;
    for (const id of ids) {
      const res = byId.get(id)!;
      const call = await read(id);
      if (res.status === 200) {
        dialed++;
        expect(call).toMatchObject({ status: 'dialing', ended_at: null, end_reason: null });
        expect(Object.keys(call.status_times).sort()).toEqual(['dialing', 'queued']);
      } else {
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ code: 'conflict', details: { from: 'failed', to: 'dialing' } });
        expect(call).toMatchObject({ status: 'failed', end_reason: 'not_claimed' });
        expect(Object.keys(call.status_times).sort()).toEqual(['failed', 'queued']);
        expect(await reservation(id)).toBeNull();
      }
    }
    expect(count + dialed).toBe(ids.length);
  });

  it('a worker that claims a swept job later is refused, so it never dials', async () => {
    const id = await dial();
    h.clock.advance((TIMEOUT_S + 1) * 1000);
    expect(await h.sweeper().runOnce()).toBe(1);
    const res = await event(id, { status: 'dialing' }).expect(409);
    expect(res.body).toEqual({ error: { code: 'conflict', message: expect.any(String), details: { from: 'failed', to: 'dialing' } } });
    // Its own terminal report afterwards changes nothing and releases nothing twice.
    const late = await event(id, { status: 'failed', end_reason: 'dial_failed' }).expect(200);
    expect(late.headers['x-slot-released']).toBe('false');
    expect(late.body).toMatchObject({ status: 'failed', end_reason: 'not_claimed' });
  });

  it('stop() ends a started sweeper without waiting for its interval', async () => {
    const sweeper = h.sweeper();
    sweeper.start();
    await sweeper.stop();
    expect(h.logs.some((l) => l.includes('stale-call sweeper started'))).toBe(true);
  });
});
