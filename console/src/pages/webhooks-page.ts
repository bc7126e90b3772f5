// Webhooks: the endpoints that receive call and campaign events, signed with their secret. List,
// create (the secret is shown once, in a dialog of its own), edit, pause/resume, send a test event,
// delete (confirmed), and each endpoint's deliveries log (newest first; refreshed while a test is pending).
import { html, nothing } from 'lit';
import { WEBHOOK_EVENT_TYPES, type Webhook, type WebhookDeliveryAttempt, type WebhookEventType } from '@voice-platform/schemas/webhooks.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { attemptSummary, EVENT_LABELS, emptyWebhookForm, webhookCreateBody, webhookToForm, webhookUpdateBody, type WebhookForm } from '../webhookForm.js';
import type { FieldErrors } from '../validation.js';

type Editing = { mode: 'create' } | { mode: 'edit'; webhook: Webhook };

/** After "Send test event", the log is read again this often until the event shows up (at most this many times). */
const TEST_POLL_MS = 1000;
const TEST_POLLS = 20;

export class VpWebhooksPage extends LightElement {
  static override properties = {
    webhooks: { state: true },
    loadError: { state: true },
    notice: { state: true },
    error: { state: true },
    editing: { state: true },
    form: { state: true },
    errors: { state: true },
    formError: { state: true },
    busy: { state: true },
    secret: { state: true },
    deleting: { state: true },
    deleteError: { state: true },
    logFor: { state: true },
    log: { state: true },
    logError: { state: true },
  };
  declare webhooks: Webhook[] | null;
  declare loadError: string | null;
  declare notice: string | null;
  declare error: string | null;
  declare editing: Editing | null;
  declare form: WebhookForm;
  declare errors: FieldErrors;
  declare formError: string | null;
  declare busy: boolean;
  /** The new endpoint's signing secret: shown once, forgotten when its dialog closes. */
  declare secret: { url: string; value: string } | null;
  declare deleting: Webhook | null;
  declare deleteError: string | null;
  declare logFor: Webhook | null;
  declare log: WebhookDeliveryAttempt[] | null;
  declare logError: string | null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;

