// The OpenAPI paths of the outbound SIP trunks, built by openapi.ts with its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import { OutboundTrunk, OutboundTrunkCreate, OutboundTrunkUpdate, type ErrorCode } from '@voice-platform/schemas';

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

const TrunkList = Type.Object({ items: Type.Array(OutboundTrunk) });

export function trunkPaths(h: DocHelpers): Record<string, object> {
  return {
    '/api/v1/sip/outbound-trunks': {
      post: {
        operationId: 'createOutboundTrunk',
        summary: 'Create an outbound SIP trunk (mirrored into LiveKit)',
        description:
          'The first trunk is the default until another is marked. A number belongs to one trunk only (409 `conflict`). ' +
          '`auth_password` is write-only: stored encrypted, never returned (`has_password` says whether one is set) and never logged.',
        security: [{ adminJwt: [] }],
        requestBody: h.body(OutboundTrunkCreate),
        responses: { 201: h.ok('The trunk', OutboundTrunk), ...h.errors([...h.ADMIN, ...h.BODY, 'conflict', 'service_unavailable'], h.TELEPHONY_DOWN) },
      },
      get: { operationId: 'listOutboundTrunks', summary: 'List outbound trunks, oldest first', security: [{ adminJwt: [] }], responses: { 200: h.ok('Trunks', TrunkList), ...h.errors([...h.ADMIN]) } },
    },
    '/api/v1/sip/outbound-trunks/{id}': {
      parameters: [h.idParam('Trunk id')],
      get: { operationId: 'getOutboundTrunk', summary: 'One outbound trunk', security: [{ adminJwt: [] }], responses: { 200: h.ok('The trunk', OutboundTrunk), ...h.errors([...h.ADMIN, 'not_found']) } },
      patch: {
        operationId: 'updateOutboundTrunk',
        summary: 'Change a trunk; `{"default": true}` makes it the default',
        description:
          'Omitted fields keep their value (an omitted `auth_password` keeps the stored one). `auth_username: null` removes the credentials; ' +
          '`auth_password: null` removes the password.',
        security: [{ adminJwt: [] }],
        requestBody: h.body(OutboundTrunkUpdate),
        responses: { 200: h.ok('The trunk', OutboundTrunk), ...h.errors([...h.ADMIN, ...h.BODY, 'not_found', 'conflict', 'service_unavailable'], h.TELEPHONY_DOWN) },
      },
      delete: {
        operationId: 'deleteOutboundTrunk',
        summary: 'Delete a trunk (from LiveKit too)',
        description: 'The default trunk can be deleted only when it is the last one (else 409 `conflict`: mark another default first).',
        security: [{ adminJwt: [] }],
        responses: { 204: { description: 'Deleted' }, ...h.errors([...h.ADMIN, 'not_found', 'conflict', 'service_unavailable'], h.TELEPHONY_DOWN) },
      },
    },
  };
}
