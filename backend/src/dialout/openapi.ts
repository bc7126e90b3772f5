// The OpenAPI path of the dial-out, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { DialoutRequest, DialoutResponse, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  API_KEY: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
}

export function dialoutPaths(h: DocHelpers): Record<string, object> {
  return {
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
        requestBody: h.body(DialoutRequest),
        responses: {
          201: h.ok('The call is queued', DialoutResponse, { Location: { description: 'The call resource', schema: { type: 'string' } } }),
          ...h.errors(
            [...h.API_KEY, ...h.BODY, 'bot_not_found', 'bot_inactive', 'no_outbound_trunk', 'idempotency_key_reused', 'conflict', 'invalid_phone_number', 'conflicting_fields', 'variables_mismatch', 'unknown_from_number', 'rate_limited', 'fleet_at_capacity', 'service_unavailable'],
            {
              conflict: 'The same Idempotency-Key is still in flight',
              rate_limited: 'Over DIALOUT_RATE_PER_SECOND per key, burst DIALOUT_BURST',
              service_unavailable: 'MongoDB or Redis is unreachable; `details.failed` names it (`mongodb` or `redis`)',
            },
          ),
        },
      },
    },
  };
}
