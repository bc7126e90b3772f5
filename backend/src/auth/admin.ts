// Admin authentication: login (rate limited per client address, globally, and per email + client address;
// password hashing bounded per process), JWTs, and the middleware that guards the admin API.
import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import jwt from 'jsonwebtoken';
import { Type } from '@sinclair/typebox';
import type { Router } from '@koa/router';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { COLLECTIONS } from '../core/collections.js';
import { takeToken } from '../core/redisScripts.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from './password.js';
import { Semaphore } from './semaphore.js';
import { operationKey, PERMISSIONS, userMay } from './permissions.js';
import { PasswordChange, User } from '@voice-platform/schemas';
import { publicUser, readUser, USERS_LOCK, type UserDoc } from '../users/store.js';
import { withDocLock } from '../core/locks.js';
import { audited, AUDITED, recordAudit } from '../audit/audit.js';

export type { UserDoc } from '../users/store.js';

export type { AdminPrincipal } from './principal.js';
import type { AdminPrincipal } from './principal.js';

export const LoginRequest = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export const LoginResponse = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('bearer'),
    expires_in: Type.Integer(),
    must_change_password: Type.Boolean({ description: 'true: every route but POST /api/v1/auth/password answers 403 password_change_required until the password is changed' }),
  },
  { additionalProperties: false },
);
/** The signed-in user (GET /api/v1/auth/me). */
export const Me = User;

/** The one operation a user whose password must change may call. */
const PASSWORD_CHANGE = 'POST /api/v1/auth/password';

/** How far a token's `iat` may be ahead of this replica's clock (another replica's clock may run ahead). */
const JWT_IAT_SKEW_SECONDS = 60;

export function bearer(ctx: Context): string | undefined {
  const header = ctx.get('Authorization');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * The one admin middleware's check, for every route that takes an admin token: the JWT (signature, expiry),
 * the user as stored now (active, and the token of the user's current `token_version`: deactivation, a role
 * or password change revoke every earlier token, on every replica, as each request reads the user), a
 * one-time password still to change (403 password_change_required), then the permissions table
 * (permissions.ts) for the route being served (403 forbidden). On success the principal.
 */
export async function authenticateAdmin(svc: Services, ctx: Context): Promise<AdminPrincipal> {
  const token = bearer(ctx);
  if (!token) throw apiError('unauthorized', 'an admin bearer token is required');
  let sub: string;
  let tv: unknown;
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
    tv = payload.tv;
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) throw apiError('token_expired');
    throw apiError('unauthorized');
  }
  const user = readUser(await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ _id: sub }));
  if (!user) throw apiError('unauthorized');
  if (!user.active) throw apiError('unauthorized', 'the account is deactivated');
  // Tokens issued before versions existed carry none: version 0, the version every user starts with.
  if ((tv ?? 0) !== user.token_version) throw apiError('unauthorized', 'the token was revoked: log in again');
  const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : '';
  const op = operationKey(ctx.method, route);
  if (user.must_change_password && op !== PASSWORD_CHANGE) throw apiError('password_change_required');
  if (!userMay(user.role, PERMISSIONS[op])) throw apiError('forbidden', `the role ${user.role} may not do this`);
  return { id: user._id, email: user.email, role: user.role };
}

/** The one admin middleware: authentication and the permissions table (authenticateAdmin); `ctx.state.admin`. */
export function requirePermission(svc: Services) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.state.admin = await authenticateAdmin(svc, ctx);
    await next();
  };
}

/** The name the route files have always used: the same middleware, which checks the table, not "is admin". */
export const requireAdmin = requirePermission;

