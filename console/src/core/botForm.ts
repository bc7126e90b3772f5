// The bot form's state (strings as typed) ↔ the API body. Numbers that do not parse stay strings so
// the shared schema reports them ("Must be a number.") exactly like the backend would.
import { BOT_DEFAULTS, type AnalysisFieldType, type AnalysisSettings, type AnalysisValue, type AnsweringMachine, type Bot, type BotCreate, type BotMcpServer, type BotMcpServerPublic, type BotTool, type BotToolPublic, type InterruptionSettings, type ToolType, type TurnDetection } from '@voice-platform/schemas/bot.js';
import { REDACTION_ENTITIES, type RedactionEntity } from '@voice-platform/schemas/redact.js';
import { phoneNumberError } from './phoneValidation.js';
import { flowToText, handoffToBody, handoffToForm, parseFlowText, type HandoffForm } from './botFlow.js';

type PolicyIntent = NonNullable<BotCreate['policy']>['intents'][number];

/** One argument of an intent's action: its name and template (`{{variables}}`, `{{digits}}`). */
export interface ArgumentRow {
  name: string;
  value: string;
}

/**
 * An intent as edited (docs/design.md §9). `tool` names the action's tool ('' for no action); the
 * arguments and the error reply belong to the action and are sent only with one.
 */
export interface IntentForm {
  name: string;
  examples: string; // one phrase per line
  reply: string;
  end_call: boolean;
  /** The keys that select this intent ('' for none). */
  dtmf: string;
  tool: string;
  arguments: ArgumentRow[];
  on_error_reply: string;
  /** Post-call analysis: the fields this intent fills when it matched a caller turn, values as typed. */
  sets: SetRow[];
}

/** One `sets` entry of an intent: an analysis field's name and its value as text ('true'/'false' for a boolean). */
export interface SetRow {
  field: string;
  value: string;
}

/** An action takes at most this many arguments (the shared schema's maxProperties). */
export const MAX_ACTION_ARGUMENTS = 20;

/** One header row. `stored`: the name came from the API's `header_names`, its value is unknown (write-only). */
export interface HeaderRow {
  name: string;
  value: string;
  stored: boolean;
}

/** One transfer destination; `target` is a number (international format, sent as typed: the backend stores E.164) or a `sip:`/`sips:` URI, told apart when sent. */
export interface DestinationForm {
  name: string;
  target: string;
  description: string;
}

/**
 * A tool as edited: every type's fields, so switching the type back and forth loses nothing typed;
 * only the chosen type's fields are sent. `type: ''` is a tool stored before types existed.
 */
export interface ToolForm {
  name: string;
  description: string;
  type: ToolType | '';
  /** The JSON text of its JSON Schema ('' for none). */
  parameters: string;
  url: string;
  method: 'POST' | 'GET';
  timeout_ms: string;
  say_while_waiting: string;
  /** Said when the tool is slow (after filler_after_ms). */
  filler: string;
  filler_after_ms: string;
  headers: HeaderRow[];
  /** What was loaded: the stored tool's name and header names (the backend keeps values by tool name). */
  loaded: { name: string; header_names: string[] } | null;
  destinations: DestinationForm[];
  mode: 'cold' | 'warm';
  announcement: string;
  whisper: string;
  on_failure: string;
}

/**
 * An MCP server as edited. Header values are write-only: `headers` holds new ones ("Name: value" a line); left
 * empty, the stored ones (`header_names`) are kept.
 */
export interface McpServerForm {
  name: string;
  url: string;
  /** Tool names, comma or space separated ('' for all the server lists). */
  allowed_tools: string;
  headers: string;
  header_names: string[];
}

export const emptyMcpServer = (): McpServerForm => ({ name: '', url: '', allowed_tools: '', headers: '', header_names: [] });

export function mcpServerToForm(m: BotMcpServerPublic): McpServerForm {
  return { name: m.name, url: m.url, allowed_tools: (m.allowed_tools ?? []).join(', '), headers: '', header_names: m.header_names ?? [] };
}

