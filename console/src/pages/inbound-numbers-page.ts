// Inbound numbers: which bot answers calls to a number of ours. List, create and edit (in a dialog: the
// number, a bot picker, the chosen bot's variables, the carrier addresses allowed to call), delete
// (confirmed). The backend mirrors each number into LiveKit; its 503 (LiveKit unreachable) shows as is.
import { html, nothing } from 'lit';
import type { InboundNumber } from '@voice-platform/schemas/inbound.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import {
  emptyInboundForm,
  inboundApiErrors,
  inboundCreateBody,
  inboundToForm,
  inboundUpdateBody,
  parseAddresses,
  type BotChoice,
  type InboundForm,
} from '../inboundForm.js';
import type { FieldErrors } from '../validation.js';

/** How many addresses or variables a row shows before "and N more". */
const SHOWN = 3;

type Editing = { mode: 'create' } | { mode: 'edit'; number: InboundNumber };

export class VpInboundNumbersPage extends LightElement {
  static override properties = {
    numbers: { state: true },
    bots: { state: true },
    loadError: { state: true },
    notice: { state: true },
    editing: { state: true },
    form: { state: true },
    errors: { state: true },
    formError: { state: true },
    busy: { state: true },
    deleting: { state: true },
    deleteError: { state: true },
  };
  declare numbers: InboundNumber[] | null;
  /** The bots to pick from; null while loading or when they could not be loaded. */
  declare bots: BotChoice[] | null;
  declare loadError: string | null;
  declare notice: string | null;
  declare editing: Editing | null;
  declare form: InboundForm;
  declare errors: FieldErrors;
  declare formError: string | null;
  declare busy: boolean;
  declare deleting: InboundNumber | null;
  declare deleteError: string | null;

