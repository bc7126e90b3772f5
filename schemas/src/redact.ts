// Redaction (shared/DESIGN.md §16): the one masking pass the worker applies to everything of a call it stores,
// reports or logs (transcript, turns, actions, log lines), and the backend to text that did not come through
// it. Pure string work, no dependencies: the worker, the backend and the console share it.
//
// The mask keeps the kind visible and nothing of the value: `[card_number]`, `[ssn]`, `[email]`, `[phone]`.
// What each entity finds:
//   card_number: 13–19 digits passing the Luhn check, as one run or groups split by single spaces or dashes,
//                digits spoken as words ("four one one one …") too; a keypad turn is a digit run like any other.
//   ssn:         a US social security number: ddd-dd-dddd, ddd dd dddd or 9 digits alone, with a possible area
//                (not 000, 666 or 9xx), group (not 00) and serial (not 0000).
//   email:       local@domain.tld.
//   phone:       E.164 or international (+ then 8–15 digits, spaces, dots, dashes and parentheses allowed), and
//                national formats of 10–12 digits: (415) 555-0100, 415-555-0100, 415.555.0100, 020 7946 0958,
//                1-800-555-0100, or 10–11 digits alone.
// Entities run in a fixed order (email, card_number, ssn, phone), each over the previous one's output: a mask
// holds no digits, so a card is never half-taken as a phone number.


export const REDACTION_ENTITIES = ['card_number', 'ssn', 'email', 'phone'] as const;
export type RedactionEntity = (typeof REDACTION_ENTITIES)[number];

export const isRedactionEntity = (name: unknown): name is RedactionEntity => typeof name === 'string' && (REDACTION_ENTITIES as readonly string[]).includes(name);

/** What an entity is replaced with. */
export const redactionMask = (entity: RedactionEntity): string => `[${entity}]`;

/** True when `digits` (0–9 only) pass the Luhn check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (d < 0 || d > 9) return false;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

const DIGIT_WORDS: Record<string, string> = { zero: '0', oh: '0', one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9' };
const CARD_TOKEN = '(?:\\d+|zero|oh|one|two|three|four|five|six|seven|eight|nine)';
// Tokens joined by one separator (a space, a dash, or ", " as a recogniser writes spoken digits).
const CARD_RUN = new RegExp(`(?<![\\w])${CARD_TOKEN}(?:(?:, ?| - |[ -])${CARD_TOKEN})*(?![\\w])`, 'gi');
const CARD_DIGITS = { min: 13, max: 19 };

/** Card numbers in one run of digit groups and digit words: the longest Luhn-valid windows of whole tokens. */
function maskCardRun(run: string): string {
  const tokens = [...run.matchAll(new RegExp(CARD_TOKEN, 'gi'))].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
    digits: /^\d+$/.test(m[0]) ? m[0] : DIGIT_WORDS[m[0].toLowerCase()]!,
  }));
  let out = '';
  let at = 0;
  let i = 0;
  while (i < tokens.length) {
    let found = -1;
    let digits = '';
    for (let j = i; j < tokens.length; j++) {
      digits += tokens[j]!.digits;
      if (digits.length > CARD_DIGITS.max) break;
      if (digits.length >= CARD_DIGITS.min && luhnValid(digits)) found = j; // the longest window wins
    }
    if (found < 0) {
      i++;
      continue;
    }
    out += run.slice(at, tokens[i]!.start) + redactionMask('card_number');
    at = tokens[found]!.end;
    i = found + 1;
  }
  return out + run.slice(at);
}

const maskCards = (text: string): string => (/\d|zero|one|two|three|four|five|six|seven|eight|nine/i.test(text) ? text.replace(CARD_RUN, maskCardRun) : text);

const SSN = /(?<![\w-])(\d{3})([- ]?)(\d{2})\2(\d{4})(?![\w-])/g;
const possibleSsn = (area: string, group: string, serial: string) => area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000';
const maskSsns = (text: string): string => text.replace(SSN, (m, area: string, _sep: string, group: string, serial: string) => (possibleSsn(area, group, serial) ? redactionMask('ssn') : m));

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const maskEmails = (text: string): string => text.replace(EMAIL, redactionMask('email'));

// International: a + and digits with the punctuation people write them with.
const PHONE_INTL = /(?<![\w+])\+\d(?:[ .-]?\(?\d+\)?)*(?![\w])/g;
// National: groups of digits split by single separators, or an area code in parentheses first.
const PHONE_NATIONAL = /(?<![\w+.-])(?:\(\d{2,5}\) ?|\d{1,5}[ .-])(?:\d{2,5}[ .-]){0,2}\d{2,5}(?![\w]|[.-]\d)/g;
const PHONE_BARE = /(?<![\w+.-])\d{10,11}(?![\w]|[.-]\d)/g;
const digitCount = (s: string) => s.replace(/\D/g, '').length;
function maskPhones(text: string): string {
  if (!/\d/.test(text)) return text;
  return text
    .replace(PHONE_INTL, (m) => (digitCount(m) >= 8 && digitCount(m) <= 15 ? redactionMask('phone') : m))
    .replace(PHONE_NATIONAL, (m) => (digitCount(m) >= 10 && digitCount(m) <= 12 ? redactionMask('phone') : m))
    .replace(PHONE_BARE, redactionMask('phone'));
}

const PASSES: ReadonlyArray<[RedactionEntity, (text: string) => string]> = [
  ['email', maskEmails],
  ['card_number', maskCards],
  ['ssn', maskSsns],
  ['phone', maskPhones],
];

/** `text` with every entity of `entities` masked; the rest untouched. */
export function redactText(text: string, entities: readonly RedactionEntity[]): string {
  if (!entities.length || !text) return text;
  let out = text;
  for (const [entity, pass] of PASSES) if (entities.includes(entity)) out = pass(out);
  return out;
}

/** A JSON value (an action's arguments or result) with every string in it masked; keys, numbers of other kinds untouched. */
export function redactValue<T>(value: T, entities: readonly RedactionEntity[]): T {
  if (!entities.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, entities);
    // A card number can come as a JSON number too (a tool's argument); masked as text.
    if (typeof v === 'number' && Number.isInteger(v) && String(v).length >= CARD_DIGITS.min) {
      const masked = redactText(String(v), entities);
      return masked === String(v) ? v : masked;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/** What of a call's action (calls.ts CallAction) may hold words: typed by shape, so this module imports no schema. */
interface ActionText {
  arguments?: Record<string, unknown>;
  result?: string | null;
  error?: string | null;
}

/** A call's action as shown (the call record, webhooks): its arguments, result and error masked. */
export function redactAction<A extends ActionText>(a: A, entities: readonly RedactionEntity[]): A {
  if (!entities.length) return a;
  return {
    ...a,
    ...(a.arguments ? { arguments: redactValue(a.arguments, entities) } : {}),
    ...(typeof a.result === 'string' ? { result: redactText(a.result, entities) } : {}),
    ...(typeof a.error === 'string' ? { error: redactText(a.error, entities) } : {}),
  };
}

/** A bot's redaction as stored or configured: absent (a bot or config from before the setting) is no redaction. */
export interface RedactionConfig {
  entities: readonly RedactionEntity[];
  redact_llm: boolean;
}
export const redactionOf = (r: { entities?: readonly string[]; redact_llm?: boolean } | null | undefined): RedactionConfig => ({
  entities: (r?.entities ?? []).filter(isRedactionEntity),
  redact_llm: r?.redact_llm ?? false,
});
