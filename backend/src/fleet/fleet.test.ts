// GET /api/v1/fleet (docs/design.md §15): the live workers from their heartbeats as workers write them (a current
// one with load and admittable, an older one without, a draining one; an expired one and a malformed one absent),
// the totals, the reservations still held, nothing pruned by the read; who may read it; 503 while Redis is down.
import { startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { FLEET_RESERVATIONS_KEY, FLEET_WORKERS_KEY, fleetWorkerKey } from '@voice-platform/schemas';
import { adminToken, createKey, heartbeat, startHarness, type Harness } from '../../testing/harness.js';
import { userOfRole } from '../../testing/users.js';

let env: TestEnv;
let h: Harness;
let auth: string;
const iso = (ms: number) => new Date(ms).toISOString();
const fleet = (as = auth) => h.http.get('/api/v1/fleet').set('Authorization', as);

beforeAll(async () => {
  env = await startTestEnv(['redis']); // this file stops its Redis, so it must be its own
  h = await startHarness({ redisUrl: env.env.REDIS_URL });
  auth = await adminToken(h);
});
afterAll(async () => {
  await h.close();
  await env.stop();
});

describe('GET /api/v1/fleet', () => {
  it('is empty with no worker', async () => {
    const res = await fleet().expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ workers: [], totals: { workers: 0, active_calls: 0, max_calls: 0, admittable: 0, reservations: 0, draining_workers: 0 } });
  });

  it('lists the live workers as their heartbeats say, and the totals', async () => {
    const now = h.clock.ms;
    const at = now - 1000;
    // A current worker: load and admittable (fewer than its free slots: its load leaves room for 3).
    await heartbeat(h.redis, 'w-new', { max_calls: 10, active_calls: 4, load: 0.55, admittable: 3, version: '2.1.0', updated_at: at }, now + 5000);
    // An older worker without load or admittable: its free slots count.
    await heartbeat(h.redis, 'w-old', { max_calls: 5, active_calls: 1, version: '1.9.0', updated_at: at }, now + 5000);
    // Draining: its calls count, its room does not.
    await heartbeat(h.redis, 'w-drain', { max_calls: 8, active_calls: 2, load: 0.2, admittable: 6, draining: true, updated_at: at }, now + 5000);
    // Expired in the index (its key not yet gone), and one whose heartbeat is not one.
    await heartbeat(h.redis, 'w-dead', { max_calls: 20, load: 0.1, admittable: 20 }, now - 1);
    await h.redis.set(fleetWorkerKey('w-bad'), '{"worker_id":"w-bad","max_calls":"many"', 'PX', 60_000);
    await h.redis.zadd(FLEET_WORKERS_KEY, now + 5000, 'w-bad');
    await h.redis.set(fleetWorkerKey('w-wrong'), JSON.stringify({ worker_id: 'w-wrong', max_calls: -1, active_calls: 0, draining: false, version: 'x', updated_at: at }), 'PX', 60_000);
    await h.redis.zadd(FLEET_WORKERS_KEY, now + 5000, 'w-wrong');
    // In the index, its heartbeat gone.
    await h.redis.zadd(FLEET_WORKERS_KEY, now + 5000, 'w-gone');
    // Two live reservations, one expired.
    await h.redis.zadd(FLEET_RESERVATIONS_KEY, now + 10_000, 'call-a', now + 10_000, 'call-b', now - 1, 'call-old');

    const res = await fleet().expect(200);
    expect(res.body).toEqual({
      workers: [
        { worker_id: 'w-drain', version: 'test', active_calls: 2, max_calls: 8, load: 0.2, admittable: 6, draining: true, updated_at: iso(at) },
        { worker_id: 'w-new', version: '2.1.0', active_calls: 4, max_calls: 10, load: 0.55, admittable: 3, draining: false, updated_at: iso(at) },
        { worker_id: 'w-old', version: '1.9.0', active_calls: 1, max_calls: 5, load: null, admittable: null, draining: false, updated_at: iso(at) },
      ],
      // admittable: w-new min(6 free, 3) + w-old 4 free + w-drain 0.
      totals: { workers: 3, active_calls: 7, max_calls: 23, admittable: 7, reservations: 2, draining_workers: 1 },
    });
    // A read prunes nothing: the dead worker and the expired reservation are the reservation script's to drop.
    expect(await h.redis.zscore(FLEET_WORKERS_KEY, 'w-dead')).not.toBeNull();
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, 'call-old')).not.toBeNull();

    // A worker is gone once its heartbeat's expiry passes.
    h.clock.advance(5000);
    const later = await fleet().expect(200);
    expect([later.body.workers, later.body.totals.reservations]).toEqual([[], 2]);
    h.clock.ms = now;
  });

  it('takes an admin token of any role or an API key with calls:read; nothing else', async () => {
    expect((await h.http.get('/api/v1/fleet').expect(401)).body.error.code).toBe('missing_api_key');
    const viewer = await userOfRole(h, auth, 'viewer');
    expect((await fleet(viewer.auth).expect(200)).body.totals.workers).toBe(3);
    const reader = await createKey(h, auth, { name: 'ops', scopes: ['calls:read'] });
    expect((await h.http.get('/api/v1/fleet').set('X-API-Key', reader.key).expect(200)).body.totals.workers).toBe(3);
    const dialer = await createKey(h, auth, { name: 'crm', scopes: ['dialout'] });
    expect((await h.http.get('/api/v1/fleet').set('X-API-Key', dialer.key).expect(403)).body.error.code).toBe('forbidden');
    expect((await fleet('Bearer nope').expect(401)).body.error.code).toBe('unauthorized');
    // Every credential sent must be valid: an empty Authorization header beside a good key is one (schemathesis ST401).
    expect((await h.http.get('/api/v1/fleet').set('X-API-Key', reader.key).set('Authorization', '').expect(401)).body.error.code).toBe('unauthorized');
  });

  it('answers 503 naming Redis while it is down, 200 once it is back', async () => {
    await env.services.redis!.stop();
    let down: { status: number; body: { error?: unknown }; headers: Record<string, string> } | undefined;
    await waitUntil(
      async () => {
        down = await fleet();
        return down.status === 503;
      },
      { what: 'fleet 503', timeoutMs: 20_000 },
    );
    expect(down!.body).toEqual({ error: { code: 'service_unavailable', message: 'redis is unavailable; retry later', details: { failed: ['redis'] } } });
    expect(down!.headers['retry-after']).toBe('5');
    // Back with Redis (its data gone with it: this Redis keeps none).
    await env.services.redis!.start();
    await waitUntil(async () => (await fleet()).status === 200, { what: 'fleet 200', timeoutMs: 20_000 });
  });
});