  constructor() {
    super();
    this.numbers = null;
    this.bots = null;
    this.loadError = null;
    this.notice = null;
    this.editing = null;
    this.form = emptyInboundForm();
    this.errors = {};
    this.formError = null;
    this.busy = false;
    this.deleting = null;
    this.deleteError = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      const [numbers, bots] = await Promise.all([api.listInboundNumbers(), api.listBots()]);
      this.numbers = numbers.items;
      this.bots = bots.items;
      this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the inbound numbers.';
    }
  }

  private bot(id: string): BotChoice | undefined {
    return this.bots?.find((b) => b.id === id);
  }

  private openCreate(): void {
    this.editing = { mode: 'create' };
    // One bot: nothing to choose.
    this.form = emptyInboundForm(this.bots?.length === 1 ? this.bots[0]!.id : '');
    this.errors = {};
    this.formError = null;
    this.notice = null;
  }

  private openEdit(n: InboundNumber): void {
    this.editing = { mode: 'edit', number: n };
    this.form = inboundToForm(n);
    this.errors = {};
    this.formError = null;
    this.notice = null;
  }

  private closeForm(): void {
    this.editing = null;
    this.form = emptyInboundForm();
    this.errors = {};
    this.formError = null;
  }

  private set(patch: Partial<InboundForm>, errorKey?: string): void {
    this.form = { ...this.form, ...patch };
    // A field's error goes once it is edited; the next save checks again.
    if (errorKey && this.errors[errorKey]) this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => k !== errorKey));
  }

  private prepare(editing: Editing): { body: object; errors: FieldErrors; send: () => Promise<InboundNumber> } {
    const bot = this.bot(this.form.bot_id);
    if (editing.mode === 'create') {
      const { body, errors } = inboundCreateBody(this.form, bot);
      return { body, errors, send: () => api.createInboundNumber(body) };
    }
    const { body, errors } = inboundUpdateBody(editing.number, this.form, bot);
    return { body, errors, send: () => api.updateInboundNumber(editing.number.id, body) };
  }

  private async focusInvalid(): Promise<void> {
    await this.updateComplete;
    this.querySelector<HTMLElement>('#inbound-form [aria-invalid="true"]')?.focus();
  }

  private async save(e: Event): Promise<void> {
    e.preventDefault();
    const editing = this.editing;
    if (!editing || this.busy) return;
    this.formError = null;
    const { body, errors, send } = this.prepare(editing);
    this.errors = errors;
    if (Object.keys(errors).length) {
      this.formError = 'Fix the highlighted fields and save again.';
      return this.focusInvalid();
    }
    if (!Object.keys(body).length) {
      this.closeForm(); // nothing changed: nothing to send
      return;
    }
    this.busy = true;
    try {
      const saved = await send();
      this.closeForm();
      this.notice = editing.mode === 'create' ? `Inbound number ${saved.number} created.` : `Inbound number ${saved.number} updated.`;
      await this.load();
    } catch (err) {
      if (err instanceof ApiError) {
        // Problems with a field land on it; the backend's sentence (e.g. 503: LiveKit unreachable) in the banner.
        this.errors = inboundApiErrors(err, parseAddresses(this.form.allowed_addresses));
        this.formError = err.message;
        if (err.code === 'not_found' || err.code === 'bot_not_found') await this.load();
      } else this.formError = 'Could not save the inbound number.';
      await this.focusInvalid();
    } finally {
      this.busy = false;
    }
  }

  private async deleteNumber(): Promise<void> {
    const n = this.deleting;
    if (!n || this.busy) return;
    this.busy = true;
    this.deleteError = null;
    try {
      await api.deleteInboundNumber(n.id);
      this.deleting = null;
      this.notice = `Inbound number ${n.number} deleted.`;
      await this.load();
    } catch (err) {
      this.deleteError = err instanceof ApiError ? err.message : 'Could not delete the inbound number.';
    } finally {
      this.busy = false;
    }
  }

  private renderVariables(bot: BotChoice | undefined) {
    const f = this.form;
    if (!f.bot_id) return nothing;
    if (!bot) {
      return html`<p class="hint note">The bot’s variables could not be loaded; stored values are kept as they are.</p>`;
    }
    if (!bot.variables.length) return html`<p class="hint note" data-testid="inbound-no-variables">This bot declares no variables.</p>`;
    return html`<fieldset>
      <legend>Variables</legend>
      <p class="hint">Every call to this number starts with these values, as a dial-out’s variables.</p>
      ${bot.variables.map((v) =>
        field(
          { id: `inbound-var-${v.name}`, label: v.name, required: v.required, error: this.errors[`variables.${v.name}`], hint: v.description || undefined },
          (a) => html`<input id=${a.id} .value=${f.variables[v.name] ?? ''} maxlength="4000" aria-required=${v.required ? 'true' : 'false'}
            aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @input=${(e: Event) => this.set({ variables: { ...this.form.variables, [v.name]: (e.target as HTMLInputElement).value } }, `variables.${v.name}`)} />`,
        ),
      )}
    </fieldset>`;
  }

  private renderForm() {
    const f = this.form;
    const bot = this.bot(f.bot_id);
    const bots = this.bots ?? [];
    return html`${errorBanner(this.formError)}
      <form id="inbound-form" novalidate autocomplete="off" @submit=${(e: Event) => this.save(e)}>
        ${field(
          { id: 'inbound-number', label: 'Number', error: this.errors.number, required: true, hint: 'The number callers dial, in E.164, e.g. +4930123456789.' },
          (a) => html`<input id=${a.id} class="mono" .value=${f.number} inputmode="tel" spellcheck="false" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} autofocus @input=${(e: Event) => this.set({ number: (e.target as HTMLInputElement).value }, 'number')} />`,
        )}
        ${field({ id: 'inbound-bot', label: 'Bot', error: this.errors.bot_id, required: true, hint: 'The bot that answers. An inactive bot’s calls fail until it is active.' }, (a) =>
          html`<select id=${a.id} aria-required="true" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @change=${(e: Event) => this.set({ bot_id: (e.target as HTMLSelectElement).value }, 'bot_id')}>
            <option value="" .selected=${f.bot_id === ''} disabled>Choose a bot…</option>
            ${bots.map((b) => html`<option value=${b.id} .selected=${b.id === f.bot_id}>${b.name}</option>`)}
            ${f.bot_id && !bot ? html`<option value=${f.bot_id} selected>${f.bot_id} (not found)</option>` : nothing}
          </select>`,
        )}
        ${this.renderVariables(bot)}
        ${field(
          {
            id: 'inbound-addresses',
            label: 'Allowed addresses',
            error: this.errors.allowed_addresses,
            hint: 'Your carrier’s SIP addresses, one IPv4/IPv6 address or CIDR range per line (at most 32). Leave empty to accept calls from any address.',
          },
          (a) => html`<textarea id=${a.id} class="mono" spellcheck="false" .value=${f.allowed_addresses} aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => this.set({ allowed_addresses: (e.target as HTMLTextAreaElement).value }, 'allowed_addresses')}></textarea>`,
        )}
      </form>`;
  }

  private renderShort(items: string[], empty: string) {
    if (!items.length) return html`<span class="hint">${empty}</span>`;
    const more = items.length - SHOWN;
    return html`<ul class="plain-list">
      ${items.slice(0, SHOWN).map((x) => html`<li><code>${x}</code></li>`)}
      ${more > 0 ? html`<li class="hint" title=${items.slice(SHOWN).join(', ')}>and ${more} more</li>` : nothing}
    </ul>`;
  }

  private renderList() {
    if (this.loadError) return errorBanner(this.loadError);
    if (!this.numbers) return html`<p class="loading" role="status">Loading inbound numbers…</p>`;
    if (!this.numbers.length) {
      return html`<section class="panel empty-state" aria-labelledby="inbound-empty-heading" data-testid="inbound-empty">
        <h2 id="inbound-empty-heading">No inbound numbers yet</h2>
        <p>An inbound number is a phone number of yours that a bot answers. Point the number at this platform’s SIP
          address at your carrier, then add it here with the bot that should answer.</p>
        ${this.bots?.length === 0
          ? html`<p>Create a bot first: every inbound number needs one.</p><a class="button primary" href="/bots/new">Create a bot</a>`
          : html`<button class="primary" @click=${() => this.openCreate()}>Add the first number</button>`}
      </section>`;
    }
    return html`<div class="table-wrap"><table aria-label="Inbound numbers">
      <thead><tr>
        <th scope="col">Number</th><th scope="col">Bot</th><th scope="col">Variables</th><th scope="col">Allowed addresses</th>
        <th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>
        ${this.numbers.map((n) => {
          const bot = this.bot(n.bot_id);
          return html`<tr data-inbound-id=${n.id}>
            <td><code>${n.number}</code></td>
            <td>${bot ? html`<a href="/bots/${encodeURIComponent(bot.id)}">${bot.name}</a>` : html`<code>${n.bot_id}</code> <span class="badge badge-bad">Bot not found</span>`}</td>
            <td>${this.renderShort(Object.entries(n.variables).map(([k, v]) => `${k}=${v}`), 'None')}</td>
            <td>${this.renderShort(n.allowed_addresses, 'Any address')}</td>
            <td class="row-actions">
              <button class="small" aria-label="Edit ${n.number}" @click=${() => this.openEdit(n)}>Edit</button>
              <button class="small link-danger" aria-label="Delete ${n.number}" @click=${() => {
                this.deleting = n;
                this.deleteError = null;
              }}>Delete</button>
            </td>
          </tr>`;
        })}
      </tbody>
    </table></div>`;
  }

  override render() {
    const editing = this.editing;
    const d = this.deleting;
    return html`<div class="page-head">
        <div><h1 tabindex="-1">Inbound numbers</h1>
          <p class="subtitle">Phone numbers callers dial, and the bot that answers each.</p></div>
        ${this.numbers?.length ? html`<button class="primary" @click=${() => this.openCreate()}>New inbound number</button>` : nothing}
      </div>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      ${this.renderList()}

      <vp-dialog
        heading=${editing?.mode === 'edit' ? `Edit inbound number ${editing.number.number}` : 'New inbound number'}
        .open=${editing !== null}
        @vp-close=${() => this.closeForm()}
        .content=${editing ? this.renderForm() : nothing}
        .actions=${html`<button type="button" @click=${() => this.closeForm()}>Cancel</button>
          <button class="primary" type="submit" form="inbound-form" ?disabled=${this.busy}>${editing?.mode === 'edit' ? 'Save changes' : 'Create inbound number'}</button>`}
      ></vp-dialog>

      <vp-dialog
        heading="Delete this inbound number?"
        .open=${d !== null}
        @vp-close=${() => (this.deleting = null)}
        .content=${d
          ? html`<p>Calls to <code>${d.number}</code> will no longer reach a bot. This cannot be undone.</p>${errorBanner(this.deleteError)}`
          : nothing}
        .actions=${html`<button @click=${() => (this.deleting = null)} autofocus>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.deleteNumber()}>Delete number</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-inbound-numbers-page', VpInboundNumbersPage);
