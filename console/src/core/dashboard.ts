// The dashboard's arithmetic (dashboard-page.ts draws it): the range a preset or two dates make and the
// analytics request it becomes, and the charts' series from the analytics answer. Pure: unit-tested.
import type { CallAnalytics, CallAnalyticsBucket } from '@voice-platform/schemas/analytics.js';
import { TERMINAL_CALL_STATUSES, type CallStatus } from '@voice-platform/schemas/calls.js';
import { statusLabel } from './format.js';

export type AnalyticsInterval = 'hour' | 'day';
export type RangePreset = '24h' | '7d' | '30d' | 'custom';
export type OutcomeGrouping = 'status' | 'end_reason';

export const PRESETS: ReadonlyArray<{ value: RangePreset; label: string }> = [
  { value: '24h', label: 'Last 24 hours (hourly)' },
  { value: '7d', label: 'Last 7 days (daily)' },
  { value: '30d', label: 'Last 30 days (daily)' },
  { value: 'custom', label: 'Custom dates' },
];

/** Statuses that are not final: the calls "in flight". */
export const NON_TERMINAL_STATUSES: readonly CallStatus[] = ['queued', 'dialing', 'ringing', 'in_progress'];
export { TERMINAL_CALL_STATUSES };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The longest range the analytics API answers, per interval (schemas ANALYTICS_MAX_RANGE_DAYS). */
const MAX_DAYS: Record<AnalyticsInterval, number> = { hour: 31, day: 366 };

export interface AnalyticsRange {
  from: Date;
  to: Date;
  interval: AnalyticsInterval;
}

/** A preset's range ending `now`: 24 hours by the hour, 7 or 30 days by the day. */
export function presetRange(preset: Exclude<RangePreset, 'custom'>, now: Date): AnalyticsRange {
  const to = new Date(now.getTime());
  if (preset === '24h') return { from: new Date(now.getTime() - DAY), to, interval: 'hour' };
  return { from: new Date(now.getTime() - (preset === '7d' ? 7 : 30) * DAY), to, interval: 'day' };
}

/** `YYYY-MM-DD` as the local midnight it starts, or null. */
export function parseLocalDate(s: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getFullYear() === Number(m[1]) && d.getMonth() === Number(m[2]) - 1 && d.getDate() === Number(m[3]) ? d : null;
}

/** A date as `YYYY-MM-DD` (local), for a date input. */
export function localDateString(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/**
 * Two dates of date inputs, both days included: the range from the first's midnight to the midnight after
 * the second, by the hour up to two days, else by the day. Or the problem with them.
 */
export function customRange(fromDate: string, toDate: string): { range: AnalyticsRange } | { error: string } {
  const from = parseLocalDate(fromDate);
  const last = parseLocalDate(toDate);
  if (!from || !last) return { error: 'Choose both dates.' };
  const to = new Date(last.getFullYear(), last.getMonth(), last.getDate() + 1);
  if (to <= from) return { error: 'The first day must not be after the last.' };
  const days = (to.getTime() - from.getTime()) / DAY;
  const interval: AnalyticsInterval = days <= 2 ? 'hour' : 'day';
  if (days > MAX_DAYS[interval] + 1) return { error: `At most ${MAX_DAYS.day} days.` };
  return { range: { from, to, interval } };
}

/** The dashboard's filters: the bot (empty: every bot), the range preset, and the days of a custom range. */
export interface DashboardFilters {
  botId: string;
  preset: RangePreset;
  /** `YYYY-MM-DD`, as the date inputs hold them; empty unless the range is custom. */
  fromDate: string;
  toDate: string;
}

export const DEFAULT_FILTERS: DashboardFilters = { botId: '', preset: '24h', fromDate: '', toDate: '' };

/**
 * The filters the page's URL holds (`/?bot_id=…&range=7d`, `range=custom&from=YYYY-MM-DD&to=YYYY-MM-DD`),
 * so that a reload or a shared link shows the same view and going back restores the previous filters. A
 * range the page does not know is the default; custom days are taken as written (the page says what is
 * wrong with them).
 */
export function filtersFromQuery(q: URLSearchParams): DashboardFilters {
  const range = q.get('range');
  const preset = PRESETS.find((p) => p.value === range)?.value ?? DEFAULT_FILTERS.preset;
  const custom = preset === 'custom';
  return { botId: q.get('bot_id') ?? '', preset, fromDate: custom ? (q.get('from') ?? '') : '', toDate: custom ? (q.get('to') ?? '') : '' };
}

/** The URL query of `f` (without `?`; the defaults left out, so the plain dashboard is `/`). */
export function filtersQuery(f: DashboardFilters): string {
  const q = new URLSearchParams();
  if (f.botId) q.set('bot_id', f.botId);
  if (f.preset !== DEFAULT_FILTERS.preset) q.set('range', f.preset);
  if (f.preset === 'custom') {
    if (f.fromDate) q.set('from', f.fromDate);
    if (f.toDate) q.set('to', f.toDate);
  }
  return q.toString();
}

/** The custom range a first pick of "Custom dates" starts with: the last seven days, today included. */
export function defaultCustomDates(today: Date): Pick<DashboardFilters, 'fromDate' | 'toDate'> {
  return { fromDate: localDateString(new Date(today.getFullYear(), today.getMonth(), today.getDate() - 6)), toDate: localDateString(today) };
}

/** The analytics request's query (`GET /api/v1/analytics/calls?…`). */
export function analyticsQuery(range: AnalyticsRange, botId: string): URLSearchParams {
  const q = new URLSearchParams({ from: range.from.toISOString(), to: range.to.toISOString(), interval: range.interval });
  if (botId) q.set('bot_id', botId);
  return q;
}

/** A bucket's label: its hour, local (with the day when the range spans more than one), or its day (UTC,
 *  as the API counts days). */
export function bucketLabels(buckets: readonly Pick<CallAnalyticsBucket, 'start'>[], interval: AnalyticsInterval, locale?: string): string[] {
  const starts = buckets.map((b) => new Date(b.start));
  const days = new Set(starts.map((d) => d.toDateString()));
  const fmt =
    interval === 'day'
      ? new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone: 'UTC' })
      : days.size > 1
        ? new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
        : new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return starts.map((d) => fmt.format(d));
}

