// API keys: create with the scopes the key may use (the full key is shown once, in a dialog), list, rename,
// change the expiry or the scopes of an active key (a dialog), deactivate (final, confirmed). Inactive and
// expired keys offer no actions.
// The full key only ever lives in `created` until that dialog closes; nothing can fetch it again.
import { html, nothing } from 'lit';
import { API_KEY_SCOPES, type ApiKey, type ApiKeyScope, type ApiKeyUpdate } from '@voice-platform/schemas/apiKeys.js';
import { ResourcePage, type Editing, type Prepared } from '../components/resource-page.js';
import { errorBanner, field } from '../components/field.js';
import { copySecret, secretContent } from '../components/secret.js';
import { api, ApiError } from '../core/api.js';
import {
  editExpiryOptions,
  emptyKeyCreateForm,
  keyCreateBody,
  keyEditBody,
  keyEditForm,
  SCOPE_DESCRIPTIONS,
  type EditExpiryPreset,
  type KeyCreateForm,
  type KeyEditForm,
} from '../core/apiKeyEdit.js';
import { dateInputValue, EXPIRY_PRESETS, type ExpiryPreset } from '../core/expiry.js';
import { formatDate, formatDateTime } from '../core/format.js';
import type { FieldErrors } from '../core/validation.js';

const MASK = '••••••••';

/** A key's scopes as `<code>` items, in the API's order. */
const scopeList = (scopes: readonly ApiKeyScope[]) =>
  html`<ul class="plain-list">${API_KEY_SCOPES.filter((s) => scopes.includes(s)).map((s) => html`<li><code>${s}</code></li>`)}</ul>`;

// The dialog form is the edit (rename, new expiry, new scopes); deleting is deactivating.
export class VpApiKeysPage extends ResourcePage<ApiKey, KeyEditForm, ApiKeyUpdate, ApiKey> {
  static override properties = {
    draft: { state: true },
    createErrors: { state: true },
    createError: { state: true },
    created: { state: true },
    copyStatus: { state: true },
  };
  declare draft: KeyCreateForm;
  declare createErrors: FieldErrors;
  declare createError: string | null;
  declare created: { name: string; key: string } | null;
  declare copyStatus: string;

  protected override readonly formId = 'edit-key-form';
  protected readonly failed = { load: 'Could not load the API keys.', save: 'Could not update the API key.', delete: 'Could not deactivate the key.' };

  constructor() {
    super();
    this.draft = emptyKeyCreateForm();
    this.createErrors = {};
    this.createError = null;
    this.created = null;
    this.copyStatus = '';
  }

  protected override emptyForm(): KeyEditForm {
    return { name: '', preset: 'keep', date: '', scopes: [] };
  }

  protected async fetchAll(): Promise<void> {
    this.items = (await api.listApiKeys()).items;
  }

