// Audit log (owners and admins): every change made through the API, newest first, in pages ("Show more"),
// filtered by actor (a user or an API key), resource type, action and days; each entry's changes as
// field: before → after (secrets read "[redacted]" as the API answers them). Nothing here changes an entry:
// the log is append-only. The words and the query are in audit.ts.
import { html, nothing } from 'lit';
import type { AuditEntry } from '@voice-platform/schemas/audit.js';
import { ResourcePage } from '../components/resource-page.js';
import { field } from '../components/field.js';
import { api } from '../core/api.js';
import { formatDateTime } from '../core/format.js';
import { actorLabel, AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES, auditQuery, changeRows, clip, EMPTY_AUDIT_FILTERS, resourceTypeLabel, type AuditFilterForm } from '../core/audit.js';

/** An actor the filter offers: the users and the API keys. */
interface ActorOption {
  id: string;
  label: string;
}

export class VpAuditPage extends ResourcePage<AuditEntry, Record<string, never>> {
  static override properties = {
    filters: { state: true },
    filterError: { state: true },
    actors: { state: true },
  };
  declare filters: AuditFilterForm;
  declare filterError: string | null;
  declare actors: { users: ActorOption[]; keys: ActorOption[] };

  protected readonly failed = { load: 'Could not load the audit log.', save: '', delete: '' };
  /** Answers of older filters that arrive late are dropped. */
  private seq = 0;

  constructor() {
    super();
    this.filters = { ...EMPTY_AUDIT_FILTERS };
    this.filterError = null;
    this.actors = { users: [], keys: [] };
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.loadActors();
  }

  /** The actor filter's choices (a list the role cannot read is left out). */
  private async loadActors(): Promise<void> {
    const [users, keys] = await Promise.allSettled([api.listUsers(), api.listApiKeys()]);
    this.actors = {
      users: users.status === 'fulfilled' ? users.value.items.map((u) => ({ id: u.id, label: u.email })) : [],
      keys: keys.status === 'fulfilled' ? keys.value.items.map((k) => ({ id: k.id, label: `${k.name} (${k.prefix}…)` })) : [],
    };
  }

  protected async fetchAll(more: boolean): Promise<void> {
    const q = auditQuery(this.filters);
    if ('error' in q) {
      this.filterError = q.error;
      return;
    }
    this.filterError = null;
    const seq = ++this.seq;
    const page = await api.listAudit({ ...q.filters, limit: 50, cursor: more && this.nextCursor ? this.nextCursor : undefined });
    if (seq !== this.seq) return;
    this.items = more && this.items ? [...this.items, ...page.items] : page.items;
    this.nextCursor = page.next_cursor;
  }

  private setFilter(patch: Partial<AuditFilterForm>): void {
    this.filters = { ...this.filters, ...patch };
    this.nextCursor = null;
    void this.load();
  }

  private clearFilters(): void {
    this.filters = { ...EMPTY_AUDIT_FILTERS };
    this.nextCursor = null;
    void this.load();
  }

