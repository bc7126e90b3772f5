// The OpenAPI path of the worker's runtime config, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { RuntimeConfig, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  /** A resource id's schema. */
  idSchema: object;
  /** The note of 401 `unauthorized` for the worker token. */
  WORKER_TOKEN: Partial<Record<ErrorCode, string>>;
}

export function runtimeConfigPaths(h: DocHelpers): Record<string, object> {
  return {
    '/api/v1/config': {
      get: {
        operationId: 'runtimeConfig',
        summary: 'Worker: the runtime config of a bot (and call), prompt and greeting rendered with the call variables',
        security: [{ workerToken: [] }],
        parameters: [
          { name: 'bot_id', in: 'query', required: true, schema: h.idSchema },
          { name: 'call_id', in: 'query', required: false, schema: h.idSchema },
        ],
        responses: {
          200: h.ok('The config', RuntimeConfig),
          ...h.errors(['unauthorized', 'bot_not_found', 'call_not_found', 'bot_inactive', 'validation_failed'], h.WORKER_TOKEN),
        },
      },
    },
  };
}
