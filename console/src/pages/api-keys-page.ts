// API keys: create (the full key is shown once, in a dialog), list, deactivate (final, confirmed).
// The full key only ever lives in `created` until that dialog closes; nothing can fetch it again.
import { html, nothing } from 'lit';
import type { ApiKey } from '@voice-platform/schemas/apiKeys.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { EXPIRY_PRESETS, expiresAtFor, type ExpiryPreset } from '../expiry.js';
import { formatDate, formatDateTime } from '../format.js';
import { validateApiKeyCreate, type FieldErrors } from '../validation.js';

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

  private renderForm() {
    const today = new Date();
    const minDate = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    return html`<section class="panel" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create an API key</h2>
      ${errorBanner(this.formError)}
      <form novalidate class="inline-form" @submit=${this.create}>
        ${field(
          { id: 'key-name', label: 'Name', error: this.errors.name, hint: 'Who or what uses it, e.g. “CRM production”.', required: true },
          (a) => html`<input id=${a.id} .value=${this.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} />`,
        )}
        ${field({ id: 'key-expiry', label: 'Expires', error: this.preset === 'date' ? undefined : this.errors.expires_at }, (a) =>
          html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @change=${(e: Event) => (this.preset = (e.target as HTMLSelectElement).value as ExpiryPreset)}>
            ${EXPIRY_PRESETS.map((p) => html`<option value=${p.value} .selected=${p.value === this.preset}>${p.label}</option>`)}
          </select>`,
        )}
        ${this.preset === 'date'
          ? field({ id: 'key-expiry-date', label: 'Expiry date', error: this.errors.expires_at, hint: 'Valid through the end of this day.', required: true }, (a) =>
              html`<input id=${a.id} type="date" min=${minDate} .value=${this.date} aria-required="true" aria-describedby=${a.describedBy ?? nothing}
                aria-invalid=${a.invalid} @input=${(e: Event) => (this.date = (e.target as HTMLInputElement).value)} />`,
            )
          : nothing}
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
            <td>${k.status === 'active'
              ? html`<button class="small link-danger" aria-label="Deactivate ${k.name}" @click=${() => {
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
      ${this.renderForm()}
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
      ></vp-dialog>`;
  }
}
customElements.define('vp-api-keys-page', VpApiKeysPage);
