// The API key forms' state ↔ the request bodies: creation (name, expiry, scopes) and the edit dialog (a
// rename, a new expiry and/or new scopes, sending only what changes). Expiry in the dialog uses the creation
// presets plus "no change", so renaming never touches the expiry.
import { API_KEY_SCOPES, DEFAULT_API_KEY_SCOPES, type ApiKey, type ApiKeyCreate, type ApiKeyScope, type ApiKeyUpdate } from '@voice-platform/schemas/apiKeys.js';
import { dateInputValue, EXPIRY_PRESETS, expiresAtFor, type ExpiryPreset } from './expiry.js';
import { validateApiKeyCreate, validateApiKeyUpdate, type FieldErrors } from './validation.js';

/** What each scope lets a key call (docs/roles.md, the permissions table's key column), one line each. */
export const SCOPE_DESCRIPTIONS: Record<ApiKeyScope, string> = {
  dialout: 'Place dial-out calls.',
  'calls:read': 'Read the calls it placed and their recordings, and the call analytics.',
  test_calls: 'Start browser and WebSocket test calls.',
  campaigns: 'Run campaigns (reserved: no campaign operation takes a key yet).',
  'calls:control': 'Steer the calls it placed while they last: say, instruct, transfer, end.',
};

const NO_SCOPE = 'Choose at least one scope.';

/** The scopes in the order the form lists them, each once. */
const ordered = (scopes: readonly ApiKeyScope[]): ApiKeyScope[] => API_KEY_SCOPES.filter((s) => scopes.includes(s));

/** The create form above the list (a key is made in place, not in a dialog: the dialog shows the key). */
export interface KeyCreateForm {
  name: string;
  preset: ExpiryPreset;
  date: string;
  scopes: ApiKeyScope[];
}

export const emptyKeyCreateForm = (): KeyCreateForm => ({ name: '', preset: 'never', date: '', scopes: [...DEFAULT_API_KEY_SCOPES] });

/** The POST body (scopes always sent, so the key has exactly what was ticked) and its problems, checked as the backend does. */
export function keyCreateBody(form: KeyCreateForm, now: Date): { body: ApiKeyCreate; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const expiresAt = expiresAtFor(form.preset, now, form.date);
  if (expiresAt === undefined) errors.expires_at = 'Choose a valid date.';
  if (!form.scopes.length) errors.scopes = NO_SCOPE;
  const body: ApiKeyCreate = { name: form.name.trim(), ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}), scopes: ordered(form.scopes) };
  // Our own words win over the schema's for the same field (e.g. no scope: not "Add at least one.").
  return { body, errors: { ...validateApiKeyCreate(body, now), ...errors } };
}

export type EditExpiryPreset = 'keep' | ExpiryPreset;

export interface KeyEditForm {
  name: string;
  preset: EditExpiryPreset;
  /** `YYYY-MM-DD` for the `date` preset; starts at the key's current expiry day, if any. */
  date: string;
  scopes: ApiKeyScope[];
}

export function keyEditForm(key: Pick<ApiKey, 'name' | 'expires_at' | 'scopes'>): KeyEditForm {
  return { name: key.name, preset: 'keep', date: key.expires_at ? dateInputValue(new Date(key.expires_at)) : '', scopes: [...key.scopes] };
}

/** The expiry choices of the edit dialog: "no change" (naming the current expiry) first, then the creation presets. */
export function editExpiryOptions(currentLabel: string): Array<{ value: EditExpiryPreset; label: string }> {
  return [{ value: 'keep', label: `No change (${currentLabel})` }, ...EXPIRY_PRESETS];
}

/**
 * The PATCH body and the problems the shared schema (and the backend's future-expiry rule) find in it.
 * An empty body with no errors means there is nothing to change. Scopes go only when the set changed.
 */
export function keyEditBody(key: Pick<ApiKey, 'name' | 'expires_at' | 'scopes'>, form: KeyEditForm, now: Date): { body: ApiKeyUpdate; errors: FieldErrors } {
  const body: ApiKeyUpdate = {};
  const errors: FieldErrors = {};
  const name = form.name.trim();
  if (name !== key.name) body.name = name;
  if (form.preset !== 'keep') {
    const expiresAt = expiresAtFor(form.preset, now, form.date);
    if (expiresAt === undefined) errors.expires_at = 'Choose a valid date.';
    else if (expiresAt !== key.expires_at) body.expires_at = expiresAt;
  }
  const scopes = ordered(form.scopes);
  if (!scopes.length) errors.scopes = NO_SCOPE;
  else if (scopes.join() !== ordered(key.scopes).join()) body.scopes = scopes;
  return { body, errors: Object.keys(body).length ? { ...validateApiKeyUpdate(body, now), ...errors } : errors };
}
