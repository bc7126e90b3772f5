// Campaigns: a bot dialling a list of contacts. The list (newest first) with each campaign's bot, status,
// progress bar and counts, refreshed while one of them runs or is paused; and "New campaign", a dialog
// that creates a draft (checked with the shared schema first; answering machine settings of its own or the
// bot's) and leads to its page for the contacts.
import { html, nothing } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import { RETRY_OUTCOMES, WEEKDAYS, type CampaignCreate, type CampaignDetail, type RetryOutcome, type Weekday } from '@voice-platform/schemas/campaigns.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { ResourcePage, type Prepared } from '../components/resource-page.js';
import { errorBanner, field } from '../components/field.js';
import { progressBar } from '../components/progress.js';
import { api, type ApiError } from '../core/api.js';
import {
  amdChoices,
  amdNote,
  campaignApiErrors,
  campaignCreateBody,
  countsSummary,
  browserTimeZone,
  DAY_LABELS,
  emptyCampaignForm,
  isLive,
  newWindow,
  RETRY_LABELS,
  type CampaignForm,
  type WindowForm,
} from '../core/campaignForm.js';
import { setFlash } from '../core/flash.js';
import { formatDateTime } from '../core/format.js';
import { navigate } from '../core/router.js';
import { Poller } from '../core/poller.js';

/** How often the list is read again while a campaign on it runs or is paused. */
const CAMPAIGNS_REFRESH_MS = 5000;

/** Time zone names for the picker's suggestions (the field takes any IANA name). */
const ZONES: string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return [];
  }
})();

// Each listed campaign is read with its counts (the list answer has none); the dialog only creates.
export class VpCampaignsPage extends ResourcePage<CampaignDetail, CampaignForm, CampaignCreate, CampaignDetail> {
  static override properties = {
    bots: { state: true },
    callerIds: { state: true },
  };
  declare bots: Bot[];
  /** Numbers of the outbound trunks: the caller IDs a campaign may use. */
  declare callerIds: string[];
  /** Pages of the list shown (1 + each "Show more"): the refresh reads as many again. */
  private pages = 1;
  private readonly poller = new Poller(() => this.load(), CAMPAIGNS_REFRESH_MS);

  protected override readonly formId = 'campaign-form';
  protected override readonly invalidText = 'Fix the highlighted fields and create again.';
  /** A new draft's page is where its contacts go: the page leaves the list. */
  protected override readonly reloadAfterSave = false;
  protected readonly failed = { load: 'Could not load the campaigns.', save: 'Could not create the campaign.', delete: '' };

  constructor() {
    super();
    this.bots = [];
    this.callerIds = [];
  }

  override connectedCallback(): void {
    super.connectedCallback();
    api.listBots().then(
      (r) => (this.bots = r.items),
      () => undefined, // the bot column shows ids then; the list request reports errors
    );
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.poller.stop();
  }

  protected override emptyForm(): CampaignForm {
    return emptyCampaignForm(browserTimeZone());
  }

  /** The pages loaded so far (one more with `more`), each campaign with its counts. */
  protected async fetchAll(more: boolean): Promise<void> {
    const pages = more ? this.pages + 1 : this.pages;
    const items: CampaignDetail[] = [];
    let cursor: string | undefined;
    let next: string | null = null;
    for (let i = 0; i < pages; i++) {
      const page = await api.listCampaigns({ cursor });
      items.push(...(await Promise.all(page.items.map((c) => api.getCampaign(c.id)))));
      next = page.next_cursor;
      if (!next) break;
      cursor = next;
    }
    this.pages = pages;
    this.items = items;
    this.nextCursor = next;
    if (items.some((c) => isLive(c.status))) this.poller.start();
    else this.poller.stop();
  }

  private botName(id: string): string {
    return this.bots.find((b) => b.id === id)?.name ?? id;
  }

  protected override openCreate(): void {
    const active = this.bots.filter((b) => b.active);
    this.openForm({ mode: 'create' }, emptyCampaignForm(browserTimeZone(), active.length === 1 ? active[0]!.id : ''));
    api.listTrunks().then(
      (r) => (this.callerIds = r.items.flatMap((t) => t.numbers)),
      () => undefined, // suggestions only
    );
  }

  protected override prepare(): Prepared<CampaignCreate, CampaignDetail> {
    const { body, errors } = campaignCreateBody(this.form);
    return { body, errors, send: () => api.createCampaign(body) };
  }

  protected override saved(created: CampaignDetail): void {
    setFlash(`Campaign ${created.name} created as a draft. Add its contacts, then start it.`);
    navigate(`/campaigns/${encodeURIComponent(created.id)}`);
  }

  protected override saveRefused(err: ApiError): void {
    this.errors = campaignApiErrors(err);
    this.formError = err.message;
  }

  private setWindow(i: number, patch: Partial<WindowForm>, errorKey: string): void {
    this.set({ windows: this.form.windows.map((w, j) => (j === i ? { ...w, ...patch } : w)) }, `windows.${i}.${errorKey}`);
  }

