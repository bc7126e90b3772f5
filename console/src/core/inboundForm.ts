// The inbound number form's state (text as typed) ↔ the API bodies, checked with the shared
// InboundNumberCreate / InboundNumberUpdate schemas (the backend validates with the same ones), plus the
// one rule the console can check before the backend does: the chosen bot's required variables.
import type { InboundNumber, InboundNumberCreate, InboundNumberUpdate } from '@voice-platform/schemas/inbound.js';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { validateInboundCreate, validateInboundUpdate, type FieldErrors } from './validation.js';

/** What the form needs of a bot: the picker's label and its declared variables. */
export type BotChoice = Pick<Bot, 'id' | 'name' | 'variables'>;

export interface InboundForm {
  number: string;
  bot_id: string;
  /** Values by variable name as typed; only the chosen bot's variables are sent, empty ones left out. */
  variables: Record<string, string>;
  /** One address or CIDR per line (commas, semicolons and spaces also separate); empty: any source. */
  allowed_addresses: string;
}

export const NEEDS_VALUE = 'The bot needs this value.';
const CHOOSE_BOT = 'Choose the bot that answers calls to this number.';

export const emptyInboundForm = (botId = ''): InboundForm => ({ number: '', bot_id: botId, variables: {}, allowed_addresses: '' });

/** A stored inbound number as form text. */
export function inboundToForm(n: InboundNumber): InboundForm {
  return { number: n.number, bot_id: n.bot_id, variables: { ...n.variables }, allowed_addresses: n.allowed_addresses.join('\n') };
}

/** The number as typed → as sent: visual separators (spaces, -, ., /, parentheses) removed; the rest is the schema's to judge. */
export const parseNumber = (text: string): string => text.replace(/[\s\-./()]/g, '');

/** The addresses as typed → the list sent: split on new lines, commas, semicolons and spaces, blanks dropped. */
export const parseAddresses = (text: string): string[] => text.split(/[\s,;]+/).filter(Boolean);

/**
 * The variables sent for the chosen bot: its declared ones that have a value (a value typed for another
 * bot is not sent). Without the bot's declaration at hand, every non-empty value as typed.
 */
export function formVariables(form: InboundForm, bot: BotChoice | undefined): Record<string, string> {
  const names = bot ? bot.variables.map((v) => v.name) : Object.keys(form.variables);
  return Object.fromEntries(names.flatMap((n) => (form.variables[n] ? [[n, form.variables[n]!]] : [])));
}

/**
 * Field errors as the form shows them: errors on single addresses (`allowed_addresses.2`, from the schema)
 * become one message on the addresses field that names the address, as the textarea is one control.
 */
export function inboundFieldErrors(errors: FieldErrors, addresses: readonly string[]): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, message] of Object.entries(errors)) {
    const m = /^allowed_addresses\.(\d+)$/.exec(key);
    if (!m) {
      if (key === 'allowed_addresses' && message === 'Each entry may appear only once.') {
        const dup = addresses.find((a, i) => addresses.indexOf(a) !== i);
        out.allowed_addresses ??= dup ? `${dup} is listed twice; list each address once.` : message;
      } else out[key] ??= message;
      continue;
    }
    const value = addresses[Number(m[1])];
    out.allowed_addresses ??= value === undefined ? message : `${value}: ${message}`;
  }
  return out;
}

/** The chosen bot's required variables left empty (the backend would answer 422 variables_mismatch). */
function missingVariables(form: InboundForm, bot: BotChoice | undefined): FieldErrors {
  const out: FieldErrors = {};
  for (const v of bot?.variables ?? []) if (v.required && !form.variables[v.name]) out[`variables.${v.name}`] = NEEDS_VALUE;
  return out;
}

/** The POST body for a new inbound number, and the problems with it by form field. */
export function inboundCreateBody(form: InboundForm, bot: BotChoice | undefined): { body: InboundNumberCreate; errors: FieldErrors } {
  const addresses = parseAddresses(form.allowed_addresses);
  const variables = formVariables(form, bot);
  const body: InboundNumberCreate = {
    number: parseNumber(form.number),
    bot_id: form.bot_id,
    ...(Object.keys(variables).length ? { variables } : {}),
    ...(addresses.length ? { allowed_addresses: addresses } : {}),
  };
  const errors = inboundFieldErrors(validateInboundCreate(body), addresses);
  if (!form.bot_id) errors.bot_id = CHOOSE_BOT;
  for (const [k, v] of Object.entries(missingVariables(form, bot))) errors[k] ??= v;
  return { body, errors };
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const sameRecord = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => Object.hasOwn(b, k) && b[k] === v);

/**
 * The PATCH body for an edit, sending only what changes, and the problems with it. An empty body
 * without errors means there is nothing to save.
 */
export function inboundUpdateBody(stored: InboundNumber, form: InboundForm, bot: BotChoice | undefined): { body: InboundNumberUpdate; errors: FieldErrors } {
  const body: InboundNumberUpdate = {};
  const number = parseNumber(form.number);
  const addresses = parseAddresses(form.allowed_addresses);
  const variables = formVariables(form, bot);
  if (number !== stored.number) body.number = number;
  if (form.bot_id !== stored.bot_id) body.bot_id = form.bot_id;
  if (!sameRecord(variables, stored.variables)) body.variables = variables;
  if (!sameList(addresses, stored.allowed_addresses)) body.allowed_addresses = addresses;
  const errors = Object.keys(body).length ? inboundFieldErrors(validateInboundUpdate(body), addresses) : {};
  if (!form.bot_id) errors.bot_id = CHOOSE_BOT;
  for (const [k, v] of Object.entries(missingVariables(form, bot))) errors[k] ??= v;
  return { body, errors };
}

/**
 * An API refusal's field errors: 422 details on their fields (addresses named), `variables_mismatch`
 * on the variables the bot needs, `bot_not_found` on the bot picker, `conflict` on the number.
 */
export function inboundApiErrors(err: { code: string; details?: unknown; fieldErrors: FieldErrors }, addresses: readonly string[]): FieldErrors {
  switch (err.code) {
    case 'variables_mismatch': {
      const missing = (err.details as { missing?: unknown } | undefined)?.missing;
      return Object.fromEntries((Array.isArray(missing) ? missing : []).filter((n): n is string => typeof n === 'string').map((n) => [`variables.${n}`, NEEDS_VALUE]));
    }
    case 'bot_not_found':
      return { bot_id: 'This bot no longer exists; choose another.' };
    case 'conflict':
      return { number: 'This number is already an inbound number.' };
    default:
      return inboundFieldErrors(err.fieldErrors, addresses);
  }
}
