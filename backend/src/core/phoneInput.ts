// Phone number inputs of the API (docs/design.md §13): normalised to E.164 by the shared libphonenumber
// function (schemas/src/phone.ts); one that cannot exist is a 422 naming the field and the reason.
import { normalizePhoneNumber, type ErrorCode } from '@voice-platform/schemas';
import { apiError } from './errors.js';

/** `value` as E.164, or a 422 (`code`, validation_failed by default) with `details: [{field, message: reason}]`. */
export function e164Input(value: string, field: string, region?: string | null, code: ErrorCode = 'validation_failed'): string {
  const r = normalizePhoneNumber(value, region);
  if (r.ok) return r.e164;
  throw apiError(code, { message: `${field} is not a phone number that can exist: ${r.reason}`, details: [{ field, message: r.reason }] });
}

/** The problem of one number for a list of problems (rows, array items), or its E.164. */
export function e164Problem(value: string, field: string, region?: string | null): { e164: string } | { field: string; message: string } {
  const r = normalizePhoneNumber(value, region);
  return r.ok ? { e164: r.e164 } : { field, message: r.reason };
}


/** Each of `values` as E.164 (`field.N` names an item), or one 422 naming every item that cannot exist; `unique`: an
 *  item that normalises to an earlier item's number is refused too (the schema's uniqueItems sees only the text). */
export function e164List(values: string[], field: string, opts: { unique?: boolean; region?: string | null } = {}): string[] {
  const out: string[] = [];
  const problems: Array<{ field: string; message: string }> = [];
  values.forEach((v, i) => {
    const r = e164Problem(v, `${field}.${i}`, opts.region);
    if (!('e164' in r)) return void problems.push(r);
    const earlier = out.indexOf(r.e164);
    if (opts.unique && earlier >= 0) problems.push({ field: `${field}.${i}`, message: `is the same number as ${field}.${earlier} (${r.e164})` });
    out[i] = r.e164;
  });
  if (problems.length) throw apiError('validation_failed', { details: problems });
  return out;
}
