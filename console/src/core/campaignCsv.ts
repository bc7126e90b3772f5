// Contact CSVs in the browser, before they reach the backend: the file read by the backend's own reader
// (schemas/src/csv.ts: RFC 4180, CRLF or LF, an optional UTF-8 BOM), blank lines dropped, a preview of
// the first rows, and the administrator's column → variable mapping. The upload is the backend's own CSV
// contract (docs/design.md §8): a header of `to_number`, optional `timezone` and the mapped variables,
// rewritten here, so unmapped columns are never sent (the backend would refuse a column the bot does not
// declare). Bodies stay within the backend's limits (rows and bytes per upload; longer files become
// several uploads); rows the backend cannot take as sent (a wrong number of cells, an over-long line) are
// reported here, by file line.
import { MAX_CONTACTS_PER_UPLOAD, MAX_CSV_BYTES, MAX_CSV_ROW_CHARS, type ContactsResult } from '@voice-platform/schemas/campaigns.js';
import { CsvParseError, parseCsvRecords, type CsvRecord } from '@voice-platform/schemas/csv.js';
import { parseNumber } from './inboundForm.js';
import type { FieldErrors } from './validation.js';

/** A file the page refuses to read: its message names the line. */
export class CsvError extends Error {
  override name = 'CsvError';
}

/** One data row: its cells and the file line it starts on (1-based; the header is line 1 in most files). */
type CsvRow = CsvRecord;

export interface CsvTable {
  header: string[];
  rows: CsvRow[];
}

/** Records of the text with the line each starts on (the shared reader, schemas/src/csv.ts, without the
 *  upload limits: long files become several uploads); its problems in the page's words, by line. */
export function parseCsv(text: string): CsvRow[] {
  try {
    return parseCsvRecords(text);
  } catch (err) {
    if (!(err instanceof CsvParseError)) throw err;
    if (err.problem === 'quote_in_unquoted_field') throw new CsvError(`Line ${err.line}: a quote inside an unquoted field; put the whole field in quotes and double the quote ("").`);
    if (err.problem === 'unclosed_quote') throw new CsvError(`Line ${err.recordLine}: a quoted field is never closed.`);
    throw err;
  }
}

/** The header and the data rows; rows with nothing in any cell (`,,,` from a spreadsheet) are dropped. */
export function readCsvTable(text: string): CsvTable {
  const records = parseCsv(text);
  const first = records[0];
  if (!first) throw new CsvError('The file is empty: its first line must name the columns.');
  const header = first.cells.map((h) => h.trim());
  const rows = records.slice(1).filter((r) => r.cells.some((c) => c.trim() !== ''));
  if (!rows.length) throw new CsvError('The file has a header but no contacts.');
  return { header, rows };
}

/** Which column (index into the header) feeds what; null: none. */
export interface CsvMapping {
  phone: number | null;
  timezone: number | null;
  variables: Record<string, number | null>;
}

const normal = (s: string) => s.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
/** Column names taken for the phone number, best first. */
const PHONE_NAMES = ['to_number', 'phone', 'phone_number', 'number', 'to', 'mobile', 'mobile_number', 'telephone', 'tel', 'msisdn'];
const TIMEZONE_NAMES = ['timezone', 'time_zone', 'tz'];

function firstNamed(header: string[], names: string[]): number | null {
  const cols = header.map(normal);
  for (const n of names) {
    const i = cols.indexOf(n);
    if (i >= 0) return i;
  }
  return null;
}

/** Columns named like the target (case, spaces and punctuation aside): `Phone` → to_number, `Customer Name` → customer_name. */
export function autoMap(header: string[], variables: readonly string[]): CsvMapping {
  return {
    phone: firstNamed(header, PHONE_NAMES),
    timezone: firstNamed(header, TIMEZONE_NAMES),
    variables: Object.fromEntries(variables.map((v) => [v, firstNamed(header, [normal(v)])])),
  };
}

/** What the mapping still lacks before an upload makes sense: the phone column, and a column for each required variable. */
export function mappingErrors(mapping: CsvMapping, variables: ReadonlyArray<{ name: string; required?: boolean | undefined }>): FieldErrors {
  const errors: FieldErrors = {};
  if (mapping.phone === null) errors.phone = 'Choose the column with the phone numbers.';
  for (const v of variables) if (v.required && (mapping.variables[v.name] ?? null) === null) errors[`variables.${v.name}`] = 'The bot needs this variable: choose its column.';
  return errors;
}

/** One CSV field as written: quoted when it holds a comma, a quote or a line break. */
export const csvField = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const csvLine = (cells: string[]) => cells.map(csvField).join(',');

/** A bad row, by the line of the file it starts on. */
interface RowProblem {
  line: number;
  to_number: string;
  field: string;
  message: string;
}

