// The OpenAPI 3.1 document of every endpoint, built from the same TypeBox schemas the app validates
// with. A test checks it against the router: every route documented, every documented route real.
import { Type, type TSchema } from '@sinclair/typebox';
import {
  ApiKey,
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyUpdate,
  Bot,
  BotCreate,
  BotToolSecret,
  BotUpdate,
  Call as CallSchema,
  CallCreate,
  CallEvent,
  CALL_DIRECTIONS,
  CALL_STATUSES,
  CURSOR_PATTERN,
  DialoutRequest,
  DialoutResponse,
  InboundNumber,
  InboundNumberCreate,
  InboundNumberUpdate,
  MAX_ALLOWED_ADDRESSES,
  OutboundTrunk,
  OutboundTrunkCreate,
  OutboundTrunkUpdate,
  RESOURCE_ID_PATTERN,
  RuntimeConfig,
  MAX_WEBHOOKS,
  WEBHOOK_MAX_ATTEMPTS,
  Webhook,
  WebhookCallAnalyzedData,
  WebhookCallData,
  WebhookCreate,
  WebhookCreated,
  WebhookDeliveryAttempt,
  WebhookEvent,
  WebhookEventQueued,
  WebhookUpdate, WidgetRequest, WidgetResponse, TestCallTokenRequest, TestCallTokenResponse, CampaignDetail,
  ERROR_CODES,
  ErrorBody,
  errorBody,
  type ErrorCode } from '@voice-platform/schemas';
import { LoginRequest, LoginResponse, Me } from './auth/admin.js';
import { DATE_TIME_PATTERN } from './core/validate.js';
import { campaignPaths } from './campaigns/openapi.js';
import { userPaths } from './users/openapi.js';
import { auditPaths } from './audit/openapi.js';
import { analyticsPaths } from './analytics/openapi.js';
import { fleetPaths } from './fleet/openapi.js';

/** The server reads every `format: date-time` it is sent more strictly than JSON Schema does (validate.ts):
 *  requests say so with DATE_TIME_PATTERN. Responses keep the plain format (the server writes UTC times). */
function strictTimes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictTimes);
  if (schema === null || typeof schema !== 'object') return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strictTimes(v)]));
  return out.format === 'date-time' && out.pattern === undefined ? { ...out, pattern: DATE_TIME_PATTERN } : out;
}
const plain = (schema: TSchema | object) => JSON.parse(JSON.stringify(schema)) as object;
const json = (schema: TSchema | object) => ({ 'application/json': { schema: plain(schema) } });
const requestJson = (schema: TSchema | object) => ({ 'application/json': { schema: strictTimes(plain(schema)) as object } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ok = (description: string, schema: TSchema | object, headers?: object) => ({ description, content: json(schema), ...(headers ? { headers } : {}) });
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } };
const body = (schema: TSchema) => ({ required: true, content: requestJson(schema) });
const idSchema = { type: 'string', pattern: RESOURCE_ID_PATTERN };
const idParam = (description: string) => ({ name: 'id', in: 'path', required: true, schema: idSchema, description });
const timeParam = { type: 'string', format: 'date-time', pattern: DATE_TIME_PATTERN };

/** What an error code means for one operation, where the catalogue's words are not enough. */
type ErrorNotes = Partial<Record<ErrorCode, string>>;

/**
 * The error responses of an operation, from the catalogue (@voice-platform/schemas): one per status, its
 * description naming each code (with its note, else its meaning), an example body for each, and
 * Retry-After where one of its codes may carry it.
 */
