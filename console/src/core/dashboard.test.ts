import type { CallAnalytics, CallAnalyticsBucket } from '@voice-platform/schemas/analytics.js';
import { analyticsQuery, answerRateSeries, bucketLabels, countPages, customRange, DEFAULT_FILTERS, defaultCustomDates, durationSeries, filtersFromQuery, filtersQuery, formatMs, latencySeries, outcomeSeries, percent, presetRange, type DashboardFilters } from './dashboard.js';

const now = new Date('2026-11-26T10:30:00.000Z');
const NONE = { p50: null, p95: null };
const STATUSES0 = { completed: 0, failed: 0, busy: 0, no_answer: 0, canceled: 0 };
const AMD0 = { human: 0, machine: 0, not_detected: 0 };

function bucket(start: string, b: Partial<CallAnalyticsBucket> = {}): CallAnalyticsBucket {
  return { start, total: 0, answered: 0, by_status: STATUSES0, by_end_reason: {}, answered_by: AMD0, duration_ms: NONE, turn_latency_ms: NONE, ...b };
}

const a: CallAnalytics = {
  interval: 'hour',
  from: '2026-11-26T08:00:00.000Z',
  to: '2026-11-26T11:00:00.000Z',
  buckets: [
    bucket('2026-11-26T08:00:00.000Z'),
    bucket('2026-11-26T09:00:00.000Z', {
      total: 4,
      answered: 3,
      by_status: { ...STATUSES0, completed: 3, failed: 1 },
      by_end_reason: { bot_hangup: 2, voicemail_left: 1, invalid_number: 1 },
      answered_by: { human: 1, machine: 1, not_detected: 2 },
      duration_ms: { p50: 30_000, p95: 61_000 },
      turn_latency_ms: { p50: 800, p95: 1200 },
    }),
    bucket('2026-11-26T10:00:00.000Z', { total: 1, by_status: { ...STATUSES0, busy: 1 }, by_end_reason: { busy: 1 }, answered_by: { ...AMD0, not_detected: 1 } }),
  ],
  totals: bucket('2026-11-26T08:00:00.000Z', {
    total: 5,
    answered: 3,
    by_status: { ...STATUSES0, completed: 3, failed: 1, busy: 1 },
    by_end_reason: { bot_hangup: 2, voicemail_left: 1, invalid_number: 1, busy: 1 },
    answered_by: { human: 1, machine: 1, not_detected: 3 },
    duration_ms: { p50: 30_000, p95: 61_000 },
    turn_latency_ms: { p50: 800, p95: 1200 },
  }),
};

describe('dashboard ranges', () => {
  it('presets: 24 hours by the hour, 7 and 30 days by the day, ending now', () => {
    expect(presetRange('24h', now)).toEqual({ from: new Date('2026-11-25T10:30:00.000Z'), to: now, interval: 'hour' });
    expect(presetRange('7d', now)).toEqual({ from: new Date('2026-11-19T10:30:00.000Z'), to: now, interval: 'day' });
    expect(presetRange('30d', now)).toEqual({ from: new Date('2026-10-27T10:30:00.000Z'), to: now, interval: 'day' });
  });

  it('custom dates: both days included, hourly up to two days, refused when reversed, missing or too long', () => {
    const one = customRange('2026-11-20', '2026-11-20');
    expect(one).toEqual({ range: { from: new Date(2026, 10, 20), to: new Date(2026, 10, 21), interval: 'hour' } });
    expect(customRange('2026-11-01', '2026-11-20')).toEqual({ range: { from: new Date(2026, 10, 1), to: new Date(2026, 10, 21), interval: 'day' } });
    expect(customRange('2026-11-21', '2026-11-20')).toEqual({ error: 'The first day must not be after the last.' });
    expect(customRange('', '2026-11-20')).toEqual({ error: 'Choose both dates.' });
    expect(customRange('2026-02-30', '2026-03-01')).toEqual({ error: 'Choose both dates.' });
    expect(customRange('2024-01-01', '2026-01-01')).toEqual({ error: 'At most 366 days.' });
  });

  it('the request: from, to, interval and the bot when one is chosen', () => {
    const r = presetRange('24h', now);
    expect(analyticsQuery(r, '').toString()).toBe('from=2026-11-25T10%3A30%3A00.000Z&to=2026-11-26T10%3A30%3A00.000Z&interval=hour');
    expect(analyticsQuery(r, 'bot_1').get('bot_id')).toBe('bot_1');
  });
});

