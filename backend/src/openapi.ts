// The OpenAPI 3.1 document of every endpoint, built from the same TypeBox schemas the app validates
// with. A test checks it against the router: every route documented, every documented route real. Each
// folder owns its paths (<folder>/openapi.ts, given the helpers below); this file assembles them with the
// info, servers, security schemes, the shared `Error` schema and the root files' own endpoints.
import { Type, type TSchema } from '@sinclair/typebox';
import {
  RESOURCE_ID_PATTERN,
  ERROR_CODES,
  ErrorBody,
  errorBody,
  type ErrorCode } from '@voice-platform/schemas';
import { LoginResponse } from './auth/admin.js';
import { DATE_TIME_PATTERN } from './core/validate.js';
import { campaignPaths } from './campaigns/openapi.js';
import { userPaths } from './users/openapi.js';
import { auditPaths } from './audit/openapi.js';
import { analyticsPaths } from './analytics/openapi.js';
import { fleetPaths } from './fleet/openapi.js';
import { authPaths } from './auth/openapi.js';
import { apiKeyPaths } from './apiKeys/openapi.js';
import { botPaths } from './bots/openapi.js';
import { botTestPaths } from './botTests/openapi.js';
import { dialoutPaths } from './dialout/openapi.js';
import { testCallTokenPaths, widgetPaths } from './widget/openapi.js';
import { liveKitWebhookPaths } from './telephony/openapi.js';
import { trunkPaths } from './trunks/openapi.js';
import { inboundNumberPaths } from './inbound/openapi.js';
import { callPaths } from './calls/openapi.js';
import { runtimeConfigPaths } from './runtimeConfig/openapi.js';
import { knowledgePaths } from './knowledge/openapi.js';
import { webhookEvents, webhookPaths } from './webhooks/openapi.js';

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
const TELEPHONY_DOWN: ErrorNotes = { service_unavailable: 'LiveKit is unreachable, or the telephony plane is not configured on this backend' };
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


/** What every folder's paths are built with (each folder's DocHelpers names the part it uses). */
const helpers = { ok, errors, requestJson, body, idParam, idSchema, timeParam, plain, json, ADMIN, BODY, API_KEY, WORKER_TOKEN, TELEPHONY_DOWN, LoginResponse };

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
      // The root files' own endpoints (health.ts, apiDocs.ts), then each folder's, in this order.
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
      ...authPaths(helpers),
      ...apiKeyPaths(helpers),
      ...botPaths(helpers),
      ...botTestPaths(helpers),
      ...dialoutPaths(helpers),
      ...widgetPaths(helpers),
      ...liveKitWebhookPaths(helpers),
      ...testCallTokenPaths(helpers),
      ...trunkPaths(helpers),
      ...inboundNumberPaths(helpers),
      ...callPaths(helpers),
      ...runtimeConfigPaths(helpers),
      ...knowledgePaths(helpers),
      ...webhookPaths(helpers),
      ...campaignPaths(helpers),
      ...userPaths(helpers),
      ...auditPaths(helpers),
      ...analyticsPaths(helpers),
      ...fleetPaths(helpers),
    },
    webhooks: webhookEvents(helpers),
  };
}