export interface Series {
  /** The outcome (status or end reason) or the measure, as the API names it. */
  key: string;
  label: string;
  data: Array<number | null>;
}

/** End reasons in words (the call detail page words more of them; these are the dashboard's legend). */
export function endReasonLabel(reason: string): string {
  return reason === 'none' ? 'No end reason' : statusLabel(reason);
}

/**
 * Calls per bucket, one series per outcome seen in the range (a stacked bar each): by final status (in the
 * lifecycle's order) or by end reason (most frequent first).
 */
export function outcomeSeries(a: Pick<CallAnalytics, 'buckets' | 'totals'>, by: OutcomeGrouping): Series[] {
  const field = by === 'status' ? 'by_status' : 'by_end_reason';
  const totals = a.totals[field];
  const keys =
    by === 'status'
      ? TERMINAL_CALL_STATUSES.filter((s) => (totals[s] ?? 0) > 0)
      : Object.keys(totals)
          .filter((k) => (totals[k] ?? 0) > 0)
          .sort((x, y) => (totals[y] ?? 0) - (totals[x] ?? 0) || x.localeCompare(y));
  return keys.map((key) => ({ key, label: by === 'status' ? statusLabel(key) : endReasonLabel(key), data: a.buckets.map((b) => b[field][key] ?? 0) }));
}

/** Percent with one decimal, or null when there is nothing to divide by. */
export function percent(part: number, whole: number): number | null {
  return whole > 0 ? Math.round((part / whole) * 1000) / 10 : null;
}

/**
 * The answer rate: of the calls that ended in a bucket, the share that was answered (reached In progress);
 * and the share answered by a person (answering machine detection's verdict `human`; calls without
 * detection do not count there).
 */
export function answerRateSeries(a: Pick<CallAnalytics, 'buckets'>): Series[] {
  return [
    { key: 'answered', label: 'Answered (reached In progress), %', data: a.buckets.map((b) => percent(b.answered, b.total)) },
    { key: 'human', label: 'Answered by a person (machine detection), %', data: a.buckets.map((b) => percent(b.answered_by.human ?? 0, b.total)) },
  ];
}

/** Answered calls' durations (answer to end), seconds with one decimal, p50 and p95. */
export function durationSeries(a: Pick<CallAnalytics, 'buckets'>): Series[] {
  const s = (ms: number | null) => (ms === null ? null : Math.round(ms / 100) / 10);
  return [
    { key: 'p50', label: 'Duration p50 (s)', data: a.buckets.map((b) => s(b.duration_ms.p50)) },
    { key: 'p95', label: 'Duration p95 (s)', data: a.buckets.map((b) => s(b.duration_ms.p95)) },
  ];
}

/** Turn latency (the caller's end of speech to the bot's first audio), ms, p50 and p95. */
export function latencySeries(a: Pick<CallAnalytics, 'buckets'>): Series[] {
  return [
    { key: 'p50', label: 'Turn latency p50 (ms)', data: a.buckets.map((b) => b.turn_latency_ms.p50) },
    { key: 'p95', label: 'Turn latency p95 (ms)', data: a.buckets.map((b) => b.turn_latency_ms.p95) },
  ];
}

/** A duration in words for the summary cards: `850 ms`, `12.5 s`, `3 min 5 s`, `2 min`; `—` when none. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  const s = Math.round(ms / 1000);
  return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
}

/** Counts a list's items page by page (at most `maxPages`; `more`: there were more than that). */
export async function countPages(
  fetchPage: (cursor: string | undefined) => Promise<{ items: unknown[]; next_cursor: string | null }>,
  maxPages: number,
): Promise<{ count: number; more: boolean }> {
  let count = 0;
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await fetchPage(cursor);
    count += page.items.length;
    if (!page.next_cursor) return { count, more: false };
    cursor = page.next_cursor;
  }
  return { count, more: true };
}