function errors(codes: readonly ErrorCode[], notes: ErrorNotes = {}): Record<string, object> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: `Error: ${list.map((c) => `\`${c}\` (${notes[c] ?? ERROR_CODES[c].meaning})`).join(', ')}`,
        content: {
          'application/json': {
            schema: ref('Error'),
            examples: Object.fromEntries(list.map((c) => [c, { summary: ERROR_CODES[c].meaning, value: errorBody(c, ERROR_CODES[c].message) }])),
          },
        },
        ...(list.some((c) => 'retryAfter' in ERROR_CODES[c]) ? { headers: retryAfter } : {}),
      },
    ]),
  );
}

/** The codes of the admin token check, the JSON body checks and the API key check. */
const ADMIN: ErrorCode[] = ['unauthorized', 'token_expired', 'forbidden', 'password_change_required'];
const BODY: ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type', 'validation_failed'];
/** `forbidden`: the key lacks the operation's scope (docs/roles.md). */
const API_KEY: ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'api_key_inactive', 'api_key_expired', 'forbidden'];
const WORKER_TOKEN: ErrorNotes = { unauthorized: 'Missing or wrong worker token' };
/** The headers of a recording's 200 and 206 answers. */
const RECORDING_HEADERS = {
  'Content-Length': { description: 'Bytes in this answer', schema: { type: 'integer', minimum: 0 } },
  'Accept-Ranges': { description: '`bytes`', schema: { type: 'string', enum: ['bytes'] } },
  ETag: { description: "The recording's version (for `If-Range`)", schema: { type: 'string' } },
};
const TELEPHONY_DOWN: ErrorNotes = { service_unavailable: 'LiveKit is unreachable, or the telephony plane is not configured on this backend' };

// The call record as served, with what its fields mean for a CRM polling it.
const Call = {
  ...CallSchema,
  properties: {
    ...CallSchema.properties,
    end_reason: {
      ...CallSchema.properties.end_reason,
      description:
        'Why the call ended (null until it does). Telephony outcomes (status in brackets): `busy` [busy], `no_answer` [no_answer], ' +
        '`invalid_number` [failed], `sip_error` [failed], `callee_hangup` [completed], `bot_hangup` [completed], `max_duration` [completed]; ' +
        'WebSocket and browser calls also end with `caller_hangup`. Set by the backend: `enqueue_failed` (the job could not be queued), ' +
        '`not_claimed` (status `failed`: the dialler found the dial-out call still `queued` after QUEUED_CALL_TIMEOUT_SECONDS, i.e. no worker ' +
        'ever claimed its job), `not_started` (the same for a WebSocket or browser call its worker recorded but never started) and `worker_lost` (status `failed`: the worker running the call died; the callee was hung up).',
    },
    status_times: { ...CallSchema.properties.status_times, description: 'When each status was reached' },
  },
};

const ApiKeyList = Type.Object({ items: Type.Array(ApiKey) });
const TrunkList = Type.Object({ items: Type.Array(OutboundTrunk) });
const InboundNumberList = Type.Object({ items: Type.Array(InboundNumber) });
const INBOUND_RULES =
  'Checked in this order: credentials → JSON → schema (422 `validation_failed`; `allowed_addresses`: IPv4/IPv6 addresses or CIDRs, ' +
  `at most ${MAX_ALLOWED_ADDRESSES}, empty = any source) → the number is no other inbound number's (409 \`conflict\`) → the bot exists (404 ` +
  '`bot_not_found`) → `variables` match the bot\'s declared variables as a dial-out\'s must (422 `variables_mismatch`, `details: {missing, unknown}`) → ' +
  'LiveKit (503 `service_unavailable`; nothing is stored or left in LiveKit). An inactive bot is accepted: its calls fail until it is active. ' +
  'Mirrored into LiveKit as one inbound trunk (this number, these addresses) and one `individual` dispatch rule on it: each call gets a room ' +
  '`in-…` of its own, and the caller carries the participant attribute `vp.inbound_number_id` (this id).';
const BotList = Type.Object({ items: Type.Array(Bot) });
const WebhookList = Type.Object({ items: Type.Array(Webhook) });
const WebhookDeliveryPage = Type.Object({ items: Type.Array(WebhookDeliveryAttempt), next_cursor: Type.Union([Type.String({ pattern: CURSOR_PATTERN }), Type.Null()]) });
const SIGNING =
  'Each delivery is `POST <url>` with the JSON body `{id, type, created_at, data}` and the headers `Content-Type: application/json`, ' +
  '`X-Voice-Event-Id` (the same on every retry: dedupe on it), `X-Voice-Event-Type` and `X-Voice-Signature: t=<unix seconds>,v1=<hex ' +
  'HMAC-SHA256(secret, "<t>.<raw body>")>`, and the Standard Webhooks (standardwebhooks.com) headers `webhook-id` (the event id), ' +
  '`webhook-timestamp` (this attempt\'s unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>`, ' +
  'the key being the base64 decoding of the secret after `whsec_`: the `standardwebhooks` libraries (npm, PyPI, …) verify it given the secret as shown. ' +
  'Any 2xx within WEBHOOK_TIMEOUT_MS (10 s) is delivered; anything else (other statuses, ' +
  `redirects, timeouts, connection errors) is retried 1, 2, 4 … minutes later, at most ${WEBHOOK_MAX_ATTEMPTS} attempts, then the delivery is \`dead\`. ` +
  'At least once, in no guaranteed order.';
/** An event as a receiver gets it (OpenAPI 3.1 `webhooks`). */
const eventOperation = (type: string, summary: string, data: object) => ({
  post: {
    operationId: `event_${type.replace(/\W/g, '_')}`,
    summary,
    description: SIGNING,
    // The receiver checks X-Voice-Signature itself: no scheme of this API applies.
    security: [],
    parameters: [
      { name: 'X-Voice-Event-Id', in: 'header', required: true, schema: { type: 'string' } },
      { name: 'X-Voice-Signature', in: 'header', required: true, schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$' } },
      { name: 'webhook-id', in: 'header', required: true, description: 'Standard Webhooks: the event id (as X-Voice-Event-Id)', schema: { type: 'string' } },
      { name: 'webhook-timestamp', in: 'header', required: true, description: "Standard Webhooks: this attempt's unix seconds", schema: { type: 'string', pattern: '^[0-9]+$' } },
      { name: 'webhook-signature', in: 'header', required: true, description: 'Standard Webhooks: `v1,<base64 HMAC-SHA256>`', schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=$' } },
    ],
    requestBody: { required: true, content: json({ ...plain(WebhookEvent), properties: { ...WebhookEvent.properties, type: { const: type }, data } }) },
    responses: { '2XX': { description: 'Delivered' }, default: { description: 'Not delivered: retried' } },
  },
});
const CallPage = Type.Object({ items: Type.Array(Call), next_cursor: Type.Union([Type.String({ pattern: CURSOR_PATTERN }), Type.Null()]) });
const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({ mongodb: Type.String(), redis: Type.String() }),
  version: Type.String(),
  error: Type.Optional(Type.Object(ErrorBody.properties.error.properties, { description: 'present on 503: code service_unavailable, details.failed names the stores' })),
});

