// A campaign's results as CSV (GET /api/v1/campaigns/{id}/contacts.csv): one row per contact, in the order and
// with the filter of GET /api/v1/campaigns/{id}/contacts, its last call's outcome beside it. Streamed: the
// contacts are read page by page (with the last calls of each page), so a large campaign never sits in
// memory. RFC 4180 (CRLF line ends, fields holding a comma, quote or line break quoted, quotes doubled),
// and safe to open in a spreadsheet: a cell that starts like a formula is prefixed with `'`.
import { Readable } from 'node:stream';
import type { Db, Filter } from 'mongodb';
import { analysisWanted } from '@voice-platform/schemas';
import type { BotDoc } from '../bots/store.js';
import { findCalls, type CallDoc } from '../calls/store.js';
import { contacts, type ContactDoc } from './store.js';

/** Contacts read at once (and their last calls looked up in one query). */
export const EXPORT_PAGE_SIZE = 500;

type Cell = string | number | boolean | null | undefined;

/** What one row is made from: the contact and its last call's record (null: not dialled, or the record is gone). */
export interface ExportRow {
  contact: ContactDoc;
  lastCall: Pick<CallDoc, '_id' | 'status' | 'end_reason' | 'answered_by' | 'amd_ms' | 'analysis'> | null;
}

export interface ExportColumn {
  header: string;
  cell: (row: ExportRow) => Cell;
}

/** The fields of the last call the columns read (the projection of the calls query). */
const CALL_FIELDS = { _id: 1, status: 1, end_reason: 1, answered_by: 1, amd_ms: 1 } as const;

/**
 * Post-call analysis (docs/design.md §10), between the call outcome and the variables, for a bot that asks for one
 * (none otherwise, or when the bot is gone): `analysis_status` (pending, done, failed or skipped; empty without an
 * analysis), `analysis_summary` (when the bot asks for a summary), `analysis_success` (when it has a success
 * criterion), then `data_<field>` for each of the bot's analysis fields, all from the contact's last call.
 */
export const ANALYSIS_CALL_FIELDS: Record<string, 1> = { analysis: 1 };

export function analysisColumns(bot: BotDoc | null): ExportColumn[] {
  const a = bot?.analysis;
  if (!a || !analysisWanted(a)) return [];
  const of = (r: ExportRow) => r.lastCall?.analysis ?? null;
  return [
    { header: 'analysis_status', cell: (r) => of(r)?.status },
    ...(a.summary ? [{ header: 'analysis_summary', cell: (r: ExportRow) => of(r)?.summary }] : []),
    ...(a.success !== null ? [{ header: 'analysis_success', cell: (r: ExportRow) => of(r)?.success }] : []),
    ...a.fields.map((f) => ({ header: `data_${f.name}`, cell: (r: ExportRow) => of(r)?.data?.[f.name] })),
  ];
}

const lastAttempt = (c: ContactDoc) => {
  const attempts = c.attempts ?? [];
  return attempts[attempts.length - 1] ?? null;
};
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** The columns every export has, before the analysis and variable columns. */
const FIXED_COLUMNS: ExportColumn[] = [
  { header: 'contact_id', cell: (r) => r.contact._id },
  { header: 'to_number', cell: (r) => r.contact.to_number },
  { header: 'status', cell: (r) => r.contact.status },
  { header: 'attempts', cell: (r) => (r.contact.attempts ?? []).length },
  { header: 'last_call_id', cell: (r) => lastAttempt(r.contact)?.call_id },
  // The call record's own status while it is live (the attempt says `queued` until the call ends), then the
  // same as the attempt's (the contacts API's attempts[-1].status and end_reason).
  { header: 'last_call_status', cell: (r) => r.lastCall?.status ?? lastAttempt(r.contact)?.status },
  { header: 'last_end_reason', cell: (r) => r.lastCall?.end_reason ?? lastAttempt(r.contact)?.end_reason },
  { header: 'answered_by', cell: (r) => r.lastCall?.answered_by },
  { header: 'amd_ms', cell: (r) => r.lastCall?.amd_ms },
  { header: 'next_attempt_at', cell: (r) => iso(r.contact.next_attempt_at) },
];

/** A cell a spreadsheet would run as a formula (or DDE) starts with one of these. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A signed integer (an E.164 number among them): a spreadsheet reads it as a number, nothing it could run. */
const PLAIN_NUMBER = /^[+-]?[0-9]+$/;

/** One cell: formula-safe (`'` before a leading = + - @ tab or CR, except in a plain number), then RFC 4180 quoted if needed. */
export function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (cells: readonly Cell[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/** The variable columns: the bot's declared variables in its order, then any other name a contact holds, sorted. */
async function variableNames(db: Db, filter: Filter<ContactDoc>, bot: BotDoc | null): Promise<string[]> {
  const declared = (bot?.variables ?? []).map((v) => v.name);
  const others = new Set<string>();
  for await (const c of contacts(db).find(filter, { projection: { variables: 1 } })) {
    for (const name of Object.keys(c.variables ?? {})) if (!declared.includes(name)) others.add(name);
  }
  return [...declared, ...[...others].sort()];
}

/**
 * The CSV of the campaign's contacts matching `filter` (its `campaign_id` and the contacts API's filters):
 * the header line is built before this returns (so a store failure is still an error answer), the rows
 * follow as the stream is read, EXPORT_PAGE_SIZE contacts a query.
 */
export async function contactsCsv(db: Db, bot: BotDoc | null, filter: Filter<ContactDoc>, pageSize = EXPORT_PAGE_SIZE): Promise<Readable> {
  const names = await variableNames(db, filter, bot);
  const columns: ExportColumn[] = [
    ...FIXED_COLUMNS,
    ...analysisColumns(bot),
    ...names.map((name) => ({ header: `var_${name}`, cell: (r: ExportRow) => r.contact.variables?.[name] })),
  ];
  const header = csvLine(columns.map((c) => c.header));
  const projection = { ...CALL_FIELDS, ...ANALYSIS_CALL_FIELDS };
  async function* rows(): AsyncGenerator<string> {
    yield header;
    let after: { t: Date; id: string } | null = null;
    for (;;) {
      // The contacts API's order and cursor: upload order, oldest first.
      const page: ContactDoc[] = await contacts(db)
        .find(after ? { $and: [filter, { $or: [{ created_at: { $gt: after.t } }, { created_at: after.t, _id: { $gt: after.id } }] }] } : filter)
        .sort({ created_at: 1, _id: 1 })
        .limit(pageSize)
        .toArray();
      if (!page.length) return;
      const ids = [...new Set(page.map((c) => lastAttempt(c)?.call_id).filter((id): id is string => !!id))];
      const calls = ids.length ? await findCalls(db, { _id: { $in: ids } }, { projection }) : [];
      const byId = new Map(calls.map((c) => [c._id, c]));
      let chunk = '';
      for (const contact of page) {
        const id = lastAttempt(contact)?.call_id;
        const row: ExportRow = { contact, lastCall: (id && byId.get(id)) || null };
        chunk += csvLine(columns.map((c) => c.cell(row)));
      }
      yield chunk;
      if (page.length < pageSize) return;
      const last = page[page.length - 1]!;
      after = { t: last.created_at, id: last._id };
    }
  }
  return Readable.from(rows(), { objectMode: false });
}