export function mcpServerToBody(m: McpServerForm): BotMcpServer {
  const tools = m.allowed_tools.split(/[\s,]+/).filter(Boolean);
  const lines = m.headers.split('\n').map((l) => l.trim()).filter(Boolean);
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':') < 0 ? l.length : l.indexOf(':')).trim(), l.indexOf(':') < 0 ? '' : l.slice(l.indexOf(':') + 1).trim()]));
  return defined({ name: m.name.trim(), url: m.url.trim(), allowed_tools: tools.length ? tools : undefined, headers: lines.length ? headers : undefined });
}

/** What the bot does when a machine answers an outbound call (docs/design.md §10). */
export type OnMachine = AnsweringMachine['on_machine'];

/**
 * Answering machine detection as edited. The message is kept (and sent) whatever `on_machine` is, so
 * switching to "hang up" and back loses nothing and a saved bot reopens as it was stored.
 */
export interface AnsweringMachineForm {
  detect: boolean;
  on_machine: OnMachine;
  message: string;
  max_wait_for_beep_seconds: string;
}

export const ON_MACHINE_LABELS: Record<OnMachine, string> = {
  hangup: 'Hang up',
  leave_message: 'Leave a message',
};

/** One post-call analysis field as edited; an enum's values one per line (kept, not sent, for other types). */
export interface AnalysisFieldForm {
  name: string;
  type: AnalysisFieldType;
  description: string;
  values: string;
}

/** Post-call analysis as edited (docs/design.md §10); `success` '' for no criterion. */
export interface AnalysisForm {
  summary: boolean;
  fields: AnalysisFieldForm[];
  success: string;
}

export const ANALYSIS_TYPE_LABELS: Record<AnalysisFieldType, string> = {
  string: 'Text',
  number: 'Number',
  boolean: 'Yes / no',
  enum: 'One of a list',
};

/** How the bot knows the caller's turn is over (docs/design.md §11). */
export type TurnDetectionMode = TurnDetection['mode'];

/**
 * Turn detection as edited. The minimum silence is kept (and sent) in fixed mode too, so switching back to
 * smart loses nothing; the backend holds it to at most the end-of-turn silence whatever the mode.
 */
export interface TurnDetectionForm {
  mode: TurnDetectionMode;
  end_of_turn_silence_ms: string;
  min_silence_ms: string;
}

/** Barge-in while the bot speaks, as edited (min_words kept and sent while backchannels are not ignored). */
export interface InterruptionForm {
  ignore_backchannels: boolean;
  min_words: string;
}

export const TURN_DETECTION_LABELS: Record<TurnDetectionMode, string> = {
  smart: 'Smart',
  fixed: 'Fixed silence',
};

/** Redaction and recording (shared/DESIGN.md §16) as edited: the entities checked, in the platform's order. */
export interface PrivacyForm {
  entities: RedactionEntity[];
  redact_llm: boolean;
  recording: boolean;
  redact_keypad_tones: boolean;
}

export const REDACTION_ENTITY_LABELS: Record<RedactionEntity, string> = {
  card_number: 'Card numbers',
  ssn: 'US social security numbers',
  email: 'Email addresses',
  phone: 'Phone numbers',
};

/** Stored settings as the form holds them; a bot read from an older backend has none: no redaction, recorded. */
export function privacyToForm(b: Pick<Partial<Bot>, 'redaction' | 'recording'>): PrivacyForm {
  const r = b.redaction ?? BOT_DEFAULTS.redaction;
  const rec = b.recording ?? BOT_DEFAULTS.recording;
  return { entities: REDACTION_ENTITIES.filter((e) => r.entities.includes(e)), redact_llm: r.redact_llm, recording: rec.enabled, redact_keypad_tones: rec.redact_keypad_tones };
}

export function privacyToBody(f: PrivacyForm): Pick<BotCreate, 'redaction' | 'recording'> {
  return {
    redaction: { entities: REDACTION_ENTITIES.filter((e) => f.entities.includes(e)), mode: 'mask', redact_llm: f.redact_llm },
    recording: { enabled: f.recording, redact_keypad_tones: f.redact_keypad_tones },
  };
}

