// Bots: the list, with activate/deactivate in place.
import { html, nothing } from 'lit';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { LightElement } from '../components/base.js';
import { errorBanner } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { formatDateTime } from '../format.js';

export class VpBotsPage extends LightElement {
  static override properties = { bots: { state: true }, error: { state: true }, busyId: { state: true }, notice: { state: true } };
  declare bots: Bot[] | null;
  declare error: string | null;
  declare busyId: string | null;
  declare notice: string | null;

  constructor() {
    super();
    this.bots = null;
    this.error = null;
    this.busyId = null;
    this.notice = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      this.bots = (await api.listBots()).items;
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not load the bots.';
    }
  }

  private async toggle(bot: Bot): Promise<void> {
    this.busyId = bot.id;
    this.error = null;
    try {
      const updated = await api.updateBot(bot.id, { active: !bot.active });
      this.bots = (this.bots ?? []).map((b) => (b.id === updated.id ? updated : b));
      this.notice = `Bot “${updated.name}” is now ${updated.active ? 'active' : 'inactive'}.`;
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not change the bot.';
    } finally {
      this.busyId = null;
    }
  }

  private renderList() {
    if (!this.bots) return this.error ? nothing : html`<p class="loading" role="status">Loading bots…</p>`;
    if (!this.bots.length) return html`<p class="empty">No bots yet. <a href="/bots/new">Create the first bot</a>.</p>`;
    return html`<div class="table-wrap"><table aria-label="Bots">
      <thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Status</th><th scope="col">Language</th>
        <th scope="col">Voice · STT · LLM</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${this.bots.map(
          (b) => html`<tr data-bot-id=${b.id}>
            <td><a href="/bots/${b.id}">${b.name}</a></td>
            <td class="mono">${b.id}</td>
            <td><vp-status-badge status=${b.active ? 'active' : 'inactive'}></vp-status-badge></td>
            <td>${b.language}</td>
            <td>${b.voice.provider} · ${b.stt.provider} · ${b.llm.provider}</td>
            <td>${formatDateTime(b.updated_at)}</td>
            <td class="row-actions"><a class="button small" href="/bots/${b.id}/test-call" aria-label="Test call ${b.name}">Test call</a>
              <button class="small" ?disabled=${this.busyId === b.id} aria-label="${b.active ? 'Deactivate' : 'Activate'} ${b.name}"
              @click=${() => this.toggle(b)}>${b.active ? 'Deactivate' : 'Activate'}</button></td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    return html`<div class="page-head">
        <div><h1 tabindex="-1">Bots</h1><p class="subtitle">What each call says and how it listens and speaks.</p></div>
        <a class="button primary" href="/bots/new">New bot</a>
      </div>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing} ${errorBanner(this.error)} ${this.renderList()}`;
  }
}
customElements.define('vp-bots-page', VpBotsPage);
