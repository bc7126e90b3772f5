// The dashboard in headless Chromium against the real backend: calls recorded as a worker reports them
// (created, answered, ended with turn latencies; some left in flight) for two bots; the charts (chart.js,
// their instances on the canvases) hold what GET /api/v1/analytics/calls answers for the page's own
// request, and for one bot what counting its calls by hand gives; the bot and range filters change the
// request; the in-flight count is every non-terminal call; the filters live in the URL (a reload, a shared
// link and back/forward show the same view); the Workers panel shows the suite's real worker (its calls, load
// and admittable) as the page's own GET /api/v1/fleet answered, and the worker's /health/fleet agrees.
// Screenshot: test-artifacts/console/dashboard.png.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';
import { totalsLine, workerRow } from '../src/core/fleet.js';

let browser: Browser;
let page: Page;
/** Every analytics request the page sent (its query). */
const analyticsRequests: URLSearchParams[] = [];
/** Every GET /api/v1/fleet answer the page received. */
const fleetAnswers: any[] = [];
let botA = '';
let botB = '';

const WORKER = () => ({ Authorization: `Bearer ${process.env.VP_WORKER_TOKEN!}`, 'Content-Type': 'application/json' });
const NON_TERMINAL = ['queued', 'dialing', 'ringing', 'in_progress'];

/** A WebSocket call of `botId` as a worker records it, then its events (`at` in seconds from now). */
async function call(botId: string, events: Array<Record<string, unknown> & { at: number }>): Promise<string> {
  const created = await fetch(`${process.env.VP_BACKEND_URL}/api/v1/calls`, { method: 'POST', headers: WORKER(), body: JSON.stringify({ bot_id: botId, direction: 'websocket' }) });
  expect(created.status).toBe(201);
  const id = ((await created.json()) as { call_id: string }).call_id;
  const t0 = Date.now();
  for (const e of events) {
    const r = await fetch(`${process.env.VP_BACKEND_URL}/api/v1/calls/${id}/events`, {
      method: 'POST',
      headers: WORKER(),
      body: JSON.stringify({ ...e, at: new Date(t0 + e.at * 1000).toISOString() }),
    });
    expect(r.status).toBe(200);
  }
  return id;
}

interface ChartData {
  labels: string[];
  datasets: Array<{ label: string; data: Array<number | null> }>;
}
/** What chart.js holds for the chart on canvas `id`. */
const chartData = (id: string): Promise<ChartData> =>
  page.$eval(`#${id}`, (c) => {
    const chart = (c as HTMLCanvasElement & { chart: { data: { labels: string[]; datasets: Array<{ label: string; data: Array<number | null> }> } } }).chart;
    return { labels: [...chart.data.labels], datasets: chart.data.datasets.map((d) => ({ label: d.label, data: [...d.data] })) };
  });
const sum = (xs: Array<number | null>) => xs.reduce<number>((n, x) => n + (x ?? 0), 0);
const lastAnalytics = () => analyticsRequests[analyticsRequests.length - 1]!;

/** The analytics the page asked for, as the API answers the same query. */
async function apiAnalytics(q: URLSearchParams): Promise<any> {
  const r = await admin('GET', `/api/v1/analytics/calls?${q}`);
  expect(r.status).toBe(200);
  return r.body;
}

/** Waits until the page has asked for analytics with `want` in its query and drawn the answer. */
async function waitForAnalytics(want: Record<string, string>): Promise<URLSearchParams> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = analyticsRequests.find((r, i) => i === analyticsRequests.length - 1 && Object.entries(want).every(([k, v]) => (v === '' ? !r.has(k) : r.get(k) === v)));
    if (found) break;
    if (Date.now() > deadline) throw new Error(`no analytics request with ${JSON.stringify(want)}: ${analyticsRequests.map(String).join(' | ')}`);
    await page.waitForTimeout(100);
  }
  const q = lastAnalytics();
  // Drawn: the range line carries the query of the analytics the charts show.
  await page.locator(`[data-testid="range"][data-query="${q.toString()}"]`).waitFor();
  return q;
}

