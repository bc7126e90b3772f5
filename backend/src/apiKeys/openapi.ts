// The OpenAPI paths of the API keys, built by openapi.ts with its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyUpdate, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  idParam: (description: string) => object;
  ADMIN: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
}

const ApiKeyList = Type.Object({ items: Type.Array(ApiKey) });

export function apiKeyPaths(h: DocHelpers): Record<string, object> {
  return {
    '/api/v1/api-keys': {
      post: {
        operationId: 'createApiKey',
        summary: 'Create an API key; the full key is in this response only',
        security: [{ adminJwt: [] }],
        requestBody: h.body(ApiKeyCreate),
        responses: { 201: h.ok('The key, with `key` shown this once', ApiKeyCreated), ...h.errors([...h.ADMIN, ...h.BODY]) },
      },
      get: { operationId: 'listApiKeys', summary: 'List API keys (masked)', security: [{ adminJwt: [] }], responses: { 200: h.ok('Keys, newest first', ApiKeyList), ...h.errors([...h.ADMIN]) } },
    },
    '/api/v1/api-keys/{id}': {
      parameters: [h.idParam('API key id')],
      get: { operationId: 'getApiKey', summary: 'One API key (masked)', security: [{ adminJwt: [] }], responses: { 200: h.ok('The key', ApiKey), ...h.errors([...h.ADMIN, 'not_found']) } },
      patch: {
        operationId: 'updateApiKey',
        summary: 'Rename, set expiry, or deactivate (final) an API key',
        description: 'Reactivating an inactive or expired key, or changing its expiry, is refused with 409 `api_key_revoked`.',
        security: [{ adminJwt: [] }],
        requestBody: h.body(ApiKeyUpdate),
        responses: { 200: h.ok('The key', ApiKey), ...h.errors([...h.ADMIN, ...h.BODY, 'not_found', 'api_key_revoked']) },
      },
    },
  };
}
