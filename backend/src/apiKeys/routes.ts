// Admin API for API keys. The full key is returned once, by create; only its hash is stored.
// Deactivation is final and audited; nothing is ever hard-deleted.
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { ApiKeyCreate, ApiKeyUpdate, DEFAULT_API_KEY_SCOPES } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check, parseDateTime } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { COLLECTIONS } from '../core/collections.js';
import { withDocLock } from '../core/locks.js';
import { requireAdmin, type AdminPrincipal } from '../auth/admin.js';
import { audited, AUDITED, updateOrDeactivate } from '../audit/audit.js';
import { generateApiKey, hashApiKey, keyPrefix, keyStatus, publicKey } from './keys.js';
import type { ApiKeyDoc } from './store.js';

function futureDate(value: string | null | undefined, now: number, field: string): Date | null {
  if (value === undefined || value === null) return null;
  // The schema's date-time check already refused times no Date can hold; this keeps the write safe on its own.
  const d = parseDateTime(value);
  if (!d) throw apiError('validation_failed', { details: [{ field, message: 'must be a real RFC 3339 date-time' }] });
  if (d.getTime() <= now) throw apiError('validation_failed', { details: [{ field, message: 'must be in the future' }] });
  return d;
}

export function apiKeyRoutes(router: Router, svc: Services): void {
  const keys = () => svc.db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
  const admin = requireAdmin(svc);

  router.post('/api/v1/api-keys', admin, audited(svc, 'api_key.create', AUDITED.apiKey), jsonBody(), async (ctx) => {
    const body = check(ApiKeyCreate, ctx.request.body);
    const now = svc.clock();
    const expiresAt = futureDate(body.expires_at, now, 'expires_at');
    const key = generateApiKey();
    const doc: ApiKeyDoc = {
      _id: new ObjectId().toHexString(),
      name: body.name,
      key_hash: hashApiKey(key),
      prefix: keyPrefix(key),
      is_active: true,
      expires_at: expiresAt,
      created_at: new Date(now),
      created_by: (ctx.state.admin as AdminPrincipal).email,
      last_used_at: null,
      deactivated_at: null,
      deactivated_by: null,
      scopes: [...(body.scopes ?? DEFAULT_API_KEY_SCOPES)],
    };
    await keys().insertOne(doc);
    svc.logger.info({ req_id: ctx.state.requestId, api_key_id: doc._id, prefix: doc.prefix }, 'api key created');
    ctx.status = 201;
    ctx.set('Location', `/api/v1/api-keys/${doc._id}`);
    ctx.set('Cache-Control', 'no-store'); // the key, shown this once, must not stay in any cache
    ctx.body = { ...publicKey(doc, now), key };
  });

  router.get('/api/v1/api-keys', admin, async (ctx) => {
    const now = svc.clock();
    const docs = await keys().find({}).sort({ created_at: -1, _id: -1 }).limit(1000).toArray();
    ctx.body = { items: docs.map((d) => publicKey(d, now)) };
  });

  router.get('/api/v1/api-keys/:id', admin, async (ctx) => {
    const doc = await keys().findOne({ _id: ctx.params.id! });
    if (!doc) throw apiError('not_found', 'API key not found');
    ctx.body = publicKey(doc, svc.clock());
  });

  router.patch('/api/v1/api-keys/:id', admin, audited(svc, updateOrDeactivate('api_key'), AUDITED.apiKey), jsonBody(), async (ctx) => {
    const body = check(ApiKeyUpdate, ctx.request.body);
    const id = ctx.params.id!;
    const now = svc.clock();
    const adminEmail = (ctx.state.admin as AdminPrincipal).email;
    // Checks and conditional writes of one key must not interleave (locks.ts); every replica's cached
    // copy of the key is dropped before this answers (cache.ts).
    await withDocLock(svc.redis, `api_key:${id}`, () => svc.cache.write(async () => {
      const existing = await keys().findOne({ _id: id });
      if (!existing) throw apiError('not_found', 'API key not found');
      const revoked = () => apiError('api_key_revoked');
      const liveFilter = { _id: id, is_active: true, $or: [{ expires_at: null }, { expires_at: { $gt: new Date(now) } }] };

      if (body.is_active === true && keyStatus(existing, now) !== 'active') throw revoked();
      if (body.expires_at !== undefined) {
        const expiresAt = futureDate(body.expires_at, now, 'expires_at');
        if (body.is_active !== false) {
          // Only a live key's expiry may change: extending an expired key would revive it.
          const res = await keys().updateOne(liveFilter, { $set: { expires_at: expiresAt } });
          if (res.matchedCount === 0) throw revoked();
        }
      }
      if (body.scopes !== undefined && body.is_active !== false) {
        // A live key's only: scopes are what a working key may do.
        const res = await keys().updateOne(liveFilter, { $set: { scopes: body.scopes } });
        if (res.matchedCount === 0) throw revoked();
      }
      if (body.name !== undefined) await keys().updateOne({ _id: id }, { $set: { name: body.name } });
      if (body.is_active === false) {
        // Conditional, so the first deactivation's audit fields are never overwritten.
        const res = await keys().updateOne(
          { _id: id, is_active: true },
          { $set: { is_active: false, deactivated_at: new Date(now), deactivated_by: adminEmail } },
        );
        if (res.modifiedCount === 1) svc.logger.info({ req_id: ctx.state.requestId, api_key_id: id, by: adminEmail }, 'api key deactivated');
      }
    }));
    const doc = await keys().findOne({ _id: id });
    ctx.body = publicKey(doc!, now);
  });
}