export interface BotForm {
  name: string;
  active: boolean;
  /** A save is a draft until a version with all-green tests is published (shared/DESIGN.md §17). */
  require_passing_tests: boolean;
  language: string;
  prompt: string;
  greeting: string;
  variables: Array<{ name: string; required: boolean; description: string }>;
  voice: { provider: string; voice_id: string; speed: string };
  stt: { provider: string; model: string; language: string };
  /** audio.noise_suppression: RNNoise on the caller's audio before recognition. */
  noise_suppression: boolean;
  llm: { provider: string; model: string; temperature: string; base_url: string };
  max_call_seconds: string;
  turn_detection: TurnDetectionForm;
  interruption: InterruptionForm;
  inter_digit_timeout_ms: string;
  answering_machine: AnsweringMachineForm;
  analysis: AnalysisForm;
  privacy: PrivacyForm;
  tools: ToolForm[];
  /** The knowledge bases each turn retrieves passages from (their ids). */
  knowledge_base_ids: string[];
  mcp_servers: McpServerForm[];
  usePolicy: boolean;
  intents: IntentForm[];
  fallback: { reply: string; end_call: boolean };
  /** The flow as JSON text ('' for none; docs/design.md §18) and whether the bot was loaded with one. */
  flow: string;
  hadFlow: boolean;
  /** The bots a call may be handed to, and whether the bot was loaded with the setting. */
  handoff: HandoffForm;
  hadHandoff: boolean;
}

export const TOOL_TYPE_LABELS: Record<ToolType, string> = {
  http: 'Call a URL (HTTP)',
  end_call: 'End the call',
  transfer_call: 'Transfer to a person',
  send_dtmf: 'Press keys (DTMF)',
};

export const emptyIntent = (): IntentForm => ({ name: '', examples: '', reply: '', end_call: false, dtmf: '', tool: '', arguments: [], on_error_reply: '', sets: [] });
export const emptySet = (): SetRow => ({ field: '', value: '' });
export const emptyAnalysisField = (): AnalysisFieldForm => ({ name: '', type: 'string', description: '', values: '' });
export const emptyArgument = (): ArgumentRow => ({ name: '', value: '' });

/** A stored intent as form text. */
export function intentToForm(i: PolicyIntent): IntentForm {
  return {
    name: i.name,
    examples: (i.examples ?? []).join('\n'),
    reply: i.reply,
    end_call: i.end_call ?? false,
    dtmf: i.dtmf ?? '',
    tool: i.action?.tool ?? '',
    arguments: Object.entries(i.action?.arguments ?? {}).map(([name, value]) => ({ name, value })),
    on_error_reply: i.on_error_reply ?? '',
    sets: Object.entries(i.sets ?? {}).map(([field, value]) => ({ field, value: String(value) })),
  };
}

/**
 * A `sets` value as the API takes it, typed by its field (`fields`: the analysis fields as the form holds them):
 * a number or yes/no as such when it reads as one, else the text (the backend names the field it does not fit).
 */
export function setValue(row: SetRow, fields: ReadonlyArray<Pick<AnalysisFieldForm, 'name' | 'type'>>): AnalysisValue {
  const type = fields.find((f) => f.name.trim() === row.field.trim())?.type;
  const v = row.value;
  if (type === 'number') return parseNumber(v);
  if (type === 'boolean' && (v === 'true' || v === 'false')) return v === 'true';
  return type === 'enum' ? v.trim() : v;
}

