// Create or edit a bot: prompt, greeting, declared variables, voice/STT/LLM settings, tools, the
// scripted policy, limits. Validated with the shared schema before it is sent; API 422 details land on fields.
import { html, nothing, type TemplateResult } from 'lit';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { LightElement } from '../components/base.js';
import { checkbox, errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { botToForm, emptyIntent, emptyTool, formToBody, type BotForm } from '../botForm.js';
import { setFlash, takeFlash } from '../flash.js';
import { navigate } from '../router.js';
import { errorFor, validateBot, type FieldErrors } from '../validation.js';

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
  };
  declare botId: string | undefined;
  declare bot: Bot | null;
  declare form: BotForm | null;
  declare errors: FieldErrors;
  declare error: string | null;
  declare loadError: string | null;
  declare busy: boolean;
  declare notice: string | null;

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
  }

  private loadedFor: string | undefined;

  protected override willUpdate(): void {
    if (this.botId) {
      if (this.loadedFor !== this.botId) {
        this.loadedFor = this.botId;
        void this.load(this.botId);
      }
    } else if (!this.form) this.form = botToForm();
  }

  private async load(id: string): Promise<void> {
    this.form = null;
    this.loadError = null;
    try {
      this.bot = await api.getBot(id);
      this.form = botToForm(this.bot);
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
    this.errors = validateBot(body);
    if (Object.keys(this.errors).length) {
      this.error = 'Fix the highlighted fields and save again.';
      await this.updateComplete;
      this.querySelector<HTMLElement>('form [aria-invalid="true"]')?.focus();
      return;
    }
    this.busy = true;
    try {
      if (this.bot) {
        this.bot = await api.updateBot(this.bot.id, body);
        this.form = botToForm(this.bot);
        this.notice = 'Changes saved.';
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
      <p class="hint" style="margin-bottom:12px">Data a call may carry (e.g. from the CRM). Use them as <code>{{name}}</code> in the prompt, greeting and replies.</p>
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

  private async removeTool(i: number): Promise<void> {
    // Errors are keyed by position: drop them so they do not land on the tool that moves up.
    this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => !k.startsWith('tools.')));
    this.change((x) => x.tools.splice(i, 1));
    await this.updateComplete;
    this.querySelector<HTMLElement>('#bot-add-tool')?.focus();
  }

  private renderTools(f: BotForm) {
    return html`<fieldset id="bot-tools">
      <legend>Tools</legend>
      <p class="hint" style="margin-bottom:12px">Functions the LLM may call during a call (OpenAI function shape). At most 50.</p>
      ${f.tools.map(
        (t, i) => html`<div class="row-item" role="group" aria-label="Tool ${i + 1}">
          <div class="row-head"><span>Tool ${i + 1}${t.name.trim() ? html`: <code>${t.name.trim()}</code>` : nothing}</span>
            <button type="button" class="small link-danger" aria-label="Remove tool ${i + 1}" @click=${() => this.removeTool(i)}>Remove</button></div>
          <div class="grid">
            ${this.text(`tools.${i}.name`, 'Tool name', t.name, (s) => (t.name = s), { required: true, hint: 'Letters, digits, _ and -, e.g. lookup_order.' })}
            ${this.text(`tools.${i}.description`, 'Tool description', t.description, (s) => (t.description = s), { hint: 'Tells the LLM when to call it.' })}
          </div>
          ${this.text(`tools.${i}.parameters`, 'Parameters (JSON Schema)', t.parameters, (s) => (t.parameters = s), {
            area: true,
            mono: true,
            hint: 'A JSON object describing the arguments, e.g. {"type": "object", "properties": {"order_id": {"type": "string"}}}. Leave empty for none.',
          })}
        </div>`,
      )}
      ${this.errors.tools ? html`<p class="error-text">${this.errors.tools}</p>` : nothing}
      <button type="button" class="small" id="bot-add-tool" @click=${() => this.addTool()}>Add tool</button>
    </fieldset>`;
  }

  private renderPolicy(f: BotForm) {
    return html`<fieldset>
      <legend>Scripted policy</legend>
      ${checkbox({
        id: 'bot-use-policy',
        label: 'Use a scripted dialogue policy',
        checked: f.usePolicy,
        hint: 'The offline “scripted” LLM answers by matching the caller’s words to these intents.',
        onChange: (c) => this.change((x) => (x.usePolicy = c)),
      })}
      ${f.usePolicy
        ? html`${f.intents.map(
              (intent, i) => html`<div class="row-item" role="group" aria-label="Intent ${i + 1}">
                <div class="row-head"><span>Intent ${i + 1}</span>
                  <button type="button" class="small link-danger" aria-label="Remove intent ${i + 1}" @click=${() => this.change((x) => x.intents.splice(i, 1))}>Remove</button></div>
                <div class="grid">
                  ${this.text(`policy.intents.${i}.name`, 'Intent name', intent.name, (s) => (intent.name = s), { required: true })}
                  ${this.text(`policy.intents.${i}.reply`, 'Reply', intent.reply, (s) => (intent.reply = s), { required: true })}
                </div>
                ${this.text(`policy.intents.${i}.examples`, 'Example phrases', intent.examples, (s) => (intent.examples = s), { area: true, hint: 'One phrase per line.', required: true })}
                ${checkbox({ id: `bot-policy-intents-${i}-end_call`, label: 'End the call after this reply', checked: intent.end_call, onChange: (c) => this.change(() => (intent.end_call = c)) })}
              </div>`,
            )}
            <button type="button" class="small" @click=${() => this.change((x) => x.intents.push(emptyIntent()))}>Add intent</button>
            <div style="margin-top:16px">
              ${this.text('policy.fallback.reply', 'Fallback reply', f.fallback.reply, (s) => (f.fallback.reply = s), { required: true, hint: 'Said when no intent matches.' })}
              ${checkbox({ id: 'bot-policy-fallback-end_call', label: 'End the call after the fallback reply', checked: f.fallback.end_call, onChange: (c) => this.change(() => (f.fallback.end_call = c)) })}
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
          ${this.text('turn_detection.end_of_turn_silence_ms', 'End-of-turn silence (ms)', f.end_of_turn_silence_ms, (s) => (f.end_of_turn_silence_ms = s), { inputmode: 'numeric', hint: '100 to 5000.' })}
        </div>
        ${checkbox({ id: 'bot-active', label: 'Active (accepts calls)', checked: f.active, onChange: (c) => this.change(() => (f.active = c)) })}
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
      </fieldset>
      <fieldset>
        <legend>Language model (LLM)</legend>
        <div class="grid">
          ${this.text('llm.provider', 'LLM provider', f.llm.provider, (s) => (f.llm.provider = s), { list: 'llm-providers', required: true })}
          ${this.text('llm.model', 'LLM model', f.llm.model, (s) => (f.llm.model = s), { required: true })}
          ${this.text('llm.temperature', 'Temperature', f.llm.temperature, (s) => (f.llm.temperature = s), { inputmode: 'decimal', hint: '0 to 2.' })}
        </div>
      </fieldset>
      ${this.renderTools(f)}
      ${this.renderPolicy(f)}
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
        ${this.bot ? html`<a class="button" href="/bots/${this.bot.id}/test-call">Test call</a>` : nothing}
      </div>
      ${this.bot ? html`<p class="subtitle">ID <code>${this.bot.id}</code> · dial-out uses this as <code>bot_id</code>.</p>` : html`<p class="subtitle">Define what the bot says and which providers it uses.</p>`}
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      ${this.loadError ? html`${errorBanner(this.loadError)}<a href="/bots">Back to the bots</a>` : nothing}
      ${!this.form && !this.loadError ? html`<p class="loading" role="status">Loading bot…</p>` : nothing}
      ${this.form ? this.renderForm(this.form) : nothing}`;
  }
}
customElements.define('vp-bot-edit-page', VpBotEditPage);