describe('dashboard filters in the URL', () => {
  const q = (s: string) => new URLSearchParams(s);

  it('the plain dashboard is every bot over the last 24 hours, and its URL has no query', () => {
    expect(filtersFromQuery(q(''))).toEqual(DEFAULT_FILTERS);
    expect(filtersQuery(DEFAULT_FILTERS)).toBe('');
  });

  it('a bot, a preset or custom days go into the query and come back from it the same', () => {
    const cases: DashboardFilters[] = [
      { botId: 'bot_1', preset: '24h', fromDate: '', toDate: '' },
      { botId: '', preset: '7d', fromDate: '', toDate: '' },
      { botId: 'bot_1', preset: '30d', fromDate: '', toDate: '' },
      { botId: 'bot_1', preset: 'custom', fromDate: '2026-11-20', toDate: '2026-11-26' },
      { botId: '', preset: 'custom', fromDate: '2026-11-20', toDate: '' },
    ];
    for (const f of cases) expect(filtersFromQuery(q(filtersQuery(f)))).toEqual(f);
    expect(filtersQuery(cases[3]!)).toBe('bot_id=bot_1&range=custom&from=2026-11-20&to=2026-11-26');
  });

  it('days belong to a custom range only; an unknown range is the default', () => {
    expect(filtersQuery({ botId: '', preset: '7d', fromDate: '2026-11-20', toDate: '2026-11-26' })).toBe('range=7d');
    expect(filtersFromQuery(q('range=7d&from=2026-11-20&to=2026-11-26'))).toEqual({ botId: '', preset: '7d', fromDate: '', toDate: '' });
    expect(filtersFromQuery(q('range=1y&bot_id=b'))).toEqual({ ...DEFAULT_FILTERS, botId: 'b' });
    // Days as written: the page says what is wrong with them (customRange).
    expect(filtersFromQuery(q('range=custom&from=2026-02-30'))).toEqual({ botId: '', preset: 'custom', fromDate: '2026-02-30', toDate: '' });
  });

  it('a first custom range: the last seven days, today included', () => {
    expect(defaultCustomDates(new Date(2026, 10, 3, 15))).toEqual({ fromDate: '2026-10-28', toDate: '2026-11-03' });
  });
});

describe('dashboard series', () => {
  it('outcomes by status: the statuses seen in the range, in lifecycle order, a count per bucket', () => {
    expect(outcomeSeries(a, 'status')).toEqual([
      { key: 'completed', label: 'Completed', data: [0, 3, 0] },
      { key: 'failed', label: 'Failed', data: [0, 1, 0] },
      { key: 'busy', label: 'Busy', data: [0, 0, 1] },
    ]);
  });

  it('outcomes by end reason: most frequent first', () => {
    expect(outcomeSeries(a, 'end_reason').map((s) => [s.key, s.label, s.data])).toEqual([
      ['bot_hangup', 'Bot hangup', [0, 2, 0]],
      ['busy', 'Busy', [0, 0, 1]],
      ['invalid_number', 'Invalid number', [0, 1, 0]],
      ['voicemail_left', 'Voicemail left', [0, 1, 0]],
    ]);
  });

  it('answer rate: answered and answered by a person, in % of the ended calls; none without calls', () => {
    expect(answerRateSeries(a).map((s) => s.data)).toEqual([
      [null, 75, 0],
      [null, 25, 0],
    ]);
    expect(percent(1, 3)).toBe(33.3);
    expect(percent(0, 0)).toBeNull();
  });

  it('durations in seconds, latency in ms, p50 and p95', () => {
    expect(durationSeries(a).map((s) => s.data)).toEqual([
      [null, 30, null],
      [null, 61, null],
    ]);
    expect(latencySeries(a).map((s) => s.data)).toEqual([
      [null, 800, null],
      [null, 1200, null],
    ]);
    expect([formatMs(null), formatMs(850), formatMs(12_540), formatMs(185_000), formatMs(120_000)]).toEqual(['—', '850 ms', '12.5 s', '3 min 5 s', '2 min']);
  });

  it('labels: hours of one day, hours with their day across days, UTC days', () => {
    expect(bucketLabels([{ start: '2026-11-26T08:00:00.000Z' }, { start: '2026-11-26T09:00:00.000Z' }], 'hour', 'en-US')).toEqual(
      [new Date('2026-11-26T08:00:00.000Z'), new Date('2026-11-26T09:00:00.000Z')].map((d) => `${String(d.getHours()).padStart(2, '0')}:00`),
    );
    expect(bucketLabels([{ start: '2026-11-25T00:00:00.000Z' }, { start: '2026-11-26T00:00:00.000Z' }], 'day', 'en-US')).toEqual(['Nov 25', 'Nov 26']);
  });
});

describe('countPages', () => {
  it('follows the cursor to the end, or stops after the last page allowed', async () => {
    const pages: Record<string, { items: number[]; next_cursor: string | null }> = {
      start: { items: [1, 2], next_cursor: 'b' },
      b: { items: [3, 4], next_cursor: 'c' },
      c: { items: [5], next_cursor: null },
    };
    const seen: Array<string | undefined> = [];
    const fetchPage = async (cursor: string | undefined) => {
      seen.push(cursor);
      return pages[cursor ?? 'start']!;
    };
    expect(await countPages(fetchPage, 10)).toEqual({ count: 5, more: false });
    expect(seen).toEqual([undefined, 'b', 'c']);
    expect(await countPages(fetchPage, 2)).toEqual({ count: 4, more: true });
  });
});
