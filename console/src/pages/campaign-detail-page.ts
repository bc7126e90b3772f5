// One campaign: its status with the actions that status allows (start, pause, resume, cancel after
// confirming), the progress bar and counts by outcome, read again every few seconds while it runs or is
// paused (not once it is done, nor after the page is left), its settings, the contacts with their calls,
// and the CSV upload: a file previewed, its columns mapped to the phone number, time zone and the bot's
// variables (same-named ones mapped already), uploaded, and the backend's per-row report. "Download results
// (CSV)" saves the backend's export of every contact with its last call (GET …/contacts.csv).
import { html, nothing } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import { CONTACT_STATUSES, type CampaignDetail, type Contact } from '@voice-platform/schemas/campaigns.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { progressBar } from '../components/progress.js';
import { api, ApiError } from '../core/api.js';
import { attachmentFilename, saveBlob } from '../core/download.js';
import { amdOverrideSummary, campaignActions, COUNT_LABELS, DAY_LABELS, isLive, RETRY_LABELS, type CampaignAction } from '../core/campaignForm.js';
import {
  autoMap,
  CsvError,
  describeProblem,
  mappingErrors,
  mergeReport,
  prepareUpload,
  readCsvTable,
  reportSummary,
  type CsvMapping,
  type CsvTable,
  type UploadReport,
} from '../core/campaignCsv.js';
import { refetchPages } from '../core/callPages.js';
import { takeFlash } from '../core/flash.js';
import { formatDateTime } from '../core/format.js';
import { Poller } from '../core/poller.js';
import type { FieldErrors } from '../core/validation.js';

/** How often a running or paused campaign is read again. */
const CAMPAIGN_REFRESH_MS = 2000;
/** Rows of the chosen file shown before the upload. */
const PREVIEW_ROWS = 5;
/** A file larger than this is not read (the backend takes at most 1 MiB per upload; larger files go in parts). */
const MAX_FILE_BYTES = 20 * 1024 * 1024;

const ACTION_LABELS: Record<CampaignAction, string> = { start: 'Start', pause: 'Pause', resume: 'Resume', cancel: 'Cancel campaign' };
const ACTION_DONE: Record<CampaignAction, string> = {
  start: 'Campaign started: contacts are dialled as the pace and windows allow.',
  pause: 'Campaign paused: no new dials; calls in progress finish.',
  resume: 'Campaign resumed.',
  cancel: 'Campaign canceled: contacts not dialled yet are canceled; calls in progress finish.',
};

export class VpCampaignDetailPage extends LightElement {
  static override properties = {
    campaignId: { attribute: false },
    campaign: { state: true },
    bot: { state: true },
    contacts: { state: true },
    contactsNext: { state: true },
    loadError: { state: true },
    notice: { state: true },
    actionError: { state: true },
    busy: { state: true },
    confirmCancel: { state: true },
    fileName: { state: true },
    table: { state: true },
    mapping: { state: true },
    mapErrors: { state: true },
    csvError: { state: true },
    uploading: { state: true },
    report: { state: true },
    downloading: { state: true },
    downloadError: { state: true },
  };
  declare campaignId: string;
  declare campaign: CampaignDetail | null;
  declare bot: Bot | null;
  declare contacts: Contact[] | null;
  declare contactsNext: string | null;
  declare loadError: string | null;
  declare notice: string | null;
  declare actionError: string | null;
  declare busy: boolean;
  declare confirmCancel: boolean;
  declare fileName: string | null;
  declare table: CsvTable | null;
  declare mapping: CsvMapping | null;
  declare mapErrors: FieldErrors;
  declare csvError: string | null;
  declare uploading: boolean;
  declare report: UploadReport | null;
  declare downloading: boolean;
  declare downloadError: string | null;
  private contactPages = 1;
  /** Bumped by every read and every action: an older read answering late is dropped (it would show a stale status). */
  private seq = 0;
  private readonly poller = new Poller(() => this.load(), CAMPAIGN_REFRESH_MS);

