// POST /api/v1/sip/dialout. Checks run in the documented order: key → rate limit → JSON → schema →
// bot exists → bot active → variables → trunk (from_number) → capacity; then the call record and the job.
import { ObjectId } from 'mongodb';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { DIALOUT_STREAM_KEY, DialoutRequest, IDEMPOTENCY_KEY_MAX_LENGTH, PHONE_NUMBER_PATTERN, type DialoutResponse } from '@voice-platform/schemas';
import { ApiError } from '../errors.js';
import type { Services } from '../deps.js';
import type { Metrics } from '../metrics.js';
import { compiled, fieldProblems } from '../validate.js';
import { jsonBody } from '../body.js';
import { COLLECTIONS } from '../stores.js';
import { releaseSlot, reserveSlot, takeToken } from '../redisScripts.js';
import { requireApiKey, type KeyPrincipal } from '../apiKeys/keys.js';
import { findBot } from '../bots/routes.js';
import type { CallDoc } from '../calls/routes.js';
import { checkVariables } from './variables.js';
import { trunkForDialout } from '../trunks/store.js';
import { claim, complete, release, requestHash } from './idempotency.js';

const phone = new RegExp(PHONE_NUMBER_PATTERN);

/** Schema step: structure first (validation_failed), then the number (invalid_phone_number), then the alias pair (conflicting_fields). */
interface DialoutInput {
  bot_id: string;
  to_number: string;
  from_number?: string;
  variables: Record<string, string>;
}

function parseDialout(body: unknown): DialoutInput {
  const validate = compiled(DialoutRequest);
  if (!validate(body)) {
    const structural = (validate.errors ?? []).filter((e) => !((e.instancePath === '/to_number' || e.instancePath === '/from_number') && e.keyword === 'pattern'));
    if (structural.length) throw new ApiError(422, 'validation_failed', 'the request is invalid', fieldProblems(structural));
  }
  const b = body as { bot_id: string; to_number: unknown; from_number?: unknown; variables?: Record<string, string>; connected_event?: Record<string, string> };
  for (const field of ['to_number', 'from_number'] as const) {
    const v = b[field];
    if (field === 'from_number' && v === undefined) continue;
    if (typeof v !== 'string' || !phone.test(v)) {
      throw new ApiError(422, 'invalid_phone_number', `${field} must be an E.164 number such as +4915112345678`, [{ field, message: `must match ${PHONE_NUMBER_PATTERN}` }]);
    }
  }
  if (b.variables !== undefined && b.connected_event !== undefined) {
    throw new ApiError(422, 'conflicting_fields', 'send variables or its alias connected_event, not both', [
      { field: 'variables', message: 'conflicts with connected_event' },
      { field: 'connected_event', message: 'conflicts with variables' },
    ]);
  }
  return {
    bot_id: b.bot_id,
    to_number: b.to_number as string,
    ...(typeof b.from_number === 'string' ? { from_number: b.from_number } : {}),
    variables: b.variables ?? b.connected_event ?? {},
  };
}

export function dialoutRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const { settings } = svc;

  const rateLimit = async (ctx: Context, next: () => Promise<unknown>) => {
    const key = ctx.state.apiKey as KeyPrincipal;
    const r = await takeToken(svc.redis, `vp:ratelimit:dialout:${key.id}`, settings.DIALOUT_RATE_PER_SECOND, settings.DIALOUT_BURST, svc.clock());
    if (!r.allowed) {
      throw new ApiError(429, 'rate_limited', 'too many dial-out requests for this API key', undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(r.retryAfterMs / 1000))),
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

  router.post('/api/v1/sip/dialout', count, requireApiKey(svc, metrics), rateLimit, jsonBody(), async (ctx) => {
    const key = ctx.state.apiKey as KeyPrincipal;
    const req = parseDialout(ctx.request.body);

    const idemKey = ctx.get('Idempotency-Key');
    if (idemKey.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      throw new ApiError(422, 'validation_failed', 'the request is invalid', [
        { field: 'Idempotency-Key', message: `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` },
      ]);
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
      const response = await placeCall(svc, key, req, ctx.state.requestId as string);
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

async function placeCall(
  svc: Services,
  key: KeyPrincipal,
  req: DialoutInput,
  requestId: string,
): Promise<DialoutResponse> {
  const bot = await findBot(svc.db, req.bot_id);
  if (!bot) throw new ApiError(404, 'bot_not_found', 'bot not found');
  if (!bot.active) throw new ApiError(409, 'bot_inactive', 'the bot is not active');
  checkVariables(bot.variables, req.variables);
  const { trunk, fromNumber } = await trunkForDialout(svc.db, req.from_number);

  const callId = new ObjectId().toHexString();
  const now = svc.clock();
  const slot = await reserveSlot(svc.redis, callId, now, svc.settings.RESERVATION_TTL_SECONDS * 1000);
  if (!slot.reserved) {
    throw new ApiError(
      503,
      'fleet_at_capacity',
      slot.liveWorkers === 0 ? 'no voice worker is available' : 'every voice worker is busy',
      { live_workers: slot.liveWorkers },
      { 'Retry-After': '5' },
    );
  }
  const call: CallDoc = {
    _id: callId,
    bot_id: bot._id,
    direction: 'outbound',
    to_number: req.to_number,
    from_number: fromNumber,
    status: 'queued',
    variables: req.variables,
    api_key_id: key.id,
    created_at: new Date(now),
    started_at: null,
    ended_at: null,
    end_reason: null,
    recording_key: null,
    recording_error: null,
    sip_status_code: null,
    transcript: [],
    status_times: { queued: new Date(now) },
  };
  try {
    await svc.db.collection<CallDoc>(COLLECTIONS.calls).insertOne(call);
  } catch (err) {
    await releaseSlot(svc.redis, callId).catch(() => undefined);
    throw err;
  }
  try {
    await svc.redis.xadd(DIALOUT_STREAM_KEY, 'MAXLEN', '~', '100000', '*',
      'call_id', callId, 'bot_id', bot._id, 'to_number', req.to_number, 'variables', JSON.stringify(req.variables),
      'sip_trunk_id', trunk.livekit_trunk_id, 'from_number', fromNumber);
  } catch (err) {
    // No job means no worker will ever take the call: free the slot and close the record.
    await releaseSlot(svc.redis, callId).catch(() => undefined);
    await svc.db.collection<CallDoc>(COLLECTIONS.calls)
      .updateOne({ _id: callId }, { $set: { status: 'failed', end_reason: 'enqueue_failed', ended_at: new Date(svc.clock()) } })
      .catch(() => undefined);
    throw err;
  }
  svc.logger.info({ req_id: requestId, call_id: callId, bot_id: bot._id, api_key: key.prefix, trunk_id: trunk._id, free_slots: slot.free }, 'dial-out queued');
  return { call_id: callId, status: 'queued', bot_id: bot._id, to_number: req.to_number, from_number: fromNumber, created_at: call.created_at.toISOString() };
}