/** An intent as the API takes it: blank optional fields left out; arguments and error reply only with an action. */
export function intentToBody(i: IntentForm, fields: ReadonlyArray<Pick<AnalysisFieldForm, 'name' | 'type'>> = []): PolicyIntent {
  // A row without a field is flagged by analysisProblems; sent, it would only add a nameless schema error.
  const sets = i.sets.filter((r) => r.field.trim()).map((r) => [r.field.trim(), setValue(r, fields)] as const);
  const tool = i.tool.trim();
  // A row without a name is flagged by policyProblems; sent, it would only add a nameless schema error.
  const args = i.arguments.filter((a) => a.name.trim()).map((a) => [a.name.trim(), a.value] as const);
  return defined({
    name: i.name.trim(),
    examples: i.examples.split('\n').map((s) => s.trim()).filter(Boolean),
    reply: i.reply,
    end_call: i.end_call ? true : undefined,
    action: tool ? defined({ tool, arguments: args.length ? Object.fromEntries(args) : undefined }) : undefined,
    on_error_reply: tool ? opt(i.on_error_reply) : undefined,
    dtmf: opt(i.dtmf),
    sets: sets.length ? Object.fromEntries(sets) : undefined,
  });
}

/** The tool types a scripted intent may act with (backend bots/routes.ts); hanging up is the intent's own end_call. */
export const ACTION_TOOL_TYPES: readonly ToolType[] = ['http', 'transfer_call', 'send_dtmf'];

/** The tools an intent's action may call, by name as the form holds them now (the first of a name, as the backend finds it). */
export function actionTools(tools: ToolForm[]): Array<{ name: string; type: ToolType }> {
  const out: Array<{ name: string; type: ToolType }> = [];
  const seen = new Set<string>();
  for (const t of tools) {
    const name = t.name.trim();
    if (!name || seen.has(name)) continue;
    seen.add(name);
    if (t.type !== '' && ACTION_TOOL_TYPES.includes(t.type)) out.push({ name, type: t.type });
  }
  return out;
}

/** An argument name as the shared schema allows it (the keys of `action.arguments`). */
const ARGUMENT_NAME = /^[A-Za-z0-9_]{1,64}$/;

/**
 * The intents' argument rows, checked before sending: each needs a name the shared schema allows (it
 * could only refuse a key it cannot place on a row) and no name twice (an object would keep one). The
 * rules about the action's tool are validateBot's: they hold for the body as the backend checks it.
 */
export function policyProblems(f: Pick<BotForm, 'usePolicy' | 'intents'>): Record<string, string> {
  const out: Record<string, string> = {};
  if (!f.usePolicy) return out;
  f.intents.forEach((intent, i) => {
    // Rows of an intent without an action are not sent.
    if (!intent.tool.trim()) return;
    const names = new Set<string>();
    intent.arguments.forEach((a, j) => {
      const at = `policy.intents.${i}.action.arguments.${j}.name`;
      const n = a.name.trim();
      if (!n) out[at] = 'This field is required.';
      else if (!ARGUMENT_NAME.test(n)) out[at] = 'Letters, digits and _ only (1 to 64 characters), e.g. order_id.';
      else if (names.has(n)) out[at] = 'Another argument has this name already.';
      names.add(n);
    });
  });
  return out;
}

/** Whether an argument name is one the shared schema allows (its errors are keyed by that name). */
export const validArgumentName = (name: string): boolean => ARGUMENT_NAME.test(name.trim());
export const emptyDestination = (): DestinationForm => ({ name: '', target: '', description: '' });
export const emptyHeader = (): HeaderRow => ({ name: '', value: '', stored: false });
/** A new tool calls a URL: the type that does something the built-ins cannot. */
export const emptyTool = (type: ToolType | '' = 'http'): ToolForm => ({
  name: '',
  description: '',
  type,
  parameters: '',
  url: '',
  method: 'POST',
  timeout_ms: '',
  say_while_waiting: '',
  filler: '',
  filler_after_ms: '',
  headers: [],
  loaded: null,
  destinations: [emptyDestination()],
  mode: 'cold',
  announcement: '',
  whisper: '',
  on_failure: '',
});