  /** Drops window `i`; the windows' errors go with it (the later ones would name the wrong window). */
  private removeWindow(i: number): void {
    this.form = { ...this.form, windows: this.form.windows.filter((_, j) => j !== i) };
    this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => !k.startsWith('windows.')));
  }

  private input(id: string, key: string, label: string, value: string, onInput: (v: string) => void, opts: { hint?: string; required?: boolean; type?: string; step?: string; list?: string } = {}) {
    return field({ id, label, error: this.errors[key], hint: opts.hint, required: opts.required }, (a) =>
      html`<input id=${a.id} type=${opts.type ?? 'text'} step=${opts.step ?? nothing} list=${opts.list ?? nothing} .value=${value} spellcheck="false" aria-required=${opts.required ? 'true' : nothing}
        aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${(e: Event) => onInput((e.target as HTMLInputElement).value)} />`,
    );
  }

  private renderWindow(w: WindowForm, i: number) {
    const daysError = this.errors[`windows.${i}.days`];
    return html`<fieldset class="row-item" aria-label="Window ${i + 1}">
      <div class="page-head"><strong>Window ${i + 1}</strong>
        <button type="button" class="small link-danger" aria-label="Remove window ${i + 1}" @click=${() => this.removeWindow(i)}>Remove</button></div>
      <fieldset class="days" aria-describedby=${daysError ? `campaign-window-${i}-days-error` : nothing}>
        <legend>Days</legend>
        ${WEEKDAYS.map(
          (d: Weekday) => html`<label><input type="checkbox" .checked=${w.days.includes(d)}
            @change=${(e: Event) => this.setWindow(i, { days: (e.target as HTMLInputElement).checked ? [...w.days, d] : w.days.filter((x) => x !== d) }, 'days')} />${DAY_LABELS[d]}</label>`,
        )}
      </fieldset>
      ${daysError ? html`<p class="error-text" id="campaign-window-${i}-days-error">${daysError}</p>` : nothing}
      <div class="inline-form">
        ${this.input(`campaign-window-${i}-start`, `windows.${i}.start`, 'Opens at', w.start, (v) => this.setWindow(i, { start: v }, 'start'), { type: 'time' })}
        ${this.input(`campaign-window-${i}-end`, `windows.${i}.end`, 'Closes at', w.end, (v) => this.setWindow(i, { end: v }, 'end'), { type: 'time' })}
      </div>
    </fieldset>`;
  }

  /** A select of the form; `key` is the error key. */
  private choice<T extends string>(id: string, key: string, label: string, value: T, options: ReadonlyArray<readonly [T, string]>, onChange: (v: T) => void, hint?: string) {
    return field({ id, label, error: this.errors[key], hint }, (a) =>
      html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${(e: Event) => onChange((e.target as HTMLSelectElement).value as T)}>
        ${options.map(([v, l]) => html`<option value=${v} .selected=${v === value}>${l}</option>`)}
      </select>`,
    );
  }

  /** The campaign's answering machine override (docs/design.md §10): each of the two follows the bot unless chosen here. */
  private renderAnsweringMachine(f: CampaignForm) {
    const bot = this.bots.find((b) => b.id === f.bot_id);
    const choices = amdChoices(bot);
    const note = amdNote(f, bot);
    return html`<fieldset>
      <legend>Answering machines</legend>
      <div class="inline-form">
        ${this.choice('campaign-amd-detect', 'answering_machine.detect', 'Detect answering machines', f.amd_detect, choices.detect, (v) => this.set({ amd_detect: v }, 'answering_machine.detect'))}
        ${this.choice('campaign-amd-on-machine', 'answering_machine.on_machine', 'When a machine answers', f.amd_on_machine, choices.onMachine, (v) => this.set({ amd_on_machine: v }, 'answering_machine.on_machine'))}
      </div>
      <p class="hint" aria-live="polite" data-testid="campaign-amd-note">${note ?? 'A message left is the bot’s own message for machines.'}</p>
    </fieldset>`;
  }

  private renderForm() {
    const f = this.form;
    return html`${errorBanner(this.formError)}
      <form id=${this.formId} novalidate autocomplete="off" @submit=${(e: Event) => this.save(e)}>
        ${this.input('campaign-name', 'name', 'Name', f.name, (v) => this.set({ name: v }, 'name'), { required: true })}
        ${field({ id: 'campaign-bot', label: 'Bot', error: this.errors.bot_id, required: true, hint: 'The bot that talks to each contact; the CSV columns feed its variables.' }, (a) =>
          html`<select id=${a.id} aria-required="true" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @change=${(e: Event) => this.set({ bot_id: (e.target as HTMLSelectElement).value }, 'bot_id')}>
            <option value="" .selected=${f.bot_id === ''} disabled>Choose a bot…</option>
            ${this.bots.map((b) => html`<option value=${b.id} .selected=${b.id === f.bot_id}>${b.name}${b.active ? '' : ' (inactive)'}</option>`)}
          </select>`,
        )}
        ${this.input('campaign-from', 'from_number', 'Caller ID', f.from_number, (v) => this.set({ from_number: v }, 'from_number'), {
          hint: "Optional: one of an outbound trunk's numbers. Empty: the default trunk's.",
          list: 'campaign-caller-ids',
        })}
        <datalist id="campaign-caller-ids">${this.callerIds.map((n) => html`<option value=${n}></option>`)}</datalist>
        ${this.input('campaign-region', 'default_region', 'Region of national numbers', f.default_region, (v) => this.set({ default_region: v }, 'default_region'), {
          hint: "Optional: the country (two letters, e.g. US) a contact number without + and country code is read in. Empty: the caller ID's country.",
        })}
        ${this.input('campaign-timezone', 'timezone', 'Time zone', f.timezone, (v) => this.set({ timezone: v }, 'timezone'), {
          required: true,
          hint: 'IANA name, e.g. Europe/Berlin: the calling windows are in this zone for contacts without a time zone of their own.',
          list: 'campaign-zones',
        })}
        <datalist id="campaign-zones">${ZONES.map((z) => html`<option value=${z}></option>`)}</datalist>
        <fieldset>
          <legend>Calling windows</legend>
          ${f.windows.length ? repeat(f.windows, (_, i) => i, (w, i) => this.renderWindow(w, i)) : html`<p class="hint">No windows: contacts may be called at any time.</p>`}
          <button type="button" class="small" @click=${() => this.set({ windows: [...f.windows, newWindow()] }, 'windows')}>Add window</button>
        </fieldset>
        <div class="inline-form">
          ${this.input('campaign-max-concurrency', 'max_concurrency', 'Calls at once, at most', f.max_concurrency, (v) => this.set({ max_concurrency: v }, 'max_concurrency'), { type: 'number', required: true })}
          ${this.input('campaign-cps', 'calls_per_second', 'Dials per second, at most', f.calls_per_second, (v) => this.set({ calls_per_second: v }, 'calls_per_second'), { type: 'number', step: 'any', required: true, hint: 'Up to 10; below 1 spaces the dials out (0.5: one every 2 s).' })}
        </div>
        ${this.renderAnsweringMachine(f)}
        <fieldset>
          <legend>Retries</legend>
          <div class="inline-form">
            ${this.input('campaign-max-attempts', 'retry.max_attempts', 'Dials per contact, at most', f.max_attempts, (v) => this.set({ max_attempts: v }, 'retry.max_attempts'), { type: 'number', required: true, hint: '1 to 10, the first dial included.' })}
            ${this.input('campaign-delay', 'retry.delay_seconds', 'Wait before a retry (seconds)', f.delay_seconds, (v) => this.set({ delay_seconds: v }, 'retry.delay_seconds'), { type: 'number', required: true, hint: 'At least 30.' })}
          </div>
          <p class="hint">Retry when the call ends:</p>
          ${RETRY_OUTCOMES.map(
            (o: RetryOutcome) => html`<div class="field checkbox">
              <input type="checkbox" id="campaign-retry-${o}" .checked=${f.retry_on.includes(o)}
                @change=${(e: Event) => this.set({ retry_on: (e.target as HTMLInputElement).checked ? [...f.retry_on, o] : f.retry_on.filter((x) => x !== o) }, 'retry.on')} />
              <label for="campaign-retry-${o}">${RETRY_LABELS[o]}</label>
            </div>`,
          )}
        </fieldset>
      </form>`;
  }

  private renderList() {
    const state = this.renderListState('Loading campaigns…');
    if (state || !this.items) return state;
    if (!this.items.length) {
      return this.renderEmptyState(
        'campaigns',
        'No campaigns yet',
        [
          html`A campaign has a bot call a list of contacts from a CSV file, at the pace, in the calling windows and with the
            retries you choose. Numbers on the do-not-call list are skipped.`,
        ],
        this.firstButton('Create the first campaign', 'POST /api/v1/campaigns'),
      );
    }
    return html`<div class="table-wrap"><table aria-label="Campaigns">
        <thead><tr><th scope="col">Name</th><th scope="col">Bot</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Contacts</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${repeat(
            this.items,
            (c) => c.id,
            (c) => html`<tr data-campaign-id=${c.id}>
              <td><a href="/campaigns/${encodeURIComponent(c.id)}">${c.name}</a></td>
              <td><a href="/bots/${encodeURIComponent(c.bot_id)}">${this.botName(c.bot_id)}</a></td>
              <td><vp-status-badge status=${c.status}></vp-status-badge></td>
              <td>${progressBar(c.counts, `Progress of ${c.name}`)}</td>
              <td data-testid="counts-summary">${countsSummary(c.counts)}</td>
              <td>${formatDateTime(c.created_at)}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      ${this.renderMore()}`;
  }

  override render() {
    return html`${this.renderHead('Campaigns', 'A bot calling a list of contacts, paced, in calling windows, with retries.', 'New campaign', 'POST /api/v1/campaigns')}
      ${this.renderList()}
      ${this.renderFormDialog('New campaign', 'Create draft', () => this.renderForm())}`;
  }
}
customElements.define('vp-campaigns-page', VpCampaignsPage);