function issueToken(svc: Services, user: UserDoc) {
  const expiresIn = svc.settings.JWT_EXPIRE_MINUTES * 60;
  const iat = Math.floor(svc.clock() / 1000);
  const token = jwt.sign({ sub: user._id, email: user.email, role: user.role, tv: user.token_version, iat, exp: iat + expiresIn }, svc.settings.JWT_SECRET, {
    algorithm: svc.settings.JWT_ALGORITHM,
  });
  return { access_token: token, token_type: 'bearer' as const, expires_in: expiresIn, must_change_password: user.must_change_password };
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
    const user = readUser(await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ email }));
    const verified = await hashing.run(s.LOGIN_HASH_WAIT_MS, () => verifyPassword(body.password, user?.password_hash ?? DUMMY_HASH));
    if (!verified) throw apiError('service_unavailable', { message: 'too many logins in progress; retry shortly', headers: { 'Retry-After': '1' } });
    const ok = verified.value;
    // A deactivated user's right password is answered as a wrong one: nothing tells which accounts exist.
    if (!user || !ok || !user.active) {
      // Recorded before the answer: who tried (the email), and the account it names if there is one.
      await recordAudit(svc, ctx, { action: 'auth.login_failed', resource: { type: 'user', id: user?._id ?? null }, actor: { type: 'user', id: null, label: email } });
      throw apiError('invalid_credentials');
    }
    await svc.redis.del(bucketKey); // a success ends the guessing streak; only failures accumulate
    await svc.db.collection<UserDoc>(COLLECTIONS.users).updateOne({ _id: user._id }, { $set: { last_login_at: svc.now() } });
    await recordAudit(svc, ctx, { action: 'auth.login', resource: { type: 'user', id: user._id }, actor: { type: 'user', id: user._id, label: user.email } });
    svc.logger.info({ req_id: ctx.state.requestId, user_id: user._id }, 'admin login');
    ctx.set('Cache-Control', 'no-store'); // a bearer token must not stay in any cache
    ctx.body = issueToken(svc, user);
  });

  // Any signed-in user, and the one route open while a one-time password is still to be changed. The answer
  // is a new token: the change revokes every earlier one (this one included).
  router.post('/api/v1/auth/password', requirePermission(svc), audited(svc, 'user.change_password', AUDITED.self), jsonBody(), async (ctx) => {
    const body = check(PasswordChange, ctx.request.body);
    const admin = ctx.state.admin as AdminPrincipal;
    const { LOGIN_MAX_ATTEMPTS: max, LOGIN_WINDOW_SECONDS: window } = s;
    const bucketKey = `vp:ratelimit:password:${admin.id}`;
    const limit = await takeToken(svc.redis, bucketKey, max / window, max, svc.clock());
    if (!limit.allowed) throw rateLimited(limit.retryAfterMs);
    const users = svc.db.collection<UserDoc>(COLLECTIONS.users);
    const user = readUser(await users.findOne({ _id: admin.id }));
    if (!user) throw apiError('unauthorized');
    const verified = await hashing.run(s.LOGIN_HASH_WAIT_MS, () => verifyPassword(body.current_password, user.password_hash));
    if (!verified) throw apiError('service_unavailable', { message: 'too many password checks in progress; retry shortly', headers: { 'Retry-After': '1' } });
    if (!verified.value) throw apiError('validation_failed', { details: [{ field: 'current_password', message: 'is wrong' }] });
    if (body.new_password === body.current_password) throw apiError('validation_failed', { details: [{ field: 'new_password', message: 'must differ from the current password' }] });
    await svc.redis.del(bucketKey);
    const hash = await hashPassword(body.new_password);
    // Only from the version this request was authenticated with: a concurrent change (role, deactivation,
    // another password change) wins, and this token is already revoked.
    // Under the users' lock (users/routes.ts): FerretDB applies a conditional update as a read then a write (locks.ts).
    const res = await withDocLock(svc.redis, USERS_LOCK, () =>
      users.findOneAndUpdate(
        { _id: user._id, token_version: user.token_version, active: true },
        { $set: { password_hash: hash, must_change_password: false, updated_at: svc.now() }, $inc: { token_version: 1 } },
        { returnDocument: 'after' },
      ),
    );
    if (!res) throw apiError('unauthorized', 'the token was revoked: log in again');
    svc.logger.info({ req_id: ctx.state.requestId, user_id: user._id }, 'password changed');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = issueToken(svc, res);
  });

  router.get('/api/v1/auth/me', requirePermission(svc), async (ctx) => {
    const admin = ctx.state.admin as AdminPrincipal;
    const user = readUser(await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ _id: admin.id }));
    if (!user) throw apiError('unauthorized');
    ctx.body = publicUser(user);
  });
}
