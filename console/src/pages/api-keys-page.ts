// API keys: create (the full key is shown once, in a dialog), list, rename or change the expiry of an
// active key (a dialog), deactivate (final, confirmed). Inactive and expired keys offer no actions.
// The full key only ever lives in `created` until that dialog closes; nothing can fetch it again.
import { html, nothing } from 'lit';
import type { ApiKey } from '@voice-platform/schemas/apiKeys.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { editExpiryOptions, keyEditBody, keyEditForm, type EditExpiryPreset, type KeyEditForm } from '../apiKeyEdit.js';
import { dateInputValue, EXPIRY_PRESETS, expiresAtFor, type ExpiryPreset } from '../expiry.js';
import { formatDate, formatDateTime } from '../format.js';
import { validateApiKeyCreate, type FieldErrors } from '../validation.js';
import { may } from '../permissions.js';

const MASK = '••••••••';

export class VpApiKeysPage extends LightElement {
  static override properties = {
    keys: { state: true },
    loadError: { state: true },
    name: { state: true },
    preset: { state: true },
    date: { state: true },
    errors: { state: true },
    formError: { state: true },
    busy: { state: true },
    created: { state: true },
    copyStatus: { state: true },
    confirming: { state: true },
    confirmError: { state: true },
    notice: { state: true },
    editing: { state: true },
    editForm: { state: true },
    editErrors: { state: true },
    editError: { state: true },
  };
  declare keys: ApiKey[] | null;
  declare loadError: string | null;
  declare name: string;
  declare preset: ExpiryPreset;
  declare date: string;
  declare errors: FieldErrors;
  declare formError: string | null;
  declare busy: boolean;
  declare created: { name: string; key: string } | null;
  declare copyStatus: string;
  declare confirming: ApiKey | null;
  declare confirmError: string | null;
  declare notice: string | null;
  declare editing: ApiKey | null;
  declare editForm: KeyEditForm;
  declare editErrors: FieldErrors;
  declare editError: string | null;

