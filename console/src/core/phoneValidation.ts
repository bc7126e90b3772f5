// The console's phone number check: the shared libphonenumber function (schemas/src/phone.ts), the very
// check the backend makes, with each reason a number cannot exist as a sentence an administrator can act on.
import { normalizePhoneNumber, type PhoneNumberReason } from '@voice-platform/schemas/phone.js';

/** Why a phone number cannot exist, as a sentence (the backend's 422 names the same reason). */
export const PHONE_REASON_TEXT: Record<PhoneNumberReason, string> = {
  'too short': 'Too short for a phone number.',
  'too long': 'Too long for a phone number.',
  'invalid length': 'Not a possible length for a number of this country.',
  'invalid country calling code': 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
  'not a number': 'Not a phone number.',
  'must not have an extension': 'Leave out the extension.',
  'unknown region': 'Unknown region: use a two-letter country code, e.g. US or DE.',
};

/** The sentence for a reason of the backend's 422 (`details[].message`), or undefined when it is not one. */
export function phoneReasonText(reason: string): string | undefined {
  return Object.hasOwn(PHONE_REASON_TEXT, reason) ? PHONE_REASON_TEXT[reason as PhoneNumberReason] : undefined;
}

/** The message for a number the backend would refuse (null when it takes it). National numbers need `region`. */
export function phoneNumberError(value: string, region?: string | null): string | null {
  const r = normalizePhoneNumber(value, region);
  return r.ok ? null : PHONE_REASON_TEXT[r.reason];
}

/**
 * One message for a list of numbers typed one per line: each number that cannot exist with its reason
 * (at most `shown` named), or null when the backend would take them all.
 */
export function numberListError(numbers: readonly string[], shown = 5): string | null {
  const bad = numbers.flatMap((n) => {
    const error = phoneNumberError(n);
    return error ? [`${n}: ${error}`] : [];
  });
  if (!bad.length) return null;
  return `${bad.slice(0, shown).join(' ')}${bad.length > shown ? ` And ${bad.length - shown} more.` : ''}`;
}