/** A stored tool as form text; parameters pretty-printed so they can be edited by hand. */
export function toolToForm(t: BotToolPublic): ToolForm {
  const names = t.header_names ?? [];
  return {
    ...emptyTool(t.type ?? ''),
    name: t.name,
    description: t.description ?? '',
    parameters: t.parameters === undefined ? '' : JSON.stringify(t.parameters, null, 2),
    url: t.url ?? '',
    method: t.method ?? 'POST',
    timeout_ms: t.timeout_ms === undefined ? '' : String(t.timeout_ms),
    say_while_waiting: t.say_while_waiting ?? '',
    filler: t.filler ?? '',
    filler_after_ms: t.filler_after_ms === undefined ? '' : String(t.filler_after_ms),
    headers: names.map((name) => ({ name, value: '', stored: true })),
    loaded: { name: t.name, header_names: names },
    destinations: t.destinations?.length
      ? t.destinations.map((d) => ({ name: d.name, target: d.number ?? d.sip_uri ?? '', description: d.description ?? '' }))
      : [emptyDestination()],
    mode: t.mode ?? 'cold',
    announcement: t.announcement ?? '',
    whisper: t.whisper ?? '',
    on_failure: t.on_failure ?? '',
  };
}

/**
 * The parameters text as a value for the schema: '' (blank) is no parameters at all; text that is not
 * JSON stays a string, so the schema reports the field ("Must be a JSON object.") as it does for numbers.
 */
export function parseParameters(text: string): unknown {
  const t = text.trim();
  if (t === '') return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return t;
  }
}

/**
 * Whether the tool's headers must be sent. Values are write-only: a tool sent without `headers` keeps
 * the stored ones of the same-named tool, so they are sent only when the rows differ from what was
 * loaded (a value typed, a row added, removed or renamed) or the tool was renamed (nothing to keep then).
 */
export function headersChanged(t: ToolForm): boolean {
  const loaded = t.loaded?.header_names ?? [];
  if (t.loaded && t.loaded.name !== t.name.trim() && loaded.length) return true;
  if (t.headers.some((h) => h.value !== '' || !h.stored)) return true;
  const names = t.headers.map((h) => h.name.trim());
  return names.length !== loaded.length || names.some((n, i) => n !== loaded[i]);
}

/** A header name as the shared schema's ToolHeaders allows it (an HTTP token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

/** Trimmed optional text: absent when blank. */
const opt = (s: string): string | undefined => (s.trim() === '' ? undefined : s.trim());
/** An optional typed number: absent when blank, the raw text when it does not parse (the schema names it). */
const optNumber = (s: string): number | undefined => (s.trim() === '' ? undefined : (parseNumber(s) as number));
/** A list, or absent when empty. */
const nonEmpty = <T>(xs: T[]): T[] | undefined => (xs.length ? xs : undefined);
/** Drops the keys whose value is undefined (the body then holds only what the user set). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function toolToBody(t: ToolForm): BotTool {
  const parameters = parseParameters(t.parameters);
  const common = {
    name: t.name.trim(),
    description: t.description,
    ...(t.type ? { type: t.type } : {}),
    ...(parameters !== undefined ? { parameters: parameters as BotTool['parameters'] } : {}),
  };
  switch (t.type) {
    case 'http':
      return defined({
        ...common,
        url: t.url.trim(),
        method: t.method,
        timeout_ms: optNumber(t.timeout_ms),
        say_while_waiting: opt(t.say_while_waiting),
        filler: opt(t.filler),
        filler_after_ms: optNumber(t.filler_after_ms),
        // A row without a name is flagged by toolProblems; sent, it would only add a nameless schema error.
        headers: headersChanged(t) ? Object.fromEntries(t.headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value])) : undefined,
      });
    case 'transfer_call':
      return defined({
        ...common,
        destinations: t.destinations.map((d) => {
          const target = d.target.trim();
          return defined({
            name: d.name.trim(),
            ...(/^sips?:/i.test(target) ? { sip_uri: target } : { number: target }),
            description: opt(d.description),
          });
        }),
        mode: t.mode,
        announcement: opt(t.announcement),
        // Said to the person taking the call: a warm transfer only (the backend refuses it on a cold one).
        whisper: t.mode === 'warm' ? opt(t.whisper) : undefined,
        on_failure: opt(t.on_failure),
      });
    default:
      return common;
  }
}

/**
 * The tool rules the shared schema cannot hold, checked before sending as the backend checks them
 * (backend bots/routes.ts): unique names, an http tool's URL, a value for every header sent.
 */
