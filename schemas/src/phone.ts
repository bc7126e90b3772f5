// Phone numbers as people write them, normalised to E.164 with libphonenumber (docs/design.md §13): every
// phone number input of the API and the console goes through normalizePhoneNumber; what is stored and
// answered is E.164. A number is refused only when it cannot exist (libphonenumber's possibility check:
// its country calling code and length), never for not being assigned: the test phone's +1500555xxxx and
// +1555… numbers keep working.
import { Type } from '@sinclair/typebox';
import { parsePhoneNumberWithError, ParseError, validatePhoneNumberLength, isSupportedCountry, type CountryCode } from 'libphonenumber-js/min';
import metadata from 'libphonenumber-js/min/metadata';

/** ISO 3166-1 alpha-2 region a national number is read in (`US`, `DE`, `GB`). */
export const REGION_PATTERN = '^[A-Z]{2}$';

/** Why a number cannot exist: the reasons of a 422's `details[].message`. */
export const PHONE_NUMBER_REASONS = ['too short', 'too long', 'invalid length', 'invalid country calling code', 'not a number', 'must not have an extension', 'unknown region'] as const;
export type PhoneNumberReason = (typeof PHONE_NUMBER_REASONS)[number];

export type PhoneNumberResult = { ok: true; e164: string } | { ok: false; reason: PhoneNumberReason };

/** The longest phone number input taken (formatting included). */
export const PHONE_NUMBER_INPUT_MAX_LENGTH = 64;

/** A request's phone number: E.164, or any format libphonenumber reads (national ones with a default region). */
export const phoneNumberInput = (description: string) => Type.String({ minLength: 1, maxLength: PHONE_NUMBER_INPUT_MAX_LENGTH, description });

const REASONS: Record<string, PhoneNumberReason> = {
  TOO_SHORT: 'too short',
  TOO_LONG: 'too long',
  INVALID_LENGTH: 'invalid length',
  INVALID_COUNTRY: 'invalid country calling code',
  NOT_A_NUMBER: 'not a number',
};

/** Is `region` an ISO 3166 alpha-2 code libphonenumber has numbering rules for? */
export function isPhoneRegion(region: string): boolean {
  return new RegExp(REGION_PATTERN).test(region) && isSupportedCountry(region);
}

/**
 * `input` as E.164 (`+14155550100`), or why it cannot be a number. `+…` and `00…`-style international
 * numbers need no region; a national one (`(415) 555-0100`) is read in `defaultRegion` (else: invalid
 * country calling code). Only the whole input is read: no number is picked out of other text.
 */
export function normalizePhoneNumber(input: string, defaultRegion?: string | null): PhoneNumberResult {
  if (typeof input !== 'string' || input.length > PHONE_NUMBER_INPUT_MAX_LENGTH) return { ok: false, reason: typeof input === 'string' ? 'too long' : 'not a number' };
  if (defaultRegion && !isPhoneRegion(defaultRegion)) return { ok: false, reason: 'unknown region' };
  const region = (defaultRegion || undefined) as CountryCode | undefined;
  try {
    const parsed = parsePhoneNumberWithError(input, { defaultCountry: region, extract: false });
    if (parsed.ext) return { ok: false, reason: 'must not have an extension' };
    if (!parsed.isPossible()) {
      const why = validatePhoneNumberLength(parsed.number);
      return { ok: false, reason: (why && REASONS[why]) || 'invalid length' };
    }
    return { ok: true, e164: parsed.number };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, reason: REASONS[err.message] ?? 'not a number' };
    throw err;
  }
}

/**
 * The region of an E.164 number: its country, or for a number of a shared calling code that no country's
 * rules claim (+1555…, +1500…) the code's main country (`US` for +1). Null when it is not a number.
 */
export function phoneNumberRegion(e164: string): string | null {
  try {
    const parsed = parsePhoneNumberWithError(e164, { extract: false });
    return parsed.country ?? (metadata.country_calling_codes[parsed.countryCallingCode]?.[0] as string | undefined) ?? null;
  } catch {
    return null;
  }
}