/** The codes no operation lists (catalogue scope `any`). */
const ANY_ENDPOINT = (Object.keys(ERROR_CODES) as ErrorCode[])
  .filter((c) => (ERROR_CODES[c] as { scope?: string }).scope === 'any')
  .map((c) => `${ERROR_CODES[c].status} \`${c}\` (${ERROR_CODES[c].meaning})`)
  .join(', ');

/**
 * `servers`: the backend's PUBLIC_URL when it has one (without its trailing `/`), else `/`: relative, i.e. the
 * origin the document was read from (no Host header is trusted for it). docs/openapi.json is built with
 * OPENAPI_FILE_SERVER_URL (openapiFile.ts) in its place.
 */
export function openapiDocument(version: string, publicUrl?: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Voice platform backend API',
      version,
      description:
        'Every error has the body `{"error":{"code","message","details"?}}`; each operation lists the codes it answers with. ' +
        `Any endpoint may also answer ${ANY_ENDPOINT}. Every response carries \`X-Request-Id\` ` +
        '(sent back when the request gives one). JSON bodies: `application/json` only, at most 64 KiB.',
    },
    servers: [publicUrl ? { url: publicUrl.replace(/\/$/, '') } : { url: '/', description: 'The origin this document is served from (the backend has no PUBLIC_URL)' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: '`vx_` + 32 characters; created by an admin. A key carries `scopes` (`dialout`, `calls:read`, `test_calls`, `campaigns`); an operation outside them answers 403 `forbidden` (docs/roles.md names the scope of each)' },
        adminJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'from POST /api/v1/auth/login' },
        workerToken: { type: 'http', scheme: 'bearer', description: 'the shared WORKER_AUTH_TOKEN' },
        liveKitWebhook: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'a JWT signed by livekit-server with LIVEKIT_API_KEY / LIVEKIT_API_SECRET, whose sha256 claim is the body\'s hash' },
      },
      schemas: {
        Error: plain(ErrorBody),
      },
    },
    paths: {
      '/health': {
        get: {
          operationId: 'health',
          security: [],
          summary: 'Liveness of the API and reachability of MongoDB and Redis',
          responses: { 200: ok('Both stores reachable', Health), 503: { ...ok('A store is unreachable; `checks` names it', Health), headers: retryAfter } },
        },
      },
      '/health/live': {
        get: {
          operationId: 'liveness',
          security: [],
          summary: 'Liveness: the process answers (does not probe the stores; use /health for readiness)',
          responses: { 200: ok('Alive', { type: 'object', required: ['status', 'version'], properties: { status: { const: 'alive' }, version: { type: 'string' } } }) },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          security: [],
          summary: 'Prometheus metrics',
          description:
            'backend_http_request_duration_seconds{method,route,status}, backend_dialout_requests_total{result}, ' +
            'backend_api_key_auth_failures_total{reason}, backend_capacity_slot_releases_total{outcome}, ' +
            'backend_calls_swept_total (dialler role: unclaimed dial-out calls failed with end_reason not_claimed), ' +
            'backend_calls_lost_total (dialler role: calls failed with end_reason worker_lost), ' +
            'backend_webhook_attempts_total{result} (dialler role: delivered, failed, dead), backend_webhook_events_fallback_total, ' +
            'backend_webhook_events_held_total, backend_webhook_events_held, backend_webhook_events_lost_total',
          responses: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
      },
      '/api/v1/openapi.json': {
        get: { operationId: 'openapi', summary: 'This document', security: [], responses: { 200: ok('OpenAPI 3.1', { type: 'object' }) } },
      },
      '/docs': {
        get: {
          operationId: 'apiReference',
          summary: 'This document as an HTML reference page (Redoc, served by the backend: nothing from a CDN)',
          security: [],
          responses: { 200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } } },
        },
      },
      '/docs/redoc.standalone.js': {
        get: {
          operationId: 'apiReferenceScript',
          summary: 'The script of the reference page (the `redoc` npm package\'s standalone bundle)',
          security: [],
          responses: { 200: { description: 'The script', content: { 'text/javascript': { schema: { type: 'string' } } } } },
        },
      },
      '/api/v1/auth/login': {
        post: {
          operationId: 'login',
          summary: 'Login (any active user)',
          security: [],
          description:
            'Attempts are limited per client address (LOGIN_IP_MAX_ATTEMPTS per LOGIN_IP_WINDOW_SECONDS), across all clients ' +
            '(LOGIN_GLOBAL_MAX_ATTEMPTS per LOGIN_GLOBAL_WINDOW_SECONDS) and per email and client address (LOGIN_MAX_ATTEMPTS per ' +
            'LOGIN_WINDOW_SECONDS): 429 `rate_limited`. At most LOGIN_HASH_CONCURRENCY passwords are checked at once per process; an ' +
            'attempt that finds no slot within LOGIN_HASH_WAIT_MS gets 503 `service_unavailable`.',
          requestBody: body(LoginRequest),
          responses: {
            200: ok('A bearer JWT', LoginResponse),
            ...errors([...BODY, 'invalid_credentials', 'rate_limited', 'service_unavailable']),
          },
        },
      },
      '/api/v1/auth/me': {
        get: { operationId: 'me', summary: 'The signed-in user', security: [{ adminJwt: [] }], responses: { 200: ok('The user', Me), ...errors([...ADMIN]) } },
      },
      '/api/v1/api-keys': {
        post: {
          operationId: 'createApiKey',
          summary: 'Create an API key; the full key is in this response only',
          security: [{ adminJwt: [] }],
          requestBody: body(ApiKeyCreate),
          responses: { 201: ok('The key, with `key` shown this once', ApiKeyCreated), ...errors([...ADMIN, ...BODY]) },
        },
        get: { operationId: 'listApiKeys', summary: 'List API keys (masked)', security: [{ adminJwt: [] }], responses: { 200: ok('Keys, newest first', ApiKeyList), ...errors([...ADMIN]) } },
      },
      '/api/v1/api-keys/{id}': {
        parameters: [idParam('API key id')],
        get: { operationId: 'getApiKey', summary: 'One API key (masked)', security: [{ adminJwt: [] }], responses: { 200: ok('The key', ApiKey), ...errors([...ADMIN, 'not_found']) } },
        patch: {
          operationId: 'updateApiKey',
          summary: 'Rename, set expiry, or deactivate (final) an API key',
          description: 'Reactivating an inactive or expired key, or changing its expiry, is refused with 409 `api_key_revoked`.',
          security: [{ adminJwt: [] }],
          requestBody: body(ApiKeyUpdate),
          responses: { 200: ok('The key', ApiKey), ...errors([...ADMIN, ...BODY, 'not_found', 'api_key_revoked']) },
        },
      },
      '/api/v1/bots': {
        post: {
          operationId: 'createBot',
          summary: 'Create a bot',
          description: '`{{name}}` placeholders in prompt, greeting and policy replies must name declared `variables` (else 422 `validation_failed`).',
          security: [{ adminJwt: [] }],
          requestBody: body(BotCreate),
          responses: { 201: ok('The bot', Bot), ...errors([...ADMIN, ...BODY]) },
        },
        get: { operationId: 'listBots', summary: 'List bots', security: [{ adminJwt: [] }], responses: { 200: ok('Bots, newest first', BotList), ...errors([...ADMIN]) } },
      },
      '/api/v1/bots/{id}': {
        parameters: [idParam('Bot id')],
        get: { operationId: 'getBot', summary: 'One bot', security: [{ adminJwt: [] }], responses: { 200: ok('The bot', Bot), ...errors([...ADMIN, 'bot_not_found']) } },
        patch: {
          operationId: 'updateBot',
          summary: 'Change a bot (deactivate with `{"active":false}`)',
          security: [{ adminJwt: [] }],
          requestBody: body(BotUpdate),
          responses: { 200: ok('The bot', Bot), ...errors([...ADMIN, ...BODY, 'bot_not_found', 'conflict'], { conflict: 'Changed concurrently' }) },
        },
      },
      '/api/v1/bots/{id}/tool-secret': {
        parameters: [idParam('Bot id')],
        post: {
          operationId: 'rotateBotToolSecret',
          summary: "Create or rotate the secret the bot's HTTP tool requests are signed with",
          description:
            'The secret (`whsec_` + 32 characters) is in this answer only (`Cache-Control: no-store`); HTTP tool requests carry ' +
            '`X-Voice-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` as webhooks do. A rotation replaces it at once.',
          security: [{ adminJwt: [] }],
          responses: { 200: ok('The new secret', BotToolSecret), ...errors([...ADMIN, 'bot_not_found']) },
        },
      },
      '/api/v1/sip/dialout': {
        post: {
          operationId: 'dialout',
          summary: 'Place an outbound call with a bot',
          description:
            'Checks, in order: API key (401) → per-key rate limit (429) → JSON (400/413/415) → schema (422 `validation_failed`, then ' +
            '`invalid_phone_number`, then `conflicting_fields` when both `variables` and `connected_event` are sent) → bot exists (404 ' +
            '`bot_not_found`) → bot active (409 `bot_inactive`) → variables match the bot (422 `variables_mismatch`, `details: {missing, unknown}`) → ' +
            'the trunk (422 `unknown_from_number` when `from_number` is no trunk\'s number; 409 `no_outbound_trunk` when no trunk exists; without ' +
            '`from_number` the default trunk and its first number place the call) → fleet capacity (503 `fleet_at_capacity`). With `Idempotency-Key`, a repeat of the same body within 24 h returns the first ' +
            'response (header `Idempotent-Replayed: true`) and places no second call. Numbers go through libphonenumber: `from_number` in ' +
            "international format, `to_number` too or national, read in `default_region`, else in the caller ID's country; both are answered " +
            'and stored as E.164. One that cannot exist is 422 `invalid_phone_number`, `details: [{field, message}]` with the reason as the ' +
            'message: `too short`, `too long`, `invalid length`, `invalid country calling code`, `not a number`.',
          security: [{ apiKey: [] }],
          parameters: [
            { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Makes retries safe for 24 h' },
          ],
          requestBody: body(DialoutRequest),
          responses: {
            201: ok('The call is queued', DialoutResponse, { Location: { description: 'The call resource', schema: { type: 'string' } } }),
            ...errors(
              [...API_KEY, ...BODY, 'bot_not_found', 'bot_inactive', 'no_outbound_trunk', 'idempotency_key_reused', 'conflict', 'invalid_phone_number', 'conflicting_fields', 'variables_mismatch', 'unknown_from_number', 'rate_limited', 'fleet_at_capacity', 'service_unavailable'],
              {
                conflict: 'The same Idempotency-Key is still in flight',
                rate_limited: 'Over DIALOUT_RATE_PER_SECOND per key, burst DIALOUT_BURST',
                service_unavailable: 'MongoDB or Redis is unreachable; `details.failed` names it (`mongodb` or `redis`)',
              },
            ),
          },
        },
      },
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
          requestBody: body(WidgetRequest),
          responses: {
            201: ok('The call is queued; join its room with the token', WidgetResponse, { Location: { description: 'The call resource', schema: { type: 'string' } } }),
            ...errors([...ADMIN, ...API_KEY, ...BODY, 'bot_not_found', 'bot_inactive', 'variables_mismatch', 'fleet_at_capacity', 'service_unavailable'], {
              service_unavailable: 'The telephony plane is not configured, or MongoDB or Redis is unreachable',
            }),
          },
        },
      },
      '/livekit/webhook': {
        post: {
          operationId: 'liveKitWebhook',
          summary: 'LiveKit: room and participant events (inbound calls)',
          description:
            'For livekit-server only (its `webhook.urls`): each request is signed with the LiveKit API key (a JWT in `Authorization` whose ' +
            '`sha256` claim is the body\'s hash); anything else is 401 `unauthorized`. A SIP caller joining a room of an inbound number\'s ' +
            'dispatch rule (`in-…`) becomes a call (`direction: inbound`) queued for the fleet; at capacity (or for an inactive bot) the ' +
            'room is deleted while the phone rings, so the caller hears 486 Busy Here, and the call is recorded `failed` ' +
            '(`fleet_at_capacity`). Other events are acknowledged and ignored. 503 `service_unavailable` when the telephony plane is not configured.',
          security: [{ liveKitWebhook: [] }],
          requestBody: { required: true, content: { 'application/webhook+json': { schema: { type: 'object', description: 'a LiveKit WebhookEvent' } } } },
          responses: {
            204: { description: 'Received' },
            ...errors(['unauthorized', 'payload_too_large', 'service_unavailable'], { service_unavailable: 'The telephony plane is not configured, or MongoDB or Redis is unreachable' }),
          },
        },
      },
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
          requestBody: body(TestCallTokenRequest),
          responses: {
            201: ok('The token', TestCallTokenResponse),
            ...errors([...ADMIN, ...API_KEY, ...BODY, 'bot_not_found', 'bot_inactive', 'service_unavailable'], { service_unavailable: 'MongoDB or Redis is unreachable' }),
          },
        },
      },
      '/api/v1/sip/outbound-trunks': {
        post: {
          operationId: 'createOutboundTrunk',
          summary: 'Create an outbound SIP trunk (mirrored into LiveKit)',
          description:
            'The first trunk is the default until another is marked. A number belongs to one trunk only (409 `conflict`). ' +
            '`auth_password` is write-only: stored encrypted, never returned (`has_password` says whether one is set) and never logged.',
          security: [{ adminJwt: [] }],
          requestBody: body(OutboundTrunkCreate),
          responses: { 201: ok('The trunk', OutboundTrunk), ...errors([...ADMIN, ...BODY, 'conflict', 'service_unavailable'], TELEPHONY_DOWN) },
        },
        get: { operationId: 'listOutboundTrunks', summary: 'List outbound trunks, oldest first', security: [{ adminJwt: [] }], responses: { 200: ok('Trunks', TrunkList), ...errors([...ADMIN]) } },
      },
      '/api/v1/sip/outbound-trunks/{id}': {
        parameters: [idParam('Trunk id')],
        get: { operationId: 'getOutboundTrunk', summary: 'One outbound trunk', security: [{ adminJwt: [] }], responses: { 200: ok('The trunk', OutboundTrunk), ...errors([...ADMIN, 'not_found']) } },
        patch: {
          operationId: 'updateOutboundTrunk',
          summary: 'Change a trunk; `{"default": true}` makes it the default',
          description:
            'Omitted fields keep their value (an omitted `auth_password` keeps the stored one). `auth_username: null` removes the credentials; ' +
            '`auth_password: null` removes the password.',
          security: [{ adminJwt: [] }],
          requestBody: body(OutboundTrunkUpdate),
          responses: { 200: ok('The trunk', OutboundTrunk), ...errors([...ADMIN, ...BODY, 'not_found', 'conflict', 'service_unavailable'], TELEPHONY_DOWN) },
        },
        delete: {
          operationId: 'deleteOutboundTrunk',
          summary: 'Delete a trunk (from LiveKit too)',
          description: 'The default trunk can be deleted only when it is the last one (else 409 `conflict`: mark another default first).',
          security: [{ adminJwt: [] }],
          responses: { 204: { description: 'Deleted' }, ...errors([...ADMIN, 'not_found', 'conflict', 'service_unavailable'], TELEPHONY_DOWN) },
        },
      },
      '/api/v1/sip/inbound-numbers': {
        post: {
          operationId: 'createInboundNumber',
          summary: 'Create an inbound number: calls to it are answered by a bot (mirrored into LiveKit)',
          description: INBOUND_RULES,
          security: [{ adminJwt: [] }],
          requestBody: body(InboundNumberCreate),
          responses: {
            201: ok('The inbound number', InboundNumber),
            ...errors([...ADMIN, ...BODY, 'bot_not_found', 'conflict', 'variables_mismatch', 'service_unavailable'], { conflict: 'The number is already an inbound number', ...TELEPHONY_DOWN }),
          },
        },
        get: { operationId: 'listInboundNumbers', summary: 'List inbound numbers, oldest first', security: [{ adminJwt: [] }], responses: { 200: ok('Inbound numbers', InboundNumberList), ...errors([...ADMIN]) } },
      },
      '/api/v1/sip/inbound-numbers/{id}': {
        parameters: [idParam('Inbound number id')],
        get: { operationId: 'getInboundNumber', summary: 'One inbound number', security: [{ adminJwt: [] }], responses: { 200: ok('The inbound number', InboundNumber), ...errors([...ADMIN, 'not_found']) } },
        patch: {
          operationId: 'updateInboundNumber',
          summary: 'Change an inbound number (LiveKit first)',
          description:
            'Omitted fields keep their value; `variables` and `allowed_addresses` are replaced whole. The bot and the variables are checked ' +
            '(404 `bot_not_found`, 422 `variables_mismatch`) when this PATCH changes either; a new number must be free (409 `conflict`). ' +
            'LiveKit\'s trunk and dispatch rule are updated (made again if LiveKit lost them) before the number is saved (503 `service_unavailable`: nothing changed).',
          security: [{ adminJwt: [] }],
          requestBody: body(InboundNumberUpdate),
          responses: {
            200: ok('The inbound number', InboundNumber),
            ...errors([...ADMIN, ...BODY, 'not_found', 'bot_not_found', 'conflict', 'variables_mismatch', 'service_unavailable'], {
              not_found: 'No such inbound number',
              conflict: 'The number is already an inbound number',
              ...TELEPHONY_DOWN,
            }),
          },
        },
        delete: {
          operationId: 'deleteInboundNumber',
          summary: 'Delete an inbound number (its LiveKit dispatch rule and trunk too; already gone there is fine)',
          security: [{ adminJwt: [] }],
          responses: { 204: { description: 'Deleted' }, ...errors([...ADMIN, 'not_found', 'service_unavailable'], TELEPHONY_DOWN) },
        },
      },
      '/api/v1/calls': {
        get: {
          operationId: 'listCalls',
          summary: 'List calls, newest first, with cursor pagination',
          security: [{ adminJwt: [] }],
          description: 'Each filter at most once and non-empty; an unknown query parameter is refused (422 `validation_failed` naming it).',
          parameters: [
            { name: 'bot_id', in: 'query', schema: idSchema },
            { name: 'status', in: 'query', schema: { type: 'string', enum: [...CALL_STATUSES] } },
            { name: 'direction', in: 'query', schema: { type: 'string', enum: [...CALL_DIRECTIONS] } },
            { name: 'created_after', in: 'query', schema: timeParam },
            { name: 'created_before', in: 'query', schema: timeParam },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
            {
              name: 'cursor',
              in: 'query',
              schema: { type: 'string', pattern: CURSOR_PATTERN },
              description:
                '`next_cursor` of the previous page, with the same filters: `<created_at in ms>.<call id>` of the last call of that page; ' +
                'the page starts after that call',
            },
          ],
          responses: { 200: ok('A page of calls', CallPage), ...errors([...ADMIN, 'validation_failed']) },
        },
        post: {
          operationId: 'createCall',
          summary: 'Worker: record a call it started itself (WebSocket or web widget test call)',
          security: [{ workerToken: [] }],
          requestBody: body(CallCreate),
          responses: { 201: ok('The call', Call), ...errors(['unauthorized', ...BODY, 'bot_not_found', 'bot_inactive', 'variables_mismatch'], WORKER_TOKEN) },
        },
      },
      '/api/v1/calls/{id}': {
        parameters: [idParam('Call id')],
        get: {
          operationId: 'getCall',
          summary: 'One call (an API key sees only the calls it placed)',
          security: [{ apiKey: [] }, { adminJwt: [] }],
          responses: {
            200: ok('The call', Call),
            ...errors([...API_KEY, 'unauthorized', 'token_expired', 'call_not_found']),
          },
        },
      },
      '/api/v1/calls/{id}/recording': {
        parameters: [idParam('Call id')],
        get: {
          operationId: 'getCallRecording',
          summary: "The call's recording (stereo WAV: callee left, bot right), streamed from object storage",
          description:
            'Read with the rights of `GET /api/v1/calls/{id}`: an admin token, or the API key that placed the call (another key\'s call: 404 ' +
            '`call_not_found`). 404 `recording_not_found` when the call has none (`recording_key` null: not answered, not recorded, or the upload ' +
            'failed: see `recording_error`) or it is no longer in object storage. `Range` (RFC 9110) takes one byte range, `bytes=a-b`, `bytes=a-` ' +
            'or the last n bytes `bytes=-n`: 206 with exactly those bytes and `Content-Range: bytes a-b/<size>` (an end past the file is cut to ' +
            'it); a range that starts past the end (or `-0`) is 416 `range_not_satisfiable` with `Content-Range: bytes */<size>`; several ranges, ' +
            'or a header that does not parse, are ignored (200, the whole file). `If-Range` with another `ETag` than the recording\'s: the whole ' +
            'file. HEAD answers the same headers without the body. Object storage that does not answer within STORAGE_TIMEOUT_MS (or is not ' +
            'configured) is 503 `service_unavailable` naming `storage` in `details.failed`; a store that stalls once the data flows cuts the ' +
            'answer short (fewer bytes than `Content-Length`).',
          security: [{ apiKey: [] }, { adminJwt: [] }],
          parameters: [
            { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'One byte range: `bytes=0-1023`, `bytes=1024-` or `bytes=-1024`' },
            { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' }, description: 'The `ETag` a range was read from: another one gets the whole file' },
          ],
          responses: {
            200: { description: 'The whole recording', headers: RECORDING_HEADERS, content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } } },
            206: {
              description: 'The requested bytes of the recording',
              headers: { ...RECORDING_HEADERS, 'Content-Range': { description: '`bytes a-b/<size>`', schema: { type: 'string', pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$' } } },
              content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } },
            },
            ...errors([...API_KEY, 'unauthorized', 'token_expired', 'call_not_found', 'recording_not_found', 'range_not_satisfiable', 'service_unavailable'], {
              service_unavailable: 'Object storage (`details.failed: ["storage"]`), MongoDB or Redis is unavailable, or object storage is not configured on this backend',
            }),
          },
        },
      },
      '/api/v1/calls/{id}/events': {
        parameters: [idParam('Call id')],
        post: {
          operationId: 'callEvent',
          summary: 'Worker: report a lifecycle move',
          description:
            'Only forward moves (queued → dialing → ringing → in_progress → completed | failed | busy | no_answer | canceled); a terminal status ' +
            'is final. Repeating the current status is a no-op (it may add recording_key / recording_error). A terminal move releases the ' +
            "call's capacity reservation if it still exists; the `X-Slot-Released` header says whether this request released it. " +
            '`at` (default: the time of receipt) and each `transcript[].at` must be real RFC 3339 date-times (no leap second `:60`, no ' +
            "Feb 30) and may not lie before the call's `created_at`, nor `at` of a move before the call's last status time; the clocks of " +
            'the reporting machines may disagree by up to 60 s, so only times more than 60 s earlier are refused (422 `validation_failed` ' +
            'naming `at` or `transcript.N.at`; nothing is stored).',
          security: [{ workerToken: [] }],
          requestBody: body(CallEvent),
          responses: { 200: ok('The call after the move', Call), ...errors(['unauthorized', ...BODY, 'call_not_found', 'conflict'], { ...WORKER_TOKEN, conflict: 'Not a forward move' }) },
        },
      },
      '/api/v1/config': {
        get: {
          operationId: 'runtimeConfig',
          summary: 'Worker: the runtime config of a bot (and call), prompt and greeting rendered with the call variables',
          security: [{ workerToken: [] }],
          parameters: [
            { name: 'bot_id', in: 'query', required: true, schema: idSchema },
            { name: 'call_id', in: 'query', required: false, schema: idSchema },
          ],
          responses: {
            200: ok('The config', RuntimeConfig),
            ...errors(['unauthorized', 'bot_not_found', 'call_not_found', 'bot_inactive', 'validation_failed'], WORKER_TOKEN),
          },
        },
      },
      '/api/v1/webhooks': {
        post: {
          operationId: 'createWebhook',
          summary: 'Create a call webhook; its signing secret is in this response only',
          description:
            `At most ${MAX_WEBHOOKS} webhooks (409 \`conflict\`). The \`secret\` (\`whsec_\` + 32 characters) signs every delivery and is never shown again. ${SIGNING}`,
          security: [{ adminJwt: [] }],
          requestBody: body(WebhookCreate),
          responses: { 201: ok('The webhook, with `secret` shown this once', WebhookCreated, { Location: { description: 'The webhook resource', schema: { type: 'string' } } }), ...errors([...ADMIN, ...BODY, 'conflict']) },
        },
        get: { operationId: 'listWebhooks', summary: 'List webhooks, newest first (no secrets)', security: [{ adminJwt: [] }], responses: { 200: ok('Webhooks', WebhookList), ...errors([...ADMIN]) } },
      },
      '/api/v1/webhooks/{id}': {
        parameters: [idParam('Webhook id')],
        get: { operationId: 'getWebhook', summary: 'One webhook (no secret)', security: [{ adminJwt: [] }], responses: { 200: ok('The webhook', Webhook), ...errors([...ADMIN, 'not_found']) } },
        patch: {
          operationId: 'updateWebhook',
          summary: 'Change url, events, description or active',
          description: '`active: false` pauses the webhook: it gets no new events, and deliveries already queued for it wait until it is active again. A new `url` is checked like at creation.',
          security: [{ adminJwt: [] }],
          requestBody: body(WebhookUpdate),
          responses: { 200: ok('The webhook', Webhook), ...errors([...ADMIN, ...BODY, 'not_found']) },
        },
        delete: {
          operationId: 'deleteWebhook',
          summary: 'Delete a webhook, its pending deliveries and its deliveries log',
          security: [{ adminJwt: [] }],
          responses: { 204: { description: 'Deleted' }, ...errors([...ADMIN, 'not_found']) },
        },
      },
      '/api/v1/webhooks/{id}/deliveries': {
        parameters: [idParam('Webhook id')],
        get: {
          operationId: 'listWebhookDeliveries',
          summary: 'The delivery attempts of a webhook, newest first, with cursor pagination',
          description: 'One item per attempt. An unknown query parameter is refused (422 `validation_failed` naming it).',
          security: [{ adminJwt: [] }],
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
            {
              name: 'cursor',
              in: 'query',
              schema: { type: 'string', pattern: CURSOR_PATTERN },
              description: '`next_cursor` of the previous page: `<attempted_at in ms>.<attempt id>` of its last item; the page starts after it',
            },
          ],
          responses: { 200: ok('A page of attempts', WebhookDeliveryPage), ...errors([...ADMIN, 'not_found', 'validation_failed']) },
        },
      },
      '/api/v1/webhooks/{id}/test': {
        parameters: [idParam('Webhook id')],
        post: {
          operationId: 'testWebhook',
          summary: 'Queue a `webhook.test` event for this webhook only (whatever it subscribes to)',
          description: 'Delivered, signed and retried like any event; watch the deliveries log for the outcome.',
          security: [{ adminJwt: [] }],
          responses: {
            202: ok('The event is queued', WebhookEventQueued),
            ...errors([...ADMIN, 'not_found', 'conflict', 'service_unavailable'], { conflict: 'The webhook is paused', service_unavailable: 'Redis (the event outbox) is unreachable' }),
          },
        },
      },
      ...campaignPaths({ ok, errors, requestJson, body, idParam, ADMIN, BODY }),
      ...userPaths({ ok, errors, body, idParam, ADMIN, BODY, LoginResponse }),
      ...auditPaths({ ok, errors, ADMIN, timeParam }),
      ...analyticsPaths({ ok, errors, ADMIN, API_KEY, timeParam }),
      ...fleetPaths({ ok, errors, ADMIN, API_KEY }),
    },
    webhooks: {
      'call.queued': eventOperation('call.queued', 'A call was created (dial-out accepted, or a WebSocket / browser call started)', plain(WebhookCallData)),
      'call.ringing': eventOperation('call.ringing', "The callee's phone rings", plain(WebhookCallData)),
      'call.in_progress': eventOperation('call.in_progress', 'The call was answered (connected)', plain(WebhookCallData)),
      'call.ended': eventOperation(
        'call.ended',
        'The call ended (any terminal status). For an answered call it waits for the recording report, up to WEBHOOK_RECORDING_WAIT_SECONDS. ' +
          'To a webhook with include_transcript, `data.transcript` holds what was said',
        plain(WebhookCallData),
      ),
      'call.analyzed': eventOperation(
        'call.analyzed',
        "The call's post-call analysis is over (bots with `analysis` settings only): `data` is the call and its `analysis` " +
          '(done, failed after 4 attempts, or skipped: no caller turn). To a webhook with include_transcript, `data.transcript` holds what was said',
        plain(WebhookCallAnalyzedData),
      ),
      'campaign.started': eventOperation('campaign.started', 'A campaign started (POST /api/v1/campaigns/{id}/start); `data` is the campaign with its counts', plain(CampaignDetail)),
      'campaign.completed': eventOperation('campaign.completed', 'A running campaign has no contact left to dial or in a call; `data` is the campaign with its counts', plain(CampaignDetail)),
      'webhook.test': eventOperation('webhook.test', 'Sent on request (POST /api/v1/webhooks/{id}/test)', {
        type: 'object',
        required: ['webhook_id', 'message'],
        properties: { webhook_id: { type: 'string' }, message: { type: 'string' } },
      }),
    },
  };
}
