// Webhooks: the endpoints that receive call and campaign events, signed with their secret. List,
// create (the secret is shown once, in a dialog of its own), edit, pause/resume, send a test event,
// delete (confirmed), and each endpoint's deliveries log (newest first; refreshed while a test is pending).
import { html, nothing } from 'lit';
import { WEBHOOK_EVENT_TYPES, type Webhook, type WebhookCreated, type WebhookDeliveryAttempt, type WebhookEventType } from '@voice-platform/schemas/webhooks.js';
import { ResourcePage, type Editing as EditingOf, type Prepared } from '../components/resource-page.js';
import { checkbox, errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { attemptSummary, EVENT_LABELS, emptyWebhookForm, webhookCreateBody, webhookToForm, webhookUpdateBody, type WebhookForm } from '../core/webhookForm.js';

type Editing = EditingOf<Webhook>;

/** After "Send test event", the log is read again this often until the event shows up (at most this many times). */
const TEST_POLL_MS = 1000;
const TEST_POLLS = 20;

export class VpWebhooksPage extends ResourcePage<Webhook, WebhookForm, object, Webhook | WebhookCreated> {
  static override properties = {
    error: { state: true },
    secret: { state: true },
    logFor: { state: true },
    log: { state: true },
    logError: { state: true },
  };
  declare error: string | null;
  /** The new endpoint's signing secret: shown once, forgotten when its dialog closes. */
  declare secret: { url: string; value: string } | null;
  declare logFor: Webhook | null;
  declare log: WebhookDeliveryAttempt[] | null;
  declare logError: string | null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;

  protected override readonly formId = 'webhook-form';
  protected readonly failed = { load: 'Could not load the webhooks.', save: 'Could not save the webhook.', delete: 'Could not delete the webhook.' };

  constructor() {
    super();
    this.error = null;
    this.secret = null;
    this.logFor = null;
    this.log = null;
    this.logError = null;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.pollTimer) clearTimeout(this.pollTimer);
  }

  protected override emptyForm(): WebhookForm {
    return emptyWebhookForm();
  }

  protected async fetchAll(): Promise<void> {
    this.items = (await api.listWebhooks()).items;
  }

  protected override openCreate(): void {
    this.openForm({ mode: 'create' }, emptyWebhookForm());
  }

  private openEdit(w: Webhook): void {
    this.openForm({ mode: 'edit', item: w }, webhookToForm(w));
  }

  private toggleEvent(t: WebhookEventType, on: boolean): void {
    const events = on ? [...this.form.events, t] : this.form.events.filter((e) => e !== t);
    this.set({ events }, 'events');
  }

  protected override prepare(editing: Editing): Prepared<object, Webhook | WebhookCreated> {
    if (editing.mode === 'create') {
      const { body, errors } = webhookCreateBody(this.form);
      return { body, errors, send: () => api.createWebhook(body) };
    }
    const { body, errors } = webhookUpdateBody(editing.item, this.form);
    return { body, errors, send: () => api.updateWebhook(editing.item.id, body) };
  }

  protected override saved(saved: Webhook | WebhookCreated, editing: Editing): void {
    if (editing.mode === 'create') {
      const created = saved as WebhookCreated;
      this.secret = { url: created.url, value: created.secret };
    } else this.notice = `Webhook ${saved.url} updated.`;
  }

  protected override saveRefused(err: ApiError): void {
    // 422 details (e.g. a URL that resolves to a private address) land on their fields.
    this.errors = err.fieldErrors;
    this.formError = err.message;
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

  protected override removeItem(w: Webhook): Promise<void> {
    return api.deleteWebhook(w.id);
  }

  protected override deleted(w: Webhook): void {
    if (this.logFor?.id === w.id) this.logFor = null;
    this.notice = `Webhook ${w.url} deleted.`;
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
        ${checkbox({
          id: 'webhook-include-transcript',
          label: 'Include the transcript in call.ended and call.analyzed',
          checked: f.include_transcript,
          onChange: (c) => this.set({ include_transcript: c }, 'include_transcript'),
          hint: 'What was said, in order (data.transcript). Off: read it with GET /api/v1/calls/{id}.',
        })}
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
    const state = this.renderListState('Loading webhooks…');
    if (state || !this.items) return state;
    if (!this.items.length) {
      return this.renderEmptyState(
        'webhooks',
        'No webhooks yet',
        [
          html`A webhook tells your CRM how each call went as it happens: queued, ringing, answered, and ended with its
            outcome and recording, without polling. Each request is signed with the webhook's secret
            (<code>X-Voice-Signature</code>), so your endpoint can check it came from here.`,
        ],
        this.firstButton('Create the first webhook', 'POST /api/v1/webhooks'),
      );
    }
    return html`<div class="table-wrap"><table aria-label="Webhooks">
      <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${this.items.map(
          (w) => html`<tr data-webhook-id=${w.id}>
            <td><code>${w.url}</code>${w.description ? html`<br /><span class="hint">${w.description}</span>` : nothing}</td>
            <td><ul class="plain-list">${w.events.map((t) => html`<li><code>${t}</code></li>`)}</ul>${w.include_transcript ? html`<span class="hint">with the transcript</span>` : nothing}</td>
            <td>${w.active ? html`<span class="badge badge-good" data-badge="active">Active</span>` : html`<span class="badge badge-info" data-badge="paused">Paused</span>`}</td>
            <td class="row-actions">
              ${this.may('PATCH /api/v1/webhooks/{id}') ? html`<button class="small" aria-label="Edit ${w.url}" @click=${() => this.openEdit(w)}>Edit</button>` : nothing}
              <button class="small" aria-label="Deliveries of ${w.url}" @click=${() => this.showLog(w)}>Deliveries</button>
              ${!this.may('PATCH /api/v1/webhooks/{id}')
                ? nothing
                : w.active
                ? html`<button class="small" aria-label="Send a test event to ${w.url}" @click=${() => this.sendTest(w)}>Send test event</button>
                    <button class="small" aria-label="Pause ${w.url}" @click=${() => this.setActive(w, false)}>Pause</button>`
                : html`<button class="small" aria-label="Resume ${w.url}" @click=${() => this.setActive(w, true)}>Resume</button>`}
              ${this.may('DELETE /api/v1/webhooks/{id}') ? this.renderDeleteButton(w, w.url) : nothing}
            </td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    const editing = this.editing;
    const secret = this.secret;
    return html`${this.renderHead('Webhooks', 'Endpoints that receive call and campaign events, signed with their secret.', 'New webhook', 'POST /api/v1/webhooks')}
      ${errorBanner(this.error)}
      ${this.renderList()}
      ${this.renderLog()}

      ${this.renderFormDialog(editing?.mode === 'edit' ? 'Edit webhook' : 'New webhook', 'Create webhook', () => this.renderForm())}

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

      ${this.renderDeleteDialog(
        'Delete this webhook?',
        'Delete webhook',
        (w) => html`<p><code>${w.url}</code> gets no more events, and its deliveries log goes with it. This cannot be undone.</p>${errorBanner(this.deleteError)}`,
      )}`;
  }
}
customElements.define('vp-webhooks-page', VpWebhooksPage);