/** The API's counts of calls not yet ended (as the dashboard should count them). */
async function inFlightByApi(botId?: string): Promise<number> {
  let n = 0;
  for (const status of NON_TERMINAL) {
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ status, limit: '100', ...(botId ? { bot_id: botId } : {}), ...(cursor ? { cursor } : {}) });
      const r = await admin('GET', `/api/v1/calls?${q}`);
      n += r.body.items.length;
      cursor = r.body.next_cursor;
    } while (cursor);
  }
  return n;
}

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname === '/api/v1/analytics/calls' && r.method() === 'GET') analyticsRequests.push(u.searchParams);
  });
  page.on('response', async (r) => {
    if (new URL(r.url()).pathname !== '/api/v1/fleet' || r.request().method() !== 'GET' || r.status() !== 200) return;
    fleetAnswers.push(await r.json().catch(() => null));
  });
  botA = (await admin('POST', '/api/v1/bots', { name: 'Dashboard renewals' })).body.id;
  botB = (await admin('POST', '/api/v1/bots', { name: 'Dashboard support' })).body.id;
  // Bot A: answered by a person (60 s, three turns), answered without a verdict (30 s, two turns), busy;
  // one still queued and one in progress (in flight, not in the analytics).
  await call(botA, [{ status: 'in_progress', answered_by: 'human', at: 1 }, { status: 'completed', end_reason: 'bot_hangup', turn_latencies_ms: [800, 1200, 900], at: 61 }]);
  await call(botA, [{ status: 'in_progress', at: 1 }, { status: 'completed', end_reason: 'user_hangup', turn_latencies_ms: [700, 700], at: 31 }]);
  await call(botA, [{ status: 'busy', end_reason: 'busy', at: 2 }]);
  await call(botA, []);
  await call(botA, [{ status: 'in_progress', at: 1 }]);
  // Bot B: a machine (20 s), a failure.
  await call(botB, [{ status: 'in_progress', answered_by: 'machine', at: 1 }, { status: 'completed', end_reason: 'voicemail_left', turn_latencies_ms: [1500], at: 21 }]);
  await call(botB, [{ status: 'failed', end_reason: 'sip_error', at: 1 }]);
});

afterAll(async () => {
  await browser?.close();
});

