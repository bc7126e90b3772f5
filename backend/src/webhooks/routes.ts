// Admin API for call webhooks (docs/design.md §8): CRUD, the deliveries log, and a test event. The signing
// secret is made here, shown in the create response only, and kept sealed (the deliverer signs with it).
// A URL must be http(s) and, unless WEBHOOK_ALLOW_PRIVATE=true, resolve to public addresses only
// (addresses.ts); the deliverer checks again on every attempt.
import { ObjectId, type Filter } from 'mongodb';
import type { Router } from '@koa/router';
import { MAX_WEBHOOKS, WEBHOOK_TEST_EVENT, WebhookCreate, WebhookUpdate, type WebhookCreated } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { check, pageQuery } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { withDocLock } from '../core/locks.js';
import { requireAdmin } from '../auth/admin.js';
import { audited, AUDITED, updateOrDeactivate } from '../audit/audit.js';
import { AddressRefused, checkHost } from '@voice-platform/schemas/node';
import { recordWebhookEvent } from './outbox.js';
import { attempts, deliveries, generateWebhookSecret, publicAttempt, publicWebhook, webhooks, webhookSecretBox, type AttemptDoc, type WebhookDoc } from './store.js';

const invalidUrl = (message: string) => apiError('validation_failed', { details: [{ field: 'url', message }] });

/** The rules a schema cannot hold: a URL the WHATWG parser takes, no credentials, and a host that resolves
 *  to public addresses only (unless WEBHOOK_ALLOW_PRIVATE). */
async function checkUrl(svc: Services, url: string): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl('is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidUrl('must be an http:// or https:// URL');
  if (parsed.username || parsed.password) throw invalidUrl('must not contain a user name or password');
  try {
    await checkHost(parsed.hostname, svc.settings.WEBHOOK_ALLOW_PRIVATE);
  } catch (err) {
    if (err instanceof AddressRefused) throw invalidUrl(err.reason);
    throw err;
  }
}

export function webhookRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const admin = requireAdmin(svc);
  const box = webhookSecretBox(svc.settings.JWT_SECRET);
  const col = () => webhooks(svc.db);
  const load = async (id: string): Promise<WebhookDoc> => {
    const doc = await col().findOne({ _id: id });
    if (!doc) throw apiError('not_found', 'webhook not found');
    return doc;
  };

  router.post('/api/v1/webhooks', admin, audited(svc, 'webhook.create', AUDITED.webhook), jsonBody(), async (ctx) => {
    const body = check(WebhookCreate, ctx.request.body);
    await checkUrl(svc, body.url);
    const secret = generateWebhookSecret();
    const now = svc.now();
    const doc: WebhookDoc = {
      _id: new ObjectId().toHexString(),
      url: body.url,
      events: body.events,
      description: body.description ?? null,
      secret_sealed: box.seal(secret),
      active: true,
      include_transcript: body.include_transcript ?? false,
      created_at: now,
      updated_at: now,
    };
    // Count and insert under one lock: two racing creates cannot pass the cap together.
    await withDocLock(svc.redis, 'webhooks', async () => {
      if ((await col().countDocuments({}, { limit: MAX_WEBHOOKS })) >= MAX_WEBHOOKS) {
        throw apiError('conflict', `at most ${MAX_WEBHOOKS} webhooks; delete one first`);
      }
      await col().insertOne(doc);
    });
    svc.logger.info({ req_id: ctx.state.requestId, webhook_id: doc._id, events: doc.events }, 'webhook created');
    ctx.status = 201;
    ctx.set('Location', `/api/v1/webhooks/${doc._id}`);
    ctx.set('Cache-Control', 'no-store'); // the signing secret, shown this once, must not stay in any cache
    const created: WebhookCreated = { ...publicWebhook(doc), secret };
    ctx.body = created;
  });

  router.get('/api/v1/webhooks', admin, async (ctx) => {
    const docs = await col().find({}).sort({ created_at: -1, _id: -1 }).limit(MAX_WEBHOOKS).toArray();
    ctx.body = { items: docs.map(publicWebhook) };
  });

  router.get('/api/v1/webhooks/:id', admin, async (ctx) => {
    ctx.body = publicWebhook(await load(ctx.params.id!));
  });

  router.patch('/api/v1/webhooks/:id', admin, audited(svc, updateOrDeactivate('webhook'), AUDITED.webhook), jsonBody(), async (ctx) => {
    const patch = check(WebhookUpdate, ctx.request.body);
    const id = ctx.params.id!;
    await load(id);
    if (patch.url !== undefined) await checkUrl(svc, patch.url);
    const set: Partial<WebhookDoc> = { updated_at: svc.now() };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.events !== undefined) set.events = patch.events;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.active !== undefined) set.active = patch.active;
    if (patch.include_transcript !== undefined) set.include_transcript = patch.include_transcript;
    const res = await col().updateOne({ _id: id }, { $set: set });
    if (res.matchedCount === 0) throw apiError('not_found', 'webhook not found');
    svc.logger.info({ req_id: ctx.state.requestId, webhook_id: id, fields: Object.keys(patch) }, 'webhook updated');
    ctx.body = publicWebhook(await load(id));
  });

  router.delete('/api/v1/webhooks/:id', admin, audited(svc, 'webhook.delete', AUDITED.webhook), async (ctx) => {
    const id = ctx.params.id!;
    const res = await col().deleteOne({ _id: id });
    if (res.deletedCount === 0) throw apiError('not_found', 'webhook not found');
    // Its pending deliveries stop (a deliverer finding one without its webhook drops it) and its log goes.
    await deliveries(svc.db).deleteMany({ webhook_id: id });
    await attempts(svc.db).deleteMany({ webhook_id: id });
    svc.logger.info({ req_id: ctx.state.requestId, webhook_id: id }, 'webhook deleted');
    ctx.status = 204;
  });

  router.post('/api/v1/webhooks/:id/test', admin, async (ctx) => {
    const doc = await load(ctx.params.id!);
    if (!doc.active) throw apiError('conflict', 'the webhook is paused (active: false); activate it to send a test event');
    const data = { webhook_id: doc._id, message: 'A test event from the voice platform: the signature and your endpoint work.' };
    // Unlike call events, the admin asked for this one: an outbox failure answers 503 (errors.ts).
    const event = await recordWebhookEvent({ ...svc, metrics }, WEBHOOK_TEST_EVENT, data, { webhookId: doc._id });
    svc.logger.info({ req_id: ctx.state.requestId, webhook_id: doc._id, event_id: event.id }, 'webhook test event queued');
    ctx.status = 202;
    ctx.body = event;
  });

  router.get('/api/v1/webhooks/:id/deliveries', admin, async (ctx) => {
    const id = ctx.params.id!;
    const { limit, after } = pageQuery(ctx.query);
    await load(id);
    const filter: Filter<AttemptDoc> = { webhook_id: id };
    if (after) filter.$or = [{ attempted_at: { $lt: after.t } }, { attempted_at: after.t, _id: { $lt: after.id } }];
    const docs = await attempts(svc.db).find(filter).sort({ attempted_at: -1, _id: -1 }).limit(limit + 1).toArray();
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = {
      items: page.map(publicAttempt),
      next_cursor: docs.length > limit && last ? `${last.attempted_at.getTime()}.${last._id}` : null,
    };
  });
}
