// The API key edit dialog's state ↔ the PATCH body: a rename and/or a new expiry, sending only what
// changes. Expiry uses the creation presets plus "no change", so renaming never touches the expiry.
import type { ApiKey, ApiKeyUpdate } from '@voice-platform/schemas/apiKeys.js';
import { dateInputValue, EXPIRY_PRESETS, expiresAtFor, type ExpiryPreset } from './expiry.js';
import { validateApiKeyUpdate, type FieldErrors } from './validation.js';

export type EditExpiryPreset = 'keep' | ExpiryPreset;

export interface KeyEditForm {
  name: string;
  preset: EditExpiryPreset;
  /** `YYYY-MM-DD` for the `date` preset; starts at the key's current expiry day, if any. */
  date: string;
}

export function keyEditForm(key: Pick<ApiKey, 'name' | 'expires_at'>): KeyEditForm {
  return { name: key.name, preset: 'keep', date: key.expires_at ? dateInputValue(new Date(key.expires_at)) : '' };
}

/** The expiry choices of the edit dialog: "no change" (naming the current expiry) first, then the creation presets. */
export function editExpiryOptions(currentLabel: string): Array<{ value: EditExpiryPreset; label: string }> {
  return [{ value: 'keep', label: `No change (${currentLabel})` }, ...EXPIRY_PRESETS];
}

/**
 * The PATCH body and the problems the shared schema (and the backend's future-expiry rule) find in it.
 * An empty body with no errors means there is nothing to change.
 */
export function keyEditBody(key: Pick<ApiKey, 'name' | 'expires_at'>, form: KeyEditForm, now: Date): { body: ApiKeyUpdate; errors: FieldErrors } {
  const body: ApiKeyUpdate = {};
  const errors: FieldErrors = {};
  const name = form.name.trim();
  if (name !== key.name) body.name = name;
  if (form.preset !== 'keep') {
    const expiresAt = expiresAtFor(form.preset, now, form.date);
    if (expiresAt === undefined) errors.expires_at = 'Choose a valid date.';
    else if (expiresAt !== key.expires_at) body.expires_at = expiresAt;
  }
  if (Object.keys(body).length) Object.assign(errors, validateApiKeyUpdate(body, now), errors);
  return { body, errors };
}
