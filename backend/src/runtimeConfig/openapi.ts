// The OpenAPI path of the worker's runtime config, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { RuntimeConfig, type ErrorCode } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'idSchema' | 'WORKER_TOKEN'>;

export function runtimeConfigPaths(h: Helpers): Record<string, object> {
  return {
    '/api/v1/config': {
      get: {
        operationId: 'runtimeConfig',
        summary: 'Worker: the runtime config of a bot (and call), prompt and greeting rendered with the call variables',
        security: [{ workerToken: [] }],
        parameters: [
          { name: 'bot_id', in: 'query', required: true, schema: h.idSchema },
          { name: 'call_id', in: 'query', required: false, schema: h.idSchema },
          {
            name: 'templates',
            in: 'query',
            required: false,
            description: '`raw`: prompt and greeting as written, for the worker to render (a handoff: the call\'s variables are in the worker)',
            schema: { type: 'string', enum: ['raw'] },
          },
        ],
        responses: {
          200: h.ok('The config', RuntimeConfig),
          ...h.errors(['unauthorized', 'bot_not_found', 'call_not_found', 'bot_inactive', 'validation_failed'], h.WORKER_TOKEN),
        },
      },
    },
  };
}
