// POST /api/v1/sip/dialout. Checks run in the documented order: key → rate limit → JSON → schema →
// bot exists → bot active → variables → trunk (from_number) → capacity; then the call record and the job.
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { DialoutRequest, IDEMPOTENCY_KEY_MAX_LENGTH, phoneNumberRegion, type DialoutResponse } from '@voice-platform/schemas';
import { e164Input } from '../core/phoneInput.js';
import { ApiError, apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import type { ErrorObject } from 'ajv';
import { compiled, fieldProblems } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { takeToken } from '../core/redisScripts.js';
import { requireApiKey, type KeyBucket, type KeyPrincipal, type PrefetchedToken } from '../apiKeys/keys.js';
import { requestView } from '../core/cacheTable.js';
import { trunkForDialout } from '../trunks/store.js';
import { claim, complete, release, requestHash } from './idempotency.js';
import { joblessCloser, placeCall, type DialoutInput } from '../calls/place.js';



/** The country of the caller ID a dial-out from `fromNumber` (else the default trunk's) would have; null when there is none. */
type CallerRegion = (fromNumber: string | undefined) => Promise<string | null>;

export async function parseDialout(body: unknown, callerRegion: CallerRegion): Promise<DialoutInput> {
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
