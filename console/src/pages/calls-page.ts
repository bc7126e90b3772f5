// Calls: newest first, filtered by status and bot. Filters live in the URL (?status=&bot_id=) so
// they survive reloads, deep links and back/forward. While the page is shown and the tab visible the
// list refreshes itself every few seconds, in place: same filters, same number of loaded pages, rows
// keyed by call id (focus and scroll position stay where they are), and the time of the last update.
import { html, nothing, type PropertyValues } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { CALL_STATUSES, type Call } from '@voice-platform/schemas/calls.js';
import { ResourcePage } from '../components/resource-page.js';
import { botFilter } from '../components/bot-filter.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { formatDateTime, formatTime, statusLabel } from '../core/format.js';
import { navigate } from '../core/router.js';
import { refetchPages } from '../core/callPages.js';
import { answeredByLabel } from '../core/callOutcome.js';
import { Poller } from '../core/poller.js';

/** How often the list refreshes itself while visible. */
const CALLS_REFRESH_MS = 5000;

// A list without a dialog form: calls are placed through the dial-out API, not here.
export class VpCallsPage extends ResourcePage<Call, Record<string, never>> {
  static override properties = {
    query: { attribute: false },
    bots: { state: true },
    refreshError: { state: true },
    updatedAt: { state: true },
    refreshing: { state: true },
  };
  declare query: URLSearchParams;
  declare bots: Bot[];
  /** A refresh that failed: the rows stay as they were, with this above them. */
  declare refreshError: string | null;
  declare updatedAt: Date | null;
  declare refreshing: boolean;

  protected readonly failed = { load: 'Could not load the calls.', save: '', delete: '' };
  private loadSeq = 0;
  /** Pages of the current filter in the list (1 + each "Show more"); a refresh re-reads as many. */
  private pages = 1;
  private inFlight: Promise<void> | null = null;
  private readonly poller = new Poller(() => this.refresh(), CALLS_REFRESH_MS);

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.bots = [];
    this.refreshError = null;
    this.updatedAt = null;
    this.refreshing = false;
  }

  override connectedCallback(): void {
    super.connectedCallback(); // reads the list of the query the page was made with
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

  protected override willUpdate(changed: PropertyValues<this>): void {
    // A new query (the filters, back or forward): its first page. The first query was read on connect.
    if (changed.has('query') && this.hasUpdated) void this.load();
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

  protected async fetchAll(more: boolean): Promise<void | false> {
    const seq = ++this.loadSeq; // a newer filter wins over a slower earlier answer
    const cursor = more ? this.nextCursor : null;
    if (more && !cursor) return;
    if (!more) {
      this.items = null; // "Loading calls…" while the new query is read
      this.loadError = null;
    }
    this.refreshError = null;
    try {
      const r = await this.fetchPage(cursor ?? undefined);
      if (seq !== this.loadSeq) return false;
      this.items = more ? [...(this.items ?? []), ...r.items] : r.items;
      this.nextCursor = r.next_cursor;
      if (more) {
        this.pages++;
        this.updatedAt = null; // the new rows are as old as this answer, the rest older
        this.refreshing = false;
      } else {
        this.pages = 1;
        this.updatedAt = new Date();
        this.poller.loaded();
      }
    } catch (err) {
      if (seq === this.loadSeq) throw err;
      return false; // an older filter's failure is no news
    }
  }

  /**
   * Re-reads the loaded pages in place (no "Loading…", the rows stay while it runs). Skipped while the
   * first page or "Show more" is loading; a refresh already running is joined, not repeated. A list that
   * failed to load is loaded again.
   */
  private refresh(): Promise<void> {
    if (this.items === null) return this.loadError ? this.load() : Promise.resolve();
    if (this.loadingMore) return Promise.resolve();
    this.inFlight ??= this.doRefresh().finally(() => {
      this.inFlight = null;
      this.refreshing = false;
    });
    return this.inFlight;
  }

  private async doRefresh(): Promise<void> {
    const seq = this.loadSeq; // a filter change or "Show more" meanwhile makes this answer stale
    this.refreshing = true;
    try {
      const r = await refetchPages((cursor) => this.fetchPage(cursor), this.pages, (c) => c.call_id);
      if (seq !== this.loadSeq) return;
      this.items = r.items;
      this.nextCursor = r.next_cursor;
      this.pages = r.pages;
      this.refreshError = null;
      this.loadError = null;
      this.updatedAt = new Date();
      // A call of a bot created since the page opened: fetch the names again.
      if (r.items.some((c) => !this.bots.some((b) => b.id === c.bot_id))) this.loadBots();
    } catch (err) {
      if (seq !== this.loadSeq) return;
      // The rows stay as they were; the banner says the refresh failed.
      this.refreshError = err instanceof ApiError ? `Could not refresh the calls. ${err.message}` : 'Could not refresh the calls.';
    }
  }

  private async manualRefresh(): Promise<void> {
    if (this.items === null) return void this.load(); // still loading or failed to load: start over
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

  private renderList() {
    const state = this.renderListState('Loading calls…');
    if (state || !this.items) return state;
    if (!this.items.length) {
      return html`<p class="empty">${this.status || this.botId ? 'No calls match these filters.' : 'No calls yet. Calls placed through the dial-out API appear here.'}</p>`;
    }
    const botName = (id: string) => this.bots.find((b) => b.id === id)?.name ?? id;
    return html`<div class="table-wrap"><table aria-label="Calls">
        <thead><tr><th scope="col">Call</th><th scope="col">Bot</th><th scope="col">Direction</th><th scope="col">To</th>
          <th scope="col">Status</th><th scope="col">Answered by</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${repeat(
            this.items,
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
      <p>${this.renderMore()}</p>`;
  }

  private renderRefresh() {
    return html`<div class="refresh">
      <button @click=${() => this.manualRefresh()} aria-describedby="calls-updated">Refresh</button>
      <p class="hint" id="calls-updated" data-testid="calls-updated" aria-busy=${this.refreshing ? 'true' : 'false'}>${this.updatedAt
        ? html`Updated <time datetime=${this.updatedAt.toISOString()}>${formatTime(this.updatedAt)}</time>`
        : nothing}</p>
      <p class="hint">Refreshes every ${CALLS_REFRESH_MS / 1000} s while shown.</p>
    </div>`;
  }

  override render() {
    return html`${this.renderHead('Calls', 'Every call and where it stands.', undefined, undefined, this.renderRefresh())}
      <div class="filters" role="search" aria-label="Filter calls">
        ${field({ id: 'filter-status', label: 'Status' }, (a) =>
          html`<select id=${a.id} @change=${(e: Event) => this.setFilter('status', (e.target as HTMLSelectElement).value)}>
            <option value="" .selected=${!this.status}>All statuses</option>
            ${CALL_STATUSES.map((s) => html`<option value=${s} .selected=${s === this.status}>${statusLabel(s)}</option>`)}
          </select>`,
        )}
        ${botFilter({ id: 'filter-bot', bots: this.bots, botId: this.botId, onChange: (v) => this.setFilter('bot_id', v) })}
      </div>
      ${errorBanner(this.refreshError)} ${this.renderList()}`;
  }
}
customElements.define('vp-calls-page', VpCallsPage);
