// Contact CSVs (docs/design.md §8), read one way by the backend (upload bodies) and the console (files
// before they are mapped and uploaded): RFC 4180, comma-separated, double quotes around fields that hold
// commas, quotes ("" inside) or line breaks, text after a closing quote kept, CRLF, LF or lone CR line ends,
// an optional UTF-8 BOM, blank lines skipped. Limits are optional (the backend's upload bodies have them,
// the console's files do not: it splits long files into several uploads) and checked while reading, so a
// hostile text costs at most its length. Each side words the errors itself from CsvParseError.

/** One record: its cells and the file line it starts on (1-based; line breaks inside quotes count). */
export interface CsvRecord {
  line: number;
  cells: string[];
}

export interface CsvLimits {
  /** Records after the first (the header). */
  dataRows?: number;
  /** Cells in one record. */
  columns?: number;
  /** Characters of one record, line breaks inside quotes included, its line end not. */
  recordChars?: number;
}

export type CsvProblem = 'quote_in_unquoted_field' | 'unclosed_quote' | 'too_many_rows' | 'too_many_columns' | 'record_too_long';

/** Text that is no CSV within the limits; `message` is the backend's wording (the API's `csv.row.N` details). */
export class CsvParseError extends Error {
  override name = 'CsvParseError';
  constructor(
    readonly problem: CsvProblem,
    /** Index of the record among the non-blank ones (the header is 0): the API's row number. */
    readonly record: number,
    /** The file line the record starts on. */
    readonly recordLine: number,
    /** The file line being read when the problem was found. */
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** The records of the text, header first; a blank line (nothing between two line ends) is no record. */
export function parseCsvRecords(text: string, limits: CsvLimits = {}): CsvRecord[] {
  const { dataRows = Infinity, columns = Infinity, recordChars = Infinity } = limits;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const out: CsvRecord[] = [];
  let cells: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let recordStart = 0;
  const fail = (problem: CsvProblem, message: string) => new CsvParseError(problem, out.length, recordLine, line, message);
  const endRecord = () => {
    cells.push(field);
    field = '';
    if (!(cells.length === 1 && cells[0] === '')) {
      if (out.length > dataRows) throw fail('too_many_rows', `has more than ${dataRows} data rows`);
      out.push({ line: recordLine, cells });
    }
    cells = [];
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (i - recordStart > recordChars) throw fail('record_too_long', `is longer than ${recordChars} characters`);
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else {
        if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) line++;
        field += ch;
      }
      i++;
      continue;
    }
    if (ch === '"' && field === '') quoted = true;
    else if (ch === '"') throw fail('quote_in_unquoted_field', 'has a quote inside an unquoted field');
    else if (ch === ',') {
      cells.push(field);
      field = '';
      if (cells.length >= columns) throw fail('too_many_columns', `has more than ${columns} columns`);
    } else if (ch === '\r' || ch === '\n') {
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
      endRecord();
      line++;
      recordLine = line;
      recordStart = i;
      continue;
    } else field += ch;
    i++;
  }
  if (quoted) throw fail('unclosed_quote', 'ends inside a quoted field');
  if (field !== '' || cells.length) endRecord();
  return out;
}
