// Calls: newest first, filtered by status and bot. Filters live in the URL (?status=&bot_id=) so
// they survive reloads, deep links and back/forward.
import { html, nothing } from 'lit';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { CALL_STATUSES, type Call } from '@voice-platform/schemas/calls.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { formatDateTime, statusLabel } from '../format.js';
import { navigate } from '../router.js';

export class VpCallsPage extends LightElement {
  static override properties = {
    query: { attribute: false },
    calls: { state: true },
    bots: { state: true },
    nextCursor: { state: true },
    error: { state: true },
    loadingMore: { state: true },
  };
  declare query: URLSearchParams;
  declare calls: Call[] | null;
  declare bots: Bot[];
  declare nextCursor: string | null;
  declare error: string | null;
  declare loadingMore: boolean;
  private loadSeq = 0;

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.calls = null;
    this.bots = [];
    this.nextCursor = null;
    this.error = null;
    this.loadingMore = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
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

  private async load(cursor?: string): Promise<void> {
    const seq = ++this.loadSeq; // a newer filter wins over a slower earlier answer
    if (!cursor) this.calls = null;
    this.error = null;
    try {
      const r = await api.listCalls({ status: this.status as Call['status'] | '', bot_id: this.botId, ...(cursor ? { cursor } : {}) });
      if (seq !== this.loadSeq) return;
      this.calls = cursor ? [...(this.calls ?? []), ...r.items] : r.items;
      this.nextCursor = r.next_cursor;
    } catch (err) {
      if (seq !== this.loadSeq) return;
      this.error = err instanceof ApiError ? err.message : 'Could not load the calls.';
      this.calls ??= [];
    }
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
  }

  private renderTable() {
    if (!this.calls) return html`<p class="loading" role="status">Loading calls…</p>`;
    if (!this.calls.length) {
      return html`<p class="empty">${this.status || this.botId ? 'No calls match these filters.' : 'No calls yet. Calls placed through the dial-out API appear here.'}</p>`;
    }
    const botName = (id: string) => this.bots.find((b) => b.id === id)?.name ?? id;
    return html`<div class="table-wrap"><table aria-label="Calls">
        <thead><tr><th scope="col">Call</th><th scope="col">Bot</th><th scope="col">Direction</th><th scope="col">To</th>
          <th scope="col">Status</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${this.calls.map(
            (c) => html`<tr data-call-id=${c.call_id}>
              <td><a class="mono" href="/calls/${c.call_id}">${c.call_id}</a></td>
              <td>${botName(c.bot_id)}</td>
              <td>${statusLabel(c.direction)}</td>
              <td class="mono">${c.to_number ?? '—'}</td>
              <td><vp-status-badge status=${c.status}></vp-status-badge></td>
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
        <button @click=${() => this.load()}>Refresh</button>
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
