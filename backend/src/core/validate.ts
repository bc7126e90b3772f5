// Request validation against the shared TypeBox schemas; failures name every bad field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import dependentRequiredModule from 'ajv/dist/vocabularies/validation/dependentRequired.js';
import type { TSchema, Static } from '@sinclair/typebox';
import { CURSOR_PATTERN } from '@voice-platform/schemas';
import { apiError } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
export const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
// The documents are OpenAPI 3.1 (JSON Schema 2020-12): "this field needs that one" is `dependentRequired`,
// which Ajv's draft-07 class leaves out unless added.
const cjs = <T>(m: T | { default: T }): T => (m && typeof m === 'object' && 'default' in m ? m.default : m) as T;
ajv.addKeyword(cjs(dependentRequiredModule));

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const TIME = '[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?';
const OFFSET = '(?:[01][0-9]|2[0-3]):[0-5][0-9]';
const DAY = '(?:0[1-9]|[12][0-9]|3[01])';

/** What parseDateTime accepts, as a pattern for the OpenAPI document (beside `format: date-time`, which
 *  rules out impossible days such as Feb 30): `T` between date and time (RFC 3339's grammar; not a space),
 *  no leap second, hours 00–23, offsets up to ±23:59, years 0001–9999, but 9999-12-31 with a negative
 *  offset (that may name an instant in year 10000) only as -00:00. */
export const DATE_TIME_PATTERN =
  '^(?:' +
  `(?:(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-(?:0[1-9]|1[0-2])-${DAY}|9999-(?:0[1-9]|1[01])-${DAY}|9999-12-(?:0[1-9]|[12][0-9]|30))${TIME}(?:[Zz]|[+-]${OFFSET})` +
  `|9999-12-31${TIME}(?:[Zz]|\\+${OFFSET}|-00:00)` +
  ')$';

/** The instant an RFC 3339 date-time names, or null when it names none that a Date can hold. ajv-formats
 *  accepts the leap second `23:59:60`, which Date cannot parse (NaN, stored as 1970), and Date rolls
 *  impossible days over (Feb 30 → Mar 2): every part must come back as written, and `new Date(value)`
 *  must give this same instant, so code that parses a checked value later cannot disagree. Year 0000 is
 *  refused, and 9999-12-31 with a negative offset other than -00:00: they may name instants outside
 *  0000–9999 in UTC, which the API, writing every time back in UTC, could not return as RFC 3339
 *  (`+010000-01-01T…`). `9999-12-31T23:59:59Z` ("never", as clients write it) is accepted. */
export function parseDateTime(value: string): Date | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (y < 1 || y > 9999) return null;
  const ms = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0')); // Date keeps milliseconds and drops the rest
  const [oh, om] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (oh > 23 || om > 59) return null;
  const offsetMin = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  if (y === 9999 && mo === 12 && d === 31 && offsetMin < 0) return null;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, ms);
  const asWritten =
    t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === s;
  const instant = t.getTime() - offsetMin * 60_000;
  return asWritten && Date.parse(value) === instant ? new Date(instant) : null;
}

// Every `format: 'date-time'` field of every schema is checked this way.
ajv.addFormat('date-time', { type: 'string', validate: (v: string) => parseDateTime(v) !== null });

const cache = new WeakMap<TSchema, ValidateFunction>();
export function compiled(schema: TSchema): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

export interface FieldProblem {
  field: string;
  message: string;
}

export function fieldProblems(errors: ErrorObject[] | null | undefined): FieldProblem[] {
  const out: FieldProblem[] = [];
  const seen = new Set<string>();
  // Union noise: a failed `X | null` also reports "must be null" and "must match a schema in anyOf"
  // beside the real problem of X; drop those (as the console does) unless nothing else is left.
  const noise = (e: ErrorObject) => e.keyword === 'anyOf' || e.keyword === 'oneOf' || (e.keyword === 'type' && e.params.type === 'null');
  const specific = (errors ?? []).filter((e) => !noise(e));
  for (const e of specific.length ? specific : (errors ?? [])) {
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') field = [field, String(e.params.missingProperty)].filter(Boolean).join('.');
    if (e.keyword === 'required') message = 'is required';
    if (e.keyword === 'dependentRequired') {
      field = [field, String(e.params.property)].filter(Boolean).join('.');
      message = `needs ${String(e.params.missingProperty)}`;
    }
    if (e.keyword === 'additionalProperties') {
      field = [field, String(e.params.additionalProperty)].filter(Boolean).join('.');
      message = 'is not allowed';
    }
    const id = `${field}|${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ field: field || '(body)', message });
  }
  return out;
}

export function check<T extends TSchema>(schema: T, value: unknown): Static<T> {
  const fn = compiled(schema);
  if (!fn(value)) throw apiError('validation_failed', { details: fieldProblems(fn.errors) });
  return value as Static<T>;
}

const cursorText = new RegExp(CURSOR_PATTERN);

/**
 * The query parameters named `known`, each given once and non-empty (else a problem, and left out); any other
 * parameter is a problem too (`unknown` says how). Problems are added to `problems`, for one 422 naming them all.
 */
export function queryValues(
  query: Readonly<Record<string, string | string[] | undefined>>,
  known: readonly string[],
  problems: FieldProblem[],
  unknown = 'is not a known parameter',
): Record<string, string> {
  const names = new Set(known);
  for (const name of Object.keys(query)) if (!names.has(name)) problems.push({ field: name, message: unknown });
  const values: Record<string, string> = {};
  for (const name of names) {
    const v = query[name];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') problems.push({ field: name, message: 'must be given once, non-empty' });
    else values[name] = v;
  }
  return values;
}

/**
 * A list's query string: `limit` (1–100, default 50), `cursor` (`<ms>.<id>`, a `next_cursor`) and the
 * named filters, each given once and non-empty; any other parameter is refused. `filterProblems` checks
 * the filters' values, so that every problem is reported at once (422 `validation_failed`).
 */
export function pageQuery(
  query: Readonly<Record<string, string | string[] | undefined>>,
  filters: string[] = [],
  filterProblems: (values: Record<string, string>) => FieldProblem[] = () => [],
): { limit: number; after: { t: Date; id: string } | null; values: Record<string, string> } {
  const problems: FieldProblem[] = [];
  const values = queryValues(query, ['limit', 'cursor', ...filters], problems);
  const limitRaw = values.limit;
  const limit = limitRaw === undefined ? 50 : Number(limitRaw);
  if (limitRaw !== undefined && (!/^[0-9]+$/.test(limitRaw) || limit < 1 || limit > 100)) problems.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  const cursor = values.cursor;
  if (cursor !== undefined && !cursorText.test(cursor)) problems.push({ field: 'cursor', message: 'is not a cursor from next_cursor' });
  problems.push(...filterProblems(values));
  if (problems.length) throw apiError('validation_failed', { details: problems });
  if (!cursor) return { limit, after: null, values };
  const dot = cursor.indexOf('.');
  return { limit, after: { t: new Date(Number(cursor.slice(0, dot))), id: cursor.slice(dot + 1) }, values };
}