  constructor() {
    super();
    this.keys = null;
    this.loadError = null;
    this.name = '';
    this.preset = 'never';
    this.date = '';
    this.errors = {};
    this.formError = null;
    this.busy = false;
    this.created = null;
    this.copyStatus = '';
    this.confirming = null;
    this.confirmError = null;
    this.notice = null;
    this.editing = null;
    this.editForm = { name: '', preset: 'keep', date: '' };
    this.editErrors = {};
    this.editError = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      this.keys = (await api.listApiKeys()).items;
      this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the API keys.';
    }
  }

  private async create(e: Event): Promise<void> {
    e.preventDefault();
    this.formError = null;
    this.notice = null;
    const now = new Date();
    const expiresAt = expiresAtFor(this.preset, now, this.date);
    const errors: FieldErrors = {};
    if (expiresAt === undefined) errors.expires_at = 'Choose a valid date.';
    const body = { name: this.name.trim(), ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}) };
    Object.assign(errors, validateApiKeyCreate(body, now), errors);
    this.errors = errors;
    if (Object.keys(errors).length) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('form [aria-invalid="true"]')?.focus();
      return;
    }
    this.busy = true;
    try {
      const created = await api.createApiKey(body);
      this.created = { name: created.name, key: created.key };
      this.copyStatus = '';
      this.name = '';
      this.preset = 'never';
      this.date = '';
      await this.load();
    } catch (err) {
      if (err instanceof ApiError) {
        this.errors = err.fieldErrors;
        this.formError = err.message;
      } else this.formError = 'Could not create the API key.';
    } finally {
      this.busy = false;
    }
  }

  private async copy(): Promise<void> {
    if (!this.created) return;
    try {
      await navigator.clipboard.writeText(this.created.key);
      this.copyStatus = 'Copied to the clipboard.';
    } catch {
      // No clipboard permission: select the text so the user can press Ctrl+C.
      const input = this.querySelector<HTMLInputElement>('#created-key');
      input?.focus();
      input?.select();
      this.copyStatus = 'Copying is blocked by the browser: the key is selected, press Ctrl+C.';
    }
  }

  private closeCreated(): void {
    const name = this.created?.name;
    this.created = null; // the only copy of the full key in the page goes away here
    this.copyStatus = '';
    if (name) this.notice = `API key “${name}” created. Its full value is no longer shown.`;
  }

  private async deactivate(): Promise<void> {
    const key = this.confirming;
    if (!key) return;
    this.busy = true;
    try {
      await api.updateApiKey(key.id, { is_active: false });
      this.confirming = null;
      this.confirmError = null;
      this.notice = `API key “${key.name}” deactivated. Requests with it are refused from now on.`;
      await this.load();
    } catch (err) {
      this.confirmError = err instanceof ApiError ? err.message : 'Could not deactivate the key.';
    } finally {
      this.busy = false;
    }
  }

  private startEdit(key: ApiKey): void {
    this.editing = key;
    this.editForm = keyEditForm(key);
    this.editErrors = {};
    this.editError = null;
  }

  private setEdit(patch: Partial<KeyEditForm>): void {
    this.editForm = { ...this.editForm, ...patch };
    // A field's error goes once it is edited; the next save checks again.
    const stale = 'name' in patch ? 'name' : 'expires_at';
    if (this.editErrors[stale]) this.editErrors = Object.fromEntries(Object.entries(this.editErrors).filter(([k]) => k !== stale));
  }

  private async saveEdit(e: Event): Promise<void> {
    e.preventDefault();
    const key = this.editing;
    if (!key || this.busy) return;
    this.editError = null;
    const { body, errors } = keyEditBody(key, this.editForm, new Date());
    this.editErrors = errors;
    if (Object.keys(errors).length) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('#edit-key-form [aria-invalid="true"]')?.focus();
      return;
    }
    if (!Object.keys(body).length) {
      this.editing = null; // nothing changed: nothing to send
      return;
    }
    this.busy = true;
    try {
      const updated = await api.updateApiKey(key.id, body);
      this.editing = null;
      this.notice = `API key “${updated.name}” updated.`;
      await this.load();
    } catch (err) {
      if (err instanceof ApiError) {
        this.editErrors = err.fieldErrors;
        this.editError = err.message; // e.g. 409 api_key_revoked: the backend's own words
        if (err.code === 'api_key_revoked') await this.load(); // the list then shows why
      } else this.editError = 'Could not update the API key.';
    } finally {
      this.busy = false;
    }
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

  private renderEditForm(key: ApiKey) {
    const f = this.editForm;
    return html`<p>Key <code>${key.prefix}${MASK}</code>. Its value does not change.</p>
      ${errorBanner(this.editError)}
      <form id="edit-key-form" novalidate @submit=${(e: Event) => this.saveEdit(e)}>
        ${field({ id: 'edit-key-name', label: 'Name', error: this.editErrors.name, required: true }, (a) =>
          html`<input id=${a.id} .value=${f.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} autofocus @input=${(e: Event) => this.setEdit({ name: (e.target as HTMLInputElement).value })} />`,
        )}
        ${this.expiryFields({
          id: 'edit-key-expiry',
          options: editExpiryOptions(key.expires_at ? `expires ${formatDate(key.expires_at)}` : 'never expires'),
          preset: f.preset,
          date: f.date,
          error: this.editErrors.expires_at,
          onPreset: (v) => this.setEdit({ preset: v as EditExpiryPreset }),
          onDate: (v) => this.setEdit({ date: v }),
        })}
      </form>`;
  }

  private renderForm() {
    return html`<section class="panel" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create an API key</h2>
      ${errorBanner(this.formError)}
      <form novalidate class="inline-form" @submit=${this.create}>
        ${field(
          { id: 'key-name', label: 'Name', error: this.errors.name, hint: 'Who or what uses it, e.g. “CRM production”.', required: true },
          (a) => html`<input id=${a.id} .value=${this.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} />`,
        )}
        ${this.expiryFields({
          id: 'key-expiry',
          options: EXPIRY_PRESETS,
          preset: this.preset,
          date: this.date,
          error: this.errors.expires_at,
          onPreset: (v) => (this.preset = v as ExpiryPreset),
          onDate: (v) => (this.date = v),
        })}
        <div class="form-actions"><button class="primary" type="submit" ?disabled=${this.busy}>Create key</button></div>
      </form>
    </section>`;
  }

  private renderList() {
    if (this.loadError) return errorBanner(this.loadError);
    if (!this.keys) return html`<p class="loading" role="status">Loading API keys…</p>`;
    if (!this.keys.length) return html`<p class="empty">No API keys yet. Create one above for your CRM.</p>`;
    return html`<div class="table-wrap"><table aria-label="API keys">
      <thead><tr>
        <th scope="col">Name</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th>
        <th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>
        ${this.keys.map(
          (k) => html`<tr data-key-id=${k.id}>
            <td>${k.name}</td>
            <td><code aria-label="Key starting with ${k.prefix}">${k.prefix}${MASK}</code></td>
            <td><vp-status-badge status=${k.status}></vp-status-badge></td>
            <td>${formatDateTime(k.created_at)}</td>
            <td>${formatDate(k.expires_at, 'Never')}</td>
            <td>${formatDateTime(k.last_used_at, 'Never')}</td>
            <td class="row-actions">${k.status === 'active' && may('PATCH /api/v1/api-keys/{id}')
              ? html`<button class="small" aria-label="Edit ${k.name}" @click=${() => this.startEdit(k)}>Edit</button>
                  <button class="small link-danger" aria-label="Deactivate ${k.name}" @click=${() => {
                    this.confirming = k;
                    this.confirmError = null;
                  }}>Deactivate</button>`
              : nothing}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    return html`<h1 tabindex="-1">API keys</h1>
      <p class="subtitle">Keys authenticate CRMs on the dial-out API (<code>X-API-Key</code>). A key’s full value is shown once, when it is created.</p>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      ${may('POST /api/v1/api-keys') ? this.renderForm() : nothing}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading" class="sr-only">All API keys</h2>
        ${this.renderList()}
      </section>

      <vp-dialog
        heading="Copy your new API key"
        .open=${this.created !== null}
        @vp-close=${() => this.closeCreated()}
        .content=${this.created
          ? html`<div class="banner banner-warn" role="alert" id="created-key-warning">
                This is the only time the full key is shown. Copy it now and store it somewhere safe: it cannot be shown again.
              </div>
              <label for="created-key">API key “${this.created.name}”</label>
              <div class="secret">
                <input id="created-key" readonly .value=${this.created.key} aria-describedby="created-key-warning" @focus=${(e: Event) => (e.target as HTMLInputElement).select()} />
                <button class="primary" @click=${() => this.copy()} autofocus>Copy</button>
              </div>
              <p class="hint" role="status" aria-live="polite">${this.copyStatus}</p>`
          : nothing}
        .actions=${html`<button @click=${() => this.closeCreated()}>I have copied the key</button>`}
      ></vp-dialog>

      <vp-dialog
        heading="Deactivate this API key?"
        .open=${this.confirming !== null}
        @vp-close=${() => (this.confirming = null)}
        .content=${this.confirming
          ? html`<p>Requests with <strong>${this.confirming.name}</strong> (<code>${this.confirming.prefix}${MASK}</code>) will be refused immediately.
                Deactivation is final: the key cannot be turned back on.</p>
              ${errorBanner(this.confirmError)}`
          : nothing}
        .actions=${html`<button @click=${() => (this.confirming = null)} autofocus>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.deactivate()}>Deactivate key</button>`}
      ></vp-dialog>

      <vp-dialog
        heading="Edit API key"
        .open=${this.editing !== null}
        @vp-close=${() => (this.editing = null)}
        .content=${this.editing ? this.renderEditForm(this.editing) : nothing}
        .actions=${html`<button type="button" @click=${() => (this.editing = null)}>Cancel</button>
          <button class="primary" type="submit" form="edit-key-form" ?disabled=${this.busy}>Save changes</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-api-keys-page', VpApiKeysPage);
