// A bot's tests (docs/design.md §17): its cases (written with a form or as JSON, the API's 422 details on the
// fields), runs of all or one case watched until done, and the history of runs; a failed case shows each failed
// expectation beside its call's transcript. Viewers read; editors write and run (the generated permissions).
import { html, nothing, type TemplateResult } from 'lit';
import type { Bot } from '@voice-platform/schemas/bot.js';
import type { Call } from '@voice-platform/schemas/calls.js';
import type { TestCase, TestRun } from '@voice-platform/schemas/botTests.js';
import { LightElement } from '../components/base.js';
import { checkbox, errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import {
  caseBody,
  caseResultText,
  caseSaveErrors,
  caseToForm,
  emptyCaseForm,
  emptyMock,
  emptyStep,
  emptyToolExpect,
  errorLines,
  formCanEdit,
  formToCase,
  latencyText,
  parseCaseJson,
  runActive,
  runBadge,
  runProgress,
  runSummary,
  type TestCaseForm,
} from '../core/botTests.js';
import { formatDateTime } from '../core/format.js';
import { may } from '../core/permissions.js';
import { Poller } from '../core/poller.js';
import { errorFor, type FieldErrors } from '../core/validation.js';

/** How often a run in progress is read again. */
const RUN_REFRESH_MS = 1000;
/** The paths the form shows errors at; an error elsewhere is listed above the form. */
const FORM_PATHS = ['name', 'transport', 'variables', 'caller.script', 'tool_mocks', 'expect.end_reason', 'expect.tools', 'expect.said', 'expect.not_said', 'expect.max_turn_latency_ms'];

interface Editing {
  /** The case replaced (PUT), or null for a new one. */
  caseId: string | null;
  mode: 'form' | 'json';
  form: TestCaseForm;
  json: string;
  errors: FieldErrors;
  /** A problem that is not one field's (JSON that does not parse, a refusal without fields). */
  error: string | null;
}

const id = (path: string) => `case-${path.replace(/\./g, '-')}`;

export class VpBotTestsPage extends LightElement {
  static override properties = {
    botId: { attribute: false },
    bot: { state: true },
    cases: { state: true },
    runs: { state: true },
    run: { state: true },
    calls: { state: true },
    editing: { state: true },
    deleting: { state: true },
    loadError: { state: true },
    error: { state: true },
    notice: { state: true },
    busy: { state: true },
  };
  declare botId: string | undefined;
  declare bot: Bot | null;
  declare cases: TestCase[] | null;
  declare runs: TestRun[] | null;
  /** The run shown in detail: the one just started (polled until done), or one picked from the history. */
  declare run: TestRun | null;
  /** Failed cases' calls, by call id (their transcripts), or the message why one could not be read. */
  declare calls: Record<string, Call | string>;
  declare editing: Editing | null;
  declare deleting: TestCase | null;
  declare loadError: string | null;
  declare error: string | null;
  declare notice: string | null;
  declare busy: boolean;

  private loadedFor: string | undefined;
  private readonly poller = new Poller(() => this.refreshRun(), RUN_REFRESH_MS);

  constructor() {
    super();
    this.botId = undefined;
    this.bot = null;
    this.cases = null;
    this.runs = null;
    this.run = null;
    this.calls = {};
    this.editing = null;
    this.deleting = null;
    this.loadError = null;
    this.error = null;
    this.notice = null;
    this.busy = false;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.poller.stop();
  }

  protected override willUpdate(): void {
    if (this.botId && this.loadedFor !== this.botId) {
      this.loadedFor = this.botId;
      void this.load(this.botId);
    }
  }

  private async load(botId: string): Promise<void> {
    this.loadError = null;
    try {
      const [bot, cases, runs] = await Promise.all([api.getBot(botId), api.listTestCases(botId), api.listTestRuns(botId)]);
      this.bot = bot;
      this.cases = cases.items;
      this.runs = runs.items;
      // The newest run shows in detail; one still going is watched.
      const newest = runs.items[0];
      if (newest) this.show(newest);
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the bot’s tests.';
    }
  }

  private get canWrite(): boolean {
    return may('POST /api/v1/bots/{id}/tests');
  }

  // ——— runs ———

  private show(run: TestRun): void {
    this.run = run;
    if (runActive(run)) this.poller.start();
    else {
      this.poller.stop();
      void this.loadCalls(run);
    }
  }

  private async refreshRun(): Promise<void> {
    const cur = this.run;
    if (!cur || !this.botId) return;
    try {
      const run = await api.getTestRun(this.botId, cur.id);
      if (this.run?.id !== run.id) return; // another run was picked meanwhile
      this.run = run;
      this.runs = (this.runs ?? []).map((r) => (r.id === run.id ? run : r));
      if (!runActive(run)) {
        this.poller.stop();
        void this.loadCalls(run);
      }
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not read the run.';
    }
  }

  /** The calls of the run's failed cases, for their transcripts. */
  private async loadCalls(run: TestRun): Promise<void> {
    const ids = run.cases.filter((c) => c.passed === false && c.call_id && !(c.call_id in this.calls)).map((c) => c.call_id!);
    await Promise.all(
      ids.map(async (callId) => {
        try {
          const call = await api.getCall(callId);
          this.calls = { ...this.calls, [callId]: call };
        } catch (err) {
          this.calls = { ...this.calls, [callId]: err instanceof ApiError ? err.message : 'Could not read the call.' };
        }
      }),
    );
  }

  private async startRun(caseIds?: string[]): Promise<void> {
    if (!this.botId) return;
    this.busy = true;
    this.error = null;
    this.notice = null;
    try {
      const run = await api.startTestRun(this.botId, caseIds ? { cases: caseIds } : {});
      this.runs = [run, ...(this.runs ?? [])];
      this.show(run);
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not start the run.';
    } finally {
      this.busy = false;
    }
  }

  // ——— cases ———

  private openNew(): void {
    this.notice = null;
    const form = emptyCaseForm(this.bot?.variables ?? []);
    this.editing = { caseId: null, mode: 'form', form, json: JSON.stringify(formToCase(form).body, null, 2), errors: {}, error: null };
  }

  private openEdit(c: TestCase): void {
    this.notice = null;
    const body = caseBody(c);
    const json = JSON.stringify(body, null, 2);
    // A persona caller has no form: such a case opens as JSON.
    // Viewers read the case as JSON, read-only.
    this.editing = { caseId: c.id, mode: this.canWrite && formCanEdit(body) ? 'form' : 'json', form: caseToForm(body), json, errors: {}, error: null };
  }

  /** Re-renders after a change to the form being edited (its objects are changed in place). */
  private change(fn: (f: TestCaseForm) => void): void {
    if (!this.editing) return;
    fn(this.editing.form);
    this.editing = { ...this.editing };
  }

  private toggleMode(): void {
    const e = this.editing;
    if (!e) return;
    if (e.mode === 'form') {
      this.editing = { ...e, mode: 'json', json: JSON.stringify(formToCase(e.form).body, null, 2), error: null };
      return;
    }
    const parsed = parseCaseJson(e.json);
    if (!parsed.body) this.editing = { ...e, error: parsed.error };
    else if (!parsed.body.caller || !formCanEdit(parsed.body)) this.editing = { ...e, error: 'This case’s caller is not a script: it can be edited as JSON only.' };
    else this.editing = { ...e, mode: 'form', form: caseToForm(parsed.body), error: null };
  }

  private async save(ev: Event): Promise<void> {
    ev.preventDefault();
    const e = this.editing;
    if (!e || !this.botId) return;
    let body;
    if (e.mode === 'json') {
      const parsed = parseCaseJson(e.json);
      if (!parsed.body) {
        this.editing = { ...e, errors: {}, error: parsed.error };
        return;
      }
      body = parsed.body;
    } else {
      const out = formToCase(e.form);
      if (Object.keys(out.errors).length) {
        this.editing = { ...e, errors: out.errors, error: 'The case was not saved: correct the marked fields.' };
        return;
      }
      body = out.body;
    }
    this.busy = true;
    try {
      const saved = e.caseId ? await api.updateTestCase(this.botId, e.caseId, body) : await api.createTestCase(this.botId, body);
      this.cases = e.caseId ? (this.cases ?? []).map((c) => (c.id === saved.id ? saved : c)) : [...(this.cases ?? []), saved];
      this.editing = null;
      this.notice = e.caseId ? `Test case “${saved.name}” saved.` : `Test case “${saved.name}” added.`;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const errors = caseSaveErrors(err);
      this.editing = { ...e, errors, error: Object.keys(errors).length ? 'The case was not saved: correct the marked fields.' : err.message };
    } finally {
      this.busy = false;
    }
  }

  private async deleteCase(c: TestCase): Promise<void> {
    if (!this.botId) return;
    this.busy = true;
    try {
      await api.deleteTestCase(this.botId, c.id);
      this.cases = (this.cases ?? []).filter((x) => x.id !== c.id);
      this.notice = `Test case “${c.name}” deleted.`;
      if (this.editing?.caseId === c.id) this.editing = null;
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not delete the case.';
    } finally {
      this.busy = false;
      this.deleting = null;
    }
  }

  // ——— rendering: the editor ———

  private text(path: string, label: string, value: string, set: (v: string) => void, opts: { hint?: string; required?: boolean; area?: boolean; list?: string; error?: string | undefined } = {}): TemplateResult {
    const e = this.editing!;
    const error = 'error' in opts ? opts.error : errorFor(e.errors, path);
    return field({ id: id(path), label, error, hint: opts.hint, required: opts.required }, (a) =>
      opts.area
        ? html`<textarea id=${a.id} rows="3" .value=${value} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${(ev: Event) => this.change(() => set((ev.target as HTMLTextAreaElement).value))}></textarea>`
        : html`<input id=${a.id} .value=${value} list=${opts.list ?? nothing} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${(ev: Event) => this.change(() => set((ev.target as HTMLInputElement).value))} />`,
    );
  }

  private renderForm(f: TestCaseForm, errors: FieldErrors): TemplateResult {
    const tools = (this.bot?.tools ?? []).map((t) => t.name);
    return html`
      <div class="grid">
        ${this.text('name', 'Name', f.name, (v) => (f.name = v), { required: true, hint: 'What the case checks, e.g. promises to pay.' })}
        ${field({ id: id('transport'), label: 'Transport', error: errors.transport, hint: 'How the test caller reaches the bot: a WebSocket call (ws), a web call in a LiveKit room as the widget places it (room, where the backend has LiveKit), or a phone call: the platform dials the dialler\'s simulated phone through livekit-sip (sip, where the backend has TEST_PHONE_SIP_ADDRESS).' }, (a) =>
          html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${(ev: Event) => this.change(() => (f.transport = (ev.target as HTMLSelectElement).value as TestCaseForm['transport']))}>
            ${(['ws', 'room', 'sip'] as const).map((t) => html`<option value=${t} .selected=${f.transport === t}>${t === 'ws' ? 'WebSocket (ws)' : t === 'room' ? 'LiveKit room (room)' : 'SIP (sip)'}</option>`)}
          </select>`,
        )}
      </div>
      <fieldset>
        <legend>Variables</legend>
        ${errors.variables ? html`<p class="error-text" id=${id('variables')}>${errors.variables}</p>` : nothing}
        ${f.variables.map(
          (v, i) => html`<div class="grid" role="group" aria-label="Variable ${i + 1}">
            ${this.text(`variables.${i}.name`, 'Variable', v.name, (x) => (v.name = x), { error: errors[`variables.${i}.name`] })}
            ${this.text(`variables.${i}.value`, `Value of ${v.name || `variable ${i + 1}`}`, v.value, (x) => (v.value = x), { error: undefined })}
            <div><button type="button" class="small link-danger" aria-label="Remove variable ${i + 1}" @click=${() => this.change(() => f.variables.splice(i, 1))}>Remove</button></div>
          </div>`,
        )}
        <button type="button" class="small" @click=${() => this.change(() => f.variables.push({ name: '', value: '' }))}>Add variable</button>
      </fieldset>
      <fieldset>
        <legend>Script</legend>
        <p class="hint" style="margin-bottom:12px">What the test caller says or presses, in order; before each step it waits for the bot to speak and go quiet, and/or a set time.</p>
        ${errors['caller.script'] ? html`<p class="error-text">${errors['caller.script']}</p>` : nothing}
        ${f.steps.map((s, i) => {
          const at = `caller.script.${i}`;
          return html`<div class="row-item" role="group" aria-label="Step ${i + 1}">
            <div class="row-head"><span>Step ${i + 1}</span>
              <button type="button" class="small link-danger" aria-label="Remove step ${i + 1}" @click=${() => this.change(() => f.steps.splice(i, 1))}>Remove</button></div>
            <div class="grid">
              ${field({ id: id(`${at}.kind`), label: 'Caller', hint: undefined }, (a) =>
                html`<select id=${a.id} @change=${(ev: Event) => this.change(() => (s.kind = (ev.target as HTMLSelectElement).value as 'say' | 'dtmf'))}>
                  <option value="say" .selected=${s.kind === 'say'}>Says</option>
                  <option value="dtmf" .selected=${s.kind === 'dtmf'}>Presses keys</option>
                </select>`,
              )}
              ${this.text(`${at}.${s.kind}`, s.kind === 'say' ? `Step ${i + 1} words` : `Step ${i + 1} keys`, s.text, (x) => (s.text = x), {
                required: true,
                error: errors[`${at}.${s.kind}`] ?? errors[at],
                hint: s.kind === 'say' ? 'Spoken to the bot, e.g. yes i will pay.' : 'Keys 0–9, * and #, e.g. 1#.',
              })}
              ${this.text(`${at}.after_ms`, `Step ${i + 1} wait (ms)`, s.after_ms, (x) => (s.after_ms = x), { hint: 'Optional: wait this long before the step.' })}
            </div>
            ${checkbox({ id: id(`${at}.wait_for_bot`), label: `Step ${i + 1}: wait for the bot first`, checked: s.wait_for_bot, onChange: (c) => this.change(() => (s.wait_for_bot = c)) })}
          </div>`;
        })}
        <button type="button" class="small" @click=${() => this.change(() => f.steps.push(emptyStep()))}>Add step</button>
      </fieldset>
      <fieldset>
        <legend>Tool mocks</legend>
        <p class="hint" style="margin-bottom:12px">Answers for the bot’s tools during the test: a 2xx status and its body are the tool’s result; any other status fails it.</p>
        ${errors.tool_mocks ? html`<p class="error-text">${errors.tool_mocks}</p>` : nothing}
        ${f.mocks.map((m, i) => {
          const at = `tool_mocks.${m.tool.trim() || i}`;
          return html`<div class="row-item" role="group" aria-label="Mock ${i + 1}">
            <div class="row-head"><span>Mock ${i + 1}</span>
              <button type="button" class="small link-danger" aria-label="Remove mock ${i + 1}" @click=${() => this.change(() => f.mocks.splice(i, 1))}>Remove</button></div>
            <div class="grid">
              ${this.text(`tool_mocks.${i}.tool`, `Mock ${i + 1} tool`, m.tool, (x) => (m.tool = x), { list: 'case-bot-tools', required: true, error: errors[at] ?? errors[`tool_mocks.${i}`] })}
              ${this.text(`tool_mocks.${i}.status`, `Mock ${i + 1} status`, m.status, (x) => (m.status = x), { error: errors[`${at}.status`] })}
            </div>
            ${this.text(`tool_mocks.${i}.body`, `Mock ${i + 1} body (JSON)`, m.body, (x) => (m.body = x), { area: true, error: errors[`${at}.body`], hint: 'e.g. {"reference": "R42"}' })}
          </div>`;
        })}
        <button type="button" class="small" @click=${() => this.change(() => f.mocks.push(emptyMock()))}>Add mock</button>
      </fieldset>
      <fieldset>
        <legend>Expectations</legend>
        <div class="grid">
          ${this.text('expect.end_reason', 'End reason', f.end_reason, (v) => (f.end_reason = v), { hint: 'How the call must end, e.g. bot_hangup.' })}
          ${this.text('expect.max_turn_latency_ms', 'Longest turn (ms)', f.max_turn_latency_ms, (v) => (f.max_turn_latency_ms = v), { hint: 'Optional: no reply may take longer.' })}
        </div>
        ${f.tools.map(
          (t, i) => html`<div class="row-item" role="group" aria-label="Expected tool ${i + 1}">
            <div class="row-head"><span>Tool ${i + 1} must run</span>
              <button type="button" class="small link-danger" aria-label="Remove expected tool ${i + 1}" @click=${() => this.change(() => f.tools.splice(i, 1))}>Remove</button></div>
            ${this.text(`expect.tools.${i}.name`, `Expected tool ${i + 1}`, t.name, (x) => (t.name = x), { list: 'case-bot-tools', required: true })}
            ${this.text(`expect.tools.${i}.arguments`, `Expected tool ${i + 1} arguments (JSON)`, t.arguments, (x) => (t.arguments = x), { area: true, hint: 'Optional: the fields given must match, e.g. {"customer_name": "Alice"}.' })}
          </div>`,
        )}
        <button type="button" class="small" @click=${() => this.change(() => f.tools.push(emptyToolExpect()))}>Expect a tool</button>
        <div class="grid" style="margin-top:16px">
          ${this.text('expect.said', 'Bot says', f.said, (v) => (f.said = v), { area: true, hint: 'Regular expressions (case-insensitive), one a line: each must match something the bot said.' })}
          ${this.text('expect.not_said', 'Bot never says', f.not_said, (v) => (f.not_said = v), { area: true, hint: 'One a line: none may match.' })}
        </div>
        ${Object.keys(f.other).length ? html`<p class="hint">Kept as they are (edit them as JSON): ${Object.keys(f.other).join(', ')}.</p>` : nothing}
      </fieldset>
      <datalist id="case-bot-tools">${tools.map((t) => html`<option value=${t}></option>`)}</datalist>`;
  }

  private renderEditor(e: Editing): TemplateResult {
    const stray = Object.fromEntries(Object.entries(e.errors).filter(([path]) => e.mode === 'json' || !FORM_PATHS.some((p) => path === p || path.startsWith(`${p}.`))));
    return html`<section class="panel" aria-labelledby="case-editor-title" data-testid="case-editor">
      <div class="page-head">
        <h2 id="case-editor-title">${!this.canWrite ? 'Test case' : e.caseId ? 'Edit test case' : 'New test case'}</h2>
        ${this.canWrite ? html`<button type="button" class="small" aria-pressed=${e.mode === 'json' ? 'true' : 'false'} @click=${() => this.toggleMode()}>${e.mode === 'json' ? 'Edit with the form' : 'Edit as JSON'}</button>` : nothing}
      </div>
      <form novalidate @submit=${this.save}>
        ${errorBanner(e.error)}
        ${Object.keys(stray).length ? html`<ul class="error-text" data-testid="case-errors">${errorLines(stray).map((l) => html`<li>${l}</li>`)}</ul>` : nothing}
        ${e.mode === 'json'
          ? field({ id: 'case-json', label: 'Test case (JSON)', hint: 'The body of POST /api/v1/bots/{id}/tests: name, transport, variables, caller, tool_mocks, expect.' }, (a) =>
              html`<textarea id=${a.id} class="mono" rows="18" spellcheck="false" ?readonly=${!this.canWrite} .value=${e.json} aria-describedby=${a.describedBy ?? nothing}
                @input=${(ev: Event) => (this.editing = { ...e, json: (ev.target as HTMLTextAreaElement).value })}></textarea>`,
            )
          : this.renderForm(e.form, e.errors)}
        <div class="form-actions">
          ${this.canWrite ? html`<button class="primary" type="submit" ?disabled=${this.busy}>${e.caseId ? 'Save case' : 'Add case'}</button>` : nothing}
          <button type="button" @click=${() => (this.editing = null)}>${this.canWrite ? 'Cancel' : 'Close'}</button>
        </div>
      </form>
    </section>`;
  }

  // ——— rendering: cases, runs ———

  private renderCases(cases: TestCase[]): TemplateResult {
    const canRun = may('POST /api/v1/bots/{id}/test-runs');
    if (!cases.length) return html`<p class="empty">No test cases yet.${this.canWrite ? ' Add one: a script the test caller follows and what the call must show.' : ''}</p>`;
    return html`<div class="table-wrap"><table data-testid="test-cases">
      <thead><tr><th>Name</th><th>Script</th><th>Expectations</th><th><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${cases.map((c) => {
          const steps = 'script' in c.caller ? c.caller.script.length : 0;
          return html`<tr data-case=${c.id}>
            <td>${c.name}</td>
            <td>${'script' in c.caller ? `${steps} step${steps === 1 ? '' : 's'}` : 'persona'}</td>
            <td class="mono">${Object.keys(c.expect).join(', ') || '—'}</td>
            <td class="row-actions">
              ${canRun ? html`<button class="small" aria-label="Run ${c.name}" ?disabled=${this.busy} @click=${() => this.startRun([c.id])}>Run</button>` : nothing}
              ${this.canWrite ? html`<button class="small" aria-label="Edit ${c.name}" @click=${() => this.openEdit(c)}>Edit</button>` : html`<button class="small" aria-label="View ${c.name}" @click=${() => this.openEdit(c)}>View</button>`}
              ${may('DELETE /api/v1/bots/{id}/tests/{case_id}') ? html`<button class="small link-danger" aria-label="Delete ${c.name}" @click=${() => (this.deleting = c)}>Delete</button>` : nothing}
            </td>
          </tr>`;
        })}
      </tbody>
    </table></div>`;
  }

  private renderTranscript(callId: string): TemplateResult {
    const call = this.calls[callId];
    if (call === undefined) return html`<p class="loading">Loading the call…</p>`;
    if (typeof call === 'string') return errorBanner(call) as TemplateResult;
    return html`<ol class="transcript" aria-label="Transcript">
      ${call.transcript.length
        ? call.transcript.map((t) => html`<li class=${t.role}><span class="who">${t.role === 'bot' ? 'Bot' : 'Caller'}${t.dtmf ? ' (keys)' : ''}</span><p>${t.text}</p></li>`)
        : html`<li>Nothing was said on this call.</li>`}
    </ol>
    <p class="hint">Ended: ${call.end_reason ?? '—'}</p>`;
  }

  private renderRun(run: TestRun): TemplateResult {
    const { done, total, pct } = runProgress(run);
    const badge = runBadge(run);
    return html`<section class="panel" aria-labelledby="test-run-title" data-testid="test-run" data-run=${run.id} data-status=${run.status}>
      <h2 id="test-run-title">Run of version ${run.version} <span class="badge badge-${badge.tone}">${badge.text}</span></h2>
      <p role="status" data-testid="run-summary">${runSummary(run)}</p>
      <div class="progress" role="progressbar" aria-label="Cases done" aria-valuemin="0" aria-valuemax=${total} aria-valuenow=${done}>
        <div class="progress-track"><div class="progress-fill" style=${`width: ${pct}%`}></div></div>
        <span class="progress-text">${done} of ${total}</span>
      </div>
      <p class="hint">Turn latency p50 ${latencyText(run.latency.p50_ms)} · p95 ${latencyText(run.latency.p95_ms)}</p>
      <ul class="run-cases">
        ${run.cases.map((c) => {
          const failed = c.status === 'done' && c.passed === false;
          return html`<li class=${failed ? 'case-failed' : c.passed ? 'case-passed' : ''} data-case=${c.case_id} data-result=${caseResultText(c).toLowerCase()}>
            <div class="row-head">
              <span><span class="badge badge-${failed ? 'bad' : c.passed ? 'good' : 'neutral'}">${caseResultText(c)}</span> ${c.name}</span>
              ${c.call_id ? html`<a href="/calls/${c.call_id}">Open the call</a>` : nothing}
            </div>
            ${failed
              ? html`<div class="case-failure">
                  <div>
                    <h3>Failed expectations</h3>
                    <ul class="failures" data-testid="failures">
                      ${c.failures.map((x) => html`<li><code>${x.expectation}</code> ${x.detail}</li>`)}
                    </ul>
                  </div>
                  <div data-testid="case-transcript">
                    <h3>Transcript</h3>
                    ${c.call_id ? this.renderTranscript(c.call_id) : html`<p class="empty">No call was placed.</p>`}
                  </div>
                </div>`
              : nothing}
          </li>`;
        })}
      </ul>
    </section>`;
  }

  private renderHistory(runs: TestRun[]): TemplateResult {
    if (!runs.length) return html`<p class="empty">No runs yet.</p>`;
    return html`<div class="table-wrap"><table data-testid="test-runs">
      <thead><tr><th>Started</th><th>Version</th><th>Result</th><th>Passed</th><th>Failed</th><th>p50</th><th>p95</th><th><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${runs.map((r) => {
          const badge = runBadge(r);
          return html`<tr data-run=${r.id} class=${r.failed > 0 ? 'run-failed' : ''} aria-current=${this.run?.id === r.id ? 'true' : nothing}>
            <td><time datetime=${r.created_at}>${formatDateTime(r.created_at)}</time></td>
            <td>${r.version}</td>
            <td><span class="badge badge-${badge.tone}">${badge.text}</span></td>
            <td>${r.passed}</td>
            <td>${r.failed}</td>
            <td>${latencyText(r.latency.p50_ms)}</td>
            <td>${latencyText(r.latency.p95_ms)}</td>
            <td class="row-actions"><button class="small" aria-label="Show the run of ${formatDateTime(r.created_at)}" @click=${() => this.show(r)}>Show</button></td>
          </tr>`;
        })}
      </tbody>
    </table></div>`;
  }

  override render() {
    const bot = this.bot;
    const canRun = may('POST /api/v1/bots/{id}/test-runs');
    return html`<div class="page-head">
        <h1 tabindex="-1">${bot ? `Tests: ${bot.name}` : 'Tests'}</h1>
        <div class="row-actions">
          ${this.botId ? html`<a class="button" href="/bots/${this.botId}">Back to the bot</a>` : nothing}
          ${this.cases?.length && canRun ? html`<button class="primary" ?disabled=${this.busy} @click=${() => this.startRun()}>Run all cases</button>` : nothing}
        </div>
      </div>
      <p class="subtitle">Each case is a real call by a scripted caller; the run checks what the call did. Runs test the bot’s latest version${bot ? html` (version ${bot.version})` : nothing}.</p>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      ${errorBanner(this.error)}
      ${this.loadError ? html`${errorBanner(this.loadError)}<a href="/bots">Back to the bots</a>` : nothing}
      ${!this.cases && !this.loadError ? html`<p class="loading" role="status">Loading tests…</p>` : nothing}
      ${this.cases
        ? html`<section class="panel" aria-labelledby="test-cases-title">
            <div class="page-head">
              <h2 id="test-cases-title">Test cases</h2>
              ${this.canWrite && !this.editing ? html`<button class="small" @click=${() => this.openNew()}>New test case</button>` : nothing}
            </div>
            ${this.renderCases(this.cases)}
          </section>`
        : nothing}
      ${this.editing ? this.renderEditor(this.editing) : nothing}
      ${this.run ? this.renderRun(this.run) : nothing}
      ${this.runs ? html`<section class="panel" aria-labelledby="test-runs-title"><h2 id="test-runs-title">Runs</h2>${this.renderHistory(this.runs)}</section>` : nothing}
      <vp-dialog
        heading="Delete this test case?"
        .open=${this.deleting !== null}
        @vp-close=${() => (this.deleting = null)}
        .content=${this.deleting ? html`<p>“${this.deleting.name}” is deleted; runs already made keep their results.</p>` : nothing}
        .actions=${html`<button @click=${() => (this.deleting = null)}>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.deleting && this.deleteCase(this.deleting)}>Delete test case</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-bot-tests-page', VpBotTestsPage);
