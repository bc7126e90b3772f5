import jwt from 'jsonwebtoken';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { ADMIN, JWT_SECRET, startHarness, type Harness } from '../../testing/harness.js';
import { seedAdmin } from './seed.js';

let env: TestEnv;
let h: Harness;

beforeAll(async () => {
  env = await startTestEnv(['redis']); // this suite locks the shared admin email out: keep that private
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { LOGIN_MAX_ATTEMPTS: '3', LOGIN_WINDOW_SECONDS: '60', JWT_EXPIRE_MINUTES: '30' } });
  expect(await seedAdmin(h.db, ADMIN.email, ADMIN.password)).toBe('created');
});
afterAll(async () => {
  await h.close();
  await env.stop();
});

describe('admin auth', () => {
  it('seeding is idempotent and never overwrites the admin', async () => {
    expect(await seedAdmin(h.db, ADMIN.email, 'another-password')).toBe('exists');
    expect(await h.db.collection('users').countDocuments({})).toBe(1);
    const user = await h.db.collection('users').findOne({});
    expect(user?.password_hash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(user)).not.toContain(ADMIN.password);
    await h.http.post('/api/v1/auth/login').send({ email: ADMIN.email, password: 'another-password' }).expect(401);
  });

  it('logs in, issues a JWT per the settings, and serves me', async () => {
    const res = await h.http.post('/api/v1/auth/login').send({ email: 'Admin@Example.com', password: ADMIN.password }).expect(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 1800, must_change_password: false });
    const claims = jwt.verify(res.body.access_token, JWT_SECRET, { algorithms: ['HS256'], clockTimestamp: Math.floor(h.clock.ms / 1000) }) as jwt.JwtPayload;
    expect(claims.exp! - claims.iat!).toBe(1800);
    const me = await h.http.get('/api/v1/auth/me').set('Authorization', `Bearer ${res.body.access_token}`).expect(200);
    // The seeded admin is the first owner (docs/design.md §12); the answer keeps the fields it always had.
    expect(me.body).toEqual({
      id: claims.sub,
      email: ADMIN.email,
      role: 'owner',
      created_at: expect.any(String),
      name: 'Admin',
      active: true,
      must_change_password: false,
      last_login_at: expect.any(String),
    });

    h.clock.advance(1800 * 1000);
    const expired = await h.http.get('/api/v1/auth/me').set('Authorization', `Bearer ${res.body.access_token}`).expect(401);
    expect(expired.body.error.code).toBe('token_expired');
  });

  it('refuses tokens signed otherwise or with another algorithm', async () => {
    const user = await h.db.collection('users').findOne({});
    const now = Math.floor(h.clock.ms / 1000);
    const forged = jwt.sign({ sub: user!._id, iat: now, exp: now + 60 }, 'some-other-secret-0123456789-0123456789');
    const otherAlg = jwt.sign({ sub: user!._id, iat: now, exp: now + 60 }, JWT_SECRET, { algorithm: 'HS512' });
    // Rightly signed, but never expiring: a token without `exp` would be a key for life.
    const forever = jwt.sign({ sub: user!._id, iat: now }, JWT_SECRET);
    const noIat = jwt.sign({ sub: user!._id, exp: now + 60 }, JWT_SECRET, { noTimestamp: true });
    for (const token of [forged, otherAlg, forever, noIat, 'garbage']) {
      expect((await h.http.get('/api/v1/auth/me').set('Authorization', `Bearer ${token}`).expect(401)).body.error.code).toBe('unauthorized');
    }
    expect((await h.http.get('/api/v1/auth/me').expect(401)).body.error.code).toBe('unauthorized');
  });

  it('rate limits login attempts per email and address, with Retry-After', async () => {
    const attempt = (email: string, password = 'wrong') => h.http.post('/api/v1/auth/login').send({ email, password });
    for (let i = 0; i < 3; i++) expect((await attempt('victim@example.com').expect(401)).body.error.code).toBe('invalid_credentials');
    const limited = await attempt('victim@example.com').expect(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('20');
    expect((await attempt('unknown@example.com').expect(401)).body.error.code).toBe('invalid_credentials');
    h.clock.advance(20_000);
    await attempt('victim@example.com').expect(401);
    await attempt('victim@example.com').expect(429);
  });

  it('a successful login resets its own counter, so failures only accumulate between successes', async () => {
    const attempt = (password: string) => h.http.post('/api/v1/auth/login').send({ email: ADMIN.email, password });
    for (let round = 0; round < 3; round++) {
      await attempt('wrong').expect(401);
      await attempt('wrong').expect(401);
      await attempt(ADMIN.password).expect(200);
    }
    for (let i = 0; i < 3; i++) await attempt('wrong').expect(401);
    await attempt(ADMIN.password).expect(429); // locked out: even the right password waits
  });

  it('validates the login body', async () => {
    expect((await h.http.post('/api/v1/auth/login').send({ email: 'a@b' }).expect(422)).body.error.code).toBe('validation_failed');
    expect((await h.http.post('/api/v1/auth/login').set('Content-Type', 'application/json').send('{').expect(400)).body.error.code).toBe('invalid_json');
  });
});
