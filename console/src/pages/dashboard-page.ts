// Dashboard: what an administrator checks first. Live keys and bots, the calls in flight right now (every
// call not yet ended, counted through the calls list by status), the live workers (GET /api/v1/fleet: each one's
// calls, load and what it can still admit; fleet.ts words it), and charts (chart.js) of the calls that
// ended in a range (GET /api/v1/analytics/calls): calls per interval stacked by outcome (final status or
// end reason), the answer rate, durations and turn latency p50/p95; filtered by bot and range (24 hours by
// the hour, 7 or 30 days by the day, or two dates). The filters live in the URL (?bot_id=&range=&from=&to=)
// so they survive reloads, shared links and back/forward. The latest calls stay below. The arithmetic is in
// dashboard.ts. Each chart's instance is on its canvas (`canvas.chart`), as the browser tests read it.
import { html, nothing, type PropertyValues } from 'lit';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartConfiguration } from 'chart.js';
import type { ApiKey } from '@voice-platform/schemas/apiKeys.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import type { Call, CallStatus } from '@voice-platform/schemas/calls.js';
import type { CallAnalytics } from '@voice-platform/schemas/analytics.js';
import type { FleetStatus } from '@voice-platform/schemas/fleetStatus.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { botFilter } from '../components/bot-filter.js';
import { api, ApiError } from '../core/api.js';
import { formatDateTime, statusLabel } from '../core/format.js';
import { navigate } from '../core/router.js';
import { Poller } from '../core/poller.js';
import {
  analyticsQuery,
  answerRateSeries,
  bucketLabels,
  countPages,
  customRange,
  defaultCustomDates,
  durationSeries,
  filtersFromQuery,
  filtersQuery,
  formatMs,
  latencySeries,
  NON_TERMINAL_STATUSES,
  outcomeSeries,
  percent,
  presetRange,
  PRESETS,
  type AnalyticsRange,
  type DashboardFilters,
  type OutcomeGrouping,
  type RangePreset,
  type Series,
} from '../core/dashboard.js';
import { totalsLine, workerRow } from '../core/fleet.js';

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

/** A canvas with its chart (what the browser tests read). */
export type ChartCanvas = HTMLCanvasElement & { chart?: Chart };

/** How often the in-flight count and the workers refresh themselves. */
const IN_FLIGHT_REFRESH_MS = 10_000;
/** Pages of 100 calls read per status for the in-flight count (beyond: "1000+"). */
const IN_FLIGHT_MAX_PAGES = 10;

const STATUS_COLORS: Record<string, string> = { completed: '#16a34a', failed: '#dc2626', busy: '#f59e0b', no_answer: '#64748b', canceled: '#a855f7' };
const PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#f59e0b', '#a855f7', '#0891b2', '#db2777', '#65a30d', '#64748b', '#ea580c'];
const P50 = '#2563eb';
const P95 = '#dc2626';

interface InFlight {
  byStatus: Partial<Record<CallStatus, number>>;
  count: number;
  more: boolean;
}

export class VpDashboardPage extends LightElement {
  static override properties = {
    query: { attribute: false },
    data: { state: true },
    error: { state: true },
    analytics: { state: true },
    analyticsError: { state: true },
    drawnQuery: { state: true },
    inFlight: { state: true },
    inFlightError: { state: true },
    fleet: { state: true },
    fleetError: { state: true },
    botId: { state: true },
    preset: { state: true },
    fromDate: { state: true },
    toDate: { state: true },
    rangeError: { state: true },
    grouping: { state: true },
  };
  /** The URL's query: the filters (dashboard.ts filtersFromQuery). */
  declare query: URLSearchParams;
  declare data: { keys: ApiKey[]; bots: Bot[]; calls: Call[] } | null;
  declare error: string | null;
  declare analytics: CallAnalytics | null;
  declare analyticsError: string | null;
  /** The query of the analytics shown (on the range line: the browser tests wait for it). */
  declare drawnQuery: string;
  declare inFlight: InFlight | null;
  declare inFlightError: string | null;
  declare fleet: FleetStatus | null;
  declare fleetError: string | null;
  declare botId: string;
  declare preset: RangePreset;
  declare fromDate: string;
  declare toDate: string;
  declare rangeError: string | null;
  declare grouping: OutcomeGrouping;

