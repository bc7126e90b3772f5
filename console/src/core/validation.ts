// Client-side validation with the shared schemas (the backend validates with the very same ones), and
// the mapping of schema errors and API 422 details to one readable message per form field.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ANALYSIS_FIELD_NAME_PATTERN, BOT_DEFAULTS, DTMF_PATTERN, VARIABLE_NAME_PATTERN, type AnalysisField, type BotCreate as BotCreateT } from '@voice-platform/schemas/bot.js';
import { templateProblems } from '@voice-platform/schemas/templates.js';
import { ACTION_TOOL_TYPES } from './botForm.js';
import { REGION_PATTERN } from '@voice-platform/schemas/phone.js';
import { phoneNumberError, phoneReasonText } from './phoneValidation.js';
import { TRUNK_ADDRESS_PATTERN } from '@voice-platform/schemas/trunks.js';
import { IP_OR_CIDR_PATTERN } from '@voice-platform/schemas/inbound.js';
import { TIME_ZONE_PATTERN } from '@voice-platform/schemas/campaigns.js';
// Compiled ahead of time (scripts/validators.mjs): the Content-Security-Policy forbids the eval Ajv compiles with.
import * as validators from './validators.gen.js';

type Validated = keyof typeof validators;
const compiled = (name: Validated): ValidateFunction => validators[name];

/** Field path → message, paths as the backend's 422 details name them (`voice.speed`, `variables.0.name`). */
export type FieldErrors = Record<string, string>;

const PATTERN_TEXT: Record<string, string> = {
  [VARIABLE_NAME_PATTERN]: 'Must start with a letter or _, then letters, digits or _ (at most 64 characters).',
  '^[A-Za-z0-9_-]{1,64}$': 'Letters, digits, _ and - only (1 to 64 characters).',
  [DTMF_PATTERN]: 'Keys 0–9, * and # only (1 to 32 of them), e.g. 1 or 42.',
  [ANALYSIS_FIELD_NAME_PATTERN]: 'Lowercase letters, digits and _, starting with a letter (at most 64 characters), e.g. outcome.',
  '\\S': 'This field is required.',
  [REGION_PATTERN]: 'Must be a two-letter country code in capitals, e.g. US or DE.',
  [TRUNK_ADDRESS_PATTERN]: 'Must be a host name or IPv4 address with an optional port (1 to 65535), e.g. sip.example.com or 203.0.113.5:5060. No sip: prefix.',
  [IP_OR_CIDR_PATTERN]: 'Must be an IPv4 or IPv6 address, optionally with a prefix length, e.g. 203.0.113.5, 203.0.113.0/24 or 2001:db8::/32.',
  [TIME_ZONE_PATTERN]: 'Must be an IANA time zone name, e.g. Europe/Berlin or UTC.',
  '^[\\x21-\\x7e]+$': 'Printable characters only, without spaces.',
  '^[\\x20-\\x7e]+$': 'Printable ASCII characters only (letters, digits, symbols and spaces).',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** One schema error as a sentence an administrator can act on. */
export function friendlyMessage(e: Pick<ErrorObject, 'keyword' | 'params' | 'message'>): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'This field is required.';
    case 'minLength':
      return p.limit === 1 ? 'This field is required.' : `Must be at least ${plural(Number(p.limit), 'character')}.`;
    case 'maxLength':
      return `Must be at most ${plural(Number(p.limit), 'character')}.`;
    case 'minimum':
      return `Must be at least ${String(p.limit)}.`;
    case 'maximum':
      return `Must be at most ${String(p.limit)}.`;
    case 'exclusiveMinimum':
      return `Must be greater than ${String(p.limit)}.`;
    case 'minItems':
      return p.limit === 1 ? 'Add at least one.' : `Add at least ${String(p.limit)}.`;
    case 'maxItems':
      return `At most ${String(p.limit)} allowed.`;
    case 'uniqueItems':
      return 'Each entry may appear only once.';
    case 'maxProperties':
      return `At most ${String(p.limit)} entries allowed.`;
    case 'type':
      if (p.type === 'integer') return 'Must be a whole number.';
      if (p.type === 'number') return 'Must be a number.';
      if (p.type === 'object') return 'Must be a JSON object, e.g. {"type": "object"}.';
      return `Must be a ${String(p.type)}.`;
    case 'format':
      return p.format === 'date-time' ? 'Must be a valid date and time.' : `Must be a valid ${String(p.format)}.`;
    case 'pattern':
      return PATTERN_TEXT[String(p.pattern)] ?? `Must match ${String(p.pattern)}.`;
    case 'additionalProperties':
      return 'This field is not allowed.';
    default:
      return e.message ? `${e.message[0]!.toUpperCase()}${e.message.slice(1)}.` : 'This value is invalid.';
  }
}