export function toolProblems(tools: ToolForm[]): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    const name = t.name.trim();
    if (name && seen.has(name)) out[`tools.${i}.name`] = 'Another tool has this name already.';
    seen.add(name);
    if (t.type === 'http') {
      if (!t.url.trim()) out[`tools.${i}.url`] = 'This field is required.';
      if (headersChanged(t)) {
        const names = new Set<string>();
        t.headers.forEach((h, j) => {
          const n = h.name.trim().toLowerCase();
          if (!n) out[`tools.${i}.headers.${j}.name`] = 'This field is required.';
          else if (!HEADER_NAME.test(n)) out[`tools.${i}.headers.${j}.name`] = 'Letters, digits and !#$%&\'*+.^_`|~- only (1 to 64 characters), e.g. Authorization.';
          else if (names.has(n)) out[`tools.${i}.headers.${j}.name`] = 'Another header has this name already.';
          names.add(n);
          // A changed set of headers replaces the stored one: values left empty could not be kept.
          if (h.stored && h.value === '') out[`tools.${i}.headers.${j}.value`] = 'Enter the value again: changing this tool’s headers (or its name) replaces all of them.';
        });
      }
    }
    if (t.type === 'transfer_call') {
      t.destinations.forEach((d, j) => {
        const target = d.target.trim();
        const number = `tools.${i}.destinations.${j}.number`;
        if (!target) out[number] = 'Enter a number with + and the country code (e.g. +49 151 12345678) or a SIP URI (sip:agent@pbx.example.com).';
        // Warm mode dials the person through the call's trunk, which takes a phone number.
        else if (t.mode === 'warm' && /^sips?:/i.test(target)) out[`tools.${i}.destinations.${j}.sip_uri`] = 'A warm transfer dials a number through the call’s trunk: enter a number (E.164), or pick cold mode for a SIP URI.';
        // A bot has no region: the backend reads the number in international format only (libphonenumber's check).
        else if (!/^sips?:/i.test(target)) {
          const error = phoneNumberError(target);
          if (error) out[number] = error;
        }
      });
    }
  });
  return out;
}

export function botToForm(bot?: Bot): BotForm {
  const b = bot ?? { ...BOT_DEFAULTS, name: '' };
  return {
    name: b.name,
    active: b.active,
    // A bot read from an older backend has no such setting: off.
    require_passing_tests: b.require_passing_tests ?? false,
    language: b.language,
    prompt: b.prompt,
    greeting: b.greeting,
    variables: b.variables.map((v) => ({ name: v.name, required: v.required ?? false, description: v.description ?? '' })),
    voice: { ...b.voice, speed: String(b.voice.speed) },
    stt: { ...b.stt },
    // A bot read from an older backend has no audio settings: off.
    noise_suppression: (b.audio ?? BOT_DEFAULTS.audio).noise_suppression,
    llm: { provider: b.llm.provider, model: b.llm.model, temperature: String(b.llm.temperature), base_url: b.llm.base_url ?? '' },
    max_call_seconds: String(b.max_call_seconds),
    turn_detection: turnDetectionToForm(b.turn_detection),
    interruption: interruptionToForm(b.interruption),
    // A bot read from an older backend has no keypad settings: the default.
    inter_digit_timeout_ms: String((b.dtmf ?? BOT_DEFAULTS.dtmf).inter_digit_timeout_ms),
    answering_machine: answeringMachineToForm(b.answering_machine),
    analysis: analysisToForm(b.analysis),
    privacy: privacyToForm(b),
    tools: b.tools.map(toolToForm),
    // A bot read from an older backend has neither.
    knowledge_base_ids: [...(b.knowledge_base_ids ?? [])],
    mcp_servers: ('mcp_servers' in b ? (b.mcp_servers as BotMcpServerPublic[]) : []).map(mcpServerToForm),
    usePolicy: b.policy !== null,
    intents: (b.policy?.intents ?? []).map(intentToForm),
    fallback: { reply: b.policy?.fallback.reply ?? '', end_call: b.policy?.fallback.end_call ?? false },
    // A bot read from an older backend has neither: none.
    flow: flowToText(b.flow),
    hadFlow: Boolean(b.flow),
    handoff: handoffToForm(b.handoff),
    hadHandoff: Boolean(b.handoff),
  };
}