  /** Answers of an older filter that arrive late are dropped. */
  private seq = 0;
  private readonly poller = new Poller(() => Promise.all([this.loadInFlight(), this.loadFleet()]), IN_FLIGHT_REFRESH_MS);

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.data = null;
    this.error = null;
    this.analytics = null;
    this.analyticsError = null;
    this.drawnQuery = '';
    this.inFlight = null;
    this.inFlightError = null;
    this.fleet = null;
    this.fleetError = null;
    this.botId = '';
    this.preset = '24h';
    this.fromDate = '';
    this.toDate = '';
    this.rangeError = null;
    this.grouping = 'status';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.applyFilters(filtersFromQuery(this.query), false); // the URL's filters from the first request on
    void this.load();
    this.poller.start();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // A new query (a filter chosen here, back or forward): what it changes is read again.
    if (changed.has('query') && this.hasUpdated) this.applyFilters(filtersFromQuery(this.query), true);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.poller.stop();
    for (const c of this.querySelectorAll<ChartCanvas>('canvas')) {
      c.chart?.destroy();
      delete c.chart;
    }
  }

  private async load(): Promise<void> {
    try {
      const [keys, bots, calls] = await Promise.all([api.listApiKeys(), api.listBots(), api.listCalls({ limit: 10 })]);
      this.data = { keys: keys.items, bots: bots.items, calls: calls.items };
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not load the dashboard.';
    }
    await Promise.all([this.loadAnalytics(), this.loadInFlight(), this.loadFleet()]);
  }

  /** The range the filters make, or null (the custom dates' problem in `rangeError`). */
  private range(): AnalyticsRange | null {
    if (this.preset !== 'custom') {
      this.rangeError = null;
      return presetRange(this.preset, new Date());
    }
    const r = customRange(this.fromDate, this.toDate);
    if ('error' in r) {
      this.rangeError = r.error;
      return null;
    }
    this.rangeError = null;
    return r.range;
  }

  private async loadAnalytics(): Promise<void> {
    const range = this.range();
    if (!range) return;
    const seq = ++this.seq;
    const query = analyticsQuery(range, this.botId);
    try {
      const a = await api.callAnalytics(query);
      if (seq !== this.seq) return;
      this.analytics = a;
      this.drawnQuery = query.toString();
      this.analyticsError = null;
    } catch (err) {
      if (seq !== this.seq) return;
      this.analyticsError = err instanceof ApiError ? err.message : 'Could not load the call analytics.';
    }
  }

  /** Every call not yet ended (of the bot chosen), counted through the calls list, status by status. */
  private async loadInFlight(): Promise<void> {
    const botId = this.botId;
    try {
      const counts = await Promise.all(
        NON_TERMINAL_STATUSES.map((status) => countPages((cursor) => api.listCalls({ status, bot_id: botId || undefined, cursor, limit: 100 }), IN_FLIGHT_MAX_PAGES)),
      );
      if (botId !== this.botId) return;
      this.inFlight = {
        byStatus: Object.fromEntries(NON_TERMINAL_STATUSES.map((s, i) => [s, counts[i]!.count])),
        count: counts.reduce((n, c) => n + c.count, 0),
        more: counts.some((c) => c.more),
      };
      this.inFlightError = null;
    } catch (err) {
      this.inFlightError = err instanceof ApiError ? err.message : 'Could not count the calls in flight.';
    }
  }

  /** The live workers and the fleet's totals (every bot's calls: the filter does not apply). */
  private async loadFleet(): Promise<void> {
    try {
      this.fleet = await api.fleet();
      this.fleetError = null;
    } catch (err) {
      this.fleetError = err instanceof ApiError ? err.message : 'Could not read the workers.';
    }
  }

  private async loadLatest(): Promise<void> {
    if (!this.data) return;
    const botId = this.botId;
    try {
      const calls = await api.listCalls({ limit: 10, bot_id: botId || undefined });
      if (botId === this.botId && this.data) this.data = { ...this.data, calls: calls.items };
    } catch {
      // the table keeps what it showed; the analytics' error banner says when the API is away
    }
  }

  private get filters(): DashboardFilters {
    return { botId: this.botId, preset: this.preset, fromDate: this.fromDate, toDate: this.toDate };
  }

  /** Takes `f` on; with `reload`, reads again what it changes (a new bot: every part; a new range: the charts). */
  private applyFilters(f: DashboardFilters, reload: boolean): void {
    const was = this.filters;
    Object.assign(this, f);
    if (!reload) return;
    const botChanged = f.botId !== was.botId;
    if (botChanged) {
      this.inFlight = null;
      void this.loadInFlight().then(() => this.poller.loaded());
      void this.loadLatest();
    }
    if (botChanged || f.preset !== was.preset || f.fromDate !== was.fromDate || f.toDate !== was.toDate) void this.loadAnalytics();
  }

  /** A filter chosen: it goes into the URL (a new history entry), and the page follows the URL. */
  private setFilters(patch: Partial<DashboardFilters>): void {
    const f = { ...this.filters, ...patch };
    if (patch.preset === 'custom' && this.preset !== 'custom') Object.assign(f, defaultCustomDates(new Date()));
    const qs = filtersQuery(f);
    navigate(`/${qs ? `?${qs}` : ''}`);
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('analytics') || changed.has('grouping')) this.drawCharts();
  }

  private drawCharts(): void {
    const a = this.analytics;
    if (!a) return;
    const labels = bucketLabels(a.buckets, a.interval);
    const outcomes = outcomeSeries(a, this.grouping);
    this.chart('chart-outcomes', {
      type: 'bar',
      data: {
        labels,
        datasets: outcomes.map((s, i) => ({
          label: s.label,
          data: s.data,
          backgroundColor: (this.grouping === 'status' ? STATUS_COLORS[s.key] : undefined) ?? PALETTE[i % PALETTE.length],
          stack: 'calls',
        })),
      },
      options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'Calls' } } } },
    }, outcomes);
    const lines = (series: Series[], colors: string[], yTitle: string, max?: number): ChartConfiguration<'line'> => ({
      type: 'line',
      data: { labels, datasets: series.map((s, i) => ({ label: s.label, data: s.data, borderColor: colors[i], backgroundColor: colors[i], spanGaps: true, pointRadius: 3 })) },
      options: { scales: { y: { beginAtZero: true, ...(max ? { max } : {}), title: { display: true, text: yTitle } } } },
    });
    const rate = answerRateSeries(a);
    this.chart('chart-answer-rate', lines(rate, ['#16a34a', '#2563eb'], '% of ended calls', 100), rate);
    const durations = durationSeries(a);
    this.chart('chart-durations', lines(durations, [P50, P95], 'Seconds'), durations);
    const latency = latencySeries(a);
    this.chart('chart-latency', lines(latency, [P50, P95], 'Milliseconds'), latency);
  }

  /** Draws a chart on its canvas, or gives the one there its new data. */
  private chart(id: string, config: ChartConfiguration<'bar'> | ChartConfiguration<'line'>, series: Series[]): void {
    const canvas = this.querySelector<ChartCanvas>(`#${id}`);
    if (!canvas) return;
    canvas.dataset.series = series.map((s) => s.key).join(' ');
    const options = { ...config.options, animation: false as const, responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' as const } } };
    if (canvas.chart) {
      canvas.chart.data = config.data as Chart['data'];
      canvas.chart.options = options as Chart['options'];
      canvas.chart.update();
      return;
    }
    canvas.chart = new Chart(canvas, { ...config, options } as ChartConfiguration);
  }

  private renderFilters() {
    const bots = this.data?.bots ?? [];
    return html`<div class="filters" role="search" aria-label="Filter the dashboard">
      ${botFilter({ id: 'dash-bot', bots, botId: this.botId, onChange: (botId) => this.setFilters({ botId }) })}
      ${field({ id: 'dash-range', label: 'Range' }, (a) =>
        html`<select id=${a.id} @change=${(e: Event) => this.setFilters({ preset: (e.target as HTMLSelectElement).value as RangePreset })}>
          ${PRESETS.map((p) => html`<option value=${p.value} .selected=${p.value === this.preset}>${p.label}</option>`)}
        </select>`,
      )}
      ${this.preset === 'custom'
        ? html`${field({ id: 'dash-from', label: 'First day', error: this.rangeError ?? undefined }, (a) =>
              html`<input id=${a.id} type="date" .value=${this.fromDate} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
                @change=${(e: Event) => this.setFilters({ fromDate: (e.target as HTMLInputElement).value })} />`,
            )}
            ${field({ id: 'dash-to', label: 'Last day' }, (a) =>
              html`<input id=${a.id} type="date" .value=${this.toDate} @change=${(e: Event) => this.setFilters({ toDate: (e.target as HTMLInputElement).value })} />`,
            )}`
        : nothing}
    </div>`;
  }

  private renderInFlight() {
    const f = this.inFlight;
    const shown = f ? `${f.count}${f.more ? '+' : ''}` : '…';
    const parts = f ? NON_TERMINAL_STATUSES.filter((s) => f.byStatus[s]).map((s) => `${f.byStatus[s]} ${statusLabel(s).toLowerCase()}`) : [];
    return html`<a class="card" href="/calls" style="text-decoration:none;color:inherit">
      <div class="num" data-testid="in-flight">${this.inFlightError ? '—' : shown}</div>
      <div class="label">Calls in flight${this.botId ? ' (this bot)' : ''}</div>
      <div class="hint" data-testid="in-flight-detail">${this.inFlightError ?? (f ? (parts.length ? parts.join(' · ') : 'queued, dialing, ringing or in progress: none') : '')}</div>
    </a>`;
  }

  private renderWorkers() {
    const f = this.fleet;
    return html`<section class="panel" aria-labelledby="workers-title" data-testid="workers">
      <h2 id="workers-title">Workers</h2>
      ${errorBanner(this.fleetError)}
      ${!f
        ? this.fleetError
          ? nothing
          : html`<p class="loading" role="status">Loading the workers…</p>`
        : html`<p class="hint" data-testid="fleet-totals">${totalsLine(f.totals)}</p>
            ${f.workers.length
              ? html`<div class="table-wrap"><table>
                  <thead><tr><th scope="col">Worker</th><th scope="col">Calls (active / max)</th><th scope="col">Load</th><th scope="col">Admittable</th><th scope="col">State</th></tr></thead>
                  <tbody>
                    ${f.workers.map((w) => {
                      const r = workerRow(w);
                      return html`<tr data-worker-id=${r.id}>
                        <td class="mono" title="version ${r.version}">${r.id}</td>
                        <td data-testid="worker-calls">${r.calls}</td>
                        <td>
                          <div class="progress load-${r.loadLevel}">
                            ${r.loadPercent === null
                              ? nothing
                              : html`<div class="progress-track" role="meter" aria-label="Load of ${r.id}" aria-valuemin="0" aria-valuemax="100" aria-valuenow=${r.loadPercent}>
                                  <div class="progress-fill" style=${`width: ${r.loadPercent}%`}></div>
                                </div>`}
                            <span class="progress-text" data-testid="worker-load">${r.load}</span>
                          </div>
                        </td>
                        <td data-testid="worker-admittable">${r.admittable}</td>
                        <td>${r.draining ? html`<span class="badge badge-warn" data-testid="worker-draining">Draining</span>` : html`<span class="badge badge-good">Taking calls</span>`}</td>
                      </tr>`;
                    })}
                  </tbody>
                </table></div>`
              : html`<p class="empty" data-testid="workers-empty">No worker is live: calls cannot be placed until one starts (a worker shows here within seconds of its start).</p>`}`}
    </section>`;
  }

  private renderSummary(a: CallAnalytics) {
    const t = a.totals;
    const rate = percent(t.answered, t.total);
    return html`<div class="cards" data-testid="range-summary">
      <div class="card"><div class="num" data-testid="range-total">${t.total}</div><div class="label">Calls ended in the range</div></div>
      <div class="card"><div class="num" data-testid="answer-rate">${rate === null ? '—' : `${rate}%`}</div>
        <div class="label">Answer rate</div><div class="hint">answered (reached In progress) of the calls that ended</div></div>
      <div class="card"><div class="num" data-testid="duration-p50">${formatMs(t.duration_ms.p50)}</div>
        <div class="label">Median duration</div><div class="hint">p95 <span data-testid="duration-p95">${formatMs(t.duration_ms.p95)}</span>, answered calls</div></div>
      <div class="card"><div class="num" data-testid="latency-p50">${formatMs(t.turn_latency_ms.p50)}</div>
        <div class="label">Median turn latency</div><div class="hint">p95 <span data-testid="latency-p95">${formatMs(t.turn_latency_ms.p95)}</span></div></div>
    </div>`;
  }

  private renderCharts(a: CallAnalytics) {
    const chartBox = (id: string, title: string, desc: string, extra: unknown = nothing) => html`<section class="panel chart-panel" aria-labelledby="${id}-title">
      <div class="chart-head"><h2 id="${id}-title">${title}</h2>${extra}</div>
      <p class="hint">${desc}</p>
      <div class="chart-box"><canvas id=${id} role="img" aria-label="${title}: ${desc}"></canvas></div>
    </section>`;
    const per = a.interval === 'hour' ? 'hour' : 'day (UTC)';
    return html`<p class="hint" data-testid="range" data-query=${this.drawnQuery}>
        ${formatDateTime(a.from)} – ${formatDateTime(a.to)}, by the ${per}. Calls that ended, counted by when they were placed.
        ${a.totals.total === 0 ? html`<strong>No call ended in this range.</strong>` : nothing}
      </p>
      <div class="charts">
        ${chartBox(
          'chart-outcomes',
          'Calls by outcome',
          `Calls per ${per}, stacked by ${this.grouping === 'status' ? 'final status' : 'end reason'}.`,
          html`<label class="sr-only" for="dash-group">Outcome</label>
            <select id="dash-group" class="small" @change=${(e: Event) => (this.grouping = (e.target as HTMLSelectElement).value as OutcomeGrouping)}>
              <option value="status" .selected=${this.grouping === 'status'}>By status</option>
              <option value="end_reason" .selected=${this.grouping === 'end_reason'}>By end reason</option>
            </select>`,
        )}
        ${chartBox('chart-answer-rate', 'Answer rate', 'Of the calls that ended: answered (reached In progress), and answered by a person as machine detection judged it, in %.')}
        ${chartBox('chart-durations', 'Call duration', 'Answered calls, from the answer to the end: p50 and p95, seconds.')}
        ${chartBox('chart-latency', 'Turn latency', "The caller's end of speech to the bot's first audio, every turn: p50 and p95, ms.")}
      </div>`;
  }

  override render() {
    const d = this.data;
    const a = this.analytics;
    const botName = (id: string) => d?.bots.find((b) => b.id === id)?.name ?? id;
    return html`<h1 tabindex="-1">Dashboard</h1>
      <p class="subtitle">Calls in flight, the workers taking them, how calls went, and the latest ones.</p>
      ${errorBanner(this.error)}
      ${!d && !this.error ? html`<p class="loading" role="status">Loading…</p>` : nothing}
      ${d
        ? html`<div class="cards">
              <a class="card" href="/api-keys" style="text-decoration:none;color:inherit">
                <div class="num" data-testid="active-keys">${d.keys.filter((k) => k.status === 'active').length}</div>
                <div class="label">Active API keys</div>
              </a>
              <a class="card" href="/bots" style="text-decoration:none;color:inherit">
                <div class="num" data-testid="active-bots">${d.bots.filter((b) => b.active).length}</div>
                <div class="label">Active bots of ${d.bots.length}</div>
              </a>
              ${this.renderInFlight()}
            </div>
            ${this.renderWorkers()}
            ${this.renderFilters()}
            ${errorBanner(this.analyticsError)}
            ${a ? html`${this.renderSummary(a)}${this.renderCharts(a)}` : !this.analyticsError && !this.rangeError ? html`<p class="loading" role="status">Loading the charts…</p>` : nothing}
            <section class="panel" aria-labelledby="recent-calls">
              <h2 id="recent-calls">Latest calls</h2>
              ${d.calls.length
                ? html`<div class="table-wrap"><table>
                    <thead><tr><th scope="col">Call</th><th scope="col">Bot</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
                    <tbody>
                      ${d.calls.map(
                        (c) => html`<tr>
                          <td><a class="mono" href="/calls/${c.call_id}">${c.call_id}</a></td>
                          <td>${botName(c.bot_id)}</td>
                          <td class="mono">${c.to_number ?? '—'}</td>
                          <td><vp-status-badge status=${c.status}></vp-status-badge></td>
                          <td>${formatDateTime(c.created_at)}</td>
                        </tr>`,
                      )}
                    </tbody>
                  </table></div>`
                : html`<p class="empty">No calls yet. Create an API key and place a dial-out from your CRM.</p>`}
            </section>`
        : nothing}`;
  }
}
customElements.define('vp-dashboard-page', VpDashboardPage);