/** Schema errors → field errors, keeping the first (most specific) message per field; union noise dropped. */
function schemaFieldErrors(errors: ErrorObject[] | null | undefined): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors ?? []) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (e.keyword === 'required') field = [field, String(e.params.missingProperty)].filter(Boolean).join('.');
    if (e.keyword === 'additionalProperties') field = [field, String(e.params.additionalProperty)].filter(Boolean).join('.');
    // A nullable union (`policy: X | null`) reports `type: null` beside the real problem: skip it.
    if (e.keyword === 'type' && e.params.type === 'null') continue;
    out[field || '(body)'] ??= friendlyMessage(e);
  }
  return out;
}

/** API 422 `details` (`[{field, message}]`) → field errors. */
export function detailFieldErrors(details: unknown): FieldErrors {
  const out: FieldErrors = {};
  if (!Array.isArray(details)) return out;
  for (const d of details as Array<{ field?: unknown; message?: unknown }>) {
    if (typeof d?.field !== 'string' || typeof d.message !== 'string') continue;
    const m = d.message;
    // libphonenumber's reasons (a number that cannot exist) read as the console's own check words them.
    out[d.field] ??= phoneReasonText(m) ?? (/[.!?]$/.test(m) ? m : `${m[0]?.toUpperCase() ?? ''}${m.slice(1)}.`);
  }
  return out;
}

/** The error for a form control: its own path, or the first error below it (`examples` ← `examples.2`). */
export function errorFor(errors: FieldErrors, path: string): string | undefined {
  if (errors[path]) return errors[path];
  const below = Object.keys(errors).find((k) => k.startsWith(`${path}.`));
  return below ? errors[below] : undefined;
}

export function validateApiKeyCreate(body: { name: string; expires_at?: string | null }, now: Date): FieldErrors {
  return validateApiKeyBody('ApiKeyCreate', body, now);
}

/** A rename and/or new expiry (only the fields that change are sent; at least one must). */
export function validateApiKeyUpdate(body: { name?: string; expires_at?: string | null }, now: Date): FieldErrors {
  return validateApiKeyBody('ApiKeyUpdate', body, now);
}

function validateApiKeyBody(schema: Validated, body: { expires_at?: string | null }, now: Date): FieldErrors {
  const fn = compiled(schema);
  const errors = fn(body) ? {} : schemaFieldErrors(fn.errors);
  // The backend's rule: an expiry must lie in the future.
  if (!errors.expires_at && typeof body.expires_at === 'string' && new Date(body.expires_at).getTime() <= now.getTime()) {
    errors.expires_at = 'Must be in the future.';
  }
  return errors;
}



