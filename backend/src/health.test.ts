import { startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { startHarness, type Harness } from '../testing/harness.js';

let env: TestEnv;
let h: Harness;

beforeAll(async () => {
  env = await startTestEnv(['redis']); // this suite stops its Redis, so it must be its own
  h = await startHarness({ redisUrl: env.env.REDIS_URL });
});
afterAll(async () => {
  await h.close();
  await env.stop();
});

describe('GET /health', () => {
  it('is 200 with both stores, 503 naming Redis while it is down, and 200 again when it returns', async () => {
    const ok = await h.http.get('/health').expect(200);
    expect(ok.body).toEqual({ status: 'ok', checks: { mongodb: 'ok', redis: 'ok' }, version: expect.any(String) });

    await env.services.redis!.stop();
    let down: { status: number; body: Record<string, unknown>; headers: Record<string, string> } | undefined;
    await waitUntil(
      async () => {
        down = await h.http.get('/health');
        return down.status === 503;
      },
      { what: 'health 503', timeoutMs: 20_000 },
    );
    expect(down!.body).toEqual({
      status: 'unavailable',
      checks: { mongodb: 'ok', redis: 'unreachable' },
      version: expect.any(String),
      error: { code: 'service_unavailable', message: 'redis unreachable', details: { failed: ['redis'] } },
    });
    expect(down!.headers['retry-after']).toBe('5');
    // Liveness does not follow the stores, so the kubelet keeps the replica while Redis is out.
    expect((await h.http.get('/health/live').expect(200)).body).toEqual({ status: 'alive', version: expect.any(String) });
    // Requests that need Redis answer 503 in the documented shape instead of hanging or leaking driver text.
    const login = await h.http.post('/api/v1/auth/login').send({ email: 'a@example.com', password: 'x' });
    expect([login.status, login.body.error.code]).toEqual([503, 'service_unavailable']);

    await env.services.redis!.start();
    await waitUntil(async () => (await h.http.get('/health')).status === 200, { what: 'health 200', timeoutMs: 20_000 });
    expect((await h.http.get('/health').expect(200)).body.checks).toEqual({ mongodb: 'ok', redis: 'ok' });
  });
});
