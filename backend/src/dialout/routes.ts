// POST /api/v1/sip/dialout. Checks run in the documented order: key → rate limit → JSON → schema →
// bot exists → bot active → variables → trunk (from_number) → capacity; then the call record and the job.
import { setTimeout as delay } from 'node:timers/promises';
import { ObjectId } from 'mongodb';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { CALL_JOBS_STREAM_KEY, DialoutRequest, IDEMPOTENCY_KEY_MAX_LENGTH, phoneNumberRegion, type DialoutResponse, type ErrorCode } from '@voice-platform/schemas';
import { e164Input } from '../core/phoneInput.js';
import { ApiError, apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import type { ErrorObject } from 'ajv';
import { compiled, fieldProblems } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { releaseSlot, reserveSlot, takeToken } from '../core/redisScripts.js';
import { requireApiKey, type KeyBucket, type KeyPrincipal, type PrefetchedToken } from '../apiKeys/keys.js';
import { cachedBot } from '../bots/store.js';
import { requestView, type CacheView } from '../core/cacheTable.js';
import { insertCall, liveCalls, queuedCall, type CallDoc } from '../calls/store.js';
import { checkVariables } from '../calls/variables.js';
import { trunkForDialout } from '../trunks/store.js';
import { claim, complete, release, requestHash } from './idempotency.js';
import { emitCallEvent } from '../webhooks/outbox.js';


/** Schema step: structure first (validation_failed), then the number (invalid_phone_number), then the alias pair (conflicting_fields). */
interface DialoutInput {
  bot_id: string;
  to_number: string;
  from_number?: string;
  variables: Record<string, string>;
}

/** A call to queue for the fleet: a dial-out to a phone, or a browser test call (docs/design.md §7 widget). */
type CallRequest = ({ direction: 'outbound' } & DialoutInput) | { direction: 'web'; bot_id: string; variables: Record<string, string> };

/** Who asked for the call: an API key, or an admin (no key). */
export interface CallRequester {
  apiKeyId: string | null;
  /** For the log line: the key's prefix or the admin's id. */
  label: string;
}

/** The country of the caller ID a dial-out from `fromNumber` (else the default trunk's) would have; null when there is none. */
type CallerRegion = (fromNumber: string | undefined) => Promise<string | null>;

async function parseDialout(body: unknown, callerRegion: CallerRegion): Promise<DialoutInput> {
  const validate = compiled(DialoutRequest);
  if (!validate(body)) {
    // The number patterns and the schema's `not` (variables with connected_event) have their own codes below.
    const later = (e: ErrorObject) =>
      ((e.instancePath === '/to_number' || e.instancePath === '/from_number') && e.keyword === 'pattern') || (e.instancePath === '' && e.keyword === 'not');
    const structural = (validate.errors ?? []).filter((e) => !later(e));
    if (structural.length) throw apiError('validation_failed', { details: fieldProblems(structural) });
  }
  const b = body as { bot_id: string; to_number: string; from_number?: string; default_region?: string; variables?: Record<string, string>; connected_event?: Record<string, string> };
  // Numbers through libphonenumber (schemas/src/phone.ts): from_number international; to_number too, unless
  // it is national (no `+`) and no default_region was given: the route reads it in the caller ID's country.
  const from = b.from_number === undefined ? undefined : e164Input(b.from_number, 'from_number', null, 'invalid_phone_number');
  const national = b.default_region === undefined && !b.to_number.trim().startsWith('+');
  const to = e164Input(b.to_number, 'to_number', national ? await callerRegion(from) : b.default_region, 'invalid_phone_number');
  if (b.variables !== undefined && b.connected_event !== undefined) {
    throw apiError('conflicting_fields', {
      details: [
        { field: 'variables', message: 'conflicts with connected_event' },
        { field: 'connected_event', message: 'conflicts with variables' },
      ],
    });
  }
  return {
    bot_id: b.bot_id,
    to_number: to,
    ...(from !== undefined ? { from_number: from } : {}),

    variables: b.variables ?? b.connected_event ?? {},
  };
}

export function dialoutRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const { settings } = svc;
  const jobless = joblessCloser(svc);

  const bucket: KeyBucket = (keyId) => ({ key: `vp:ratelimit:dialout:${keyId}`, rate: settings.DIALOUT_RATE_PER_SECOND, burst: settings.DIALOUT_BURST, now: svc.clock() });
  const rateLimit = async (ctx: Context, next: () => Promise<unknown>) => {
    const key = ctx.state.apiKey as KeyPrincipal;
    // Usually taken already, with the key check's cache view (keys.ts): one Redis round trip for both.
    const pre = ctx.state.rateToken as PrefetchedToken | undefined;
    const b = bucket(key.id);
    const r = pre?.keyId === key.id ? pre.result : await takeToken(svc.redis, b.key, b.rate, b.burst, b.now);
    if (!r.allowed) {
      throw apiError('rate_limited', {
        message: 'too many dial-out requests for this API key',
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(r.retryAfterMs / 1000))) },
      });
    }
    await next();
  };

  // Counts every outcome once, including refusals thrown by the auth and body middleware.
  const count = async (ctx: Context, next: () => Promise<unknown>) => {
    try {
      await next();
      metrics.dialouts.inc({ result: ctx.state.dialoutResult ?? 'queued' });
    } catch (err) {
      metrics.dialouts.inc({ result: err instanceof ApiError ? err.code : 'internal_error' });
      throw err;
    }
  };

  router.post('/api/v1/sip/dialout', count, requireApiKey(svc, metrics, bucket), rateLimit, jsonBody(), async (ctx) => {
    const key = ctx.state.apiKey as KeyPrincipal;
    // A national to_number without default_region is read in the country of the caller ID the call would
    // have; with no such trunk it has no region (and placeCall refuses the trunk in its turn).
    const callerRegion: CallerRegion = async (from) => {
      try {
        const { fromNumber } = await trunkForDialout(svc.db, from, { table: svc.cache.trunks, view: await requestView(svc.cache, ctx.state) });
        return phoneNumberRegion(fromNumber);
      } catch (err) {
        if (err instanceof ApiError) return null;
        throw err;
      }
    };
    const req = await parseDialout(ctx.request.body, callerRegion);

    const idemKey = ctx.get('Idempotency-Key');
    if (idemKey.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      throw apiError('validation_failed', { details: [{ field: 'Idempotency-Key', message: `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` }] });
    }
    let claimId: string | undefined;
    if (idemKey) {
      const c = await claim(svc.db, svc.redis, key.id, idemKey, requestHash(ctx.request.body), svc.clock());
      if (c.kind === 'replay') {
        ctx.state.dialoutResult = 'replayed';
        ctx.status = c.status;
        ctx.set('Idempotent-Replayed', 'true');
        ctx.body = c.response;
        return;
      }
      claimId = c.id;
    }
    try {
      const call = await placeCall(svc, jobless, { apiKeyId: key.id, label: key.prefix }, { direction: 'outbound', ...req }, ctx.state.requestId as string, await requestView(svc.cache, ctx.state));
      const response: DialoutResponse = { call_id: call._id, status: 'queued', bot_id: call.bot_id, to_number: req.to_number, from_number: call.from_number!, created_at: call.created_at.toISOString() };
      if (claimId) await complete(svc.db, claimId, 201, response);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/calls/${response.call_id}`);
      ctx.body = response;
    } catch (err) {
      if (claimId) await release(svc.db, claimId).catch(() => undefined);
      throw err;
    }
  });
}

/** placeCall refused a caller-chosen call id because a record with it exists (campaign dials, see campaigns/dialler.ts). */
export const CALL_EXISTS = 'call_exists' satisfies ErrorCode;

interface PlaceOptions {
  /** The call's id, chosen by the caller (a campaign attempt's id is derived from the contact and the
   *  attempt number, so a second dial of one attempt meets the unique _id and is refused with CALL_EXISTS). */
  callId?: string;
  campaign?: { campaignId: string; contactId: string; attempt: number };
}

/**
 * Checks the bot (exists, active, variables) and, for a dial-out, the trunk; reserves a slot of the
 * fleet; stores the call `queued` and queues its job. Every refusal is an ApiError; nothing is left
 * behind by one (a slot is given back, a record without a job is closed).
 */
export async function placeCall(
  svc: Services,
  jobless: ReturnType<typeof joblessCloser>,
  by: CallRequester,
  req: CallRequest,
  requestId: string,
  view: CacheView,
  opts: PlaceOptions = {},
): Promise<CallDoc> {
  // The bot and the trunk come through the replica's cache, under the view the key check read (cache.ts).
  const bot = await cachedBot(svc, view, req.bot_id);
  if (!bot) throw apiError('bot_not_found');
  if (!bot.active) throw apiError('bot_inactive');
  checkVariables(bot.variables, req.variables);
  const dial = req.direction === 'outbound' ? { to: req.to_number, ...(await trunkForDialout(svc.db, req.from_number, { table: svc.cache.trunks, view })) } : null;

  const callId = opts.callId ?? new ObjectId().toHexString();
  const now = svc.clock();
  // Browser test calls must fit the workers' test-call share (TEST_CALL_SHARE): refused here, not failed later.
  const slot = await reserveSlot(svc.redis, callId, now, svc.settings.RESERVATION_TTL_SECONDS * 1000, req.direction === 'web' ? 'test' : 'call');
  if (!slot.reserved) {
    throw apiError('fleet_at_capacity', {
      message: slot.liveWorkers === 0 ? 'no voice worker is available' : slot.testShareFull ? 'test calls hold their share of every voice worker; the rest is kept for dial-outs' : 'every voice worker is busy',
      details: { live_workers: slot.liveWorkers },
      headers: { 'Retry-After': '5' },
    });
  }
  const call = queuedCall(
    {
      _id: callId,
      bot_id: bot._id,
      direction: req.direction,
      to_number: dial?.to ?? null,
      from_number: dial?.fromNumber ?? null,
      variables: req.variables,
      api_key_id: by.apiKeyId,
      ...(opts.campaign ? { campaign_id: opts.campaign.campaignId, campaign_contact_id: opts.campaign.contactId, campaign_attempt: opts.campaign.attempt } : {}),
    },
    new Date(now),
  );
  try {
    await insertCall(svc.db, call, { chosenId: opts.callId !== undefined });
  } catch (err) {
    await releaseSlot(svc.redis, callId).catch(() => undefined);
    // A caller-chosen id that is taken: that record (and its job) belong to whoever inserted it first.
    if (opts.callId && (err as { code?: unknown }).code === 11000) throw apiError(CALL_EXISTS);
    // The insert may have landed although its reply was lost with the connection: close that record later.
    jobless.later(callId);
    throw err;
  }
  try {
    const job = dial
      ? ['to_number', dial.to, 'sip_trunk_id', dial.trunk.livekit_trunk_id, 'from_number', dial.fromNumber]
      : ['direction', 'web']; // the worker joins the call's room and waits for the browser
    await svc.redis.xadd(CALL_JOBS_STREAM_KEY, 'MAXLEN', '~', '100000', '*', 'call_id', callId, 'bot_id', bot._id, 'variables', JSON.stringify(req.variables), ...job);
  } catch (err) {
    // No job means no worker will ever take the call: free the slot and close the record.
    await releaseSlot(svc.redis, callId).catch(() => undefined);
    await jobless.now(callId);
    throw err;
  }
  svc.logger.info({ req_id: requestId, call_id: callId, bot_id: bot._id, by: by.label, direction: req.direction, trunk_id: dial?.trunk._id, free_slots: slot.free }, 'call queued');
  await emitCallEvent(svc, 'call.queued', call); // one XADD; never throws, never waits for a receiver
  return call;
}

/**
 * Closes the records of dial-outs that have no job (status `failed`, end_reason `enqueue_failed`), so no
 * `queued` call is left that no worker will ever take. `now()` tries one record at once (MongoDB is
 * likely up); `later()` hands it to one background loop per app that closes everything pending in one
 * update per attempt, backing off while MongoDB does not answer (one loop, not one per call: a store
 * that has just come back must not meet a retry storm), and gives a record up after
 * QUEUED_CALL_TIMEOUT_SECONDS (by then the dialler's sweeper fails such a call anyway).
 */
export function joblessCloser(svc: Services) {
  const pending = new Map<string, number>(); // call id → give up at (epoch ms)
  let running = false;
  const close = (ids: string[]) => {
    const ended = new Date(svc.clock());
    // A queued call is in calls_live; failed so, it is settled, and the sweeper moves it to `calls`.
    return liveCalls(svc.db).updateMany(
      { _id: { $in: ids }, status: 'queued' },
      { $set: { status: 'failed', end_reason: 'enqueue_failed', ended_at: ended, 'status_times.failed': ended } },
    );
  };
  const drain = async () => {
    for (let pauseMs = 200; pending.size; pauseMs = Math.min(pauseMs * 2, 2000)) {
      await delay(pauseMs, undefined, { ref: false });
      for (const [id, giveUpAt] of pending) {
        if (giveUpAt > Date.now()) continue;
        pending.delete(id);
        svc.logger.warn({ call_id: id }, 'dial-out record without a job left queued; the sweeper will fail it');
      }
      const ids = [...pending.keys()];
      if (ids.length && (await close(ids).then(() => true, () => false))) {
        for (const id of ids) pending.delete(id);
        pauseMs = 100; // doubled to 200 for the next round
      }
    }
    running = false; // in the same step that found nothing pending: a record added later starts a new loop
  };
  const later = (callId: string) => {
    pending.set(callId, Date.now() + svc.settings.QUEUED_CALL_TIMEOUT_SECONDS * 1000);
    if (running) return;
    running = true;
    void drain();
  };
  return {
    later,
    now: async (callId: string) => {
      if (!(await close([callId]).then(() => true, () => false))) later(callId);
    },
  };
}
