// Calls: newest first, filtered by status and bot. Filters live in the URL (?status=&bot_id=) so
// they survive reloads, deep links and back/forward. While the page is shown and the tab visible the
// list refreshes itself every few seconds, in place: same filters, same number of loaded pages, rows
// keyed by call id (focus and scroll position stay where they are), and the time of the last update.
import { html, nothing } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { CALL_STATUSES, type Call } from '@voice-platform/schemas/calls.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { formatDateTime, formatTime, statusLabel } from '../format.js';
import { navigate } from '../router.js';
import { refetchPages } from '../callPages.js';
import { answeredByLabel } from '../callOutcome.js';
import { Poller } from '../poller.js';

/** How often the list refreshes itself while visible. */
const CALLS_REFRESH_MS = 5000;

export class VpCallsPage extends LightElement {
  static override properties = {
    query: { attribute: false },
    calls: { state: true },
    bots: { state: true },
    nextCursor: { state: true },
    error: { state: true },
    loadingMore: { state: true },
    updatedAt: { state: true },
    refreshing: { state: true },
  };
  declare query: URLSearchParams;
  declare calls: Call[] | null;
  declare bots: Bot[];
  declare nextCursor: string | null;
  declare error: string | null;
  declare loadingMore: boolean;
  declare updatedAt: Date | null;
  declare refreshing: boolean;
  private loadSeq = 0;
  /** Pages of the current filter in the list (1 + each "Load more"); a refresh re-reads as many. */
  private pages = 1;
  private inFlight: Promise<void> | null = null;
  private readonly poller = new Poller(() => this.refresh(), CALLS_REFRESH_MS);

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.calls = null;
    this.bots = [];
    this.nextCursor = null;
    this.error = null;
    this.loadingMore = false;
    this.updatedAt = null;
    this.refreshing = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.loadBots();
    this.poller.start();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.poller.stop();
  }

  private loadBots(): void {
    api.listBots().then(
      (r) => (this.bots = r.items),
      () => undefined, // the bot filter just lists ids then; the calls request reports errors
    );
  }

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('query')) void this.load();
  }

  private get status(): string {
    return this.query.get('status') ?? '';
  }
  private get botId(): string {
    return this.query.get('bot_id') ?? '';
  }

  private fetchPage(cursor?: string) {
    return api.listCalls({ status: this.status as Call['status'] | '', bot_id: this.botId, ...(cursor ? { cursor } : {}) });
  }

  private async load(cursor?: string): Promise<void> {
    const seq = ++this.loadSeq; // a newer filter wins over a slower earlier answer
    if (!cursor) this.calls = null;
    this.error = null;
    try {
      const r = await this.fetchPage(cursor);
      if (seq !== this.loadSeq) return;
      this.calls = cursor ? [...(this.calls ?? []), ...r.items] : r.items;
      this.nextCursor = r.next_cursor;
      if (cursor) this.pages++;
      else {
        this.pages = 1;
        this.updatedAt = new Date();
        this.poller.loaded();
      }
    } catch (err) {
      if (seq !== this.loadSeq) return;
      this.error = err instanceof ApiError ? err.message : 'Could not load the calls.';
      this.calls ??= [];
    }
  }

  /**
   * Re-reads the loaded pages in place (no "Loading…", the rows stay while it runs). Skipped while the
   * first page or "Load more" is loading; a refresh already running is joined, not repeated.
   */
  private refresh(): Promise<void> {
    if (this.calls === null || this.loadingMore) return Promise.resolve();
    this.inFlight ??= this.doRefresh().finally(() => {
      this.inFlight = null;
      this.refreshing = false;
    });
    return this.inFlight;
  }

  private async doRefresh(): Promise<void> {
    const seq = this.loadSeq; // a filter change or "Load more" meanwhile makes this answer stale
    this.refreshing = true;
    try {
      const r = await refetchPages((cursor) => this.fetchPage(cursor), this.pages, (c) => c.call_id);
      if (seq !== this.loadSeq) return;
      this.calls = r.items;
      this.nextCursor = r.next_cursor;
      this.pages = r.pages;
      this.error = null;
      this.updatedAt = new Date();
      // A call of a bot created since the page opened: fetch the names again.
      if (r.items.some((c) => !this.bots.some((b) => b.id === c.bot_id))) this.loadBots();
    } catch (err) {
      if (seq !== this.loadSeq) return;
      // The rows stay as they were; the banner says the refresh failed.
      this.error = err instanceof ApiError ? `Could not refresh the calls. ${err.message}` : 'Could not refresh the calls.';
    }
  }

  private async manualRefresh(): Promise<void> {
    if (this.calls === null) return void this.load(); // still loading or failed to load: start over
    await this.refresh();
    this.poller.loaded();
  }

  private setFilter(name: 'status' | 'bot_id', value: string): void {
    const q = new URLSearchParams(this.query);
    if (value) q.set(name, value);
    else q.delete(name);
    const qs = q.toString();
    navigate(`/calls${qs ? `?${qs}` : ''}`);
  }

  private async more(): Promise<void> {
    if (!this.nextCursor) return;
    this.loadingMore = true;
    await this.load(this.nextCursor);
    this.loadingMore = false;
    this.updatedAt = null;
    this.refreshing = false;
  }

  private renderTable() {
    if (!this.calls) return html`<p class="loading" role="status">Loading calls…</p>`;
    if (!this.calls.length) {
      return html`<p class="empty">${this.status || this.botId ? 'No calls match these filters.' : 'No calls yet. Calls placed through the dial-out API appear here.'}</p>`;
    }
    const botName = (id: string) => this.bots.find((b) => b.id === id)?.name ?? id;
    return html`<div class="table-wrap"><table aria-label="Calls">
        <thead><tr><th scope="col">Call</th><th scope="col">Bot</th><th scope="col">Direction</th><th scope="col">To</th>
          <th scope="col">Status</th><th scope="col">Answered by</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${repeat(
            this.calls,
            (c) => c.call_id,
            (c) => html`<tr data-call-id=${c.call_id}>
              <td><a class="mono" href="/calls/${c.call_id}">${c.call_id}</a></td>
              <td>${botName(c.bot_id)}</td>
              <td>${statusLabel(c.direction)}</td>
              <td class="mono">${c.to_number ?? '—'}</td>
              <td><vp-status-badge status=${c.status}></vp-status-badge></td>
              <td data-testid="answered-by">${answeredByLabel(c.answered_by)}</td>
              <td>${formatDateTime(c.created_at)}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      ${this.nextCursor ? html`<p><button ?disabled=${this.loadingMore} @click=${() => this.more()}>${this.loadingMore ? 'Loading…' : 'Load more'}</button></p>` : nothing}`;
  }

  override render() {
    return html`<div class="page-head">
        <div><h1 tabindex="-1">Calls</h1><p class="subtitle">Every call and where it stands.</p></div>
        <div class="refresh">
          <button @click=${() => this.manualRefresh()} aria-describedby="calls-updated">Refresh</button>
          <p class="hint" id="calls-updated" data-testid="calls-updated" aria-busy=${this.refreshing ? 'true' : 'false'}>${this.updatedAt
            ? html`Updated <time datetime=${this.updatedAt.toISOString()}>${formatTime(this.updatedAt)}</time>`
            : nothing}</p>
          <p class="hint">Refreshes every ${CALLS_REFRESH_MS / 1000} s while shown.</p>
        </div>
      </div>
      <div class="filters" role="search" aria-label="Filter calls">
        ${field({ id: 'filter-status', label: 'Status' }, (a) =>
          html`<select id=${a.id} @change=${(e: Event) => this.setFilter('status', (e.target as HTMLSelectElement).value)}>
            <option value="" .selected=${!this.status}>All statuses</option>
            ${CALL_STATUSES.map((s) => html`<option value=${s} .selected=${s === this.status}>${statusLabel(s)}</option>`)}
          </select>`,
        )}
        ${field({ id: 'filter-bot', label: 'Bot' }, (a) =>
          html`<select id=${a.id} @change=${(e: Event) => this.setFilter('bot_id', (e.target as HTMLSelectElement).value)}>
            <option value="" .selected=${!this.botId}>All bots</option>
            ${this.bots.map((b) => html`<option value=${b.id} .selected=${b.id === this.botId}>${b.name}</option>`)}
            ${this.botId && !this.bots.some((b) => b.id === this.botId) ? html`<option value=${this.botId} .selected=${true}>${this.botId}</option>` : nothing}
          </select>`,
        )}
      </div>
      ${errorBanner(this.error)} ${this.renderTable()}`;
  }
}
customElements.define('vp-calls-page', VpCallsPage);
