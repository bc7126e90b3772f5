// POST /livekit/widget (docs/design.md §7): a browser test call. The same checks as a dial-out (bot exists,
// active, variables, capacity, with the same codes); the call is queued `web` for the fleet, whose
// worker joins the call's LiveKit room and waits there for the browser, which joins with the token
// answered here: that room only, microphone and data, identity `caller`, at most 10 minutes.
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { AccessToken, TrackSource } from 'livekit-server-sdk';
import { TestCallTokenRequest, WidgetRequest, type TestCallTokenResponse, type WidgetResponse } from '@voice-platform/schemas';
import { signTestCallToken } from '@voice-platform/schemas/test-call-token';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { check } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { authenticateAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { requestView } from '../core/cacheTable.js';
import { joblessCloser, placeCall, type CallRequester } from '../calls/place.js';
import { cachedBot } from '../bots/store.js';

/** The browser's identity in the room: the worker's transport listens to this participant. */
export const WEB_CALLER_IDENTITY = 'caller';

/** A web call's caller token (the browser's, or the bot-test runner's room caller): that room only, microphone
 *  and data, identity `caller`. */
export function webCallerToken(s: { LIVEKIT_API_KEY: string; LIVEKIT_API_SECRET: string }, roomName: string, ttlSeconds: number): Promise<string> {
  const at = new AccessToken(s.LIVEKIT_API_KEY, s.LIVEKIT_API_SECRET, { identity: WEB_CALLER_IDENTITY, name: 'test caller', ttl: ttlSeconds });
  at.addGrant({ room: roomName, roomJoin: true, canPublish: true, canPublishSources: [TrackSource.MICROPHONE], canSubscribe: true, canPublishData: true });
  return at.toJwt();
}

export function widgetRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const jobless = joblessCloser(svc);
  const s = svc.settings;

  /**
   * An admin (Authorization: Bearer) or an API key (X-API-Key). Every credential the request carries must
   * be valid (one bad credential beside a good one is still refused); none at all is 401 as for the key.
   */
  const requester = async (ctx: Context): Promise<CallRequester> => {
    const admin = ctx.headers.authorization !== undefined ? await authenticateAdmin(svc, ctx) : null;
    if (admin && ctx.headers['x-api-key'] === undefined) return { apiKeyId: null, label: `admin:${admin.id}` };
    const key = await authenticateKey(svc, metrics, ctx);
    return { apiKeyId: key.id, label: key.prefix };
  };

  // A WebSocket test call's token (docs/design.md §4): the worker checks the signature, expiry and bot, and lets
  // each token start one call. The bot must exist and be active now; variables go in the start message.
  router.post('/api/v1/test-calls/token', async (ctx, next) => {
    ctx.state.requester = await requester(ctx);
    await next();
  }, jsonBody(), async (ctx) => {
    const body = check(TestCallTokenRequest, ctx.request.body);
    const bot = await cachedBot(svc, await requestView(svc.cache, ctx.state), body.bot_id);
    if (!bot) throw apiError('bot_not_found');
    if (!bot.active) throw apiError('bot_inactive');
    const by = ctx.state.requester as CallRequester;
    const { token, claims } = signTestCallToken(s.WORKER_AUTH_TOKEN, { bot_id: body.bot_id, sub: by.label, ttlSeconds: s.TEST_CALL_TOKEN_TTL_SECONDS, nowMs: svc.clock() });
    const response: TestCallTokenResponse = {
      token,
      bot_id: body.bot_id,
      ws_path: `/ws/${encodeURIComponent(body.bot_id)}?token=${token}`,
      expires_at: new Date(claims.exp * 1000).toISOString(),
    };
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = response;
  });

  router.post('/livekit/widget', async (ctx, next) => {
    ctx.state.requester = await requester(ctx);
    await next();
  }, jsonBody(), async (ctx) => {
    const body = check(WidgetRequest, ctx.request.body);
    if (!s.LIVEKIT_URL || !s.LIVEKIT_API_KEY || !s.LIVEKIT_API_SECRET) {
      throw apiError('service_unavailable', 'browser test calls need the telephony plane (LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET)');
    }
    const call = await placeCall(svc, jobless, ctx.state.requester as CallRequester, { direction: 'web', bot_id: body.bot_id, variables: body.variables ?? {} }, ctx.state.requestId as string, await requestView(svc.cache, ctx.state));
    const ttlSeconds = s.WIDGET_TOKEN_TTL_SECONDS;
    const response: WidgetResponse = {
      call_id: call._id,
      room_name: call._id,
      livekit_url: s.LIVEKIT_PUBLIC_URL ?? s.LIVEKIT_URL,
      access_token: await webCallerToken({ LIVEKIT_API_KEY: s.LIVEKIT_API_KEY, LIVEKIT_API_SECRET: s.LIVEKIT_API_SECRET }, call._id, ttlSeconds),
      expires_at: new Date(svc.clock() + ttlSeconds * 1000).toISOString(),
    };
    ctx.status = 201;
    ctx.set('Location', `/api/v1/calls/${call._id}`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = response;
  });
}
