// Password spraying: login is limited per client address and globally (besides per email + address), and
// the scrypt work a burst of logins can start at once is bounded, so a spray cannot starve a real admin.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { ADMIN, startHarness, type Harness } from '../../testing/harness.js';
import { seedAdmin } from './seed.js';
import { verifyStats } from './password.js';

let env: TestEnv; // a private Redis: these tests exhaust the global login budget, which other suites share
beforeAll(async () => {
  env = await startTestEnv(['redis']);
});
afterAll(() => env.stop());

/** The app sees the socket's address (proxy: false); loopback has all of 127/8, so a test can pick its own. */
const from = (address: string) => new http.Agent({ localAddress: address });
const randomEmail = () => `spray-${randomBytes(6).toString('hex')}@example.com`;

async function harness(limits: Record<string, string>): Promise<Harness> {
  const h = await startHarness({ redisUrl: env.env.REDIS_URL, env: limits });
  await h.redis.flushdb();
  await seedAdmin(h.db, ADMIN.email, ADMIN.password);
  return h;
}

describe('login limits against password spraying', () => {
  it('limits one address across emails, while the admin still logs in from another', async () => {
    const h = await harness({ LOGIN_IP_MAX_ATTEMPTS: '5', LOGIN_IP_WINDOW_SECONDS: '60' });
    try {
      const spray = await Promise.all(
        Array.from({ length: 40 }, () => h.http.post('/api/v1/auth/login').agent(from('127.0.0.1')).send({ email: randomEmail(), password: 'guess' })),
      );
      const limited = spray.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(35);
      for (const r of limited) {
        expect(r.body.error.code).toBe('rate_limited');
        expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      expect(spray.filter((r) => r.status !== 429).every((r) => r.status === 401)).toBe(true);
      // The sprayer's address stays limited, even for the right password; another address is not affected.
      await h.http.post('/api/v1/auth/login').agent(from('127.0.0.1')).send(ADMIN).expect(429);
      const ok = await h.http.post('/api/v1/auth/login').agent(from('127.0.0.2')).send(ADMIN).expect(200);
      expect(ok.body.token_type).toBe('bearer');
      h.clock.advance(60_000);
      await h.http.post('/api/v1/auth/login').agent(from('127.0.0.1')).send(ADMIN).expect(200);
    } finally {
      await h.close();
    }
  });

  it('refuses every address once the global budget is spent, with Retry-After', async () => {
    const h = await harness({ LOGIN_GLOBAL_MAX_ATTEMPTS: '4', LOGIN_GLOBAL_WINDOW_SECONDS: '8' });
    try {
      for (let i = 1; i <= 4; i++) await h.http.post('/api/v1/auth/login').agent(from(`127.0.1.${i}`)).send({ email: randomEmail(), password: 'guess' }).expect(401);
      const refused = await h.http.post('/api/v1/auth/login').agent(from('127.0.1.9')).send(ADMIN).expect(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.headers['retry-after']).toBe('2'); // 4 per 8 s: a token every 2 s
      h.clock.advance(2_000);
      await h.http.post('/api/v1/auth/login').agent(from('127.0.1.9')).send(ADMIN).expect(200);
    } finally {
      await h.close();
    }
  });

  it('never hashes more passwords at once than LOGIN_HASH_CONCURRENCY; the excess waits, then gets 503', async () => {
    const h = await harness({ LOGIN_IP_MAX_ATTEMPTS: '1000', LOGIN_HASH_CONCURRENCY: '2', LOGIN_HASH_WAIT_MS: '50' });
    try {
      verifyStats.peak = 0;
      const burst = await Promise.all(
        Array.from({ length: 24 }, () => h.http.post('/api/v1/auth/login').send({ email: randomEmail(), password: 'guess' })),
      );
      expect(verifyStats.peak).toBeGreaterThanOrEqual(1);
      expect(verifyStats.peak).toBeLessThanOrEqual(2);
      const statuses = burst.map((r) => r.status);
      expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
      expect(statuses).toContain(401);
      expect(statuses).toContain(503); // 24 hashes cannot all start within 50 ms two at a time
      for (const r of burst.filter((r) => r.status === 503)) {
        expect(r.body.error.code).toBe('service_unavailable');
        expect(r.headers['retry-after']).toBe('1');
      }
      await h.http.post('/api/v1/auth/login').send(ADMIN).expect(200); // the queue drained: nothing leaked
    } finally {
      await h.close();
    }
  });
});
