// The OpenAPI paths of the inbound numbers, built by openapi.ts with its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import { InboundNumber, InboundNumberCreate, InboundNumberUpdate, MAX_ALLOWED_ADDRESSES, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  idParam: (description: string) => object;
  ADMIN: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
  /** The note of 503 `service_unavailable` when LiveKit is down. */
  TELEPHONY_DOWN: Partial<Record<ErrorCode, string>>;
}

const InboundNumberList = Type.Object({ items: Type.Array(InboundNumber) });
const INBOUND_RULES =
  'Checked in this order: credentials → JSON → schema (422 `validation_failed`; `allowed_addresses`: IPv4/IPv6 addresses or CIDRs, ' +
  `at most ${MAX_ALLOWED_ADDRESSES}, empty = any source) → the number is no other inbound number's (409 \`conflict\`) → the bot exists (404 ` +
  '`bot_not_found`) → `variables` match the bot\'s declared variables as a dial-out\'s must (422 `variables_mismatch`, `details: {missing, unknown}`) → ' +
  'LiveKit (503 `service_unavailable`; nothing is stored or left in LiveKit). An inactive bot is accepted: its calls fail until it is active. ' +
  'Mirrored into LiveKit as one inbound trunk (this number, these addresses) and one `individual` dispatch rule on it: each call gets a room ' +
  '`in-…` of its own, and the caller carries the participant attribute `vp.inbound_number_id` (this id).';

export function inboundNumberPaths(h: DocHelpers): Record<string, object> {
  return {
    '/api/v1/sip/inbound-numbers': {
      post: {
        operationId: 'createInboundNumber',
        summary: 'Create an inbound number: calls to it are answered by a bot (mirrored into LiveKit)',
        description: INBOUND_RULES,
        security: [{ adminJwt: [] }],
        requestBody: h.body(InboundNumberCreate),
        responses: {
          201: h.ok('The inbound number', InboundNumber),
          ...h.errors([...h.ADMIN, ...h.BODY, 'bot_not_found', 'conflict', 'variables_mismatch', 'service_unavailable'], { conflict: 'The number is already an inbound number', ...h.TELEPHONY_DOWN }),
        },
      },
      get: { operationId: 'listInboundNumbers', summary: 'List inbound numbers, oldest first', security: [{ adminJwt: [] }], responses: { 200: h.ok('Inbound numbers', InboundNumberList), ...h.errors([...h.ADMIN]) } },
    },
    '/api/v1/sip/inbound-numbers/{id}': {
      parameters: [h.idParam('Inbound number id')],
      get: { operationId: 'getInboundNumber', summary: 'One inbound number', security: [{ adminJwt: [] }], responses: { 200: h.ok('The inbound number', InboundNumber), ...h.errors([...h.ADMIN, 'not_found']) } },
      patch: {
        operationId: 'updateInboundNumber',
        summary: 'Change an inbound number (LiveKit first)',
        description:
          'Omitted fields keep their value; `variables` and `allowed_addresses` are replaced whole. The bot and the variables are checked ' +
          '(404 `bot_not_found`, 422 `variables_mismatch`) when this PATCH changes either; a new number must be free (409 `conflict`). ' +
          'LiveKit\'s trunk and dispatch rule are updated (made again if LiveKit lost them) before the number is saved (503 `service_unavailable`: nothing changed).',
        security: [{ adminJwt: [] }],
        requestBody: h.body(InboundNumberUpdate),
        responses: {
          200: h.ok('The inbound number', InboundNumber),
          ...h.errors([...h.ADMIN, ...h.BODY, 'not_found', 'bot_not_found', 'conflict', 'variables_mismatch', 'service_unavailable'], {
            not_found: 'No such inbound number',
            conflict: 'The number is already an inbound number',
            ...h.TELEPHONY_DOWN,
          }),
        },
      },
      delete: {
        operationId: 'deleteInboundNumber',
        summary: 'Delete an inbound number (its LiveKit dispatch rule and trunk too; already gone there is fine)',
        security: [{ adminJwt: [] }],
        responses: { 204: { description: 'Deleted' }, ...h.errors([...h.ADMIN, 'not_found', 'service_unavailable'], h.TELEPHONY_DOWN) },
      },
    },
  };
}
