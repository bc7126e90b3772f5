// GET /api/v1/analytics/calls (docs/design.md §12): the ended calls placed in a range, in UTC buckets of an hour or
// a day, read from the rollups (rollup.ts), never from the calls. An admin token (viewers and up) or an API key
// with `calls:read` (auth/permissions.ts); a key sees the analytics of every call, not only the calls it placed.
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import {
  ANALYTICS_INTERVALS,
  ANALYTICS_MAX_RANGE_DAYS,
  CALL_DIRECTIONS,
  RESOURCE_ID_PATTERN,
  TERMINAL_CALL_STATUSES,
  type AnalyticsInterval,
  type CallAnalytics,
  type CallAnalyticsBucket,
  type CallDirection,
} from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { parseDateTime, queryValues } from '../core/validate.js';
import { authenticateAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { ANSWERED_BY_KEYS, emptyAgg, mergeAgg, readRollups, type HourAgg } from './rollup.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const STEP: Record<AnalyticsInterval, number> = { hour: HOUR_MS, day: DAY_MS };
const resourceId = new RegExp(RESOURCE_ID_PATTERN);

export interface AnalyticsQuery {
  interval: AnalyticsInterval;
  from: Date;
  to: Date;
  bot_id?: string;
  campaign_id?: string;
  direction?: CallDirection;
}

/** The query, checked: 422 `validation_failed` naming every field at fault. `from`, `to` are rounded out to the interval. */
export function parseAnalyticsQuery(q: Context['query'], now: Date): AnalyticsQuery {
  const problems: Array<{ field: string; message: string }> = [];
  const values = queryValues(q, ['from', 'to', 'interval', 'bot_id', 'campaign_id', 'direction'], problems);
  const one = (name: string): string | undefined => values[name];
  const intervalRaw = one('interval') ?? 'day';
  const interval = (ANALYTICS_INTERVALS as readonly string[]).includes(intervalRaw) ? (intervalRaw as AnalyticsInterval) : null;
  if (!interval) problems.push({ field: 'interval', message: `must be one of ${ANALYTICS_INTERVALS.join(', ')}` });
  const time = (name: 'from' | 'to'): Date | null | undefined => {
    const v = one(name);
    if (v === undefined) return undefined;
    const d = parseDateTime(v);
    if (!d) problems.push({ field: name, message: 'must be an RFC 3339 date-time' });
    return d;
  };
  const fromRaw = time('from');
  const toRaw = time('to');
  const result: Partial<AnalyticsQuery> = {};
  for (const name of ['bot_id', 'campaign_id'] as const) {
    const v = one(name);
    if (v !== undefined && !resourceId.test(v)) problems.push({ field: name, message: `must match ${RESOURCE_ID_PATTERN}` });
    else if (v !== undefined) result[name] = v;
  }
  const direction = one('direction');
  if (direction !== undefined && !(CALL_DIRECTIONS as readonly string[]).includes(direction)) problems.push({ field: 'direction', message: `must be one of ${CALL_DIRECTIONS.join(', ')}` });
  else if (direction !== undefined) result.direction = direction as CallDirection;
  if (interval && fromRaw !== null && toRaw !== null) {
    const maxDays = ANALYTICS_MAX_RANGE_DAYS[interval];
    const to = toRaw ?? now;
    // Without `from`: the last 24 hours (hour) or 30 days (day) up to `to`.
    const from = fromRaw ?? new Date(to.getTime() - (interval === 'hour' ? DAY_MS : 30 * DAY_MS));
    if (from.getTime() >= to.getTime()) problems.push({ field: 'from', message: 'must be before to' });
    else if (to.getTime() - from.getTime() > maxDays * DAY_MS) problems.push({ field: 'to', message: `must be at most ${maxDays} days after from with interval ${interval}` });
    else {
      const step = STEP[interval];
      result.from = new Date(Math.floor(from.getTime() / step) * step);
      result.to = new Date(Math.ceil(to.getTime() / step) * step);
    }
  }
  if (problems.length) throw apiError('validation_failed', { details: problems });
  return { ...result, interval: interval! } as AnalyticsQuery;
}

/** Nearest-rank percentile of a histogram (value → count); null when empty. */
export function percentile(hist: Record<string, number>, p: number): number | null {
  const entries = Object.entries(hist)
    .map(([v, n]) => [Number(v), n] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((s, [, n]) => s + n, 0);
  if (!total) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [v, n] of entries) {
    seen += n;
    if (seen >= rank) return v;
  }
  return entries[entries.length - 1]![0];
}

function bucketOf(start: Date, agg: HourAgg): CallAnalyticsBucket {
  return {
    start: start.toISOString(),
    total: agg.n,
    answered: agg.ans,
    by_status: Object.fromEntries([...TERMINAL_CALL_STATUSES.map((s) => [s, agg.s[s] ?? 0]), ...Object.entries(agg.s).filter(([s]) => !TERMINAL_CALL_STATUSES.includes(s as never))]),
    by_end_reason: Object.fromEntries(Object.entries(agg.r).sort(([a], [b]) => (a < b ? -1 : 1))),
    answered_by: Object.fromEntries([...ANSWERED_BY_KEYS.map((a) => [a, agg.a[a] ?? 0]), ...Object.entries(agg.a).filter(([a]) => !(ANSWERED_BY_KEYS as readonly string[]).includes(a))]),
    duration_ms: { p50: percentile(agg.d, 50), p95: percentile(agg.d, 95) },
    turn_latency_ms: { p50: percentile(agg.l, 50), p95: percentile(agg.l, 95) },
  };
}

export async function callAnalytics(svc: Pick<Services, 'db'>, q: AnalyticsQuery): Promise<CallAnalytics> {
  const step = STEP[q.interval];
  const from = q.from.getTime();
  const to = q.to.getTime();
  const aggs: HourAgg[] = Array.from({ length: Math.round((to - from) / step) }, emptyAgg);
  const total = emptyAgg();
  const docs = await readRollups(svc.db, { from: q.from, to: q.to }, q);
  for (const doc of docs) {
    const day = doc.day.getTime();
    for (const [h, agg] of Object.entries(JSON.parse(doc.hours) as Record<string, HourAgg>)) {
      const t = day + Number(h) * HOUR_MS;
      if (t < from || t >= to) continue;
      mergeAgg(aggs[Math.floor((t - from) / step)]!, agg);
      mergeAgg(total, agg);
    }
  }
  return {
    interval: q.interval,
    from: q.from.toISOString(),
    to: q.to.toISOString(),
    buckets: aggs.map((a, i) => bucketOf(new Date(from + i * step), a)),
    totals: bucketOf(q.from, total),
  };
}

export function analyticsRoutes(router: Router, svc: Services, metrics: Metrics): void {
  router.get('/api/v1/analytics/calls', async (ctx) => {
    // An admin token, or an API key (its scope checked by authenticateKey against the roles table). Every credential
    // sent must be valid, as for GET /calls/{id}: a bad admin token beside a good key is refused too.
    const admin = ctx.headers.authorization !== undefined ? await authenticateAdmin(svc, ctx) : null;
    if (!admin || ctx.headers['x-api-key'] !== undefined) await authenticateKey(svc, metrics, ctx);
    ctx.body = await callAnalytics(svc, parseAnalyticsQuery(ctx.query, svc.now()));
  });
}