/** Stored turn detection as form text; what a bot from an older backend lacks (mode, min_silence_ms): the defaults. */
export function turnDetectionToForm(td: Partial<TurnDetection> | undefined): TurnDetectionForm {
  const t = { ...BOT_DEFAULTS.turn_detection, ...td };
  return { mode: t.mode, end_of_turn_silence_ms: String(t.end_of_turn_silence_ms), min_silence_ms: String(t.min_silence_ms) };
}

/** The shortest silence either setting may hold (the shared schema's minimum). */
const TURN_SILENCE_MIN_MS = 100;

/**
 * The settings as the API takes them: all three, whatever the mode. Fixed mode hides the minimum, so an
 * end-of-turn silence set below it lowers it with it (as the backend does when no minimum is given);
 * in smart mode both are on show and a minimum above the maximum is the user's to fix.
 */
export function turnDetectionToBody(f: TurnDetectionForm): TurnDetection {
  const end = parseNumber(f.end_of_turn_silence_ms);
  let min = parseNumber(f.min_silence_ms);
  // Not below the schema's minimum: an end-of-turn silence out of range is reported on its own field only.
  if (f.mode === 'fixed' && typeof min === 'number' && typeof end === 'number' && end >= TURN_SILENCE_MIN_MS && min > end) min = end;
  return { mode: f.mode, end_of_turn_silence_ms: end as number, min_silence_ms: min as number };
}


/** Stored barge-in settings as form text; a bot read from an older backend has none: the defaults. */
export function interruptionToForm(i: Partial<InterruptionSettings> | undefined): InterruptionForm {
  const x = { ...BOT_DEFAULTS.interruption, ...i };
  return { ignore_backchannels: x.ignore_backchannels, min_words: String(x.min_words) };
}

/** The settings as the API takes them: both. */
export function interruptionToBody(f: InterruptionForm): InterruptionSettings {
  return { ignore_backchannels: f.ignore_backchannels, min_words: parseNumber(f.min_words) as number };
}

/** Stored settings as form text; a bot read from an older backend has none: the defaults. */
export function answeringMachineToForm(am: Partial<AnsweringMachine> | undefined): AnsweringMachineForm {
  const a = { ...BOT_DEFAULTS.answering_machine, ...am };
  return { detect: a.detect, on_machine: a.on_machine, message: a.message, max_wait_for_beep_seconds: String(a.max_wait_for_beep_seconds) };
}

/** The settings as the API takes them: all four, the message as typed (its placeholders are checked as typed). */
export function answeringMachineToBody(f: AnsweringMachineForm): AnsweringMachine {
  return { detect: f.detect, on_machine: f.on_machine, message: f.message, max_wait_for_beep_seconds: parseNumber(f.max_wait_for_beep_seconds) as number };
}

/** Stored analysis settings as form text; a bot read from an older backend has none: the defaults (nothing asked). */
export function analysisToForm(a: AnalysisSettings | undefined): AnalysisForm {
  const x = a ?? BOT_DEFAULTS.analysis;
  return {
    summary: x.summary,
    fields: x.fields.map((f) => ({ name: f.name, type: f.type, description: f.description ?? '', values: (f.values ?? []).join('\n') })),
    success: x.success ?? '',
  };
}

/** The settings as the API takes them: every field; an enum's values (one per line, blank lines dropped) only with an enum. */
export function analysisToBody(f: AnalysisForm): AnalysisSettings {
  return {
    summary: f.summary,
    fields: f.fields.map((x) =>
      defined({
        name: x.name.trim(),
        type: x.type,
        description: x.description,
        values: x.type === 'enum' ? nonEmpty(x.values.split('\n').map((v) => v.trim()).filter(Boolean)) : undefined,
      }),
    ),
    success: f.success.trim() ? f.success.trim() : null,
  };
}

