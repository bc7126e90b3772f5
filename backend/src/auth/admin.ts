// Admin authentication: login (rate limited per client address, globally, and per email + client address;
// password hashing bounded per process), JWTs, and the middleware that guards the admin API.
import type { Context, Next } from 'koa';
import jwt from 'jsonwebtoken';
import { Type } from '@sinclair/typebox';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { COLLECTIONS } from '../core/collections.js';
import { operationKey, PERMISSIONS, userMay } from './permissions.js';
import { User } from '@voice-platform/schemas';
import { readUser, type UserDoc } from './users.js';

export type { UserDoc } from './users.js';

export type { AdminPrincipal } from '../core/principal.js';
import type { AdminPrincipal } from '../core/principal.js';

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
