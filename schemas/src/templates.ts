// `{{variable}}` templates in prompt, greeting and policy replies: the one parser, checker and renderer
// for the backend (bot validation, config rendering), the worker (scripted replies) and the console
// (editor checks). The rule (docs/design.md, "Bots"):
// - A placeholder is `{{`, optional white space, a run of characters that are neither braces nor white
//   space, optional white space, `}}`: `{{name}}` and `{{ name }}` are the same placeholder.
// - Its name must be a variable name (VARIABLE_NAME_PATTERN), else the placeholder is malformed
//   (`{{}}`, `{{1st}}`, `{{a-b}}`); a bot must declare every name its templates use.
// - Everything else is literal text and renders as written: there is no escape syntax, and braces that
//   form no placeholder (`{{a b}}`, a `{{` never closed, a lone `}}`) stay as they are; in `{{{a}}}` the
//   placeholder is the inner `{{a}}`.
// - Rendering replaces each placeholder with the variable's value; a variable the call does not carry
//   (an optional one left out) renders as empty text. Own properties only: `{{constructor}}` is a name
//   like any other.
import { VARIABLE_NAME_PATTERN, type BotPolicyInput } from './bot.js';

const PLACEHOLDER = /\{\{\s*([^{}\s]*)\s*\}\}/g;
const VARIABLE_NAME = new RegExp(VARIABLE_NAME_PATTERN);
/** `{{result.<path>}}`: a value from the JSON answer of an intent's action (docs/design.md §9). */
const RESULT_NAME = /^result(\.[A-Za-z0-9_-]{1,64}){1,8}$/;
/** Names every policy template may use without declaring them: the keys the caller pressed. */
/** `digits`: a keypad turn's keys; `knowledge`: the best passage of the bot's knowledge bases (shared/DESIGN.md §18). */
export const BUILTIN_TEMPLATE_NAMES: readonly string[] = ['digits', 'knowledge'];

/** One placeholder: its variable name and where `{{ … }}` stands in the text (`end` exclusive). */
export interface TemplatePlaceholder {
  name: string;
  start: number;
  end: number;
}

/** A malformed placeholder: where it stands and why. */
export interface TemplateError {
  start: number;
  end: number;
  message: string;
}

/** The placeholders of a text in order, and the malformed ones. */
export function parseTemplate(text: string): { placeholders: TemplatePlaceholder[]; errors: TemplateError[] } {
  const placeholders: TemplatePlaceholder[] = [];
  const errors: TemplateError[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    const name = m[1] ?? '';
    const start = m.index;
    const end = start + m[0].length;
    if (VARIABLE_NAME.test(name) || RESULT_NAME.test(name)) placeholders.push({ name, start, end });
    else errors.push({ start, end, message: `{{${name}}} is not a valid variable name` });
  }
  return { placeholders, errors };
}

/** Replaces each placeholder with its value; a variable the map does not hold renders as empty text. */
export function renderTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (_, name: string) => (Object.hasOwn(variables, name) ? String(variables[name]) : ''));
}

interface TemplatedBot {
  variables?: ReadonlyArray<{ name: string }>;
  prompt?: string;
  greeting?: string;
  /** Stored (examples always there) or as sent (a keypad-only intent may leave them out). */
  policy?: BotPolicyInput | null;
  answering_machine?: { message?: string };
}

/** Which names a template field may use besides the declared variables. */
interface FieldRules {
  builtins: boolean;
  results: boolean;
}

/** Every template field of a bot, with its field path for error details and what it may use. */
function templateFields(bot: TemplatedBot): Array<[string, string, FieldRules]> {
  const none = { builtins: false, results: false };
  const out: Array<[string, string, FieldRules]> = [
    ['prompt', bot.prompt ?? '', none],
    ['greeting', bot.greeting ?? '', none],
  ];
  bot.policy?.intents.forEach((intent, i) => {
    const policy = { builtins: true, results: false };
    out.push([`policy.intents.${i}.reply`, intent.reply, { builtins: true, results: intent.action !== undefined }]);
    for (const [k, v] of Object.entries(intent.action?.arguments ?? {})) out.push([`policy.intents.${i}.action.arguments.${k}`, v, policy]);
    if (intent.on_error_reply !== undefined) out.push([`policy.intents.${i}.on_error_reply`, intent.on_error_reply, policy]);
  });
  if (bot.policy) out.push(['policy.fallback.reply', bot.policy.fallback.reply, { builtins: true, results: false }]);
  if (bot.answering_machine?.message) out.push(['answering_machine.message', bot.answering_machine.message, none]);
  return out;
}

/** Renders `{{result.<path>}}` placeholders from a tool's JSON answer (a missing path renders empty), then the variables. */
export function renderWithResult(text: string, variables: Readonly<Record<string, string>>, result: unknown): string {
  const withResult = text.replace(PLACEHOLDER, (whole, name: string) => {
    if (!RESULT_NAME.test(name)) return whole;
    let v: unknown = result;
    for (const key of name.split('.').slice(1)) v = v !== null && typeof v === 'object' && Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : undefined;
    return v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
  return renderTemplate(withResult, variables);
}

/**
 * A bot's template rules, for a bot whose shape is already valid: each variable declared once, every
 * placeholder well formed and naming a declared variable. Problems in field order, then text order (a
 * name used twice is reported twice).
 */
export function templateProblems(bot: TemplatedBot): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const declared = new Set<string>();
  (bot.variables ?? []).forEach((v, i) => {
    if (declared.has(v.name)) problems.push({ field: `variables.${i}.name`, message: `${v.name} is declared twice` });
    declared.add(v.name);
  });
  for (const [field, text, rules] of templateFields(bot)) {
    const { placeholders, errors } = parseTemplate(text);
    const message = (name: string) =>
      RESULT_NAME.test(name) ? `{{${name}}} is only for the reply of an intent with an action` : `{{${name}}} is not a declared variable`;
    const allowed = (name: string) => declared.has(name) || (rules.builtins && BUILTIN_TEMPLATE_NAMES.includes(name)) || (rules.results && RESULT_NAME.test(name));
    const found = [...errors, ...placeholders.filter((p) => !allowed(p.name)).map((p) => ({ ...p, message: message(p.name) }))];
    for (const p of found.sort((a, b) => a.start - b.start)) problems.push({ field, message: p.message });
  }
  return problems;
}