/**
 * The intents' `sets` rows, checked before sending: each picks an analysis field, once per intent, with a value
 * (a number for a number field, yes or no for a yes/no field). Whether the value fits the field otherwise is
 * validateBot's, as the backend checks it.
 */
export function setsProblems(f: Pick<BotForm, 'usePolicy' | 'intents'>): Record<string, string> {
  const out: Record<string, string> = {};
  if (!f.usePolicy) return out;
  f.intents.forEach((intent, i) => {
    const seen = new Set<string>();
    intent.sets.forEach((r, j) => {
      const at = `policy.intents.${i}.sets.${j}`;
      const name = r.field.trim();
      if (!name) out[`${at}.field`] = 'Pick an analysis field.';
      else if (seen.has(name)) out[`${at}.field`] = 'This intent sets this field already.';
      seen.add(name);
    });
  });
  return out;
}

/** A typed number, or the raw text when it is not one (the schema then names the problem). */
export function parseNumber(text: string): number | string {
  const t = text.trim();
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
}

/**
 * The flow and handoff as sent: a set one as the form holds it; none as null only when the bot had one (so a bot
 * that never had either sends neither, as before they existed). Flow text that is not JSON is not sent: the page
 * does not save while flowFormProblems names it.
 */
export function flowAndHandoffToBody(f: Pick<BotForm, 'flow' | 'hadFlow' | 'handoff' | 'hadHandoff'>): Pick<BotCreate, 'flow' | 'handoff'> {
  const out: Pick<BotCreate, 'flow' | 'handoff'> = {};
  const parsed = parseFlowText(f.flow);
  if (parsed.ok && (parsed.value !== null || f.hadFlow)) out.flow = parsed.value as BotCreate['flow'];
  const handoff = handoffToBody(f.handoff);
  if (handoff || f.hadHandoff) out.handoff = handoff;
  return out;
}

/** What stops a save before the schema can look: flow text that is not JSON. */
export function flowFormProblems(f: Pick<BotForm, 'flow'>): Record<string, string> {
  const parsed = parseFlowText(f.flow);
  return parsed.ok ? {} : { flow: parsed.error };
}

export function formToBody(f: BotForm): BotCreate {
  return {
    name: f.name.trim(),
    active: f.active,
    require_passing_tests: f.require_passing_tests,
    language: f.language.trim(),
    prompt: f.prompt,
    greeting: f.greeting,
    variables: f.variables.map((v) => ({ name: v.name.trim(), required: v.required, description: v.description })),
    voice: { provider: f.voice.provider.trim(), voice_id: f.voice.voice_id.trim(), speed: parseNumber(f.voice.speed) as number },
    stt: { provider: f.stt.provider.trim(), model: f.stt.model.trim(), language: f.stt.language.trim() },
    audio: { noise_suppression: f.noise_suppression },
    llm: defined({ provider: f.llm.provider.trim(), model: f.llm.model.trim(), temperature: parseNumber(f.llm.temperature) as number, base_url: opt(f.llm.base_url) }),
    max_call_seconds: parseNumber(f.max_call_seconds) as number,
    turn_detection: turnDetectionToBody(f.turn_detection),
    interruption: interruptionToBody(f.interruption),
    dtmf: { inter_digit_timeout_ms: parseNumber(f.inter_digit_timeout_ms) as number },
    answering_machine: answeringMachineToBody(f.answering_machine),
    analysis: analysisToBody(f.analysis),
    ...privacyToBody(f.privacy),
    tools: f.tools.map(toolToBody),
    knowledge_base_ids: f.knowledge_base_ids,
    mcp_servers: f.mcp_servers.map(mcpServerToBody),
    policy: f.usePolicy
      ? {
          intents: f.intents.map((i) => intentToBody(i, f.analysis.fields)),
          fallback: { reply: f.fallback.reply, ...(f.fallback.end_call ? { end_call: true } : {}) },
        }
      : null,
    ...flowAndHandoffToBody(f),
  };
}
