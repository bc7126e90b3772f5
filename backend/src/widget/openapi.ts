// The OpenAPI paths of the browser test call and of the WebSocket test-call token, built by openapi.ts with its
// helpers (two functions: the LiveKit webhook's path sits between them in the document).
import type { TSchema } from '@sinclair/typebox';
import { TestCallTokenRequest, TestCallTokenResponse, WidgetRequest, WidgetResponse, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  ADMIN: readonly ErrorCode[];
  API_KEY: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
}

export function widgetPaths(h: DocHelpers): Record<string, object> {
  return {
    '/livekit/widget': {
      post: {
        operationId: 'createWidgetCall',
        summary: 'Start a browser test call with a bot',
        description:
          'The dial-out checks with the same codes: credentials (an admin token or an API key) → JSON → schema → bot exists (404 `bot_not_found`) → ' +
          'bot active (409 `bot_inactive`) → variables (422 `variables_mismatch`) → fleet capacity (503 `fleet_at_capacity`). The call is queued with ' +
          '`direction: web`; a worker joins its LiveKit room (`room_name`, the call id) and waits for the browser, which joins with `access_token` ' +
          '(this room only, microphone and data, identity `caller`, valid until `expires_at`, at most 10 minutes). Transcripts and the end of the call ' +
          'reach the browser as LiveKit data messages on topic `events`, in the WebSocket protocol\'s shapes. A caller who never joins ends the call ' +
          '`failed` / `not_started`. 503 `service_unavailable` when the telephony plane is not configured.',
        security: [{ adminJwt: [] }, { apiKey: [] }],
        requestBody: h.body(WidgetRequest),
        responses: {
          201: h.ok('The call is queued; join its room with the token', WidgetResponse, { Location: { description: 'The call resource', schema: { type: 'string' } } }),
          ...h.errors([...h.ADMIN, ...h.API_KEY, ...h.BODY, 'bot_not_found', 'bot_inactive', 'variables_mismatch', 'fleet_at_capacity', 'service_unavailable'], {
            service_unavailable: 'The telephony plane is not configured, or MongoDB or Redis is unreachable',
          }),
        },
      },
    },
  };
}

export function testCallTokenPaths(h: DocHelpers): Record<string, object> {
  return {
    '/api/v1/test-calls/token': {
      post: {
        operationId: 'createTestCallToken',
        summary: 'A token for one WebSocket test call',
        description:
          '`WS /ws/{bot_id}` needs `?token=` from here (an admin token or an API key). The token is signed, names one bot, is good for ' +
          'one call, and a call must start before `expires_at` (TEST_CALL_TOKEN_TTL_SECONDS, default 300, at most 600). Checks: credentials → JSON → ' +
          'schema → bot exists (404 `bot_not_found`) → bot active (409 `bot_inactive`). The worker closes a socket without a valid token with 4401 ' +
          '(`unauthorized`), and one from a browser Origin not in WS_ALLOWED_ORIGINS with 4403 (`origin_not_allowed`).',
        security: [{ adminJwt: [] }, { apiKey: [] }],
        requestBody: h.body(TestCallTokenRequest),
        responses: {
          201: h.ok('The token', TestCallTokenResponse),
          ...h.errors([...h.ADMIN, ...h.API_KEY, ...h.BODY, 'bot_not_found', 'bot_inactive', 'service_unavailable'], { service_unavailable: 'MongoDB or Redis is unreachable' }),
        },
      },
    },
  };
}
