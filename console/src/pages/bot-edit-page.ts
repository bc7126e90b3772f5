// Create or edit a bot: prompt, greeting, declared variables, voice/STT/LLM settings, turn-taking, tools, the
// scripted policy (with the analysis fields each intent sets), the post-call analysis, limits. Validated with the shared schema before it is sent; API 422 details land on fields.
import { html, nothing, type TemplateResult } from 'lit';
import { live } from 'lit/directives/live.js';
import { ANALYSIS_FIELD_TYPES, MAX_ANALYSIS_FIELDS, MAX_TOOL_HEADERS, ON_MACHINE, TOOL_TIMEOUT_MS, TOOL_TYPES, TURN_DETECTION_MODES, type AnalysisFieldType, type Bot, type BotFlow, type BotVersionList, type ToolType } from '@voice-platform/schemas/bot.js';
import { REDACTION_ENTITIES, type RedactionEntity } from '@voice-platform/schemas/redact.js';
import { LightElement } from '../components/base.js';
import { checkbox, errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import {
  actionTools,
  ANALYSIS_TYPE_LABELS,
  botToForm,
  emptyAnalysisField,
  emptyArgument,
  emptyDestination,
  emptyHeader,
  emptyIntent,
  emptySet,
  emptyMcpServer,
  emptyTool,
  flowFormProblems,
  formToBody,
  MAX_ACTION_ARGUMENTS,
  ON_MACHINE_LABELS,
  policyProblems,
  REDACTION_ENTITY_LABELS,
  setsProblems,
  TOOL_TYPE_LABELS,
  toolProblems,
  TURN_DETECTION_LABELS,
  validArgumentName,
  type BotForm,
  type AnalysisFieldForm,
  type IntentForm,
  type OnMachine,
  type ToolForm,
  type TurnDetectionMode,
} from '../core/botForm.js';
import { setFlash, takeFlash } from '../core/flash.js';
import { addNode, addTransition, anyMcpTool, flowToolNames, layoutFlow, liveFlowProblems, parseFlowText, removeNode, removeTransition, whenFrom, whenLabel, type FlowGraph } from '../core/botFlow.js';
import { flowGraph } from '../components/flow-graph.js';
import { FLOW_NODE_ID_PATTERN, type FlowProblem } from '@voice-platform/schemas/flow.js';
import { foldDiff, lineDiff, snapshotLines, versionBadge, type DiffLine } from '../core/botVersions.js';
import { navigate } from '../core/router.js';
import { errorFor, validateBot, type FieldErrors } from '../core/validation.js';

/** How an action's tool reads in the intent's Action select. */
const ACTION_TYPE_TEXT: Partial<Record<ToolType, string>> = { http: 'HTTP', transfer_call: 'transfer', send_dtmf: 'press keys' };
/** What an action's arguments mean, by its tool's type (the worker's runner). */
const ARGUMENTS_HINT: Partial<Record<ToolType, TemplateResult>> = {
  http: html`Sent to the tool’s URL as its arguments.`,
  transfer_call: html`<code>destination</code>: the name of one of the tool’s destinations (not needed when it has only one).`,
  send_dtmf: html`<code>digits</code>: the keys to press, e.g. <code>1#</code>.`,
};

const SUGGESTIONS = {
  voice: ['espeak-ng', 'elevenlabs', 'openai'],
  stt: ['pocketsphinx', 'deepgram'],
  llm: ['scripted', 'openai'],
};

export class VpBotEditPage extends LightElement {
  static override properties = {
    botId: { attribute: false },
    bot: { state: true },
    form: { state: true },
    errors: { state: true },
    error: { state: true },
    loadError: { state: true },
    busy: { state: true },
    notice: { state: true },
    secret: { state: true },
    copyStatus: { state: true },
    confirmRotate: { state: true },
    secretError: { state: true },
    knowledgeBases: { state: true },
    versions: { state: true },
    versionsError: { state: true },
    diffFrom: { state: true },
    diffTo: { state: true },
    diff: { state: true },
    handoffBots: { state: true },
  };
  declare botId: string | undefined;
  declare bot: Bot | null;
  declare form: BotForm | null;
  declare errors: FieldErrors;
  declare error: string | null;
  declare loadError: string | null;
  declare busy: boolean;
  declare notice: string | null;
  /** A new tool secret, only while its once-only dialog is open. */
  declare secret: string | null;
  declare copyStatus: string;
  declare confirmRotate: boolean;
  declare secretError: string | null;
  /** The knowledge bases a bot may pick (null until loaded, or when they cannot be read). */
  declare knowledgeBases: Array<{ id: string; name: string }> | null;
  /** The bot's versions, newest first (null until loaded). */
  declare versions: BotVersionList['items'] | null;
  declare versionsError: string | null;
  /** The two versions the diff compares, and its lines once shown. */
  declare diffFrom: number;
  declare diffTo: number;
  declare diff: DiffLine[] | null;
  /** The bots a call may be handed to: the others (null until loaded). */
  declare handoffBots: Bot[] | null;
  /** The flow editor's small forms (add/remove a node or a transition), as typed. */
  private flowEdit = { nodeId: '', nodeEnds: false, removeNode: '', from: '', to: '', kind: 'intent' as 'intent' | 'tool_result' | 'variable', when: '', removeTransition: '', error: '' };
  /** The last flow that parsed: drawn while the text is mid-edit. */
  private lastGraph: FlowGraph = layoutFlow(null);

  constructor() {
    super();
    this.botId = undefined;
    this.bot = null;
    this.form = null;
    this.errors = {};
    this.error = null;
    this.loadError = null;
    this.busy = false;
    this.notice = takeFlash();
    this.secret = null;
    this.copyStatus = '';
    this.confirmRotate = false;
    this.secretError = null;
    this.knowledgeBases = null;
    void api.listKnowledgeBases().then(
      (r) => (this.knowledgeBases = r.items.map((b) => ({ id: b.id, name: b.name }))),
      () => (this.knowledgeBases = null),
    );
    this.versions = null;
    this.versionsError = null;
    this.diffFrom = 0;
    this.diffTo = 0;
    this.diff = null;
    this.handoffBots = null;
  }

  private loadedFor: string | undefined;

  protected override willUpdate(): void {
    if (this.handoffBots === null && !this.handoffLoading) {
      this.handoffLoading = true;
      void this.loadHandoffBots();
    }
    if (this.botId) {
      if (this.loadedFor !== this.botId) {
        this.loadedFor = this.botId;
        void this.load(this.botId);
      }
    } else if (!this.form) this.form = botToForm();
  }

  private handoffLoading = false;

  private async loadHandoffBots(): Promise<void> {
    try {
      this.handoffBots = (await api.listBots()).items;
    } catch {
      // The picker then lists the ids already set; the save still names any the backend refuses.
      this.handoffBots = [];
    }
  }

  private async load(id: string): Promise<void> {
    this.form = null;
    this.loadError = null;
    try {
      this.bot = await api.getBot(id);
      this.form = botToForm(this.bot);
      void this.loadVersions();
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the bot.';
    }
  }

  private change(mutate: (f: BotForm) => void): void {
    if (!this.form) return;
    mutate(this.form);
    this.requestUpdate();
  }

  private async save(e: Event): Promise<void> {
    e.preventDefault();
    if (!this.form) return;
    this.error = null;
    this.notice = null;
    const body = formToBody(this.form);
    // The schema's errors first; then the tool and policy rules it cannot hold (as the backend checks them).
    // Flow graph problems (flowProblems) are shown live but do not hold the save back: the backend names them too.
    this.errors = { ...toolProblems(this.form.tools), ...policyProblems(this.form), ...setsProblems(this.form), ...validateBot(body), ...flowFormProblems(this.form) };
    if (Object.keys(this.errors).length) {
      this.error = 'Fix the highlighted fields and save again.';
      await this.updateComplete;
      this.querySelector<HTMLElement>('form [aria-invalid="true"]')?.focus();
      return;
    }
    this.busy = true;
    try {
      if (this.bot) {
        const before = this.bot.version;
        this.bot = await api.updateBot(this.bot.id, body);
        this.form = botToForm(this.bot);
        this.notice =
          this.bot.version === before
            ? 'Changes saved.'
            : this.bot.version === this.bot.published_version
              ? `Changes saved. Version ${this.bot.version} is published.`
              : `Changes saved. Version ${this.bot.version} is a draft: publish it once its tests pass.`;
        void this.loadVersions();
      } else {
        const created = await api.createBot(body);
        setFlash(`Bot “${created.name}” created.`);
        navigate(`/bots/${created.id}`, { replace: true });
      }
    } catch (err) {
      if (err instanceof ApiError) {
        this.errors = err.fieldErrors;
        this.error = err.message;
      } else this.error = 'Could not save the bot.';
    } finally {
      this.busy = false;
    }
  }

  private async loadVersions(): Promise<void> {
    if (!this.bot) return;
    try {
      this.versions = (await api.listBotVersions(this.bot.id)).items;
      this.versionsError = null;
      // Compare what calls run with the latest by default.
      this.diffFrom = this.bot.published_version;
      this.diffTo = this.bot.version;
      this.diff = null;
    } catch (err) {
      this.versionsError = err instanceof ApiError ? err.message : 'Could not load the versions.';
    }
  }

  private async publish(version: number): Promise<void> {
    if (!this.bot) return;
    this.busy = true;
    this.versionsError = null;
    this.notice = null;
    try {
      const rollback = version < this.bot.published_version;
      this.bot = await api.publishBot(this.bot.id, version);
      this.notice = rollback ? `Rolled back: calls now run version ${version}.` : `Version ${version} published: calls now run it.`;
      await this.loadVersions();
    } catch (err) {
      this.versionsError = err instanceof ApiError ? (err.code === 'tests_failing' ? `Version ${version} cannot be published: its last test run is not all green.` : err.message) : 'Could not publish.';
    } finally {
      this.busy = false;
    }
  }

  private async showDiff(): Promise<void> {
    if (!this.bot) return;
    try {
      const [a, b] = await Promise.all([api.getBotVersion(this.bot.id, this.diffFrom), api.getBotVersion(this.bot.id, this.diffTo)]);
      this.diff = lineDiff(snapshotLines(a.config), snapshotLines(b.config));
    } catch (err) {
      this.versionsError = err instanceof ApiError ? err.message : 'Could not load the versions to compare.';
    }
  }

  /** The versions: which one calls run, drafts, publish / roll back, and a diff of two. */
  private renderVersions(bot: Bot) {
    const items = this.versions;
    const pick = (label: string, id: string, value: number, set: (v: number) => void) => html`<div class="field">
      <label for=${id}>${label}</label>
      <select id=${id} @change=${(e: Event) => set(Number((e.target as HTMLSelectElement).value))}>
        ${(items ?? []).map((v) => html`<option value=${v.version} .selected=${v.version === value}>Version ${v.version}</option>`)}
      </select>
    </div>`;
    const changes = this.diff?.filter((l) => l.kind !== 'same').length ?? 0;
    return html`<section class="versions" aria-labelledby="bot-versions-heading" data-testid="bot-versions">
      <h2 id="bot-versions-heading">Versions</h2>
      <p class="hint">
        Each save of the bot’s behaviour is a version. Calls run the published one: <strong data-testid="published-version">version ${bot.published_version}</strong>${bot.version !== bot.published_version
          ? html`; the latest, version ${bot.version}, is a <span class="badge badge-warn">draft</span>`
          : nothing}.
        ${bot.require_passing_tests ? 'This bot publishes only versions whose last test run is all green.' : 'A save publishes itself.'}
      </p>
      ${errorBanner(this.versionsError)}
      ${items === null
        ? html`<p class="loading">Loading versions…</p>`
        : html`<table class="versions-table">
            <thead><tr><th scope="col">Version</th><th scope="col">Saved</th><th scope="col">By</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              ${items.map((v) => {
                const badge = versionBadge(v.version, bot);
                return html`<tr data-version=${v.version}>
                  <td>Version ${v.version}</td>
                  <td><time datetime=${v.created_at}>${new Date(v.created_at).toLocaleString()}</time></td>
                  <td>${v.created_by.label}</td>
                  <td>${badge === 'published' ? html`<span class="badge badge-good">Published</span>` : badge === 'draft' ? html`<span class="badge badge-warn">Draft</span>` : nothing}</td>
                  <td>${badge === 'published'
                    ? nothing
                    : html`<button type="button" class="small" ?disabled=${this.busy} @click=${() => this.publish(v.version)}>${v.version < bot.published_version ? `Roll back to version ${v.version}` : `Publish version ${v.version}`}</button>`}</td>
                </tr>`;
              })}
            </tbody>
          </table>
          ${items.length > 1
            ? html`<div class="diff-pick">
                ${pick('Compare', 'bot-diff-from', this.diffFrom, (v) => (this.diffFrom = v))}
                ${pick('with', 'bot-diff-to', this.diffTo, (v) => (this.diffTo = v))}
                <div class="field row-remove"><button type="button" class="small" @click=${() => this.showDiff()}>Show differences</button></div>
              </div>`
            : nothing}
          ${this.diff
            ? html`<p class="hint" role="status">${changes ? `${changes} line${changes === 1 ? '' : 's'} differ between version ${this.diffFrom} and version ${this.diffTo}.` : `Version ${this.diffFrom} and version ${this.diffTo} behave the same.`}</p>
                <pre class="diff" data-testid="bot-diff">${foldDiff(this.diff).map((l) =>
                  l.kind === 'skip'
                    ? html`<span class="diff-skip">  … ${l.count} unchanged line${l.count === 1 ? '' : 's'}${'\n'}</span>`
                    : l.kind === 'same'
                      ? html`<span class="diff-same">  ${l.text}${'\n'}</span>`
                      : l.kind === 'added'
                        ? html`<ins class="diff-added">+ ${l.text}${'\n'}</ins>`
                        : html`<del class="diff-removed">- ${l.text}${'\n'}</del>`,
                )}</pre>`
            : nothing}`}
    </section>`;
  }

  /** A text input (or textarea) bound to a form path; `path` is also the error key and the id. */
  private text(path: string, label: string, value: string, set: (v: string) => void, opts: { area?: boolean; mono?: boolean; hint?: string; required?: boolean; list?: string; inputmode?: string } = {}): TemplateResult {
    const id = `bot-${path.replace(/\./g, '-')}`;
    const onInput = (e: Event) => this.change(() => set((e.target as HTMLInputElement).value));
    return field({ id, label, error: errorFor(this.errors, path), hint: opts.hint, required: opts.required }, (a) =>
      opts.area
        ? html`<textarea id=${a.id} class=${opts.mono ? 'mono' : nothing} spellcheck=${opts.mono ? 'false' : nothing} .value=${value} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${onInput}></textarea>`
        : html`<input id=${a.id} .value=${value} list=${opts.list ?? nothing} inputmode=${opts.inputmode ?? nothing} aria-required=${opts.required ? 'true' : nothing}
            aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${onInput} />`,
    );
  }

  private renderVariables(f: BotForm) {
    return html`<fieldset>
      <legend>Variables</legend>
      <p class="hint" style="margin-bottom:12px">Data a call may carry (e.g. from the CRM). Use them as <code>{{name}}</code> in the prompt, greeting, replies and the message for answering machines.</p>
      ${f.variables.map(
        (v, i) => html`<div class="row-item" role="group" aria-label="Variable ${i + 1}">
          <div class="row-head"><span>Variable ${i + 1}</span>
            <button type="button" class="small link-danger" aria-label="Remove variable ${i + 1}" @click=${() => this.change((x) => x.variables.splice(i, 1))}>Remove</button></div>
          <div class="grid">
            ${this.text(`variables.${i}.name`, 'Name', v.name, (s) => (v.name = s), { required: true })}
            ${this.text(`variables.${i}.description`, 'Description', v.description, (s) => (v.description = s))}
          </div>
          ${checkbox({ id: `bot-variables-${i}-required`, label: 'Required on every call', checked: v.required, onChange: (c) => this.change(() => (v.required = c)) })}
        </div>`,
      )}
      ${errorFor(this.errors, 'variables') && !f.variables.length ? html`<p class="error-text">${errorFor(this.errors, 'variables')}</p>` : nothing}
      <button type="button" class="small" @click=${() => this.change((x) => x.variables.push({ name: '', required: false, description: '' }))}>Add variable</button>
    </fieldset>`;
  }

  private async addTool(): Promise<void> {
    this.change((x) => x.tools.push(emptyTool()));
    await this.updateComplete;
    // Keyboard users continue in the new tool, not back at the Add button.
    this.querySelector<HTMLElement>(`#bot-tools-${this.form!.tools.length - 1}-name`)?.focus();
  }

  /** Drops the errors under `prefix`: they are keyed by position and would land on the row that moves up. */
  private dropErrors(prefix: string): void {
    this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => !k.startsWith(prefix)));
  }

  private async removeTool(i: number): Promise<void> {
    this.dropErrors('tools.');
    this.change((x) => x.tools.splice(i, 1));
    await this.updateComplete;
    this.querySelector<HTMLElement>('#bot-add-tool')?.focus();
  }

  /** A select bound to a form path (the error key and the id as for text). */
  private select<T extends string>(path: string, label: string, value: T, options: ReadonlyArray<readonly [T, string]>, set: (v: T) => void, hint?: string): TemplateResult {
    const id = `bot-${path.replace(/\./g, '-')}`;
    return field({ id, label, error: errorFor(this.errors, path), hint }, (a) =>
      html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${(e: Event) => this.change(() => set((e.target as HTMLSelectElement).value as T))}>
        ${options.map(([v, l]) => html`<option value=${v} .selected=${v === value}>${l}</option>`)}
      </select>`,
    );
  }

  private renderHeaders(t: ToolForm, i: number) {
    const at = `tools.${i}.headers`;
    return html`<div class="sub-rows" role="group" aria-labelledby="bot-tools-${i}-headers-label">
      <p class="sub-head" id="bot-tools-${i}-headers-label">Headers</p>
      <p class="hint note">Sent with every request, e.g. <code>Authorization</code>. Values are write-only: once saved they are never shown again.</p>
      ${t.headers.map((h, j) => {
        // Backend 422 details name a header by its name (tools.0.headers.X-Token); this form by its row.
        const valueError = errorFor(this.errors, `${at}.${j}.value`) ?? (h.name.trim() ? this.errors[`${at}.${h.name.trim()}`] : undefined);
        return html`<div class="grid header-row" role="group" aria-label="Header ${j + 1}">
          ${this.text(`${at}.${j}.name`, 'Header name', h.name, (s) => (h.name = s), { required: true })}
          ${field(
            { id: `bot-tools-${i}-headers-${j}-value`, label: 'Header value', error: valueError, hint: h.stored ? 'Leave empty to keep the stored value.' : undefined, required: !h.stored },
            (a) => html`<input id=${a.id} type="password" autocomplete="new-password" .value=${h.value} placeholder=${h.stored ? 'leave empty to keep' : nothing}
              aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${(e: Event) => this.change(() => (h.value = (e.target as HTMLInputElement).value))} />`,
          )}
          <div class="field row-remove"><button type="button" class="small link-danger" aria-label="Remove header ${j + 1} of tool ${i + 1}" @click=${() => {
            this.dropErrors(`${at}.`);
            this.change(() => t.headers.splice(j, 1));
          }}>Remove</button></div>
        </div>`;
      })}
      ${this.errors[at] ? html`<p class="error-text">${this.errors[at]}</p>` : nothing}
      <button type="button" class="small" ?disabled=${t.headers.length >= MAX_TOOL_HEADERS} @click=${() => this.change(() => t.headers.push(emptyHeader()))}>Add header</button>
    </div>`;
  }

  private renderHttp(t: ToolForm, i: number) {
    return html`<div class="grid">
        ${this.text(`tools.${i}.url`, 'URL', t.url, (s) => (t.url = s), { required: true, hint: 'http:// or https://; called with the arguments and the call’s identity, signed with the tool secret.' })}
        ${this.select(`tools.${i}.method`, 'Method', t.method, [['POST', 'POST (arguments as JSON)'], ['GET', 'GET (arguments as query string)']], (v) => (t.method = v))}
        ${this.text(`tools.${i}.timeout_ms`, 'Timeout (ms)', t.timeout_ms, (s) => (t.timeout_ms = s), { inputmode: 'numeric', hint: `${TOOL_TIMEOUT_MS.min} to ${TOOL_TIMEOUT_MS.max}; empty for ${TOOL_TIMEOUT_MS.default}.` })}
        ${this.text(`tools.${i}.say_while_waiting`, 'Say while waiting', t.say_while_waiting, (s) => (t.say_while_waiting = s), { hint: 'Optional, e.g. “One moment, let me check.”' })}
        ${this.text(`tools.${i}.filler`, 'Filler when slow', t.filler, (s) => (t.filler = s), { hint: 'Optional: said only if the tool has not answered in time, e.g. “Still checking, one moment.”' })}
        ${this.text(`tools.${i}.filler_after_ms`, 'Filler after (ms)', t.filler_after_ms, (s) => (t.filler_after_ms = s), { inputmode: 'numeric', hint: '100 to 10000; empty for 800.' })}
      </div>
      ${this.renderHeaders(t, i)}`;
  }

  private renderTransfer(t: ToolForm, i: number) {
    const at = `tools.${i}.destinations`;
    return html`<div class="sub-rows" role="group" aria-labelledby="bot-tools-${i}-destinations-label">
        <p class="sub-head" id="bot-tools-${i}-destinations-label">Destinations</p>
        ${t.destinations.map((d, j) => {
          // One input holds a number or a SIP URI: the backend's errors on either (or on the pair) land on it.
          const id = `bot-tools-${i}-destinations-${j}-target`;
          const error = errorFor(this.errors, `${at}.${j}.number`) ?? errorFor(this.errors, `${at}.${j}.sip_uri`) ?? this.errors[`${at}.${j}`];
          return html`<div class="grid" role="group" aria-label="Destination ${j + 1}">
            ${this.text(`${at}.${j}.name`, 'Destination name', d.name, (s) => (d.name = s), { required: true, hint: 'e.g. billing' })}
            ${field({ id, label: 'Number or SIP URI', error, hint: 'With + and the country code (a bot has no region), e.g. +49 151 12345678; or sip:agent@pbx.example.com', required: true }, (a) =>
              html`<input id=${a.id} .value=${d.target} aria-required="true" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
                @input=${(e: Event) => this.change(() => (d.target = (e.target as HTMLInputElement).value))} />`,
            )}
            ${this.text(`${at}.${j}.description`, 'When to use it', d.description, (s) => (d.description = s))}
            <div class="field row-remove"><button type="button" class="small link-danger" aria-label="Remove destination ${j + 1} of tool ${i + 1}" ?disabled=${t.destinations.length <= 1}
              @click=${() => {
                this.dropErrors(`${at}.`);
                this.change(() => t.destinations.splice(j, 1));
              }}>Remove</button></div>
          </div>`;
        })}
        ${this.errors[at] ? html`<p class="error-text">${this.errors[at]}</p>` : nothing}
        <button type="button" class="small" ?disabled=${t.destinations.length >= 20} @click=${() => this.change(() => t.destinations.push(emptyDestination()))}>Add destination</button>
      </div>
      <div class="grid">
        ${this.select(`tools.${i}.mode`, 'Mode', t.mode, [['cold', 'Cold (hand the call over)'], ['warm', 'Warm (introduce the caller first)']], (v) => (t.mode = v))}
        ${this.text(`tools.${i}.announcement`, 'Announcement', t.announcement, (s) => (t.announcement = s), { hint: 'Said to the caller first, e.g. “Let me connect you.”' })}
        ${t.mode === 'warm' ? this.text(`tools.${i}.whisper`, 'Whisper', t.whisper, (s) => (t.whisper = s), { hint: 'Said to the person taking the call. May use {{variables}} and {{summary}}.' }) : nothing}
        ${this.text(`tools.${i}.on_failure`, 'On failure', t.on_failure, (s) => (t.on_failure = s), { hint: 'Said if nobody takes the call; the call goes on.' })}
      </div>`;
  }

  private renderTool(t: ToolForm, i: number) {
    const types: Array<readonly [ToolType | '', string]> = TOOL_TYPES.map((k) => [k, TOOL_TYPE_LABELS[k]] as const);
    // A tool stored before types existed keeps its (not runnable) state until a type is picked.
    if (t.type === '') types.push(['', 'No type (offered to the LLM, never run)']);
    return html`<div class="row-item" role="group" aria-label="Tool ${i + 1}">
      <div class="row-head"><span>Tool ${i + 1}${t.name.trim() ? html`: <code>${t.name.trim()}</code>` : nothing}</span>
        <button type="button" class="small link-danger" aria-label="Remove tool ${i + 1}" @click=${() => this.removeTool(i)}>Remove</button></div>
      <div class="grid">
        ${this.text(`tools.${i}.name`, 'Tool name', t.name, (s) => (t.name = s), { required: true, hint: 'Letters, digits, _ and -, e.g. lookup_order.' })}
        ${this.select(`tools.${i}.type`, 'Tool type', t.type, types, (v) => (t.type = v))}
      </div>
      ${this.text(`tools.${i}.description`, 'Tool description', t.description, (s) => (t.description = s), { hint: 'Tells the LLM when to call it.' })}
      ${t.type === 'http' ? this.renderHttp(t, i) : nothing}
      ${t.type === 'transfer_call' ? this.renderTransfer(t, i) : nothing}
      ${t.type === 'send_dtmf' ? html`<p class="hint note">The LLM passes the keys to press as <code>digits</code> (0–9, * and #, up to 32).</p>` : nothing}
      ${t.type === 'end_call' ? html`<p class="hint note">The LLM calls it to hang up once the conversation is over.</p>` : nothing}
      ${this.text(`tools.${i}.parameters`, 'Parameters (JSON Schema)', t.parameters, (s) => (t.parameters = s), {
        area: true,
        mono: true,
        hint: 'A JSON object describing the arguments, e.g. {"type": "object", "properties": {"order_id": {"type": "string"}}}. Leave empty for none.',
      })}
    </div>`;
  }

  private renderToolSecret() {
    const bot = this.bot;
    return html`<div class="tool-secret" data-testid="tool-secret">
      <p class="hint note">
        ${bot
          ? bot.has_tool_secret
            ? html`<strong>Tool secret: set.</strong> HTTP tool requests carry <code>X-Voice-Signature</code>, keyed with it.`
            : html`<strong>Tool secret: none.</strong> Create one so your endpoints can check that requests come from this platform.`
          : 'Save the bot first; then create the secret its HTTP tool requests are signed with.'}
      </p>
      ${bot
        ? html`<button type="button" class="small" ?disabled=${this.busy} @click=${() => (bot.has_tool_secret ? this.askRotate() : this.createSecret())}>
            ${bot.has_tool_secret ? 'Rotate secret' : 'Create secret'}</button>`
        : nothing}
    </div>`;
  }

  private askRotate(): void {
    this.confirmRotate = true;
    this.secretError = null;
  }

  private async createSecret(): Promise<void> {
    const bot = this.bot;
    if (!bot || this.busy) return;
    this.busy = true;
    this.secretError = null;
    try {
      const r = await api.rotateToolSecret(bot.id);
      this.confirmRotate = false;
      this.secret = r.secret;
      this.copyStatus = '';
      // Only the flag: the form may hold unsaved edits, so it is not reloaded.
      this.bot = { ...bot, has_tool_secret: true };
    } catch (err) {
      this.secretError = err instanceof ApiError ? err.message : 'Could not create the tool secret.';
      if (!this.confirmRotate) this.error = this.secretError;
    } finally {
      this.busy = false;
    }
  }

  private async copySecret(): Promise<void> {
    if (!this.secret) return;
    try {
      await navigator.clipboard.writeText(this.secret);
      this.copyStatus = 'Copied to the clipboard.';
    } catch {
      // No clipboard permission: select the text so the user can press Ctrl+C.
      const input = this.querySelector<HTMLInputElement>('#tool-secret-value');
      input?.focus();
      input?.select();
      this.copyStatus = 'Copying is blocked by the browser: the secret is selected, press Ctrl+C.';
    }
  }

  private closeSecret(): void {
    this.secret = null; // the only copy of the secret in the page goes away here
    this.copyStatus = '';
    this.notice = 'Tool secret saved. Its value is no longer shown.';
  }

  private renderSecretDialogs() {
    return html`<vp-dialog
        heading="Copy the tool secret"
        .open=${this.secret !== null}
        @vp-close=${() => this.closeSecret()}
        .content=${this.secret
          ? html`<div class="banner banner-warn" role="alert" id="tool-secret-warning">
                This is the only time the secret is shown: you will not see it again. Copy it now and store it where your tool endpoints can check signatures with it.
              </div>
              <label for="tool-secret-value">Tool secret of “${this.bot?.name ?? ''}”</label>
              <div class="secret">
                <input id="tool-secret-value" readonly .value=${this.secret} aria-describedby="tool-secret-warning" @focus=${(e: Event) => (e.target as HTMLInputElement).select()} />
                <button class="primary" @click=${() => this.copySecret()} autofocus>Copy</button>
              </div>
              <p class="hint" role="status" aria-live="polite">${this.copyStatus}</p>`
          : nothing}
        .actions=${html`<button @click=${() => this.closeSecret()}>I have copied the secret</button>`}
      ></vp-dialog>
      <vp-dialog
        heading="Rotate the tool secret?"
        .open=${this.confirmRotate}
        @vp-close=${() => (this.confirmRotate = false)}
        .content=${html`<p>A new secret replaces the current one at once: requests are signed with the new one from now on, and endpoints that check the old one refuse them until you update them.</p>
          ${errorBanner(this.secretError)}`}
        .actions=${html`<button @click=${() => (this.confirmRotate = false)} autofocus>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.createSecret()}>Rotate secret</button>`}
      ></vp-dialog>`;
  }

  /** The knowledge bases each turn retrieves passages from (shared/DESIGN.md §18). */
  private renderKnowledge(f: BotForm) {
    const bases = this.knowledgeBases;
    return html`<fieldset id="bot-knowledge">
      <legend>Knowledge bases</legend>
      <p class="hint">Each caller turn retrieves the best passages of these bases into the LLM's context; a scripted reply <code>{{knowledge}}</code> says the best one.</p>
      ${bases === null
        ? html`<p class="hint">The knowledge bases could not be listed.</p>`
        : bases.length === 0
          ? html`<p class="hint">No knowledge bases yet: create one on the <a href="/knowledge">Knowledge</a> page.</p>`
          : bases.map(
              (b) => html`<label class="check"><input type="checkbox" name="knowledge_base_ids" value=${b.id} .checked=${f.knowledge_base_ids.includes(b.id)}
                @change=${(e: Event) => this.change((x) => (x.knowledge_base_ids = (e.target as HTMLInputElement).checked ? [...x.knowledge_base_ids, b.id] : x.knowledge_base_ids.filter((id) => id !== b.id)))} /> ${b.name}</label>`,
            )}
      ${this.errors.knowledge_base_ids ? html`<p class="error-text">${this.errors.knowledge_base_ids}</p>` : nothing}
    </fieldset>`;
  }

  /** MCP servers (Streamable HTTP): their tools are listed at call start and offered like the bot's own. */
  private renderMcpServers(f: BotForm) {
    return html`<fieldset id="bot-mcp">
      <legend>MCP servers</legend>
      <p class="hint">Tools of MCP servers (Streamable HTTP), listed when a call starts and offered to the LLM like the tools above; a scripted intent's action may name one.</p>
      ${f.mcp_servers.map(
        (m, i) => html`<div class="sub-rows" role="group" aria-label="MCP server ${i + 1}">
          <div class="grid">
            ${this.text(`mcp_servers.${i}.name`, 'Server name', m.name, (s) => (m.name = s), { required: true, hint: 'Letters, digits, _ and -.' })}
            ${this.text(`mcp_servers.${i}.url`, 'Server URL', m.url, (s) => (m.url = s), { required: true, hint: 'http:// or https://, a public address.' })}
          </div>
          ${this.text(`mcp_servers.${i}.allowed_tools`, 'Allowed tools', m.allowed_tools, (s) => (m.allowed_tools = s), { hint: 'Tool names, comma separated; empty for every tool the server lists (at most 50).' })}
          ${this.text(`mcp_servers.${i}.headers`, 'Headers', m.headers, (s) => (m.headers = s), {
            area: true,
            mono: true,
            hint: m.header_names.length ? `Stored: ${m.header_names.join(', ')} (values hidden). Leave empty to keep them; one "Name: value" a line replaces them.` : 'Optional, one "Name: value" a line, e.g. Authorization: Bearer …; write-only.',
          })}
          <button type="button" class="small" @click=${() => this.change((x) => x.mcp_servers.splice(i, 1))}>Remove MCP server</button>
        </div>`,
      )}
      <button type="button" class="small" id="bot-add-mcp" ?disabled=${f.mcp_servers.length >= 10} @click=${() => this.change((x) => x.mcp_servers.push(emptyMcpServer()))}>Add MCP server</button>
    </fieldset>`;
  }

  private renderTools(f: BotForm) {
    return html`<fieldset id="bot-tools">
      <legend>Tools</legend>
      <p class="hint" style="margin-bottom:12px">What the bot can do during a call: call your API, hang up, transfer to a person, press keys. The LLM calls them as functions. At most 50.</p>
      ${this.renderToolSecret()}
      ${f.tools.map((t, i) => this.renderTool(t, i))}
      ${this.errors.tools ? html`<p class="error-text">${this.errors.tools}</p>` : nothing}
      <button type="button" class="small" id="bot-add-tool" ?disabled=${f.tools.length >= 50} @click=${() => this.addTool()}>Add tool</button>
    </fieldset>`;
  }

  private renderArguments(intent: IntentForm, i: number, type: ToolType | undefined) {
    const at = `policy.intents.${i}.action.arguments`;
    return html`<div class="sub-rows" role="group" aria-labelledby="bot-policy-intents-${i}-arguments-label">
      <p class="sub-head" id="bot-policy-intents-${i}-arguments-label">Arguments</p>
      <p class="hint note">${ARGUMENTS_HINT[type ?? 'http'] ?? ARGUMENTS_HINT.http} Values may use <code>{{variables}}</code> and <code>{{digits}}</code> (the keys the caller pressed).</p>
      ${intent.arguments.map((a, j) => {
        // Schema and template errors name an argument by its name (policy.intents.0.action.arguments.amount); this form by its row.
        const valueError = errorFor(this.errors, `${at}.${j}.value`) ?? (validArgumentName(a.name) ? this.errors[`${at}.${a.name.trim()}`] : undefined);
        return html`<div class="grid header-row" role="group" aria-label="Argument ${j + 1} of intent ${i + 1}">
          ${this.text(`${at}.${j}.name`, 'Argument name', a.name, (v) => (a.name = v), { required: true, hint: 'e.g. order_id' })}
          ${field({ id: `bot-policy-intents-${i}-action-arguments-${j}-value`, label: 'Argument value', error: valueError, hint: 'e.g. {{digits}}' }, (c) =>
            html`<input id=${c.id} .value=${a.value} aria-describedby=${c.describedBy ?? nothing} aria-invalid=${c.invalid}
              @input=${(e: Event) => this.change(() => (a.value = (e.target as HTMLInputElement).value))} />`,
          )}
          <div class="field row-remove"><button type="button" class="small link-danger" aria-label="Remove argument ${j + 1} of intent ${i + 1}" @click=${() => {
            this.dropErrors(`${at}.`);
            this.change(() => intent.arguments.splice(j, 1));
          }}>Remove</button></div>
        </div>`;
      })}
      ${this.errors[at] ? html`<p class="error-text">${this.errors[at]}</p>` : nothing}
      <button type="button" class="small" ?disabled=${intent.arguments.length >= MAX_ACTION_ARGUMENTS} @click=${() => this.change(() => intent.arguments.push(emptyArgument()))}>Add argument</button>
    </div>`;
  }

  private renderIntent(f: BotForm, intent: IntentForm, i: number) {
    const at = `policy.intents.${i}`;
    const tools = actionTools(f.tools);
    const options: Array<readonly [string, string]> = [['', 'No action'], ...tools.map((t) => [t.name, `${t.name} (${ACTION_TYPE_TEXT[t.type]})`] as const)];
    // A stored action whose tool is gone, renamed or of a type a script cannot run: shown as it is, and refused on save.
    if (intent.tool && !tools.some((t) => t.name === intent.tool)) options.push([intent.tool, `${intent.tool} (not a tool this intent can run)`]);
    const acting = intent.tool !== '';
    const actingType = tools.find((t) => t.name === intent.tool)?.type;
    return html`<div class="row-item" role="group" aria-label="Intent ${i + 1}">
      <div class="row-head"><span>Intent ${i + 1}</span>
        <button type="button" class="small link-danger" aria-label="Remove intent ${i + 1}" @click=${() => {
          this.dropErrors('policy.intents.');
          this.change((x) => x.intents.splice(i, 1));
        }}>Remove</button></div>
      <div class="grid">
        ${this.text(`${at}.name`, 'Intent name', intent.name, (s) => (intent.name = s), { required: true })}
        ${this.text(`${at}.reply`, 'Reply', intent.reply, (s) => (intent.reply = s), {
          required: true,
          hint: acting ? 'Said once the tool answered. May use {{variables}}, {{digits}} and {{result.field}} from its JSON answer.' : 'May use {{variables}} and {{digits}}.',
        })}
      </div>
      ${this.text(`${at}.examples`, 'Example phrases', intent.examples, (s) => (intent.examples = s), {
        area: true,
        hint: 'One phrase per line. Not needed when keys select the intent.',
        required: !intent.dtmf.trim(),
      })}
      <div class="grid">
        ${this.text(`${at}.dtmf`, 'Keys (DTMF)', intent.dtmf, (s) => (intent.dtmf = s), {
          inputmode: 'tel',
          hint: 'Selects the intent when the caller presses exactly these keys, e.g. 1 or 42 (0–9, * and #). Callers end keys with # or a pause, so # counts only alone.',
        })}
        ${this.select(`${at}.action.tool`, 'Action', intent.tool, options, (v) => (intent.tool = v), tools.length ? 'Runs one of this bot’s tools when the intent matches; the reply is said once it answered.' : 'Add a tool above (HTTP, transfer or keypad) to run it when the intent matches.')}
      </div>
      ${acting
        ? html`${this.renderArguments(intent, i, actingType)}
          ${this.text(`${at}.on_error_reply`, 'Reply if the tool fails', intent.on_error_reply, (s) => (intent.on_error_reply = s), {
            hint: 'Said instead of the reply when the tool fails or times out; empty for the fallback reply. May use {{variables}} and {{digits}}.',
          })}`
        : nothing}
      ${checkbox({ id: `bot-policy-intents-${i}-end_call`, label: 'End the call after this reply', checked: intent.end_call, onChange: (c) => this.change(() => (intent.end_call = c)) })}
      ${f.analysis.fields.some((x) => x.name.trim()) || intent.sets.length ? this.renderSets(f, intent, i) : nothing}
    </div>`;
  }

  /** An intent's `sets` (docs/design.md §10): the analysis fields it fills when it matched, each value by the field's type. */
  private renderSets(f: BotForm, intent: IntentForm, i: number) {
    const at = `policy.intents.${i}.sets`;
    const named = f.analysis.fields.filter((x) => x.name.trim());
    return html`<div class="sub-rows" role="group" aria-labelledby="bot-policy-intents-${i}-sets-label">
      <p class="sub-head" id="bot-policy-intents-${i}-sets-label">Sets analysis fields</p>
      <p class="hint note">After the call, when this intent matched a caller turn, these fields of the post-call analysis get these values (a later turn’s intent wins).</p>
      ${intent.sets.map((row, j) => {
        const fieldOf = named.find((x) => x.name.trim() === row.field.trim());
        const options: Array<readonly [string, string]> = [['', 'Pick a field'], ...named.map((x) => [x.name.trim(), x.name.trim()] as const)];
        // A stored field that is gone or renamed: shown as it is, and refused on save.
        if (row.field && !fieldOf) options.push([row.field, `${row.field} (not an analysis field)`]);
        // The backend names a value by its field (policy.intents.0.sets.outcome); this form by its row.
        const valueError = this.errors[`${at}.${j}.value`] ?? (row.field.trim() ? this.errors[`${at}.${row.field.trim()}`] : undefined);
        return html`<div class="grid header-row" role="group" aria-label="Field ${j + 1} set by intent ${i + 1}">
          ${field({ id: `bot-policy-intents-${i}-sets-${j}-field`, label: 'Field', error: this.errors[`${at}.${j}.field`] }, (a) =>
            html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${(e: Event) => this.change(() => (row.field = (e.target as HTMLSelectElement).value))}>
              ${options.map(([v, l]) => html`<option value=${v} .selected=${v === row.field}>${l}</option>`)}
            </select>`,
          )}
          ${field({ id: `bot-policy-intents-${i}-sets-${j}-value`, label: 'Value', error: valueError, hint: fieldOf ? ANALYSIS_TYPE_LABELS[fieldOf.type] : undefined }, (a) => this.setValueControl(a, row, fieldOf))}
          <div class="field row-remove"><button type="button" class="small link-danger" aria-label="Remove field ${j + 1} set by intent ${i + 1}" @click=${() => {
            this.dropErrors(`${at}.`);
            this.change(() => intent.sets.splice(j, 1));
          }}>Remove</button></div>
        </div>`;
      })}
      <button type="button" class="small" ?disabled=${intent.sets.length >= MAX_ANALYSIS_FIELDS} @click=${() => this.change(() => intent.sets.push(emptySet()))}>Set a field</button>
    </div>`;
  }

  /** The value of a `sets` row: a list for an enum or yes/no field, else typed. */
  private setValueControl(a: { id: string; describedBy?: string; invalid: 'true' | 'false' }, row: { value: string }, f: AnalysisFieldForm | undefined): TemplateResult {
    const choices: string[] | null = f?.type === 'enum' ? f.values.split('\n').map((v) => v.trim()).filter(Boolean) : f?.type === 'boolean' ? ['true', 'false'] : null;
    if (choices) {
      const label = (v: string) => (f?.type === 'boolean' ? (v === 'true' ? 'Yes' : 'No') : v);
      const options = [...(choices.includes(row.value) ? [] : [row.value]), ...choices];
      return html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${(e: Event) => this.change(() => (row.value = (e.target as HTMLSelectElement).value))}>
        ${options.map((v) => html`<option value=${v} .selected=${v === row.value}>${v === '' ? 'Pick a value' : label(v)}</option>`)}
      </select>`;
    }
    return html`<input id=${a.id} .value=${row.value} inputmode=${f?.type === 'number' ? 'decimal' : nothing} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
      @input=${(e: Event) => this.change(() => (row.value = (e.target as HTMLInputElement).value))} />`;
  }

  /**
   * Post-call analysis (docs/design.md §10): a summary, fields and a success criterion, worked out after each call
   * with a caller turn. An enum field's values stay in the form (not sent) while another type is picked.
   */
  private renderAnalysis(f: BotForm) {
    const a = f.analysis;
    const types = ANALYSIS_FIELD_TYPES.map((t) => [t, ANALYSIS_TYPE_LABELS[t]] as const);
    return html`<fieldset id="bot-analysis">
      <legend>Post-call analysis</legend>
      <p class="hint" style="margin-bottom:12px">After a call in which the caller said or pressed something, the dialler works out what it achieved and puts it on the call (and in the <code>call.analyzed</code> webhook). OpenAI-compatible bots ask their model; scripted bots read the transcript with their intents (each intent’s “Sets analysis fields”).</p>
      ${checkbox({ id: 'bot-analysis-summary', label: 'Write a summary of each call', checked: a.summary, onChange: (c) => this.change(() => (a.summary = c)) })}
      ${a.fields.map(
        (x, i) => html`<div class="row-item" role="group" aria-label="Analysis field ${i + 1}">
          <div class="row-head"><span>Field ${i + 1}</span>
            <button type="button" class="small link-danger" aria-label="Remove analysis field ${i + 1}" @click=${() => {
              this.dropErrors('analysis.fields.');
              this.change(() => a.fields.splice(i, 1));
            }}>Remove</button></div>
          <div class="grid">
            ${this.text(`analysis.fields.${i}.name`, 'Field name', x.name, (v) => (x.name = v), { required: true, hint: 'e.g. outcome: lowercase letters, digits and _.' })}
            ${this.select<AnalysisFieldType>(`analysis.fields.${i}.type`, 'Type', x.type, types, (v) => (x.type = v))}
          </div>
          ${this.text(`analysis.fields.${i}.description`, 'Description', x.description, (v) => (x.description = v), { hint: 'What the field means: the model reads it.' })}
          ${x.type === 'enum' || errorFor(this.errors, `analysis.fields.${i}.values`)
            ? this.text(`analysis.fields.${i}.values`, 'Values', x.values, (v) => (x.values = v), { area: true, required: x.type === 'enum', hint: 'One per line, e.g. promised, refused, callback.' })
            : nothing}
        </div>`,
      )}
      ${this.errors['analysis.fields'] ? html`<p class="error-text">${this.errors['analysis.fields']}</p>` : nothing}
      <button type="button" class="small" id="bot-add-analysis-field" ?disabled=${a.fields.length >= MAX_ANALYSIS_FIELDS} @click=${() => this.change(() => a.fields.push(emptyAnalysisField()))}>Add field</button>
      <div style="margin-top:16px">
        ${this.text('analysis.success', 'Success criterion', a.success, (v) => (a.success = v), {
          area: true,
          hint: 'Optional: what makes a call a success, in words; the call’s analysis says whether it was met. Scripted bots judge it by the intents (or yes/no fields) it names: met when one of them matched (or is yes).',
        })}
      </div>
    </fieldset>`;
  }

  /** Redaction and recording (shared/DESIGN.md §16): what the platform masks of this bot's calls, and what it records. */
  private renderPrivacy(f: BotForm) {
    const p = f.privacy;
    const toggle = (e: RedactionEntity, on: boolean) => (p.entities = on ? [...new Set([...p.entities, e])] : p.entities.filter((x) => x !== e));
    return html`<fieldset id="bot-privacy">
      <legend>Privacy</legend>
      <p class="hint" style="margin-bottom:12px">What is checked is masked (shown as <code>[card_number]</code>, <code>[email]</code>…) in the transcript, the actions, the analysis, webhooks, exports and logs, before anything is stored or sent. Card numbers are found by their check digit, keypad presses included.</p>
      <div role="group" aria-label="Redact">
        ${REDACTION_ENTITIES.map((e) =>
          checkbox({ id: `bot-redaction-${e}`, label: REDACTION_ENTITY_LABELS[e], checked: p.entities.includes(e), onChange: (c) => this.change(() => toggle(e, c)) }),
        )}
      </div>
      ${checkbox({
        id: 'bot-redaction-redact_llm',
        label: 'Mask them for the language model too',
        checked: p.redact_llm,
        hint: 'Off: the model of the live call hears the caller’s words as said (it may need them to act). On: it gets the mask as well.',
        onChange: (c) => this.change(() => (p.redact_llm = c)),
      })}
      ${checkbox({ id: 'bot-recording-enabled', label: 'Record calls', checked: p.recording, hint: 'Off: no recording is made or stored.', onChange: (c) => this.change(() => (p.recording = c)) })}
      ${checkbox({
        id: 'bot-recording-redact_keypad_tones',
        label: 'Silence keypad tones in the recording',
        checked: p.redact_keypad_tones,
        hint: 'The caller’s side of the recording is silent around each key they press (a card number typed on the keypad cannot be heard back).',
        onChange: (c) => this.change(() => (p.redact_keypad_tones = c)),
      })}
    </fieldset>`;
  }

  /** Applies one of the small edits to the flow as it parses now, and writes it back as the editor's text. */
  private editFlow(edit: (flow: BotFlow | null) => BotFlow | null | string): void {
    const f = this.form;
    if (!f) return;
    const parsed = parseFlowText(f.flow);
    if (!parsed.ok) return;
    const next = edit(parsed.value as BotFlow | null);
    if (typeof next === 'string') {
      this.flowEdit.error = next;
      this.requestUpdate();
      return;
    }
    this.flowEdit.error = '';
    this.change((x) => (x.flow = next ? JSON.stringify(next, null, 2) : ''));
  }

  /** The flow (docs/design.md §18): its graph drawn, its JSON edited with its problems found as it is typed, small edits. */
  private renderFlow(f: BotForm) {
    const parsed = parseFlowText(f.flow);
    const schemaErrors = validateBot(formToBody(f));
    const problems = liveFlowProblems(f.flow, flowToolNames(f.tools, f.handoff.enabled, f.mcp_servers), schemaErrors, anyMcpTool(f.mcp_servers));
    // A shape the schema refuses may not be drawn or edited as a flow; the last one that was is kept on show.
    const readable = parsed.ok && !Object.keys(schemaErrors).some((k) => k === 'flow' || k.startsWith('flow.'));
    if (readable) this.lastGraph = layoutFlow(parsed.value);
    const flow = readable ? (parsed.value as BotFlow | null) : null;
    const ids = Object.keys(flow?.nodes ?? {});
    const transitions = Object.entries(flow?.nodes ?? {}).flatMap(([from, node]) => node.transitions.map((t, i) => ({ key: `${from}:${i}`, from, index: i, text: `${from} → ${t.to}${whenLabel(t.when) ? ` (${whenLabel(t.when)})` : ''}` })));
    const refused: FlowProblem[] = Object.entries(this.errors)
      .filter(([k]) => k.startsWith('flow.') || (k === 'flow' && parsed.ok))
      .map(([field, message]) => ({ field, message }));
    const e = this.flowEdit;
    const set = (k: 'nodeId' | 'removeNode' | 'from' | 'to' | 'when' | 'removeTransition') => (ev: Event) => {
      e[k] = (ev.target as HTMLInputElement).value;
    };
    const pick = (id: string, label: string, value: string, options: string[], onChange: (ev: Event) => void) => html`<div class="field">
      <label for=${id}>${label}</label>
      <select id=${id} @change=${onChange}>
        <option value="" .selected=${value === ''}>Choose…</option>
        ${options.map((o) => html`<option value=${o} .selected=${o === value}>${o}</option>`)}
      </select>
    </div>`;
    const problemList = (items: FlowProblem[], testid: string) =>
      html`<ul class="flow-problems" data-testid=${testid}>
        ${items.map((p) => html`<li><code>${p.field}</code> ${p.message}</li>`)}
      </ul>`;
    return html`<fieldset id="bot-flow-section">
      <legend>Flow</legend>
      <p class="hint" style="margin-bottom:12px">The conversation as a graph of nodes: each node may add to the prompt, say something on entering, offer its own tools and intents, and move on by a caller’s intent, a tool’s result or a variable. Leave it empty for no flow.</p>
      ${flowGraph(this.lastGraph)}
      ${field({ id: 'bot-flow', label: 'Flow (JSON)', error: parsed.ok ? undefined : errorFor(this.errors, 'flow'), hint: 'start, nodes: {id: {prompt?, say?, tools?, intents?, transitions: [{to, when: {intent} | {tool_result: {tool, path?, equals?}} | {variable: {name, equals}}}], end_call?}}, global_nodes?, context?' }, (a) =>
        html`<textarea id=${a.id} class="mono flow-json" spellcheck="false" rows="14" .value=${f.flow} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${problems.length || refused.length ? 'true' : a.invalid}
          @input=${(ev: Event) => this.change((x) => (x.flow = (ev.target as HTMLTextAreaElement).value))}></textarea>`,
      )}
      <div role="status" aria-live="polite" data-testid="flow-status">
        ${problems.length
          ? html`<p class="error-text">${problems.length === 1 ? '1 problem' : `${problems.length} problems`} in this flow (the server refuses it until fixed):</p>${problemList(problems, 'flow-problems')}`
          : f.flow.trim()
            ? html`<p class="hint">No problems found in this flow.</p>`
            : nothing}
      </div>
      ${refused.length ? html`<div role="alert"><p class="error-text">Refused at save:</p>${problemList(refused, 'flow-save-errors')}</div>` : nothing}
      <details class="flow-edits" ?open=${!f.flow.trim()}>
        <summary>Add or remove a node or a transition</summary>
        ${parsed.ok && (readable || parsed.value === null)
          ? html`<div class="flow-edit-row" role="group" aria-label="Add a node">
                <div class="field"><label for="bot-flow-new-node">New node id</label><input id="bot-flow-new-node" .value=${live(e.nodeId)} @input=${set('nodeId')} /></div>
                ${checkbox({ id: 'bot-flow-new-node-end', label: 'Ends the call', checked: e.nodeEnds, onChange: (c) => (e.nodeEnds = c) })}
                <div class="field row-remove"><button type="button" class="small" @click=${() =>
                  this.editFlow((fl) => {
                    const id = e.nodeId.trim();
                    if (!new RegExp(FLOW_NODE_ID_PATTERN).test(id)) return 'A node id is 1 to 48 letters, digits, _ or -.';
                    if (fl && Object.hasOwn(fl.nodes, id)) return `The flow has a node ${id} already.`;
                    e.nodeId = '';
                    return addNode(fl, id, { endCall: e.nodeEnds });
                  })}>Add node</button></div>
              </div>
              ${ids.length
                ? html`<div class="flow-edit-row" role="group" aria-label="Add a transition">
                      ${pick('bot-flow-from', 'From', e.from, ids, set('from'))}
                      ${pick('bot-flow-to', 'To', e.to, ids, set('to'))}
                      <div class="field"><label for="bot-flow-when-kind">When</label>
                        <select id="bot-flow-when-kind" @change=${(ev: Event) => this.change(() => (e.kind = (ev.target as HTMLSelectElement).value as typeof e.kind))}>
                          <option value="intent" .selected=${e.kind === 'intent'}>the caller’s intent</option>
                          <option value="tool_result" .selected=${e.kind === 'tool_result'}>a tool’s result</option>
                          <option value="variable" .selected=${e.kind === 'variable'}>a variable equals</option>
                        </select></div>
                      <div class="field"><label for="bot-flow-when">${e.kind === 'intent' ? 'Intent' : e.kind === 'tool_result' ? 'Tool' : 'Variable (name=value)'}</label><input id="bot-flow-when" .value=${live(e.when)} @input=${set('when')} /></div>
                      <div class="field row-remove"><button type="button" class="small" @click=${() =>
                        this.editFlow((fl) => {
                          if (!fl || !e.from || !e.to) return 'Choose the node the transition leaves and the one it leads to.';
                          if (!e.when.trim()) return 'Say when the transition is taken.';
                          const next = addTransition(fl, e.from, { to: e.to, when: whenFrom(e.kind, e.when) });
                          e.when = '';
                          return next;
                        })}>Add transition</button></div>
                    </div>
                    <div class="flow-edit-row" role="group" aria-label="Remove a node or a transition">
                      ${pick('bot-flow-remove-node', 'Node', e.removeNode, ids, set('removeNode'))}
                      <div class="field row-remove"><button type="button" class="small link-danger" @click=${() =>
                        this.editFlow((fl) => {
                          if (!fl || !e.removeNode) return 'Choose the node to remove.';
                          const next = removeNode(fl, e.removeNode);
                          e.removeNode = '';
                          return next;
                        })}>Remove node</button></div>
                      <div class="field"><label for="bot-flow-remove-transition">Transition</label>
                        <select id="bot-flow-remove-transition" @change=${set('removeTransition')}>
                          <option value="">Choose…</option>
                          ${transitions.map((t) => html`<option value=${t.key} .selected=${t.key === e.removeTransition}>${t.text}</option>`)}
                        </select></div>
                      <div class="field row-remove"><button type="button" class="small link-danger" @click=${() =>
                        this.editFlow((fl) => {
                          const t = transitions.find((x) => x.key === e.removeTransition);
                          if (!fl || !t) return 'Choose the transition to remove.';
                          e.removeTransition = '';
                          return removeTransition(fl, t.from, t.index);
                        })}>Remove transition</button></div>
                    </div>`
                : nothing}
              ${e.error ? html`<p class="error-text" role="alert">${e.error}</p>` : nothing}`
          : html`<p class="hint">Fix the flow’s JSON (or its shape) first.</p>`}
      </details>
    </fieldset>`;
  }

  /** Handoff (docs/design.md §18): the other active bots this one may pass the call to, their greeting, the words if it fails. */
  private renderHandoff(f: BotForm) {
    const h = f.handoff;
    const others = (this.handoffBots ?? []).filter((b) => b.id !== this.bot?.id && b.active);
    // Ids already set but not on offer (inactive or gone): listed so they can be unticked.
    const unknown = h.bots.filter((id) => !others.some((b) => b.id === id));
    const options = [...others.map((b) => ({ id: b.id, label: b.name })), ...unknown.map((id) => ({ id, label: `${id} (inactive or missing)` }))];
    const botErrors = Object.entries(this.errors).filter(([k]) => /^handoff\.bots\.\d+$/.test(k));
    const toggle = (id: string, on: boolean) => (h.bots = on ? [...h.bots.filter((b) => b !== id), id] : h.bots.filter((b) => b !== id));
    return html`<fieldset id="bot-handoff">
      <legend>Handoff</legend>
      ${checkbox({
        id: 'bot-handoff-enabled',
        label: 'Let this bot hand calls to other bots',
        checked: h.enabled,
        hint: 'The bot gets a handoff tool: the call goes on in the same room with the other bot’s prompt, voice, tools and flow.',
        onChange: (c) => this.change(() => (h.enabled = c)),
      })}
      ${h.enabled
        ? html`<div role="group" aria-labelledby="bot-handoff-bots-label" data-testid="handoff-bots">
              <p class="sub-head" id="bot-handoff-bots-label">Bots it may hand to</p>
              ${this.handoffBots === null ? html`<p class="loading">Loading bots…</p>` : !options.length ? html`<p class="hint">No other active bot yet.</p>` : nothing}
              ${options.map((o) => checkbox({ id: `bot-handoff-bot-${o.id}`, label: o.label, checked: h.bots.includes(o.id), onChange: (c) => this.change(() => toggle(o.id, c)) }))}
              ${this.errors['handoff.bots'] ? html`<p class="error-text">${this.errors['handoff.bots']}</p>` : nothing}
              ${botErrors.map(([k, m]) => {
                const id = h.bots[Number(k.split('.')[2])];
                return html`<p class="error-text">${options.find((o) => o.id === id)?.label ?? id ?? k}: ${m}</p>`;
              })}
            </div>
            ${checkbox({ id: 'bot-handoff-greeting', label: 'The other bot says its greeting when it takes the call', checked: h.greeting, onChange: (c) => this.change(() => (h.greeting = c)) })}
            ${this.text('handoff.on_failure', 'Said when the handoff fails', h.on_failure, (v) => (h.on_failure = v), { hint: 'When the other bot cannot take the call; the call goes on with this bot.' })}`
        : nothing}
    </fieldset>`;
  }

  private renderPolicy(f: BotForm) {
    return html`<fieldset>
      <legend>Scripted policy</legend>
      ${checkbox({
        id: 'bot-use-policy',
        label: 'Use a scripted dialogue policy',
        checked: f.usePolicy,
        hint: 'The offline “scripted” LLM answers by matching the caller’s words (or keypad keys) to these intents.',
        onChange: (c) => this.change((x) => (x.usePolicy = c)),
      })}
      ${f.usePolicy
        ? html`${f.intents.map((intent, i) => this.renderIntent(f, intent, i))}
            <button type="button" class="small" @click=${() => this.change((x) => x.intents.push(emptyIntent()))}>Add intent</button>
            <div style="margin-top:16px">
              ${this.text('policy.fallback.reply', 'Fallback reply', f.fallback.reply, (s) => (f.fallback.reply = s), { required: true, hint: 'Said when no intent matches.' })}
              ${checkbox({ id: 'bot-policy-fallback-end_call', label: 'End the call after the fallback reply', checked: f.fallback.end_call, onChange: (c) => this.change(() => (f.fallback.end_call = c)) })}
            </div>`
        : nothing}
    </fieldset>`;
  }

  /**
   * Answering machine detection (docs/design.md §10). The message and the wait for the beep belong to
   * "leave a message"; they stay in the form (and are sent) otherwise, and show whenever they hold an error.
   */
  private renderAnsweringMachine(f: BotForm) {
    const am = f.answering_machine;
    const leaving = am.on_machine === 'leave_message';
    const options = ON_MACHINE.map((o) => [o, ON_MACHINE_LABELS[o]] as const);
    return html`<fieldset id="bot-answering-machine">
      <legend>Answering machines</legend>
      <p class="hint" style="margin-bottom:12px">Outbound phone calls only. With detection on, the bot listens before it greets: a person is greeted at once, a machine gets what you choose below, a fax machine ends the call.</p>
      ${checkbox({
        id: 'bot-answering_machine-detect',
        label: 'Detect answering machines',
        checked: am.detect,
        hint: 'Campaigns may turn this on or off for their own calls.',
        onChange: (c) => this.change(() => (am.detect = c)),
      })}
      <div class="grid">
        ${this.select<OnMachine>('answering_machine.on_machine', 'When a machine answers', am.on_machine, options, (v) => (am.on_machine = v),
          leaving ? 'The bot waits for the beep (or the end of the machine’s greeting), says the message, and hangs up.' : 'The call ends at once, as voicemail (a campaign may retry it).')}
        ${leaving || errorFor(this.errors, 'answering_machine.max_wait_for_beep_seconds')
          ? this.text('answering_machine.max_wait_for_beep_seconds', 'Longest wait for the beep (seconds)', am.max_wait_for_beep_seconds, (s) => (am.max_wait_for_beep_seconds = s), {
              inputmode: 'numeric',
              hint: '5 to 120: with no beep heard by then, the message is said anyway.',
            })
          : nothing}
      </div>
      ${leaving || errorFor(this.errors, 'answering_machine.message')
        ? this.text('answering_machine.message', 'Message for the machine', am.message, (s) => (am.message = s), {
            area: true,
            required: leaving,
            hint: 'Said after the beep, then the bot hangs up. May use {{variables}}, e.g. Hello {{customer_name}}, please call us back.',
          })
        : nothing}
    </fieldset>`;
  }

  /**
   * Turn-taking (docs/design.md §11): when the caller's turn is over, and what stops the bot while it speaks.
   * The minimum silence belongs to smart mode and min words to ignoring backchannels; both stay in the form
   * (and are sent) otherwise, and show whenever they hold an error.
   */
  private renderTurnTaking(f: BotForm) {
    const td = f.turn_detection;
    const it = f.interruption;
    const smart = td.mode === 'smart';
    const modes = TURN_DETECTION_MODES.map((m) => [m, TURN_DETECTION_LABELS[m]] as const);
    return html`<fieldset id="bot-turn-taking">
      <legend>Turn-taking</legend>
      <div class="grid">
        ${this.select<TurnDetectionMode>('turn_detection.mode', 'End of the caller’s turn', td.mode, modes, (v) => (td.mode = v),
          smart ? 'Answers sooner when the caller’s sentence is complete; waits longer when it is not.' : 'Waits the same silence after every turn: predictable, but slower after a complete sentence.')}
        ${smart || errorFor(this.errors, 'turn_detection.min_silence_ms')
          ? this.text('turn_detection.min_silence_ms', 'Minimum silence (ms)', td.min_silence_ms, (s) => (td.min_silence_ms = s), {
              inputmode: 'numeric',
              hint: 'Ends a complete sentence: lower answers faster but may cut in on a pause. 100 to 5000.',
            })
          : nothing}
        ${this.text('turn_detection.end_of_turn_silence_ms', smart ? 'Maximum silence (ms)' : 'End-of-turn silence (ms)', td.end_of_turn_silence_ms, (s) => (td.end_of_turn_silence_ms = s), {
          inputmode: 'numeric',
          hint: smart
            ? 'Higher lets callers pause mid-sentence, but every incomplete turn waits this long. 100 to 5000.'
            : 'Ends every turn: higher lets callers pause mid-sentence, but every answer waits this long. 100 to 5000.',
        })}
      </div>
      ${checkbox({
        id: 'bot-interruption-ignore_backchannels',
        label: 'Ignore backchannels while the bot speaks',
        checked: it.ignore_backchannels,
        hint: 'On: the bot keeps talking over “uh-huh”, “okay”, “yeah” (other speech stops it); off: any sound stops it.',
        onChange: (c) => this.change(() => (it.ignore_backchannels = c)),
      })}
      ${it.ignore_backchannels || errorFor(this.errors, 'interruption.min_words')
        ? html`<div class="grid fill">
            ${this.text('interruption.min_words', 'Words that always interrupt', it.min_words, (s) => (it.min_words = s), {
              inputmode: 'numeric',
              hint: 'This many acknowledgements in a row stop the bot: lower yields sooner, higher talks over more. 1 to 10.',
            })}
          </div>`
        : nothing}
    </fieldset>`;
  }

  private renderForm(f: BotForm) {
    return html`<form novalidate @submit=${this.save}>
      <fieldset>
        <legend>General</legend>
        <div class="grid">
          ${this.text('name', 'Name', f.name, (s) => (f.name = s), { required: true })}
          ${this.text('language', 'Language', f.language, (s) => (f.language = s), { hint: 'BCP 47 tag, e.g. en-US.' })}
          ${this.text('max_call_seconds', 'Maximum call length (seconds)', f.max_call_seconds, (s) => (f.max_call_seconds = s), { inputmode: 'numeric', hint: '10 to 7200.' })}
          ${this.text('dtmf.inter_digit_timeout_ms', 'Keypad pause (ms)', f.inter_digit_timeout_ms, (s) => (f.inter_digit_timeout_ms = s), { inputmode: 'numeric', hint: 'Keys the caller presses end their turn at # or after this long without a key. 300 to 10000.' })}
        </div>
        ${checkbox({ id: 'bot-active', label: 'Active (accepts calls)', checked: f.active, onChange: (c) => this.change(() => (f.active = c)) })}
        ${checkbox({
          id: 'bot-require_passing_tests',
          label: 'Require passing tests to publish',
          checked: f.require_passing_tests,
          hint: 'On: a save is a draft; calls keep running the published version until a version whose last test run is all green is published.',
          onChange: (c) => this.change(() => (f.require_passing_tests = c)),
        })}
        ${this.text('prompt', 'Prompt', f.prompt, (s) => (f.prompt = s), { area: true, hint: 'Instructions for the LLM. May use {{variables}}.' })}
        ${this.text('greeting', 'Greeting', f.greeting, (s) => (f.greeting = s), { area: true, hint: 'The first thing the bot says. May use {{variables}}.' })}
      </fieldset>
      ${this.renderVariables(f)}
      <fieldset>
        <legend>Voice (text to speech)</legend>
        <div class="grid">
          ${this.text('voice.provider', 'Voice provider', f.voice.provider, (s) => (f.voice.provider = s), { list: 'voice-providers', required: true })}
          ${this.text('voice.voice_id', 'Voice ID', f.voice.voice_id, (s) => (f.voice.voice_id = s), { required: true })}
          ${this.text('voice.speed', 'Speed', f.voice.speed, (s) => (f.voice.speed = s), { inputmode: 'decimal', hint: '0.25 to 4.' })}
        </div>
      </fieldset>
      <fieldset>
        <legend>Speech recognition (STT)</legend>
        <div class="grid">
          ${this.text('stt.provider', 'STT provider', f.stt.provider, (s) => (f.stt.provider = s), { list: 'stt-providers', required: true })}
          ${this.text('stt.model', 'STT model', f.stt.model, (s) => (f.stt.model = s), { required: true })}
          ${this.text('stt.language', 'STT language', f.stt.language, (s) => (f.stt.language = s), { required: true })}
        </div>
        ${checkbox({
          id: 'bot-audio-noise_suppression',
          label: 'Suppress background noise',
          checked: f.noise_suppression,
          hint: 'RNNoise cleans the caller’s audio before the bot listens: better on noisy lines, about 2 % of a CPU core per call.',
          onChange: (c) => this.change(() => (f.noise_suppression = c)),
        })}
      </fieldset>
      <fieldset>
        <legend>Language model (LLM)</legend>
        <div class="grid">
          ${this.text('llm.provider', 'LLM provider', f.llm.provider, (s) => (f.llm.provider = s), { list: 'llm-providers', required: true })}
          ${this.text('llm.model', 'LLM model', f.llm.model, (s) => (f.llm.model = s), { required: true })}
          ${this.text('llm.temperature', 'Temperature', f.llm.temperature, (s) => (f.llm.temperature = s), { inputmode: 'decimal', hint: '0 to 2.' })}
        </div>
        ${this.text('llm.base_url', 'LLM base URL', f.llm.base_url, (s) => (f.llm.base_url = s), { hint: 'OpenAI-compatible servers only: this bot’s API root (vLLM, Ollama, llama.cpp). Empty for the platform’s.' })}
      </fieldset>
      ${this.renderTurnTaking(f)}
      ${this.renderAnsweringMachine(f)}
      ${this.renderTools(f)}
      ${this.renderMcpServers(f)}
      ${this.renderKnowledge(f)}
      ${this.renderPolicy(f)}
      ${this.renderFlow(f)}
      ${this.renderHandoff(f)}
      ${this.renderAnalysis(f)}
      ${this.renderPrivacy(f)}
      ${Object.entries(SUGGESTIONS).map(([k, items]) => html`<datalist id="${k}-providers">${items.map((i) => html`<option value=${i}></option>`)}</datalist>`)}
      ${errorBanner(this.error)}
      <div class="form-actions">
        <button class="primary" type="submit" ?disabled=${this.busy}>${this.bot ? 'Save changes' : 'Create bot'}</button>
        <a class="button" href="/bots">Cancel</a>
      </div>
    </form>`;
  }

  override render() {
    const heading = this.botId ? (this.bot ? `Edit bot: ${this.bot.name}` : 'Edit bot') : 'New bot';
    return html`<div class="page-head">
        <h1 tabindex="-1">${heading}</h1>
        ${this.bot ? html`<div class="row-actions"><a class="button" href="/bots/${this.bot.id}/tests">Tests</a> <a class="button" href="/bots/${this.bot.id}/test-call">Test call</a></div>` : nothing}
      </div>
      ${this.bot ? html`<p class="subtitle">ID <code>${this.bot.id}</code> · dial-out uses this as <code>bot_id</code>.</p>` : html`<p class="subtitle">Define what the bot says and which providers it uses.</p>`}
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      ${this.loadError ? html`${errorBanner(this.loadError)}<a href="/bots">Back to the bots</a>` : nothing}
      ${!this.form && !this.loadError ? html`<p class="loading" role="status">Loading bot…</p>` : nothing}
      ${this.form ? this.renderForm(this.form) : nothing}
      ${this.bot && this.form ? this.renderVersions(this.bot) : nothing}
      ${this.renderSecretDialogs()}`;
  }
}
customElements.define('vp-bot-edit-page', VpBotEditPage);