  constructor() {
    super();
    this.webhooks = null;
    this.loadError = null;
    this.notice = null;
    this.error = null;
    this.editing = null;
    this.form = emptyWebhookForm();
    this.errors = {};
    this.formError = null;
    this.busy = false;
    this.secret = null;
    this.deleting = null;
    this.deleteError = null;
    this.logFor = null;
    this.log = null;
    this.logError = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.pollTimer) clearTimeout(this.pollTimer);
  }

  private async load(): Promise<void> {
    try {
      this.webhooks = (await api.listWebhooks()).items;
      this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the webhooks.';
    }
  }

  private openCreate(): void {
    this.editing = { mode: 'create' };
    this.form = emptyWebhookForm();
    this.errors = {};
    this.formError = null;
    this.notice = null;
  }

  private openEdit(w: Webhook): void {
    this.editing = { mode: 'edit', webhook: w };
    this.form = webhookToForm(w);
    this.errors = {};
    this.formError = null;
    this.notice = null;
  }

  private closeForm(): void {
    this.editing = null;
    this.form = emptyWebhookForm();
    this.errors = {};
    this.formError = null;
  }

  private set(patch: Partial<WebhookForm>, errorKey: string): void {
    this.form = { ...this.form, ...patch };
    if (this.errors[errorKey]) this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => k !== errorKey));
  }

  private toggleEvent(t: WebhookEventType, on: boolean): void {
    const events = on ? [...this.form.events, t] : this.form.events.filter((e) => e !== t);
    this.set({ events }, 'events');
  }

  private async save(e: Event): Promise<void> {
    e.preventDefault();
    const editing = this.editing;
    if (!editing || this.busy) return;
    this.formError = null;
    const prepared = editing.mode === 'create' ? webhookCreateBody(this.form) : webhookUpdateBody(editing.webhook, this.form);
    this.errors = prepared.errors;
    if (Object.keys(prepared.errors).length) {
      this.formError = 'Fix the highlighted fields and save again.';
      await this.updateComplete;
      this.querySelector<HTMLElement>('#webhook-form [aria-invalid="true"]')?.focus();
      return;
    }
    if (!Object.keys(prepared.body).length) {
      this.closeForm();
      return;
    }
    this.busy = true;
    try {
      if (editing.mode === 'create') {
        const created = await api.createWebhook(webhookCreateBody(this.form).body);
        this.closeForm();
        this.secret = { url: created.url, value: created.secret };
      } else {
        const saved = await api.updateWebhook(editing.webhook.id, prepared.body);
        this.closeForm();
        this.notice = `Webhook ${saved.url} updated.`;
      }
      await this.load();
    } catch (err) {
      if (err instanceof ApiError) {
        // 422 details (e.g. a URL that resolves to a private address) land on their fields.
        this.errors = err.fieldErrors;
        this.formError = err.message;
      } else this.formError = 'Could not save the webhook.';
      await this.updateComplete;
      this.querySelector<HTMLElement>('#webhook-form [aria-invalid="true"]')?.focus();
    } finally {
      this.busy = false;
    }
  }

  private async setActive(w: Webhook, active: boolean): Promise<void> {
    this.error = null;
    this.notice = null;
    try {
      await api.updateWebhook(w.id, { active });
      this.notice = active ? `Webhook ${w.url} resumed.` : `Webhook ${w.url} paused: it gets no new events until you resume it.`;
      await this.load();
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not change the webhook.';
    }
  }

  private async sendTest(w: Webhook): Promise<void> {
    this.error = null;
    this.notice = null;
    try {
      const event = await api.testWebhook(w.id);
      this.notice = `Test event ${event.id} queued for ${w.url}.`;
      await this.showLog(w, event.id);
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not send a test event.';
    }
  }

  /** Shows `w`'s deliveries; with `waitFor`, reads again until that event's first attempt is in the log. */
  private async showLog(w: Webhook, waitFor?: string): Promise<void> {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.logFor?.id !== w.id) this.log = null;
    this.logFor = w;
    let polls = 0;
    const read = async () => {
      try {
        const items = (await api.webhookDeliveries(w.id)).items;
        if (this.logFor?.id !== w.id) return;
        this.log = items;
        this.logError = null;
        if (waitFor && !items.some((a) => a.event_id === waitFor) && ++polls < TEST_POLLS) this.pollTimer = setTimeout(() => void read(), TEST_POLL_MS);
      } catch (err) {
        this.logError = err instanceof ApiError ? err.message : 'Could not load the deliveries.';
      }
    };
    await read();
  }

  private async deleteWebhook(): Promise<void> {
    const w = this.deleting;
    if (!w || this.busy) return;
    this.busy = true;
    this.deleteError = null;
    try {
      await api.deleteWebhook(w.id);
      this.deleting = null;
      if (this.logFor?.id === w.id) this.logFor = null;
      this.notice = `Webhook ${w.url} deleted.`;
      await this.load();
    } catch (err) {
      this.deleteError = err instanceof ApiError ? err.message : 'Could not delete the webhook.';
    } finally {
      this.busy = false;
    }
  }

  private renderForm() {
    const f = this.form;
    return html`${errorBanner(this.formError)}
      <form id="webhook-form" novalidate autocomplete="off" @submit=${(e: Event) => this.save(e)}>
        ${field({ id: 'webhook-url', label: 'URL', error: this.errors.url, required: true, hint: 'Where the events are POSTed, e.g. https://crm.example.com/hooks/voice. It must be reachable from the backend.' }, (a) =>
          html`<input id=${a.id} type="url" .value=${f.url} maxlength="2048" spellcheck="false" autocapitalize="off" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} autofocus @input=${(e: Event) => this.set({ url: (e.target as HTMLInputElement).value }, 'url')} />`,
        )}
        <fieldset aria-describedby=${this.errors.events ? 'webhook-events-error' : nothing}>
          <legend>Events</legend>
          ${WEBHOOK_EVENT_TYPES.map(
            (t) => html`<div class="field checkbox">
              <input type="checkbox" id="webhook-event-${t}" .checked=${f.events.includes(t)} @change=${(e: Event) => this.toggleEvent(t, (e.target as HTMLInputElement).checked)} />
              <label for="webhook-event-${t}">${EVENT_LABELS[t]} <code>${t}</code></label>
            </div>`,
          )}
          ${this.errors.events ? html`<p class="error-text" id="webhook-events-error">${this.errors.events}</p>` : nothing}
        </fieldset>
        ${field({ id: 'webhook-description', label: 'Description', error: this.errors.description, hint: 'Optional, for you.' }, (a) =>
          html`<input id=${a.id} .value=${f.description} maxlength="500" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @input=${(e: Event) => this.set({ description: (e.target as HTMLInputElement).value }, 'description')} />`,
        )}
      </form>`;
  }

  private renderLog() {
    const w = this.logFor;
    if (!w) return nothing;
    return html`<section class="panel" aria-labelledby="deliveries-heading" data-testid="deliveries">
      <div class="page-head">
        <h2 id="deliveries-heading">Deliveries to ${w.url}</h2>
        <div>
          <button class="small" @click=${() => this.showLog(w)}>Refresh</button>
          <button class="small" @click=${() => {
            this.logFor = null;
            if (this.pollTimer) clearTimeout(this.pollTimer);
          }}>Close</button>
        </div>
      </div>
      ${errorBanner(this.logError)}
      ${this.log === null
        ? html`<p class="loading" role="status">Loading deliveries…</p>`
        : !this.log.length
          ? html`<p class="hint">No deliveries yet. Events are delivered within seconds of happening; failed attempts are retried with growing delays (1 minute, doubling) up to 8 times.</p>`
          : html`<div class="table-wrap"><table aria-label="Deliveries">
              <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Result</th></tr></thead>
              <tbody>
                ${this.log.map(
                  (a) => html`<tr data-event-id=${a.event_id} data-status=${a.status}>
                    <td>${new Date(a.attempted_at).toLocaleString()}</td>
                    <td><code>${a.type}</code><br /><span class="hint mono">${a.event_id}</span></td>
                    <td>${a.attempt}</td>
                    <td><span class="badge ${a.status === 'delivered' ? 'badge-good' : a.status === 'dead' ? 'badge-bad' : 'badge-info'}">${a.status}</span> ${attemptSummary(a)}</td>
                  </tr>`,
                )}
              </tbody>
            </table></div>`}
    </section>`;
  }

  private renderList() {
    if (this.loadError) return errorBanner(this.loadError);
    if (!this.webhooks) return html`<p class="loading" role="status">Loading webhooks…</p>`;
    if (!this.webhooks.length) {
      return html`<section class="panel empty-state" aria-labelledby="webhooks-empty-heading" data-testid="webhooks-empty">
        <h2 id="webhooks-empty-heading">No webhooks yet</h2>
        <p>A webhook tells your CRM how each call went as it happens: queued, ringing, answered, and ended with its
          outcome and recording, without polling. Each request is signed with the webhook's secret
          (<code>X-Voice-Signature</code>), so your endpoint can check it came from here.</p>
        <button class="primary" @click=${() => this.openCreate()}>Create the first webhook</button>
      </section>`;
    }
    return html`<div class="table-wrap"><table aria-label="Webhooks">
      <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${this.webhooks.map(
          (w) => html`<tr data-webhook-id=${w.id}>
            <td><code>${w.url}</code>${w.description ? html`<br /><span class="hint">${w.description}</span>` : nothing}</td>
            <td><ul class="plain-list">${w.events.map((t) => html`<li><code>${t}</code></li>`)}</ul></td>
            <td>${w.active ? html`<span class="badge badge-good" data-badge="active">Active</span>` : html`<span class="badge badge-info" data-badge="paused">Paused</span>`}</td>
            <td class="row-actions">
              <button class="small" aria-label="Edit ${w.url}" @click=${() => this.openEdit(w)}>Edit</button>
              <button class="small" aria-label="Deliveries of ${w.url}" @click=${() => this.showLog(w)}>Deliveries</button>
              ${w.active
                ? html`<button class="small" aria-label="Send a test event to ${w.url}" @click=${() => this.sendTest(w)}>Send test event</button>
                    <button class="small" aria-label="Pause ${w.url}" @click=${() => this.setActive(w, false)}>Pause</button>`
                : html`<button class="small" aria-label="Resume ${w.url}" @click=${() => this.setActive(w, true)}>Resume</button>`}
              <button class="small link-danger" aria-label="Delete ${w.url}" @click=${() => {
                this.deleting = w;
                this.deleteError = null;
              }}>Delete</button>
            </td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    const editing = this.editing;
    const secret = this.secret;
    return html`<div class="page-head">
        <div><h1 tabindex="-1">Webhooks</h1>
          <p class="subtitle">Endpoints that receive call and campaign events, signed with their secret.</p></div>
        ${this.webhooks?.length ? html`<button class="primary" @click=${() => this.openCreate()}>New webhook</button>` : nothing}
      </div>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      ${errorBanner(this.error)}
      ${this.renderList()}
      ${this.renderLog()}

      <vp-dialog
        heading=${editing?.mode === 'edit' ? 'Edit webhook' : 'New webhook'}
        .open=${editing !== null}
        @vp-close=${() => this.closeForm()}
        .content=${editing ? this.renderForm() : nothing}
        .actions=${html`<button type="button" @click=${() => this.closeForm()}>Cancel</button>
          <button class="primary" type="submit" form="webhook-form" ?disabled=${this.busy}>${editing?.mode === 'edit' ? 'Save changes' : 'Create webhook'}</button>`}
      ></vp-dialog>

      <vp-dialog
        heading="Webhook created: copy its secret now"
        .open=${secret !== null}
        @vp-close=${() => (this.secret = null)}
        .content=${secret
          ? html`<p>Events for <code>${secret.url}</code> are signed with this secret. It is shown this once: store it where your endpoint can read it.</p>
              <p><code class="mono" data-testid="webhook-secret">${secret.value}</code></p>
              <p class="hint">Check each request: <code>X-Voice-Signature: t=&lt;unix seconds&gt;,v1=&lt;hex&gt;</code>, where v1 is HMAC-SHA256(secret, "&lt;t&gt;.&lt;raw body&gt;").</p>`
          : nothing}
        .actions=${html`<button class="primary" @click=${() => (this.secret = null)} autofocus>I have stored it</button>`}
      ></vp-dialog>

      <vp-dialog
        heading="Delete this webhook?"
        .open=${this.deleting !== null}
        @vp-close=${() => (this.deleting = null)}
        .content=${this.deleting ? html`<p><code>${this.deleting.url}</code> gets no more events, and its deliveries log goes with it. This cannot be undone.</p>${errorBanner(this.deleteError)}` : nothing}
        .actions=${html`<button @click=${() => (this.deleting = null)} autofocus>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.deleteWebhook()}>Delete webhook</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-webhooks-page', VpWebhooksPage);