describe('dashboard', () => {
  it('charts what the analytics API answers for the last 24 hours, and counts every call in flight', async () => {
    await signInAt(page, '/');
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    const q = await waitForAnalytics({ interval: 'hour', bot_id: '' });
    expect(new Date(q.get('to')!).getTime() - new Date(q.get('from')!).getTime()).toBe(24 * 3600_000);
    await page.waitForFunction(() => !!(document.querySelector('#chart-latency') as { chart?: unknown } | null)?.chart);
    const a = await apiAnalytics(q);

    const outcomes = await chartData('chart-outcomes');
    expect(outcomes.labels).toHaveLength(a.buckets.length);
    const statuses = ['completed', 'failed', 'busy', 'no_answer', 'canceled'].filter((s) => a.totals.by_status[s] > 0);
    expect(outcomes.datasets).toEqual(
      statuses.map((s) => ({ label: s.charAt(0).toUpperCase() + s.slice(1).replace('_', ' '), data: a.buckets.map((b: any) => b.by_status[s]) })),
    );
    // These calls at least (other suites may share the backend): completed 3, busy 1, failed 1.
    expect(a.totals.by_status.completed).toBeGreaterThanOrEqual(3);
    expect(await page.getByTestId('range-total').textContent()).toBe(String(a.totals.total));

    // In flight: every call not yet ended, as the calls list counts them (bot A's two among them).
    const expected = await inFlightByApi();
    expect(expected).toBeGreaterThanOrEqual(2);
    await page.getByTestId('in-flight').getByText(String(expected), { exact: true }).waitFor();
  });

  it("shows the live worker: its calls, load with a bar, and admittable, as the page's GET /api/v1/fleet answered", async () => {
    const WORKER_ID = 'console-suite-worker';
    const row = page.locator(`[data-testid="workers"] tr[data-worker-id="${WORKER_ID}"]`);
    await row.waitFor();
    const shown = {
      calls: await row.getByTestId('worker-calls').textContent(),
      load: await row.getByTestId('worker-load').textContent(),
      admittable: await row.getByTestId('worker-admittable').textContent(),
      totals: await page.getByTestId('fleet-totals').textContent(),
    };
    // What the page drew is what one of its answers said (the poller may have read again since).
    const answers = fleetAnswers.filter((a) => a?.workers.some((w: any) => w.worker_id === WORKER_ID));
    expect(answers.length).toBeGreaterThan(0);
    const drawn = answers.filter((a) => {
      const r = workerRow(a.workers.find((w: any) => w.worker_id === WORKER_ID));
      return r.calls === shown.calls && r.load === shown.load && r.admittable === shown.admittable && totalsLine(a.totals) === shown.totals;
    });
    expect([shown, drawn.length > 0]).toEqual([shown, true]);
    const w = drawn[drawn.length - 1].workers.find((x: any) => x.worker_id === WORKER_ID);
    // A current worker reports its load and what it can still admit.
    expect(typeof w.load).toBe('number');
    expect(Number.isInteger(w.admittable)).toBe(true);
    expect(shown.load).toBe(`${Math.round(w.load * 100)}%`);
    expect(Number(shown.admittable)).toBe(Math.min(w.admittable, w.max_calls - w.active_calls));
    expect(await row.getByRole('meter', { name: `Load of ${WORKER_ID}` }).getAttribute('aria-valuenow')).toBe(String(Math.round(w.load * 100)));
    expect(await row.getByTestId('worker-draining').count()).toBe(0);
    // The worker's own view of the fleet names the same worker, slots and version.
    const own = (await (await fetch(`${process.env.VP_WORKER_URL}/health/fleet`)).json()) as { workers: Array<{ worker_id: string; max_calls: number; version: string; load?: number }> };
    const mine = own.workers.find((x) => x.worker_id === WORKER_ID)!;
    expect([mine.max_calls, mine.version, typeof mine.load]).toEqual([w.max_calls, w.version, 'number']);
    await page.getByTestId('workers').screenshot({ path: path.join(SHOTS, 'dashboard-workers.png') });
  });

  it('filters by bot: the request names it, the charts hold its calls as counted by hand', async () => {
    await page.getByLabel('Bot', { exact: true }).selectOption({ label: 'Dashboard renewals' });
    const q = await waitForAnalytics({ interval: 'hour', bot_id: botA });
    expect(page.url()).toBe(`${CONSOLE}/?bot_id=${botA}`);
    await page.getByTestId('range-total').getByText('3', { exact: true }).waitFor();
    const a = await apiAnalytics(q);
    expect(a.totals).toMatchObject({ total: 3, answered: 2, by_status: { completed: 2, busy: 1, failed: 0 }, answered_by: { human: 1 } });

    const i = a.buckets.findIndex((b: any) => b.total > 0); // the calls' hour (two, when they straddle one)
    const outcomes = await chartData('chart-outcomes');
    expect(outcomes.datasets.map((d) => [d.label, sum(d.data)])).toEqual([['Completed', 2], ['Busy', 1]]);
    expect(outcomes.datasets.map((d) => d.data)).toEqual([a.buckets.map((b: any) => b.by_status.completed), a.buckets.map((b: any) => b.by_status.busy)]);

    const rate = await chartData('chart-answer-rate');
    expect(rate.datasets.map((d) => d.label)).toEqual(['Answered (reached In progress), %', 'Answered by a person (machine detection), %']);
    if (a.buckets.filter((b: any) => b.total > 0).length === 1) expect(rate.datasets.map((d) => d.data[i])).toEqual([66.7, 33.3]);
    expect(rate.datasets[0]!.data.filter((x, j) => a.buckets[j].total === 0 && x !== null)).toEqual([]);
    expect(await page.getByTestId('answer-rate').textContent()).toBe('66.7%');

    // 30 s and 60 s answered; turns 700, 700, 800, 900, 1200 ms.
    expect(a.totals.duration_ms).toEqual({ p50: 30_000, p95: 60_000 });
    expect(a.totals.turn_latency_ms).toEqual({ p50: 800, p95: 1200 });
    const durations = await chartData('chart-durations');
    expect(durations.datasets.map((d) => d.label)).toEqual(['Duration p50 (s)', 'Duration p95 (s)']);
    expect(durations.datasets.map((d) => d.data)).toEqual([
      a.buckets.map((b: any) => (b.duration_ms.p50 === null ? null : b.duration_ms.p50 / 1000)),
      a.buckets.map((b: any) => (b.duration_ms.p95 === null ? null : b.duration_ms.p95 / 1000)),
    ]);
    const latency = await chartData('chart-latency');
    expect(latency.datasets.map((d) => d.data)).toEqual([a.buckets.map((b: any) => b.turn_latency_ms.p50), a.buckets.map((b: any) => b.turn_latency_ms.p95)]);
    expect(await page.getByTestId('duration-p50').textContent()).toBe('30 s');
    expect(await page.getByTestId('duration-p95').textContent()).toBe('1 min');
    expect(await page.getByTestId('latency-p50').textContent()).toBe('800 ms');
    expect(await page.getByTestId('latency-p95').textContent()).toBe('1.2 s');

    // Bot A's calls in flight: the queued one and the one in progress.
    await page.getByTestId('in-flight').getByText('2', { exact: true }).waitFor();
    expect(await page.getByTestId('in-flight-detail').textContent()).toBe('1 queued · 1 in progress');
    await page.screenshot({ path: path.join(SHOTS, 'dashboard.png'), fullPage: true });

    // Stacked by end reason instead (same request, the chart regrouped).
    await page.locator('#dash-group').selectOption('end_reason');
    await page.waitForFunction(() => (document.querySelector('#chart-outcomes') as HTMLCanvasElement | null)?.dataset.series === 'bot_hangup busy user_hangup');
    expect((await chartData('chart-outcomes')).datasets.map((d) => [d.label, sum(d.data)])).toEqual([['Bot hangup', 1], ['Busy', 1], ['User hangup', 1]]);
  });

  it('filters by range: 7 days by the day, and two chosen days', async () => {
    await page.getByLabel('Range', { exact: true }).selectOption('7d');
    const q = await waitForAnalytics({ interval: 'day', bot_id: botA });
    expect(new Date(q.get('to')!).getTime() - new Date(q.get('from')!).getTime()).toBe(7 * 24 * 3600_000);
    const a = await apiAnalytics(q);
    const outcomes = await chartData('chart-outcomes');
    expect(outcomes.labels).toHaveLength(a.buckets.length);
    expect(outcomes.datasets.map((d) => [d.label, d.data])).toEqual([
      ['Bot hangup', a.buckets.map((b: any) => b.by_end_reason.bot_hangup ?? 0)],
      ['Busy', a.buckets.map((b: any) => b.by_end_reason.busy ?? 0)],
      ['User hangup', a.buckets.map((b: any) => b.by_end_reason.user_hangup ?? 0)],
    ]);
    expect(sum(outcomes.datasets[0]!.data)).toBe(1);

    // Custom: today alone, by the hour (the page runs in UTC: local midnight is UTC midnight).
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('Range', { exact: true }).selectOption('custom');
    await page.getByLabel('First day').fill(today);
    await page.getByLabel('Last day').fill(today);
    const c = await waitForAnalytics({ interval: 'hour', bot_id: botA, from: `${today}T00:00:00.000Z` });
    expect(new Date(c.get('to')!).getTime() - new Date(c.get('from')!).getTime()).toBe(24 * 3600_000);
    await page.getByTestId('range-total').getByText('3', { exact: true }).waitFor();
    expect((await chartData('chart-outcomes')).labels).toHaveLength(24);

    // Back to every bot: bot B's calls count again.
    await page.getByLabel('Bot', { exact: true }).selectOption('');
    const all = await waitForAnalytics({ interval: 'hour', bot_id: '', from: `${today}T00:00:00.000Z` });
    const b = await apiAnalytics(all);
    expect(b.totals.total).toBeGreaterThanOrEqual(5);
    await page.getByTestId('range-total').getByText(String(b.totals.total), { exact: true }).waitFor();
  });

  it('keeps the filters in the URL: a reload and a shared link show the same view, back restores the previous filters', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const days = `range=custom&from=${today}&to=${today}`;
    expect(page.url()).toBe(`${CONSOLE}/?${days}`); // where the last test left it: every bot, today
    await page.getByLabel('Bot', { exact: true }).selectOption({ label: 'Dashboard renewals' });
    await waitForAnalytics({ interval: 'hour', bot_id: botA, from: `${today}T00:00:00.000Z` });
    expect(page.url()).toBe(`${CONSOLE}/?bot_id=${botA}&${days}`);

    // A reload: the same filters from the first request on, the same numbers.
    const fromReload = analyticsRequests.length;
    await page.reload();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    const q = await waitForAnalytics({ interval: 'hour', bot_id: botA, from: `${today}T00:00:00.000Z` });
    expect(analyticsRequests.slice(fromReload).map(String)).toEqual([q.toString()]);
    expect(await page.getByLabel('Bot', { exact: true }).inputValue()).toBe(botA);
    expect(await page.getByLabel('Range', { exact: true }).inputValue()).toBe('custom');
    expect(await page.getByLabel('First day').inputValue()).toBe(today);
    expect(await page.getByLabel('Last day').inputValue()).toBe(today);
    await page.getByTestId('range-total').getByText('3', { exact: true }).waitFor();
    expect(await page.getByText('Calls in flight (this bot)').count()).toBe(1);
    await page.getByTestId('in-flight').getByText('2', { exact: true }).waitFor();

    // Back: every bot again (the filters before the bot was chosen), and forward: the bot.
    await page.goBack();
    await waitForAnalytics({ interval: 'hour', bot_id: '', from: `${today}T00:00:00.000Z` });
    expect(page.url()).toBe(`${CONSOLE}/?${days}`);
    expect(await page.getByLabel('Bot', { exact: true }).inputValue()).toBe('');
    await page.goForward();
    await waitForAnalytics({ interval: 'hour', bot_id: botA, from: `${today}T00:00:00.000Z` });
    expect(await page.getByLabel('Bot', { exact: true }).inputValue()).toBe(botA);

    // A shared link: bot B over 7 days, by the day.
    await page.goto(`${CONSOLE}/?bot_id=${botB}&range=7d`);
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await waitForAnalytics({ interval: 'day', bot_id: botB });
    expect(await page.getByLabel('Bot', { exact: true }).inputValue()).toBe(botB);
    expect(await page.getByLabel('Range', { exact: true }).inputValue()).toBe('7d');
    expect(await page.getByLabel('First day').count()).toBe(0);
    await page.getByTestId('range-total').getByText('2', { exact: true }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-from-link.png'), fullPage: true });
  });
});
