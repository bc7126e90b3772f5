// Inbound numbers: which bot answers calls to a number of ours. List, create and edit (in a dialog: the
// number, a bot picker, the chosen bot's variables, the carrier addresses allowed to call), delete
// (confirmed). The backend mirrors each number into LiveKit; its 503 (LiveKit unreachable) shows as is.
import { html, nothing } from 'lit';
import type { InboundNumber } from '@voice-platform/schemas/inbound.js';
import { ResourcePage, type Editing as EditingOf, type Prepared } from '../components/resource-page.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import {
  emptyInboundForm,
  inboundApiErrors,
  inboundCreateBody,
  inboundToForm,
  inboundUpdateBody,
  parseAddresses,
  type BotChoice,
  type InboundForm,
} from '../core/inboundForm.js';

/** How many addresses or variables a row shows before "and N more". */
const SHOWN = 3;

type Editing = EditingOf<InboundNumber>;

export class VpInboundNumbersPage extends ResourcePage<InboundNumber, InboundForm> {
  static override properties = {
    bots: { state: true },
  };
  /** The bots to pick from; null while loading or when they could not be loaded. */
  declare bots: BotChoice[] | null;

  protected override readonly formId = 'inbound-form';
  protected readonly failed = { load: 'Could not load the inbound numbers.', save: 'Could not save the inbound number.', delete: 'Could not delete the inbound number.' };

  constructor() {
    super();
    this.bots = null;
  }

  protected override emptyForm(): InboundForm {
    return emptyInboundForm();
  }

  protected async fetchAll(): Promise<void> {
    const [numbers, bots] = await Promise.all([api.listInboundNumbers(), api.listBots()]);
    this.items = numbers.items;
    this.bots = bots.items;
  }

  private bot(id: string): BotChoice | undefined {
    return this.bots?.find((b) => b.id === id);
  }

  protected override openCreate(): void {
    // One bot: nothing to choose.
    this.openForm({ mode: 'create' }, emptyInboundForm(this.bots?.length === 1 ? this.bots[0]!.id : ''));
  }

  private openEdit(n: InboundNumber): void {
    this.openForm({ mode: 'edit', item: n }, inboundToForm(n));
  }

  protected override prepare(editing: Editing): Prepared<object, InboundNumber> {
    const bot = this.bot(this.form.bot_id);
    if (editing.mode === 'create') {
      const { body, errors } = inboundCreateBody(this.form, bot);
      return { body, errors, send: () => api.createInboundNumber(body) };
    }
    const { body, errors } = inboundUpdateBody(editing.item, this.form, bot);
    return { body, errors, send: () => api.updateInboundNumber(editing.item.id, body) };
  }

  protected override saved(saved: InboundNumber, editing: Editing): void {
    this.notice = editing.mode === 'create' ? `Inbound number ${saved.number} created.` : `Inbound number ${saved.number} updated.`;
  }

  protected override async saveRefused(err: ApiError): Promise<void> {
    // Problems with a field land on it; the backend's sentence (e.g. 503: LiveKit unreachable) in the banner.
    this.errors = inboundApiErrors(err, parseAddresses(this.form.allowed_addresses));
    this.formError = err.message;
    if (err.code === 'not_found' || err.code === 'bot_not_found') await this.load();
  }

  protected override removeItem(n: InboundNumber): Promise<void> {
    return api.deleteInboundNumber(n.id);
  }

  protected override deleted(n: InboundNumber): void {
    this.notice = `Inbound number ${n.number} deleted.`;
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
          { id: 'inbound-number', label: 'Number', error: this.errors.number, required: true, hint: 'The number callers dial, in international format (+ and the country code; spaces and punctuation are fine), e.g. +49 30 123456789. Stored as E.164.' },
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
    const state = this.renderListState('Loading inbound numbers…');
    if (state || !this.items) return state;
    if (!this.items.length) {
      return this.renderEmptyState(
        'inbound',
        'No inbound numbers yet',
        [
          html`An inbound number is a phone number of yours that a bot answers. Point the number at this platform’s SIP
            address at your carrier, then add it here with the bot that should answer.`,
        ],
        this.bots?.length === 0
          ? html`<p>Create a bot first: every inbound number needs one.</p><a class="button primary" href="/bots/new">Create a bot</a>`
          : this.firstButton('Add the first number', 'POST /api/v1/sip/inbound-numbers'),
      );
    }
    return html`<div class="table-wrap"><table aria-label="Inbound numbers">
      <thead><tr>
        <th scope="col">Number</th><th scope="col">Bot</th><th scope="col">Variables</th><th scope="col">Allowed addresses</th>
        <th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>
        ${this.items.map((n) => {
          const bot = this.bot(n.bot_id);
          return html`<tr data-inbound-id=${n.id}>
            <td><code>${n.number}</code></td>
            <td>${bot ? html`<a href="/bots/${encodeURIComponent(bot.id)}">${bot.name}</a>` : html`<code>${n.bot_id}</code> <span class="badge badge-bad">Bot not found</span>`}</td>
            <td>${this.renderShort(Object.entries(n.variables).map(([k, v]) => `${k}=${v}`), 'None')}</td>
            <td>${this.renderShort(n.allowed_addresses, 'Any address')}</td>
            <td class="row-actions">
              ${this.may('PATCH /api/v1/sip/inbound-numbers/{id}') ? html`<button class="small" aria-label="Edit ${n.number}" @click=${() => this.openEdit(n)}>Edit</button>` : nothing}
              ${this.may('DELETE /api/v1/sip/inbound-numbers/{id}') ? this.renderDeleteButton(n, n.number) : nothing}
            </td>
          </tr>`;
        })}
      </tbody>
    </table></div>`;
  }

  override render() {
    const editing = this.editing;
    return html`${this.renderHead('Inbound numbers', 'Phone numbers callers dial, and the bot that answers each.', 'New inbound number', 'POST /api/v1/sip/inbound-numbers')}
      ${this.renderList()}

      ${this.renderFormDialog(editing?.mode === 'edit' ? `Edit inbound number ${editing.item.number}` : 'New inbound number', 'Create inbound number', () => this.renderForm())}

      ${this.renderDeleteDialog(
        'Delete this inbound number?',
        'Delete number',
        (d) => html`<p>Calls to <code>${d.number}</code> will no longer reach a bot. This cannot be undone.</p>${errorBanner(this.deleteError)}`,
      )}`;
  }
}
customElements.define('vp-inbound-numbers-page', VpInboundNumbersPage);