  private async create(e: Event): Promise<void> {
    e.preventDefault();
    if (this.busy) return;
    this.createError = null;
    this.notice = null;
    const { body, errors } = keyCreateBody(this.draft, new Date());
    this.createErrors = errors;
    if (Object.keys(errors).length) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('#create-key-form [aria-invalid="true"]')?.focus();
      return;
    }
    this.busy = true;
    try {
      const created = await api.createApiKey(body);
      this.created = { name: created.name, key: created.key };
      this.copyStatus = '';
      this.draft = emptyKeyCreateForm();
      await this.load();
    } catch (err) {
      if (err instanceof ApiError) {
        this.createErrors = err.fieldErrors;
        this.createError = err.message;
      } else this.createError = 'Could not create the API key.';
    } finally {
      this.busy = false;
    }
  }

  private closeCreated(): void {
    const name = this.created?.name;
    this.created = null; // the only copy of the full key in the page goes away here
    this.copyStatus = '';
    if (name) this.notice = `API key “${name}” created. Its full value is no longer shown.`;
  }

  private openEdit(key: ApiKey): void {
    this.openForm({ mode: 'edit', item: key }, keyEditForm(key));
  }

  protected override prepare(editing: Editing<ApiKey>): Prepared<ApiKeyUpdate, ApiKey> {
    if (editing.mode !== 'edit') throw new Error('API keys are created in the form above the list');
    const { body, errors } = keyEditBody(editing.item, this.form, new Date());
    return { body, errors, send: () => api.updateApiKey(editing.item.id, body) };
  }

  protected override saved(updated: ApiKey): void {
    this.notice = `API key “${updated.name}” updated.`;
  }

  protected override async saveRefused(err: ApiError, body: ApiKeyUpdate): Promise<void> {
    super.saveRefused(err, body); // e.g. 409 api_key_revoked: the backend's own words
    if (err.code === 'api_key_revoked') await this.load(); // the list then shows why
  }

  protected override removeItem(key: ApiKey): Promise<void> {
    return api.updateApiKey(key.id, { is_active: false }).then(() => undefined);
  }

  protected override deleted(key: ApiKey): void {
    this.notice = `API key “${key.name}” deactivated. Requests with it are refused from now on.`;
  }

  /** The expiry select and, for "On a date…", the date picker: shared by create and edit. */
  private expiryFields(o: {
    id: string;
    options: ReadonlyArray<{ value: string; label: string }>;
    preset: string;
    date: string;
    error: string | undefined;
    onPreset: (v: string) => void;
    onDate: (v: string) => void;
  }) {
    return html`${field({ id: o.id, label: 'Expires', error: o.preset === 'date' ? undefined : o.error }, (a) =>
      html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
        @change=${(e: Event) => o.onPreset((e.target as HTMLSelectElement).value)}>
        ${o.options.map((p) => html`<option value=${p.value} .selected=${p.value === o.preset}>${p.label}</option>`)}
      </select>`,
    )}
    ${o.preset === 'date'
      ? field({ id: `${o.id}-date`, label: 'Expiry date', error: o.error, hint: 'Valid through the end of this day.', required: true }, (a) =>
          html`<input id=${a.id} type="date" min=${dateInputValue(new Date())} .value=${o.date} aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => o.onDate((e.target as HTMLInputElement).value)} />`,
        )
      : nothing}`;
  }

  /** The scope checkboxes, each with what it allows: shared by create and edit. At least one must stay ticked. */
  private scopeFields(o: { id: string; chosen: readonly ApiKeyScope[]; error: string | undefined; onChange: (scopes: ApiKeyScope[]) => void }) {
    const errorId = `${o.id}-error`;
    return html`<fieldset id=${o.id} class="scopes" aria-describedby=${o.error ? errorId : nothing}>
      <legend>Scopes</legend>
      ${API_KEY_SCOPES.map((s) => {
        const id = `${o.id}-${s.replace(':', '-')}`;
        return html`<div class="field checkbox">
          <input type="checkbox" id=${id} .checked=${o.chosen.includes(s)} aria-describedby="${id}-hint" aria-invalid=${o.error ? 'true' : 'false'}
            @change=${(e: Event) => o.onChange((e.target as HTMLInputElement).checked ? [...o.chosen, s] : o.chosen.filter((c) => c !== s))} />
          <label for=${id}><code>${s}</code></label>
          <p class="hint" id="${id}-hint">${SCOPE_DESCRIPTIONS[s]}</p>
        </div>`;
      })}
      ${o.error ? html`<p class="error-text" id=${errorId}>${o.error}</p>` : nothing}
    </fieldset>`;
  }

  private renderEditForm(key: ApiKey) {
    const f = this.form;
    return html`<p>Key <code>${key.prefix}${MASK}</code>. Its value does not change.</p>
      ${errorBanner(this.formError)}
      <form id=${this.formId} novalidate @submit=${(e: Event) => this.save(e)}>
        ${field({ id: 'edit-key-name', label: 'Name', error: this.errors.name, required: true }, (a) =>
          html`<input id=${a.id} .value=${f.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} autofocus @input=${(e: Event) => this.set({ name: (e.target as HTMLInputElement).value }, 'name')} />`,
        )}
        ${this.expiryFields({
          id: 'edit-key-expiry',
          options: editExpiryOptions(key.expires_at ? `expires ${formatDate(key.expires_at)}` : 'never expires'),
          preset: f.preset,
          date: f.date,
          error: this.errors.expires_at,
          onPreset: (v) => this.set({ preset: v as EditExpiryPreset }, 'expires_at'),
          onDate: (v) => this.set({ date: v }, 'expires_at'),
        })}
        ${this.scopeFields({ id: 'edit-key-scopes', chosen: f.scopes, error: this.errors.scopes, onChange: (scopes) => this.set({ scopes }, 'scopes') })}
      </form>`;
  }

  private renderCreateForm() {
    const d = this.draft;
    return html`<section class="panel" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create an API key</h2>
      ${errorBanner(this.createError)}
      <form id="create-key-form" novalidate class="inline-form" @submit=${(e: Event) => this.create(e)}>
        ${field(
          { id: 'key-name', label: 'Name', error: this.createErrors.name, hint: 'Who or what uses it, e.g. “CRM production”.', required: true },
          (a) => html`<input id=${a.id} .value=${d.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => (this.draft = { ...this.draft, name: (e.target as HTMLInputElement).value })} />`,
        )}
        ${this.expiryFields({
          id: 'key-expiry',
          options: EXPIRY_PRESETS,
          preset: d.preset,
          date: d.date,
          error: this.createErrors.expires_at,
          onPreset: (v) => (this.draft = { ...this.draft, preset: v as ExpiryPreset }),
          onDate: (v) => (this.draft = { ...this.draft, date: v }),
        })}
        ${this.scopeFields({
          id: 'key-scopes',
          chosen: d.scopes,
          error: this.createErrors.scopes,
          onChange: (scopes) => {
            this.draft = { ...this.draft, scopes };
            if (this.createErrors.scopes) this.createErrors = Object.fromEntries(Object.entries(this.createErrors).filter(([k]) => k !== 'scopes'));
          },
        })}
        <div class="form-actions"><button class="primary" type="submit" ?disabled=${this.busy}>Create key</button></div>
      </form>
    </section>`;
  }

  private renderList() {
    const state = this.renderListState('Loading API keys…');
    if (state || !this.items) return state;
    if (!this.items.length) return html`<p class="empty">No API keys yet. Create one above for your CRM.</p>`;
    const canChange = this.may('PATCH /api/v1/api-keys/{id}');
    return html`<div class="table-wrap"><table aria-label="API keys">
      <thead><tr>
        <th scope="col">Name</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th>
        <th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Scopes</th><th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>
        ${this.items.map(
          (k) => html`<tr data-key-id=${k.id}>
            <td>${k.name}</td>
            <td><code aria-label="Key starting with ${k.prefix}">${k.prefix}${MASK}</code></td>
            <td><vp-status-badge status=${k.status}></vp-status-badge></td>
            <td>${formatDateTime(k.created_at)}</td>
            <td>${formatDate(k.expires_at, 'Never')}</td>
            <td>${formatDateTime(k.last_used_at, 'Never')}</td>
            <td>${scopeList(k.scopes)}</td>
            <td class="row-actions">${k.status === 'active' && canChange
              ? html`<button class="small" aria-label="Edit ${k.name}" @click=${() => this.openEdit(k)}>Edit</button>
                  ${this.renderDeleteButton(k, k.name, 'Deactivate')}`
              : nothing}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    const created = this.created;
    return html`${this.renderHead('API keys', html`Keys authenticate CRMs on the dial-out API (<code>X-API-Key</code>). A key’s full value is shown once, when it is created.`)}
      ${this.may('POST /api/v1/api-keys') ? this.renderCreateForm() : nothing}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading" class="sr-only">All API keys</h2>
        ${this.renderList()}
      </section>

      <vp-dialog
        heading="Copy your new API key"
        .open=${created !== null}
        @vp-close=${() => this.closeCreated()}
        .content=${created
          ? secretContent({
              id: 'created-key',
              warning: 'This is the only time the full key is shown. Copy it now and store it somewhere safe: it cannot be shown again.',
              label: `API key “${created.name}”`,
              value: created.key,
              copyStatus: this.copyStatus,
              onCopy: async () => (this.copyStatus = await copySecret(created.key, 'created-key', 'key')),
            })
          : nothing}
        .actions=${html`<button @click=${() => this.closeCreated()}>I have copied the key</button>`}
      ></vp-dialog>

      ${this.renderDeleteDialog(
        'Deactivate this API key?',
        'Deactivate key',
        (k) => html`<p>Requests with <strong>${k.name}</strong> (<code>${k.prefix}${MASK}</code>) will be refused immediately.
            Deactivation is final: the key cannot be turned back on.</p>
          ${errorBanner(this.deleteError)}`,
      )}

      ${this.renderFormDialog('Edit API key', 'Save changes', (e) => (e.mode === 'edit' ? this.renderEditForm(e.item) : nothing))}`;
  }
}
customElements.define('vp-api-keys-page', VpApiKeysPage);
