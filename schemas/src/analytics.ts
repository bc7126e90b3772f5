// Call analytics (docs/design.md §12): `GET /api/v1/analytics/calls`, calls that ended, counted in UTC buckets
// of an hour or a day by when they were placed (created_at).
import { Type, type Static } from '@sinclair/typebox';

export const ANALYTICS_INTERVALS = ['hour', 'day'] as const;
export type AnalyticsInterval = (typeof ANALYTICS_INTERVALS)[number];
/** The longest range one request may ask for, in days, per interval. */
export const ANALYTICS_MAX_RANGE_DAYS: Record<AnalyticsInterval, number> = { hour: 31, day: 366 };

const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }));
const Percentiles = (what: string) =>
  Type.Object(
    {
      p50: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      p95: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    },
    {
      additionalProperties: false,
      description:
        `${what}, ms, nearest rank over values kept to two significant digits (at most 5% off: 1234 ms counts as 1200); null when there is none`,
    },
  );

export const CallAnalyticsBucket = Type.Object(
  {
    /** The bucket's first instant (UTC, on the hour or at midnight). */
    start: Type.String({ format: 'date-time' }),
    /** Calls placed in the bucket that have ended. */
    total: Type.Integer({ minimum: 0 }),
    /** Of them, the calls that were answered (reached in_progress). */
    answered: Type.Integer({ minimum: 0 }),
    /** By final status: every terminal status, 0 included. */
    by_status: Counts,
    /** By end reason (`none`: the call has none); only reasons seen. */
    by_end_reason: Counts,
    /** By answering machine detection's verdict (`not_detected`: no verdict); every verdict, 0 included. */
    answered_by: Counts,
    duration_ms: Percentiles('Answered calls: from the answer to the end'),
    turn_latency_ms: Percentiles("Every turn of the calls: the caller's end of speech to the bot's first audio"),
  },
  { additionalProperties: false },
);
export type CallAnalyticsBucket = Static<typeof CallAnalyticsBucket>;

export const CallAnalytics = Type.Object(
  {
    interval: Type.Union(ANALYTICS_INTERVALS.map((i) => Type.Literal(i))),
    /** The range counted: `from` rounded down and `to` rounded up to the interval (UTC). */
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    /** Every bucket of the range in order, empty ones included. */
    buckets: Type.Array(CallAnalyticsBucket),
    /** The same aggregates over the whole range (`start`: the range's). */
    totals: CallAnalyticsBucket,
  },
  { additionalProperties: false },
);
export type CallAnalytics = Static<typeof CallAnalytics>;