  private renderFilters() {
    const f = this.filters;
    const known = [...this.actors.users, ...this.actors.keys].some((a) => a.id === f.actor_id);
    const any = Object.values(f).some(Boolean);
    return html`<div class="filters" role="search" aria-label="Filter the audit log">
      ${field({ id: 'audit-actor', label: 'Actor' }, (a) =>
        html`<select id=${a.id} @change=${(e: Event) => this.setFilter({ actor_id: (e.target as HTMLSelectElement).value })}>
          <option value="" .selected=${!f.actor_id}>Anyone</option>
          ${this.actors.users.length ? html`<optgroup label="Users">${this.actors.users.map((u) => html`<option value=${u.id} .selected=${u.id === f.actor_id}>${u.label}</option>`)}</optgroup>` : nothing}
          ${this.actors.keys.length ? html`<optgroup label="API keys">${this.actors.keys.map((k) => html`<option value=${k.id} .selected=${k.id === f.actor_id}>${k.label}</option>`)}</optgroup>` : nothing}
          ${f.actor_id && !known ? html`<option value=${f.actor_id} .selected=${true}>${f.actor_id}</option>` : nothing}
        </select>`,
      )}
      ${field({ id: 'audit-resource', label: 'Resource type' }, (a) =>
        html`<select id=${a.id} @change=${(e: Event) => this.setFilter({ resource_type: (e.target as HTMLSelectElement).value })}>
          <option value="" .selected=${!f.resource_type}>Any</option>
          ${AUDIT_RESOURCE_TYPES.map(([t, label]) => html`<option value=${t} .selected=${t === f.resource_type}>${label}</option>`)}
        </select>`,
      )}
      ${field({ id: 'audit-action', label: 'Action' }, (a) =>
        html`<input id=${a.id} list="audit-actions" .value=${f.action} placeholder="e.g. bot.update" autocomplete="off"
          @change=${(e: Event) => this.setFilter({ action: (e.target as HTMLInputElement).value })} />
          <datalist id="audit-actions">${AUDIT_ACTIONS.map((x) => html`<option value=${x}></option>`)}</datalist>`,
      )}
      ${field({ id: 'audit-from', label: 'From day' }, (a) =>
        html`<input id=${a.id} type="date" .value=${f.fromDate} @change=${(e: Event) => this.setFilter({ fromDate: (e.target as HTMLInputElement).value })} />`,
      )}
      ${field({ id: 'audit-to', label: 'To day (included)' }, (a) =>
        html`<input id=${a.id} type="date" .value=${f.toDate} @change=${(e: Event) => this.setFilter({ toDate: (e.target as HTMLInputElement).value })} />`,
      )}
      ${any ? html`<button class="small" @click=${() => this.clearFilters()}>Clear filters</button>` : nothing}
    </div>
    ${this.filterError ? html`<div class="banner banner-error" role="alert">${this.filterError}</div>` : nothing}`;
  }

  private renderChanges(e: AuditEntry) {
    const rows = changeRows(e.changes);
    if (!rows.length) return html`<span class="hint">—</span>`;
    return html`<ul class="changes">
      ${rows.map(
        ([name, before, after]) => html`<li data-field=${name}>
          <span class="field-name">${name}</span>: <span class="before" title=${before}>${clip(before)}</span> → <span class="after" title=${after}>${clip(after)}</span>
        </li>`,
      )}
    </ul>`;
  }

  private renderList() {
    const state = this.renderListState('Loading the audit log…');
    if (state || !this.items) return state;
    if (!this.items.length) {
      return html`<p class="empty">${Object.values(this.filters).some(Boolean) ? 'No entries match these filters.' : 'No changes recorded yet.'}</p>`;
    }
    return html`<div class="table-wrap"><table aria-label="Audit log">
        <thead><tr>
          <th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Resource</th>
          <th scope="col">Changes</th><th scope="col">From</th>
        </tr></thead>
        <tbody>
          ${this.items.map(
            (e) => html`<tr data-audit-id=${e.id} data-action=${e.action}>
              <td><time datetime=${e.at}>${formatDateTime(e.at)}</time></td>
              <td data-actor-id=${e.actor.id ?? nothing}>${actorLabel(e.actor)}</td>
              <td class="mono">${e.action}</td>
              <td>${resourceTypeLabel(e.resource.type)}${e.resource.id ? html`<br /><span class="mono hint">${e.resource.id}</span>` : nothing}</td>
              <td>${this.renderChanges(e)}</td>
              <td><span class="mono">${e.ip}</span><br /><span class="mono hint" title="Request id">${e.request_id}</span></td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      <p>${this.renderMore()}</p>`;
  }

  override render() {
    return html`${this.renderHead('Audit log', 'Every change made through the API, newest first: who, what, and each field before → after. Secrets read [redacted]; no one can change an entry.')}
      ${this.renderFilters()}
      ${this.renderList()}`;
  }
}
customElements.define('vp-audit-page', VpAuditPage);
