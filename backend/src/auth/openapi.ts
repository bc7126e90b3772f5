// The OpenAPI paths of the admin login and the signed-in user, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '@voice-platform/schemas';
import { LoginRequest, LoginResponse, Me } from './admin.js';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'body' | 'ADMIN' | 'BODY'>;

export function authPaths(h: Helpers): Record<string, object> {
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
