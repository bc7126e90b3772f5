// The OpenAPI paths of the admin login and the signed-in user, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '@voice-platform/schemas';
import { LoginRequest, LoginResponse, Me } from './admin.js';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  ADMIN: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
}

export function authPaths(h: DocHelpers): Record<string, object> {
  return {
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
        requestBody: h.body(LoginRequest),
        responses: {
          200: h.ok('A bearer JWT', LoginResponse),
          ...h.errors([...h.BODY, 'invalid_credentials', 'rate_limited', 'service_unavailable']),
        },
      },
    },
    '/api/v1/auth/me': {
      get: { operationId: 'me', summary: 'The signed-in user', security: [{ adminJwt: [] }], responses: { 200: h.ok('The user', Me), ...h.errors([...h.ADMIN]) } },
    },
  };
}
