// The OpenAPI path of the fleet's status, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { FleetStatus, HEARTBEAT_TTL_MS, type ErrorCode } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'ADMIN' | 'API_KEY'>;

export function fleetPaths(h: Helpers): Record<string, object> {
  return {
    '/api/v1/fleet': {
      get: {
        operationId: 'getFleet',
        summary: 'The live workers: calls, load and the calls each can still admit; the fleet totals',
        description:
          `Every worker whose heartbeat (written every 2 s, kept ${HEARTBEAT_TTL_MS / 1000} s) has not expired, by id: its calls, its load and ` +
          '`admittable`, the calls it can still take within its LOAD_THRESHOLD (null from a worker too old to report them). Dial-outs, ' +
          'browser and inbound calls are admitted against `totals.admittable` minus `totals.reservations`: with nothing left a dial-out ' +
          'answers 503 `fleet_at_capacity`. A draining worker admits nothing. An API key needs the scope `calls:read`.',
        security: [{ adminJwt: [] }, { apiKey: [] }],
        responses: {
          200: h.ok('The workers and the totals', FleetStatus),
          ...h.errors([...h.ADMIN, ...h.API_KEY, 'service_unavailable'], { service_unavailable: 'Redis is unreachable; `details.failed` names it' }),
        },
      },
    },
  };
}
