// Bots: the list, with activate/deactivate in place (for the roles that may change a bot).
import { html, nothing } from 'lit';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { ResourcePage } from '../components/resource-page.js';
import { errorBanner } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { formatDateTime } from '../core/format.js';

export class VpBotsPage extends ResourcePage<Bot, void> {
  static override properties = { error: { state: true }, busyId: { state: true } };
  declare error: string | null;
  declare busyId: string | null;

  protected readonly failed = { load: 'Could not load the bots.', save: 'Could not change the bot.', delete: 'Could not change the bot.' };

  constructor() {
    super();
    this.error = null;
    this.busyId = null;
  }

  protected async fetchAll(): Promise<void> {
    this.items = (await api.listBots()).items;
  }

  private async toggle(bot: Bot): Promise<void> {
    this.busyId = bot.id;
    this.error = null;
    try {
      const updated = await api.updateBot(bot.id, { active: !bot.active });
      this.items = (this.items ?? []).map((b) => (b.id === updated.id ? updated : b));
      this.notice = `Bot “${updated.name}” is now ${updated.active ? 'active' : 'inactive'}.`;
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : this.failed.save;
    } finally {
      this.busyId = null;
    }
  }

  private renderList() {
    const state = this.renderListState('Loading bots…');
    if (state || !this.items) return state;
    const canCreate = this.may('POST /api/v1/bots');
    if (!this.items.length) return html`<p class="empty">No bots yet.${canCreate ? html` <a href="/bots/new">Create the first bot</a>.` : nothing}</p>`;
    const canChange = this.may('PATCH /api/v1/bots/{id}');
    const canTest = this.may('POST /livekit/widget');
    return html`<div class="table-wrap"><table aria-label="Bots">
      <thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Status</th><th scope="col">Language</th>
        <th scope="col">Voice · STT · LLM</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${this.items.map(
          (b) => html`<tr data-bot-id=${b.id}>
            <td><a href="/bots/${b.id}">${b.name}</a></td>
            <td class="mono">${b.id}</td>
            <td><vp-status-badge status=${b.active ? 'active' : 'inactive'}></vp-status-badge></td>
            <td>${b.language}</td>
            <td>${b.voice.provider} · ${b.stt.provider} · ${b.llm.provider}</td>
            <td>${formatDateTime(b.updated_at)}</td>
            <td class="row-actions">${canTest ? html`<a class="button small" href="/bots/${b.id}/test-call" aria-label="Test call ${b.name}">Test call</a>` : nothing}
              ${canChange
                ? html`<button class="small" ?disabled=${this.busyId === b.id} aria-label="${b.active ? 'Deactivate' : 'Activate'} ${b.name}"
                    @click=${() => this.toggle(b)}>${b.active ? 'Deactivate' : 'Activate'}</button>`
                : nothing}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    const create = this.may('POST /api/v1/bots') ? html`<a class="button primary" href="/bots/new">New bot</a>` : nothing;
    return html`${this.renderHead('Bots', 'What each call says and how it listens and speaks.', undefined, undefined, create)}
      ${errorBanner(this.error)} ${this.renderList()}`;
  }
}
customElements.define('vp-bots-page', VpBotsPage);
