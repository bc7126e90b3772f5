// The outbound trunk form's state (text as typed) ↔ the API bodies, checked with the shared
// OutboundTrunkCreate / OutboundTrunkUpdate schemas (the backend validates with the same ones).
// The password is write-only: a form never starts with one, an edit leaves it out unless a new one is
// typed, and no message built here ever contains it.
import { SIP_TRANSPORTS, type OutboundTrunk, type OutboundTrunkCreate, type OutboundTrunkUpdate, type SipTransport } from '@voice-platform/schemas/trunks.js';
import { validateTrunkCreate, validateTrunkUpdate, type FieldErrors } from './validation.js';

export interface TrunkForm {
  name: string;
  /** `host[:port]` of the carrier's SIP server. */
  address: string;
  transport: SipTransport;
  /** Caller IDs, one per line (commas and semicolons also separate). */
  numbers: string;
  auth_username: string;
  /** Only what the administrator typed in this dialog; never a stored value (the API never returns one). */
  auth_password: string;
  /** Edit only: send `auth_username: null, auth_password: null`. */
  removeCredentials: boolean;
  makeDefault: boolean;
}

export const TRANSPORT_OPTIONS: ReadonlyArray<{ value: SipTransport; label: string }> = SIP_TRANSPORTS.map((t) => ({ value: t, label: t.toUpperCase() }));

export const emptyTrunkForm = (): TrunkForm => ({
  name: '',
  address: '',
  transport: 'udp',
  numbers: '',
  auth_username: '',
  auth_password: '',
  removeCredentials: false,
  makeDefault: false,
});

/** A stored trunk as form text. The password field always starts empty. */
export function trunkToForm(t: OutboundTrunk): TrunkForm {
  return {
    name: t.name,
    address: t.address,
    transport: t.transport,
    numbers: t.numbers.join('\n'),
    auth_username: t.auth_username ?? '',
    auth_password: '',
    removeCredentials: false,
    makeDefault: false,
  };
}

/**
 * The numbers as typed → the list sent: one per line (or separated by commas/semicolons), blank lines
 * dropped, and the usual visual separators (spaces, -, ., /, parentheses) removed, so "+49 30 1234-567"
 * becomes "+49301234567". Anything else stays as typed for the schema to name.
 */
export function parseNumbers(text: string): string[] {
  return text
    .split(/[\n\r,;]+/)
    .map((s) => s.replace(/[\s\-./()]/g, ''))
    .filter(Boolean);
}

/**
 * Field errors as the form shows them: errors on single numbers (`numbers.2`, from the schema or the
 * API) become one message on the numbers field that names the number, as the textarea is one control.
 */
export function trunkFieldErrors(errors: FieldErrors, numbers: readonly string[]): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, message] of Object.entries(errors)) {
    const m = /^numbers\.(\d+)$/.exec(key);
    if (!m) {
      if (key === 'numbers' && message === 'Each entry may appear only once.') {
        const dup = numbers.find((n, i) => numbers.indexOf(n) !== i);
        out.numbers ??= dup ? `${dup} is listed twice; list each number once.` : message;
      } else out[key] ??= message;
      continue;
    }
    const value = numbers[Number(m[1])];
    out.numbers ??= value === undefined ? message : `${value}: ${message}`;
  }
  return out;
}

const USERNAME_FOR_PASSWORD = 'Enter the username that goes with the password.';

/** The POST body for a new trunk, and the problems with it by form field. */
export function trunkCreateBody(form: TrunkForm): { body: OutboundTrunkCreate; errors: FieldErrors } {
  const numbers = parseNumbers(form.numbers);
  const username = form.auth_username.trim();
  const body: OutboundTrunkCreate = {
    name: form.name.trim(),
    address: form.address.trim(),
    transport: form.transport,
    numbers,
    ...(username ? { auth_username: username } : {}),
    ...(form.auth_password !== '' ? { auth_password: form.auth_password } : {}),
    ...(form.makeDefault ? { default: true } : {}),
  };
  const errors = trunkFieldErrors(validateTrunkCreate(body), numbers);
  if (body.auth_password !== undefined && !username) errors.auth_username ??= USERNAME_FOR_PASSWORD;
  return { body, errors };
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The PATCH body for an edit, sending only what changes, and the problems with it. An empty password
 * keeps the stored one; "remove credentials" sends both as null. An empty body without errors means
 * there is nothing to save.
 */
export function trunkUpdateBody(trunk: OutboundTrunk, form: TrunkForm): { body: OutboundTrunkUpdate; errors: FieldErrors } {
  const body: OutboundTrunkUpdate = {};
  const errors: FieldErrors = {};
  const name = form.name.trim();
  const address = form.address.trim();
  const numbers = parseNumbers(form.numbers);
  if (name !== trunk.name) body.name = name;
  if (address !== trunk.address) body.address = address;
  if (form.transport !== trunk.transport) body.transport = form.transport;
  if (!sameList(numbers, trunk.numbers)) body.numbers = numbers;

  const hasCredentials = trunk.auth_username !== null || trunk.has_password;
  if (form.removeCredentials) {
    if (hasCredentials) {
      body.auth_username = null;
      body.auth_password = null;
    }
  } else {
    const username = form.auth_username.trim();
    if (!username && trunk.auth_username !== null) errors.auth_username = 'Enter a username, or choose “Remove the credentials”.';
    else if (!username && form.auth_password !== '') errors.auth_username = USERNAME_FOR_PASSWORD;
    else if (username !== (trunk.auth_username ?? '')) body.auth_username = username;
    if (form.auth_password !== '') body.auth_password = form.auth_password;
  }
  if (form.makeDefault && !trunk.default) body.default = true;

  if (Object.keys(body).length) {
    const schemaErrors = trunkFieldErrors(validateTrunkUpdate(body), numbers);
    for (const [k, v] of Object.entries(schemaErrors)) errors[k] ??= v;
  }
  return { body, errors };
}

/** The backend names other trunks by id (“… already belongs to trunk 65f0…”); the console names them as its list does. */
export function withTrunkNames(text: string, trunks: ReadonlyArray<Pick<OutboundTrunk, 'id' | 'name'>>): string {
  const names = new Map(trunks.map((t) => [t.id, t.name]));
  return text.replace(/\btrunk ([A-Za-z0-9_-]+)/g, (whole, id: string) => (names.has(id) ? `trunk “${names.get(id)!}”` : whole));
}