/** The bot body against BotCreate, then the shared template rules (schemas/src/templates.ts), as the backend. */
export function validateBot(body: BotCreateT): FieldErrors {
  const fn = compiled('BotCreate');
  // As the backend does: template rules only once the shape is valid (a misnamed variable would
  // otherwise also flag every template that uses it).
  if (!fn(body)) return schemaFieldErrors(fn.errors);
  const errors: FieldErrors = {};
  for (const { field, message } of templateProblems(body)) errors[field] ??= `${message}.`;
  // The backend's policy rules the schema cannot hold (bots/routes.ts checkPolicy): an intent is matched
  // by examples or by keys; its action calls one of the bot's tools, one a script can run (http,
  // transfer_call, send_dtmf); its error reply needs an action.
  body.policy?.intents.forEach((intent, i) => {
    const at = `policy.intents.${i}`;
    if ((intent.examples ?? []).length === 0 && intent.dtmf === undefined) errors[`${at}.examples`] ??= 'Add at least one, or the keys that select this intent.';
    if (intent.action) {
      const name = intent.action.tool;
      const tool = (body.tools ?? []).find((t) => t.name === name);
      if (!tool) errors[`${at}.action.tool`] ??= `No tool of this bot is named ${name}. Pick one of its tools, or no action.`;
      else if (tool.type === 'end_call') errors[`${at}.action.tool`] ??= `${name} ends the call: tick “End the call after this reply” instead, or pick another tool.`;
      else if (!tool.type) errors[`${at}.action.tool`] ??= `${name} has no type, so it cannot run: give it one, or pick another tool.`;
      else if (!ACTION_TOOL_TYPES.includes(tool.type)) errors[`${at}.action.tool`] ??= `${name} cannot be an intent’s action: pick an HTTP, transfer or keypad tool.`;
    } else if (intent.on_error_reply !== undefined) errors[`${at}.on_error_reply`] ??= 'Said when the action fails: pick an action, or leave this empty.';
  });
  // The backend's post-call analysis rules (bots/routes.ts checkAnalysis): field names unique, values for enum
  // fields only (required there, each once); each intent's `sets` names analysis fields, with a value of the type.
  const byName = new Map<string, AnalysisField>();
  (body.analysis?.fields ?? []).forEach((f, i) => {
    const at = `analysis.fields.${i}`;
    if (byName.has(f.name)) errors[`${at}.name`] ??= 'Another analysis field has this name already.';
    else byName.set(f.name, f);
    if (f.type === 'enum' && f.values === undefined) errors[`${at}.values`] ??= 'List the values it may take, one per line.';
    f.values?.forEach((v, j) => {
      if (f.values!.indexOf(v) !== j) errors[`${at}.values.${j}`] ??= `“${v}” is listed twice.`;
    });
  });
  body.policy?.intents.forEach((intent, i) => {
    for (const [name, value] of Object.entries(intent.sets ?? {})) {
      const at = `policy.intents.${i}.sets.${name}`;
      const f = byName.get(name);
      if (!f) errors[at] ??= `No analysis field is named ${name}: add it under Post-call analysis, or pick another.`;
      else if (f.type === 'enum' && !(typeof value === 'string' && (f.values ?? []).includes(value))) errors[at] ??= `Must be one of the field’s values: ${(f.values ?? []).join(', ')}.`;
      else if (f.type === 'number' && typeof value !== 'number') errors[at] ??= 'Must be a number.';
      else if (f.type === 'boolean' && typeof value !== 'boolean') errors[at] ??= 'Must be yes or no.';
      else if (f.type === 'string' && typeof value !== 'string') errors[at] ??= 'Must be text.';
    }
  });
  // The backend's turn detection rule (bots/routes.ts checkTurnDetection), whatever the mode: a complete
  // utterance never waits longer than an incomplete one. A minimum left out is lowered to the maximum
  // (bots/store.ts turnDetection); one given above it is refused. A maximum left out is the default (on create).
  const td = { ...BOT_DEFAULTS.turn_detection, ...body.turn_detection };
  if (body.turn_detection?.min_silence_ms !== undefined && td.min_silence_ms > td.end_of_turn_silence_ms) {
    errors['turn_detection.min_silence_ms'] ??= `Must be at most the ${td.mode === 'fixed' ? 'end-of-turn' : 'maximum'} silence (${td.end_of_turn_silence_ms} ms).`;
  }
  // The backend's answering machine rule (bots/routes.ts checkAnsweringMachine): leaving a message needs one.
  const am = body.answering_machine;
  if (am?.on_machine === 'leave_message' && !(am.message ?? '').trim()) {
    errors['answering_machine.message'] ??= 'Said to the machine after its beep: required when the bot leaves a message.';
  }
  return errors;
}

export { phoneNumberError } from './phoneValidation.js';

/** Adds the libphonenumber check of each phone field the schema check left alone. */
function withPhoneErrors(errors: FieldErrors, numbers: Array<[string, unknown]>): FieldErrors {
  for (const [path, value] of numbers) {
    if (typeof value !== 'string' || errors[path] || !value) continue;
    const message = phoneNumberError(value);
    if (message) errors[path] = message;
  }
  return errors;
}
const field = (body: unknown, name: string): unknown => (body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined);
const numberItems = (body: unknown): Array<[string, unknown]> => {
  const v = field(body, 'numbers');
  return Array.isArray(v) ? v.map((n, i) => [`numbers.${i}`, n]) : [];
};

/** A new outbound trunk against the shared OutboundTrunkCreate schema, its numbers through libphonenumber. */
export function validateTrunkCreate(body: unknown): FieldErrors {
  const fn = compiled('OutboundTrunkCreate');
  return withPhoneErrors(fn(body) ? {} : schemaFieldErrors(fn.errors), numberItems(body));
}

/** A trunk change (only the fields that change; at least one) against OutboundTrunkUpdate. */
export function validateTrunkUpdate(body: unknown): FieldErrors {
  const fn = compiled('OutboundTrunkUpdate');
  return withPhoneErrors(fn(body) ? {} : schemaFieldErrors(fn.errors), numberItems(body));
}

/** A new inbound number against the shared InboundNumberCreate schema. */
export function validateInboundCreate(body: unknown): FieldErrors {
  const fn = compiled('InboundNumberCreate');
  return withPhoneErrors(fn(body) ? {} : schemaFieldErrors(fn.errors), [['number', field(body, 'number')]]);
}

/** An inbound number change (only the fields that change; at least one) against InboundNumberUpdate. */
export function validateInboundUpdate(body: unknown): FieldErrors {
  const fn = compiled('InboundNumberUpdate');
  return withPhoneErrors(fn(body) ? {} : schemaFieldErrors(fn.errors), [['number', field(body, 'number')]]);
}

/** A new campaign against the shared CampaignCreate schema. */
export function validateCampaignCreate(body: unknown): FieldErrors {
  const fn = compiled('CampaignCreate');
  return withPhoneErrors(fn(body) ? {} : schemaFieldErrors(fn.errors), [['from_number', field(body, 'from_number')]]);
}
