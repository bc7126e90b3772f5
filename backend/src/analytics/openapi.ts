// The OpenAPI path of the call analytics, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { ANALYTICS_INTERVALS, ANALYTICS_MAX_RANGE_DAYS, CALL_DIRECTIONS, CallAnalytics, RESOURCE_ID_PATTERN, type ErrorCode } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'ADMIN' | 'API_KEY' | 'timeParam'>;

export function analyticsPaths(h: Helpers): Record<string, object> {
  const id = { type: 'string', pattern: RESOURCE_ID_PATTERN };
  return {
    '/api/v1/analytics/calls': {
      get: {
        operationId: 'getCallAnalytics',
        summary: 'Ended calls per hour or day: outcomes, answering machine verdicts, duration and turn latency percentiles',
        description:
          'Calls that have ended, counted by when they were placed (`created_at`), in UTC buckets of the interval; every bucket of the range is ' +
          'listed, empty ones included, and `totals` holds the same aggregates over the range. `from` is rounded down and `to` up to the ' +
          `interval; the range is at most ${ANALYTICS_MAX_RANGE_DAYS.hour} days with interval hour, ${ANALYTICS_MAX_RANGE_DAYS.day} with day. ` +
          'Percentiles are nearest rank over values kept to two significant digits (at most 5% off). Read from rollups written as each call ends ' +
          '(a call is counted once); an API key (scope `calls:read`) sees every call, not only those it placed. Each parameter at most once; an ' +
          'unknown one, `from` not before `to` or a range too long → 422 `validation_failed` naming the field.',
        security: [{ adminJwt: [] }, { apiKey: [] }],
        parameters: [
          { name: 'from', in: 'query', schema: h.timeParam, description: 'Start of the range (default: `to` minus 24 hours with interval hour, 30 days with day)' },
          { name: 'to', in: 'query', schema: h.timeParam, description: 'End of the range, exclusive (default: now)' },
          { name: 'interval', in: 'query', schema: { type: 'string', enum: [...ANALYTICS_INTERVALS], default: 'day' } },
          { name: 'bot_id', in: 'query', schema: id },
          { name: 'campaign_id', in: 'query', schema: id },
          { name: 'direction', in: 'query', schema: { type: 'string', enum: [...CALL_DIRECTIONS] } },
        ],
        responses: { 200: h.ok('The buckets and the totals', CallAnalytics), ...h.errors([...h.ADMIN, ...h.API_KEY, 'validation_failed']) },
      },
    },
  };
}
