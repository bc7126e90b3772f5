// Admin authentication: login (rate limited per client address, globally, and per email + client address;
// password hashing bounded per process), JWTs, and the middleware that guards the admin API.
import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import jwt from 'jsonwebtoken';
import { Type } from '@sinclair/typebox';
import type { Router } from '@koa/router';
import { apiError } from '../errors.js';
import type { Services } from '../deps.js';
import { check } from '../validate.js';
import { jsonBody } from '../body.js';
import { COLLECTIONS } from '../stores.js';
import { takeToken } from '../redisScripts.js';
import { DUMMY_HASH, verifyPassword } from './password.js';
import { Semaphore } from './semaphore.js';

export interface UserDoc {
  _id: string;
  email: string;
  password_hash: string;
  role: 'admin';
  created_at: Date;
}

export interface AdminPrincipal {
  id: string;
  email: string;
}

export const LoginRequest = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export const LoginResponse = Type.Object(
  { access_token: Type.String(), token_type: Type.Literal('bearer'), expires_in: Type.Integer() },
  { additionalProperties: false },
);
export const Me = Type.Object({ id: Type.String(), email: Type.String(), role: Type.Literal('admin'), created_at: Type.String({ format: 'date-time' }) });

/** How far a token's `iat` may be ahead of this replica's clock (another replica's clock may run ahead). */
const JWT_IAT_SKEW_SECONDS = 60;

export function bearer(ctx: Context): string | undefined {
  const header = ctx.get('Authorization');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Verifies the admin JWT; on success `ctx.state.admin` holds the principal. */
export async function authenticateAdmin(svc: Services, ctx: Context): Promise<AdminPrincipal> {
  const token = bearer(ctx);
  if (!token) throw apiError('unauthorized', 'an admin bearer token is required');
  let sub: string;
  try {
    const nowS = Math.floor(svc.clock() / 1000);
    const { header, payload } = jwt.verify(token, svc.settings.JWT_SECRET, { algorithms: [svc.settings.JWT_ALGORITHM], clockTimestamp: nowS, complete: true });
    // RFC 7515 §4.1.11: a token naming extensions it must be understood with is refused; we understand none.
    if ('crit' in header) throw new Error('critical header');
    if (typeof payload !== 'object' || typeof payload.sub !== 'string') throw new Error('no subject');
    // Our tokens always carry both; one without an expiry would be valid for life.
    if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number') throw new Error('no expiry');
    // Issued in the future (beyond clock skew between replicas): not a token this server made.
    if (payload.iat > nowS + JWT_IAT_SKEW_SECONDS) throw new Error('issued in the future');
    sub = payload.sub;
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) throw apiError('token_expired');
    throw apiError('unauthorized');
  }
  const user = await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ _id: sub });
  if (!user) throw apiError('unauthorized');
  if (user.role !== 'admin') throw apiError('forbidden');
  return { id: user._id, email: user.email };
}

export function requireAdmin(svc: Services) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.state.admin = await authenticateAdmin(svc, ctx);
    await next();
  };
}

const rateLimited = (retryAfterMs: number) =>
  apiError('rate_limited', { message: 'too many login attempts; retry later', headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } });

export function authRoutes(router: Router, svc: Services): void {
  const s = svc.settings;
  // scrypt is CPU- and memory-heavy: a burst of attempts must not queue up behind the thread pool and slow a
  // real admin's login. Beyond LOGIN_HASH_CONCURRENCY at once, an attempt waits up to LOGIN_HASH_WAIT_MS and
  // then gets 503 service_unavailable (Retry-After: 1): the server is busy, not the client over its budget.
  const hashing = new Semaphore(s.LOGIN_HASH_CONCURRENCY);
  const bucket = async (key: string, max: number, windowSeconds: number) => {
    const limit = await takeToken(svc.redis, `vp:ratelimit:${key}`, max / windowSeconds, max, svc.clock());
    if (!limit.allowed) throw rateLimited(limit.retryAfterMs);
  };

  router.post('/api/v1/auth/login', jsonBody(), async (ctx) => {
    const body = check(LoginRequest, ctx.request.body);
    const email = body.email.trim().toLowerCase();
    // Per address first, so one noisy address is refused before it can spend the global budget of everyone.
    await bucket(`login-ip:${createHash('sha256').update(ctx.ip).digest('hex')}`, s.LOGIN_IP_MAX_ATTEMPTS, s.LOGIN_IP_WINDOW_SECONDS);
    await bucket('login-global', s.LOGIN_GLOBAL_MAX_ATTEMPTS, s.LOGIN_GLOBAL_WINDOW_SECONDS);
    const { LOGIN_MAX_ATTEMPTS: max, LOGIN_WINDOW_SECONDS: window } = s;
    const bucketId = createHash('sha256').update(`${email}|${ctx.ip}`).digest('hex');
    const bucketKey = `vp:ratelimit:login:${bucketId}`;
    const limit = await takeToken(svc.redis, bucketKey, max / window, max, svc.clock());
    if (!limit.allowed) throw rateLimited(limit.retryAfterMs);
    const user = await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ email });
    const verified = await hashing.run(s.LOGIN_HASH_WAIT_MS, () => verifyPassword(body.password, user?.password_hash ?? DUMMY_HASH));
    if (!verified) throw apiError('service_unavailable', { message: 'too many logins in progress; retry shortly', headers: { 'Retry-After': '1' } });
    const ok = verified.value;
    if (!user || !ok) throw apiError('invalid_credentials');
    await svc.redis.del(bucketKey); // a success ends the guessing streak; only failures accumulate
    const expiresIn = svc.settings.JWT_EXPIRE_MINUTES * 60;
    const iat = Math.floor(svc.clock() / 1000);
    const token = jwt.sign({ sub: user._id, email: user.email, role: user.role, iat, exp: iat + expiresIn }, svc.settings.JWT_SECRET, {
      algorithm: svc.settings.JWT_ALGORITHM,
    });
    svc.logger.info({ req_id: ctx.state.requestId, user_id: user._id }, 'admin login');
    ctx.set('Cache-Control', 'no-store'); // a bearer token must not stay in any cache
    ctx.body = { access_token: token, token_type: 'bearer', expires_in: expiresIn };
  });

  router.get('/api/v1/auth/me', requireAdmin(svc), async (ctx) => {
    const admin = ctx.state.admin as AdminPrincipal;
    const user = await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ _id: admin.id });
    if (!user) throw apiError('unauthorized');
    ctx.body = { id: user._id, email: user.email, role: user.role, created_at: user.created_at.toISOString() };
  });
}
