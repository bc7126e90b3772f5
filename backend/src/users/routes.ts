// The users API (docs/design.md §12): list, create (with a one-time password, in the 201 answer only), get,
// patch (name, role, active). No hard delete: a user leaves by deactivation. Who may call each operation is in
// auth/permissions.ts; the rules that depend on the user changed are here: only an owner changes an owner or
// makes one (403 forbidden), and the last active owner stays one (409 last_owner).
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { UserCreate, UserUpdate, type UserRole } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { COLLECTIONS } from '../core/collections.js';
import { withDocLock } from '../core/locks.js';
import { requirePermission, type AdminPrincipal } from '../auth/admin.js';
import { audited, AUDITED, updateOrDeactivate } from '../audit/audit.js';
import { hashPassword } from '../auth/password.js';
import { randomAlphanumeric } from '../apiKeys/keys.js';
import { publicUser, readUser, USERS_LOCK, type UserDoc } from '../auth/users.js';

/** 20 characters of [A-Za-z0-9]: about 119 bits. */
const ONE_TIME_PASSWORD_LENGTH = 20;

export function userRoutes(router: Router, svc: Services): void {
  const users = () => svc.db.collection<UserDoc>(COLLECTIONS.users);
  const allowed = requirePermission(svc);
  const ownersOnly = () => apiError('forbidden', 'only an owner may change an owner or make one');

  router.get('/api/v1/users', allowed, async (ctx) => {
    const docs = await users().find({}).sort({ created_at: 1, _id: 1 }).limit(1000).toArray();
    ctx.body = { items: docs.map((d) => publicUser(readUser(d)!)) };
  });

  router.post('/api/v1/users', allowed, audited(svc, 'user.create', AUDITED.user), jsonBody(), async (ctx) => {
    const body = check(UserCreate, ctx.request.body);
    const actor = ctx.state.admin as AdminPrincipal;
    if (body.role === 'owner' && actor.role !== 'owner') throw ownersOnly();
    const password = randomAlphanumeric(ONE_TIME_PASSWORD_LENGTH);
    const doc: UserDoc = {
      _id: new ObjectId().toHexString(),
      email: body.email.trim().toLowerCase(),
      name: body.name,
      password_hash: await hashPassword(password),
      role: body.role,
      active: true,
      must_change_password: true,
      token_version: 0,
      created_at: svc.now(),
      last_login_at: null,
    };
    try {
      await users().insertOne(doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw apiError('user_exists');
      throw err;
    }
    svc.logger.info({ req_id: ctx.state.requestId, user_id: doc._id, role: doc.role, by: actor.id }, 'user created');
    ctx.status = 201;
    ctx.set('Location', `/api/v1/users/${doc._id}`);
    ctx.set('Cache-Control', 'no-store'); // the one-time password, shown this once, must not stay in any cache
    ctx.body = { ...publicUser(doc), password };
  });

  router.get('/api/v1/users/:id', allowed, async (ctx) => {
    const doc = readUser(await users().findOne({ _id: ctx.params.id! }));
    if (!doc) throw apiError('not_found', 'user not found');
    ctx.body = publicUser(doc);
  });

  router.patch('/api/v1/users/:id', allowed, audited(svc, updateOrDeactivate('user'), AUDITED.user), jsonBody(), async (ctx) => {
    const body = check(UserUpdate, ctx.request.body);
    const actor = ctx.state.admin as AdminPrincipal;
    const id = ctx.params.id!;
    const updated = await withDocLock(svc.redis, USERS_LOCK, async () => {
      const existing = readUser(await users().findOne({ _id: id }));
      if (!existing) throw apiError('not_found', 'user not found');
      if (actor.role !== 'owner' && (existing.role === 'owner' || body.role === 'owner')) throw ownersOnly();
      const role: UserRole = body.role ?? existing.role;
      const active = body.active ?? existing.active;
      const demoted = existing.role === 'owner' && role !== 'owner';
      const deactivated = existing.active && !active;
      if (existing.role === 'owner' && existing.active && (demoted || deactivated)) {
        const others = await users().countDocuments({
          _id: { $ne: id },
          $or: [{ role: 'owner', active: true }, { active: { $exists: false } }], // the latter: a legacy admin, an owner (store.ts)
        });
        if (others === 0) throw apiError('last_owner');
      }
      // Deactivation and a role change revoke every token of the user: the next request anywhere reads the new version.
      const revoke = deactivated || role !== existing.role;
      const next: UserDoc = {
        ...existing,
        name: body.name ?? existing.name,
        role,
        active,
        token_version: existing.token_version + (revoke ? 1 : 0),
        updated_at: svc.now(),
      };
      const { _id, ...fields } = next;
      await users().updateOne({ _id }, { $set: fields });
      if (revoke) svc.logger.info({ req_id: ctx.state.requestId, user_id: id, role, active, by: actor.id }, 'user changed: tokens revoked');
      return next;
    });
    ctx.body = publicUser(updated);
  });
}