/** One upload body and, for each of its data rows, the file line and number it came from. */
interface UploadChunk {
  csv: string;
  rows: Array<{ line: number; to_number: string }>;
}

interface PreparedUpload {
  chunks: UploadChunk[];
  /** Rows not sent: the backend would take them wrongly or refuse the whole body for them. */
  problems: RowProblem[];
}

const utf8 = new TextEncoder();

/**
 * The CSV bodies for the mapping: header `to_number[,timezone],<variables…>`, the number without visual
 * separators (spaces, dashes, dots, slashes, parentheses), other cells as they are (empty: no value).
 * At most MAX_CONTACTS_PER_UPLOAD rows and MAX_CSV_BYTES per body.
 */
export function prepareUpload(table: CsvTable, mapping: CsvMapping, limits = { rows: MAX_CONTACTS_PER_UPLOAD, bytes: MAX_CSV_BYTES }): PreparedUpload {
  if (mapping.phone === null) throw new Error('prepareUpload needs the phone column');
  const phone = mapping.phone;
  const vars = Object.entries(mapping.variables).filter((e): e is [string, number] => e[1] !== null);
  const header = csvLine(['to_number', ...(mapping.timezone !== null ? ['timezone'] : []), ...vars.map(([name]) => name)]);
  const headerBytes = utf8.encode(header).length + 1;
  const chunks: UploadChunk[] = [];
  const problems: RowProblem[] = [];
  let lines: string[] = [];
  let rows: UploadChunk['rows'] = [];
  let bytes = headerBytes;
  const flush = () => {
    if (rows.length) chunks.push({ csv: `${[header, ...lines].join('\n')}\n`, rows });
    lines = [];
    rows = [];
    bytes = headerBytes;
  };
  for (const r of table.rows) {
    const to_number = parseNumber(r.cells[phone] ?? '');
    if (r.cells.length !== table.header.length) {
      problems.push({ line: r.line, to_number, field: '(row)', message: `has ${r.cells.length} cells; the header has ${table.header.length}` });
      continue;
    }
    const cells = [to_number, ...(mapping.timezone !== null ? [r.cells[mapping.timezone]!.trim()] : []), ...vars.map(([, i]) => r.cells[i]!)];
    const line = csvLine(cells);
    if (line.length > MAX_CSV_ROW_CHARS) {
      problems.push({ line: r.line, to_number, field: '(row)', message: `is longer than ${MAX_CSV_ROW_CHARS} characters` });
      continue;
    }
    const size = utf8.encode(line).length + 1;
    if (rows.length >= limits.rows || bytes + size > limits.bytes) flush();
    lines.push(line);
    rows.push({ line: r.line, to_number });
    bytes += size;
  }
  flush();
  return { chunks, problems };
}

export interface UploadReport {
  added: number;
  duplicates: number;
  rejected: RowProblem[];
}

/** The backend's answers to each chunk (rows numbered within the chunk) and the rows not sent, as one report by file line. */
export function mergeReport(prepared: PreparedUpload, results: ContactsResult[]): UploadReport {
  const rejected = [...prepared.problems];
  let added = 0;
  let duplicates = 0;
  results.forEach((res, k) => {
    added += res.added;
    duplicates += res.duplicates;
    const rows = prepared.chunks[k]?.rows ?? [];
    for (const p of res.rejected) {
      const src = rows[p.row - 1];
      rejected.push({ line: src?.line ?? 0, to_number: src?.to_number ?? '', field: p.field, message: p.message });
    }
  });
  rejected.sort((a, b) => a.line - b.line);
  return { added, duplicates, rejected };
}

/** A bad row in words: which column (as the mapping calls it) and what is wrong, as a sentence. */
export function describeProblem(p: Pick<RowProblem, 'field' | 'message' | 'to_number'>): { field: string; problem: string } {
  const field = p.field === 'to_number' ? 'Phone number' : p.field === 'timezone' ? 'Time zone' : p.field === '(row)' ? 'Row' : p.field.replace(/^variables\./, '');
  let problem = p.message;
  if (p.field === 'to_number' && problem.startsWith('must match pattern')) problem = p.to_number ? 'is not an E.164 number (+ and the country code, e.g. +4915112345678)' : 'is empty';
  else if (p.field === 'timezone' && problem.startsWith('must match pattern')) problem = 'is not an IANA time zone name (e.g. Europe/Berlin)';
  problem = `${problem.charAt(0).toUpperCase()}${problem.slice(1)}`;
  return { field, problem: /[.!?]$/.test(problem) ? problem : `${problem}.` };
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "2 contacts added, 1 duplicate, 2 rows rejected." */
export function reportSummary(r: UploadReport): string {
  const rows = new Set(r.rejected.map((p) => p.line)).size;
  return `${count(r.added, 'contact', 'contacts')} added, ${count(r.duplicates, 'duplicate', 'duplicates')}, ${count(rows, 'row', 'rows')} rejected.`;
}