  constructor() {
    super();
    this.campaignId = '';
    this.campaign = null;
    this.bot = null;
    this.contacts = null;
    this.contactsNext = null;
    this.loadError = null;
    this.notice = takeFlash();
    this.actionError = null;
    this.busy = false;
    this.confirmCancel = false;
    this.fileName = null;
    this.table = null;
    this.mapping = null;
    this.mapErrors = {};
    this.csvError = null;
    this.uploading = false;
    this.report = null;
    this.downloading = false;
    this.downloadError = null;
  }

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('campaignId') && this.campaignId) void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.poller.stop();
  }

  /** The campaign with its counts and the contacts pages shown; polling follows the status. */
  private async load(): Promise<void> {
    const id = this.campaignId;
    const mine = ++this.seq;
    try {
      const [campaign, page] = await Promise.all([
        api.getCampaign(id),
        refetchPages((cursor) => api.listContacts(id, { cursor }), this.contactPages, (c) => c.id),
      ]);
      if (mine !== this.seq || id !== this.campaignId) return;
      this.campaign = campaign;
      this.contacts = page.items;
      this.contactsNext = page.next_cursor;
      this.loadError = null;
      if (this.bot?.id !== campaign.bot_id) {
        this.bot = await api.getBot(campaign.bot_id).catch(() => null);
      }
      if (isLive(campaign.status) && this.isConnected) this.poller.start();
      else this.poller.stop();
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the campaign.';
    }
  }

  private async moreContacts(): Promise<void> {
    if (!this.contactsNext) return;
    try {
      const page = await api.listContacts(this.campaignId, { cursor: this.contactsNext });
      this.contacts = [...(this.contacts ?? []), ...page.items];
      this.contactsNext = page.next_cursor;
      this.contactPages++;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the contacts.';
    }
  }

  private async act(action: CampaignAction): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.actionError = null;
    this.notice = null;
    try {
      const changed = await api.campaignAction(this.campaignId, action);
      this.seq++;
      this.campaign = changed;
      this.confirmCancel = false;
      this.notice = ACTION_DONE[action];
    } catch (err) {
      this.confirmCancel = false;
      this.actionError = err instanceof ApiError ? err.message : `Could not ${action} the campaign.`;
    } finally {
      this.busy = false;
    }
    await this.load();
  }

  /** Saves the backend's CSV of every contact (fetched with the admin token: a plain link could not send it). */
  private async downloadResults(): Promise<void> {
    if (this.downloading) return;
    const id = this.campaignId;
    this.downloading = true;
    this.downloadError = null;
    try {
      const { blob, headers } = await api.contactsCsv(id);
      saveBlob(blob, attachmentFilename(headers.get('content-disposition'), `campaign-${id}-contacts.csv`));
    } catch (err) {
      this.downloadError = err instanceof ApiError ? err.message : 'Could not download the results.';
    } finally {
      this.downloading = false;
    }
  }

  private variableNames(): string[] {
    return (this.bot?.variables ?? []).map((v) => v.name);
  }

  private async chooseFile(e: Event): Promise<void> {
    const file = (e.target as HTMLInputElement).files?.[0];
    this.table = null;
    this.mapping = null;
    this.mapErrors = {};
    this.csvError = null;
    this.report = null;
    this.fileName = file?.name ?? null;
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      this.csvError = `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; split it into smaller files.`;
      return;
    }
    try {
      const table = readCsvTable(await file.text());
      this.table = table;
      this.mapping = autoMap(table.header, this.variableNames());
    } catch (err) {
      this.csvError = err instanceof CsvError ? err.message : 'Could not read the file.';
    }
  }

  private setMapping(patch: Partial<CsvMapping>, errorKey: string): void {
    if (!this.mapping) return;
    this.mapping = { ...this.mapping, ...patch };
    if (this.mapErrors[errorKey]) this.mapErrors = Object.fromEntries(Object.entries(this.mapErrors).filter(([k]) => k !== errorKey));
  }

  private async upload(e: Event): Promise<void> {
    e.preventDefault();
    const table = this.table;
    const mapping = this.mapping;
    if (!table || !mapping || this.uploading) return;
    this.mapErrors = mappingErrors(mapping, this.bot?.variables ?? []);
    if (Object.keys(this.mapErrors).length) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('#csv-mapping [aria-invalid="true"]')?.focus();
      return;
    }
    this.uploading = true;
    this.csvError = null;
    const prepared = prepareUpload(table, mapping);
    const results = [];
    try {
      for (const chunk of prepared.chunks) results.push(await api.uploadContactsCsv(this.campaignId, chunk.csv));
      this.table = null;
      this.mapping = null;
      this.fileName = null;
      const input = this.querySelector<HTMLInputElement>('#csv-file');
      if (input) input.value = '';
    } catch (err) {
      const done = results.length ? ` The first ${results.length} of ${prepared.chunks.length} parts were uploaded; their report is below.` : '';
      this.csvError = `${err instanceof ApiError ? err.message : 'Could not upload the contacts.'}${done}`;
    } finally {
      this.uploading = false;
    }
    if (results.length || !prepared.chunks.length) this.report = mergeReport(prepared, results);
    await this.load();
  }

  private columnSelect(id: string, label: string, key: string, value: number | null, onChange: (v: number | null) => void, opts: { required?: boolean; none: string; hint?: string }) {
    const header = this.table?.header ?? [];
    return field({ id, label, error: this.mapErrors[key], required: opts.required, hint: opts.hint }, (a) =>
      html`<select id=${a.id} aria-required=${opts.required ? 'true' : nothing} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
        @change=${(e: Event) => {
          const v = (e.target as HTMLSelectElement).value;
          onChange(v === '' ? null : Number(v));
        }}>
        <option value="" .selected=${value === null}>${opts.none}</option>
        ${header.map((h, i) => html`<option value=${String(i)} .selected=${value === i}>${h || `Column ${i + 1}`}</option>`)}
      </select>`,
    );
  }

  private renderUpload() {
    const c = this.campaign!;
    if (c.status === 'completed' || c.status === 'canceled') return nothing;
    const table = this.table;
    const mapping = this.mapping;
    const vars = this.bot?.variables ?? [];
    return html`<section class="panel" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Add contacts from a CSV file</h2>
      <p class="hint upload-intro">The first line names the columns. Choose which column holds the phone number (E.164; spaces, dashes and
        parentheses are removed), optionally each contact's time zone, and which column feeds each of the bot's variables;
        other columns are not uploaded. Numbers already in the campaign are counted as duplicates.</p>
      ${field({ id: 'csv-file', label: 'CSV file', error: this.csvError ?? undefined }, (a) =>
        html`<input id=${a.id} type="file" accept=".csv,text/csv" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${(e: Event) => this.chooseFile(e)} />`,
      )}
      ${table && mapping
        ? html`<h3>Preview: the first ${Math.min(PREVIEW_ROWS, table.rows.length)} of ${table.rows.length} ${table.rows.length === 1 ? 'row' : 'rows'} of ${this.fileName}</h3>
            <div class="table-wrap"><table class="csv-preview" aria-label="Preview of the file">
              <thead><tr><th scope="col">Line</th>${table.header.map((h, i) => html`<th scope="col">${h || `Column ${i + 1}`}</th>`)}</tr></thead>
              <tbody>${table.rows.slice(0, PREVIEW_ROWS).map((r) => html`<tr><td>${r.line}</td>${table.header.map((_, i) => html`<td>${r.cells[i] ?? ''}</td>`)}</tr>`)}</tbody>
            </table></div>
            <form id="csv-mapping" novalidate @submit=${(e: Event) => this.upload(e)}>
              <h3>Columns</h3>
              <div class="mapping">
                ${this.columnSelect('map-phone', 'Phone number', 'phone', mapping.phone, (v) => this.setMapping({ phone: v }, 'phone'), { required: true, none: 'Choose a column…' })}
                ${this.columnSelect('map-timezone', 'Time zone', 'timezone', mapping.timezone, (v) => this.setMapping({ timezone: v }, 'timezone'), { none: `None: the campaign's (${c.timezone})` })}
                ${vars.map((v) =>
                  this.columnSelect(`map-var-${v.name}`, `Variable ${v.name}`, `variables.${v.name}`, mapping.variables[v.name] ?? null, (col) => this.setMapping({ variables: { ...mapping.variables, [v.name]: col } }, `variables.${v.name}`), {
                    required: v.required,
                    none: 'Not mapped',
                    hint: v.description || undefined,
                  }),
                )}
              </div>
              ${vars.length ? nothing : html`<p class="hint">The bot declares no variables: only the phone numbers (and time zones) are uploaded.</p>`}
              <button class="primary" type="submit" ?disabled=${this.uploading}>${this.uploading ? 'Uploading…' : `Upload ${table.rows.length} ${table.rows.length === 1 ? 'contact' : 'contacts'}`}</button>
            </form>`
        : nothing}
      ${this.renderReport()}
    </section>`;
  }

  private renderReport() {
    const r = this.report;
    if (!r) return nothing;
    return html`<div data-testid="upload-report">
      <div class="banner ${r.rejected.length ? 'banner-warn' : 'banner-ok'}" role="status" data-testid="upload-summary">${reportSummary(r)}</div>
      ${r.rejected.length
        ? html`<div class="table-wrap"><table aria-label="Rejected rows">
            <thead><tr><th scope="col">Line</th><th scope="col">Number</th><th scope="col">Field</th><th scope="col">Problem</th></tr></thead>
            <tbody>${r.rejected.map((p) => {
              const d = describeProblem(p);
              return html`<tr data-line=${p.line}><td>${p.line}</td><td class="mono">${p.to_number}</td><td>${d.field}</td><td>${d.problem}</td></tr>`;
            })}</tbody>
          </table></div>`
        : nothing}
    </div>`;
  }

  private renderContacts() {
    const list = this.contacts;
    if (!list) return nothing;
    return html`<section class="panel" aria-labelledby="contacts-heading">
      <div class="page-head">
        <h2 id="contacts-heading">Contacts</h2>
        ${list.length
          ? html`<button class="small" ?disabled=${this.downloading} @click=${() => this.downloadResults()} title="Every contact with its last call's outcome, answering machine detection and variables">
              ${this.downloading ? 'Preparing the CSV…' : 'Download results (CSV)'}
            </button>`
          : nothing}
      </div>
      ${errorBanner(this.downloadError)}
      ${!list.length
        ? html`<p class="hint" data-testid="contacts-empty">No contacts yet.</p>`
        : html`<div class="table-wrap"><table aria-label="Contacts">
            <thead><tr><th scope="col">Phone</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Calls</th><th scope="col">Next attempt</th></tr></thead>
            <tbody>
              ${repeat(
                list,
                (k) => k.id,
                (k) => html`<tr data-number=${k.to_number}>
                  <td class="mono">${k.to_number}</td>
                  <td><vp-status-badge status=${k.status}></vp-status-badge>${k.error ? html` <span class="hint">${k.error}</span>` : nothing}</td>
                  <td data-testid="attempts">${k.attempts.length}</td>
                  <td>${k.attempts.length ? html`<ul class="plain-list">${k.attempts.map((a) => html`<li><a class="mono" href="/calls/${encodeURIComponent(a.call_id)}">${a.call_id}</a></li>`)}</ul>` : '—'}</td>
                  <td>${formatDateTime(k.next_attempt_at)}</td>
                </tr>`,
              )}
            </tbody>
          </table></div>
          ${this.contactsNext ? html`<button class="small" @click=${() => this.moreContacts()}>Show more contacts</button>` : nothing}`}
    </section>`;
  }

  private renderSettings(c: CampaignDetail) {
    return html`<section class="panel" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <dl class="props">
        <dt>Bot</dt><dd><a href="/bots/${encodeURIComponent(c.bot_id)}">${this.bot?.name ?? c.bot_id}</a></dd>
        <dt>Caller ID</dt><dd>${c.from_number ? html`<span class="mono">${c.from_number}</span>` : "The default trunk's"}</dd>
        <dt>National numbers read in</dt><dd data-testid="campaign-region">${c.default_region ?? "The caller ID's country"}</dd>
        <dt>Time zone</dt><dd>${c.timezone}</dd>
        <dt>Calling windows</dt><dd>${c.windows.length
          ? html`<ul class="plain-list">${c.windows.map((w) => html`<li>${w.days.map((d) => DAY_LABELS[d]).join(', ')} ${w.start}–${w.end}</li>`)}</ul>`
          : 'Any time'}</dd>
        <dt>Pace</dt><dd>At most ${c.max_concurrency} ${c.max_concurrency === 1 ? 'call' : 'calls'} at once, ${c.calls_per_second} ${c.calls_per_second === 1 ? 'dial' : 'dials'} per second</dd>
        <dt>Retries</dt><dd>${c.retry.on.length && c.retry.max_attempts > 1
          ? `Up to ${c.retry.max_attempts} dials, ${c.retry.delay_seconds} s apart, when: ${c.retry.on.map((o) => RETRY_LABELS[o].toLowerCase()).join(', ')}`
          : 'None: one dial per contact'}</dd>
        <dt>Answering machines</dt><dd data-testid="campaign-amd">${amdOverrideSummary(c.answering_machine)}</dd>
        <dt>Created</dt><dd>${formatDateTime(c.created_at)}</dd>
        <dt>Started</dt><dd>${formatDateTime(c.started_at)}</dd>
        ${c.completed_at ? html`<dt>Completed</dt><dd>${formatDateTime(c.completed_at)}</dd>` : nothing}
        ${c.canceled_at ? html`<dt>Canceled</dt><dd>${formatDateTime(c.canceled_at)}</dd>` : nothing}
      </dl>
    </section>`;
  }

  override render() {
    const c = this.campaign;
    const total = c ? CONTACT_STATUSES.reduce((n, s) => n + c.counts[s], 0) : 0;
    return html`<p><a href="/campaigns">← All campaigns</a></p>
      <div class="page-head">
        <div><h1 tabindex="-1">${c ? `Campaign ${c.name}` : 'Campaign'}</h1>
          ${c ? html`<p class="subtitle">Status: <vp-status-badge status=${c.status} data-testid="campaign-status"></vp-status-badge></p>` : nothing}</div>
        ${c
          ? html`<div class="form-actions">
              ${campaignActions(c.status).map((a) =>
                a === 'cancel'
                  ? html`<button class="link-danger" ?disabled=${this.busy} @click=${() => (this.confirmCancel = true)}>${ACTION_LABELS[a]}</button>`
                  : html`<button class="primary" ?disabled=${this.busy || (a === 'start' && total === 0)} @click=${() => this.act(a)}>${ACTION_LABELS[a]}</button>`,
              )}
            </div>`
          : nothing}
      </div>
      ${this.notice ? html`<div class="banner banner-ok" role="status" data-testid="notice">${this.notice}</div>` : nothing}
      ${errorBanner(this.actionError)}
      ${errorBanner(this.loadError)}
      ${!c && !this.loadError ? html`<p class="loading" role="status">Loading campaign…</p>` : nothing}
      ${c
        ? html`${c.paused_reason ? html`<div class="banner banner-warn" data-testid="paused-reason">Paused by the dialler: ${c.paused_reason}</div>` : nothing}
            ${c.status === 'draft' && total === 0 ? html`<p class="hint">Add contacts from a CSV file below, then start the campaign.</p>` : nothing}
            <section class="panel" aria-labelledby="progress-heading">
              <h2 id="progress-heading">Progress</h2>
              ${progressBar(c.counts, `Progress of ${c.name}`)}
              <dl class="counts">
                ${CONTACT_STATUSES.map((s) => html`<div><dt>${COUNT_LABELS[s]}</dt><dd data-testid="count-${s}">${c.counts[s]}</dd></div>`)}
              </dl>
            </section>
            ${this.renderUpload()}
            ${this.renderContacts()}
            ${this.renderSettings(c)}`
        : nothing}
      <vp-dialog
        heading="Cancel this campaign?"
        .open=${this.confirmCancel}
        @vp-close=${() => (this.confirmCancel = false)}
        .content=${this.confirmCancel && c
          ? html`<p>${c.name} stops for good: contacts not dialled yet are canceled, calls in progress finish. A canceled campaign cannot be started again.</p>`
          : nothing}
        .actions=${html`<button @click=${() => (this.confirmCancel = false)} autofocus>Keep the campaign</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.act('cancel')}>Cancel campaign</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-campaign-detail-page', VpCampaignDetailPage);
