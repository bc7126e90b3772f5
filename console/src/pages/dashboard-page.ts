// Dashboard: what an administrator checks first: live keys, bots, and the latest calls.
import { html, nothing } from 'lit';
import type { ApiKey } from '@voice-platform/schemas/apiKeys.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import type { Call } from '@voice-platform/schemas/calls.js';
import { LightElement } from '../components/base.js';
import { errorBanner } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { formatDateTime } from '../format.js';

export class VpDashboardPage extends LightElement {
  static override properties = { data: { state: true }, error: { state: true } };
  declare data: { keys: ApiKey[]; bots: Bot[]; calls: Call[] } | null;
  declare error: string | null;

  constructor() {
    super();
    this.data = null;
    this.error = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      const [keys, bots, calls] = await Promise.all([api.listApiKeys(), api.listBots(), api.listCalls({ limit: 10 })]);
      this.data = { keys: keys.items, bots: bots.items, calls: calls.items };
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not load the dashboard.';
    }
  }

  override render() {
    const d = this.data;
    const botName = (id: string) => d?.bots.find((b) => b.id === id)?.name ?? id;
    return html`<h1 tabindex="-1">Dashboard</h1>
      <p class="subtitle">Keys, bots and the latest calls at a glance.</p>
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
              <a class="card" href="/calls" style="text-decoration:none;color:inherit">
                <div class="num">${d.calls.filter((c) => !['completed', 'failed', 'busy', 'no_answer', 'canceled'].includes(c.status)).length}</div>
                <div class="label">Calls in flight (latest 10)</div>
              </a>
            </div>
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
