// The signed-in user's own routes: log in (a token), change the password, who am I (docs/design.md §3).
// Here, above the admin middleware (auth/admin.ts) and the audit log, both of which they use: auth/ checks
// tokens and permissions and imports neither users' routes nor the audit log.
import { createHash } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Router } from '@koa/router';
import { PasswordChange } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { COLLECTIONS } from '../core/collections.js';
import { takeToken } from '../core/redisScripts.js';
import { withDocLock } from '../core/locks.js';
import type { AdminPrincipal } from '../core/principal.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../auth/password.js';
import { Semaphore } from '../auth/semaphore.js';
import { LoginRequest, requirePermission } from '../auth/admin.js';
import { publicUser, readUser, USERS_LOCK, type UserDoc } from '../auth/users.js';
import { audited, AUDITED, recordAudit } from '../audit/audit.js';

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
