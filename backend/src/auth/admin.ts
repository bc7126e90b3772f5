// Admin authentication: login (rate limited per email + client address), JWTs, and the middleware that
// guards the admin API.
import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import jwt from 'jsonwebtoken';
import { Type } from '@sinclair/typebox';
import type { Router } from '@koa/router';
import { ApiError } from '../errors.js';
import type { Services } from '../deps.js';
import { check } from '../validate.js';
import { jsonBody } from '../body.js';
import { COLLECTIONS } from '../stores.js';
import { takeToken } from '../redisScripts.js';
import { DUMMY_HASH, verifyPassword } from './password.js';

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

export function bearer(ctx: Context): string | undefined {
  const header = ctx.get('Authorization');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Verifies the admin JWT; on success `ctx.state.admin` holds the principal. */
export async function authenticateAdmin(svc: Services, ctx: Context): Promise<AdminPrincipal> {
  const token = bearer(ctx);
  if (!token) throw new ApiError(401, 'unauthorized', 'an admin bearer token is required');
  let sub: string;
  try {
    const payload = jwt.verify(token, svc.settings.JWT_SECRET, { algorithms: [svc.settings.JWT_ALGORITHM], clockTimestamp: Math.floor(svc.clock() / 1000) });
    if (typeof payload !== 'object' || typeof payload.sub !== 'string') throw new Error('no subject');
    // Our tokens always carry both; one without an expiry would be valid for life.
    if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number') throw new Error('no expiry');
    sub = payload.sub;
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) throw new ApiError(401, 'token_expired', 'the admin token has expired');
    throw new ApiError(401, 'unauthorized', 'the admin token is invalid');
  }
  const user = await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ _id: sub });
  if (!user) throw new ApiError(401, 'unauthorized', 'the admin token is invalid');
  if (user.role !== 'admin') throw new ApiError(403, 'forbidden', 'this account may not use the admin API');
  return { id: user._id, email: user.email };
}

export function requireAdmin(svc: Services) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.state.admin = await authenticateAdmin(svc, ctx);
    await next();
  };
}

export function authRoutes(router: Router, svc: Services): void {
  router.post('/api/v1/auth/login', jsonBody(), async (ctx) => {
    const body = check(LoginRequest, ctx.request.body);
    const email = body.email.trim().toLowerCase();
    const { LOGIN_MAX_ATTEMPTS: max, LOGIN_WINDOW_SECONDS: window } = svc.settings;
    const bucket = createHash('sha256').update(`${email}|${ctx.ip}`).digest('hex');
    const bucketKey = `vp:ratelimit:login:${bucket}`;
    const limit = await takeToken(svc.redis, bucketKey, max / window, max, svc.clock());
    if (!limit.allowed) {
      throw new ApiError(429, 'rate_limited', 'too many login attempts; retry later', undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000))),
      });
    }
    const user = await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ email });
    const ok = await verifyPassword(body.password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok) throw new ApiError(401, 'invalid_credentials', 'email or password is wrong');
    await svc.redis.del(bucketKey); // a success ends the guessing streak; only failures accumulate
    const expiresIn = svc.settings.JWT_EXPIRE_MINUTES * 60;
    const iat = Math.floor(svc.clock() / 1000);
    const token = jwt.sign({ sub: user._id, email: user.email, role: user.role, iat, exp: iat + expiresIn }, svc.settings.JWT_SECRET, {
      algorithm: svc.settings.JWT_ALGORITHM,
    });
    svc.logger.info({ req_id: ctx.state.requestId, user_id: user._id }, 'admin login');
    ctx.body = { access_token: token, token_type: 'bearer', expires_in: expiresIn };
  });

  router.get('/api/v1/auth/me', requireAdmin(svc), async (ctx) => {
    const admin = ctx.state.admin as AdminPrincipal;
    const user = await svc.db.collection<UserDoc>(COLLECTIONS.users).findOne({ _id: admin.id });
    if (!user) throw new ApiError(401, 'unauthorized', 'the admin token is invalid');
    ctx.body = { id: user._id, email: user.email, role: user.role, created_at: user.created_at.toISOString() };
  });
}
