// A small RFC 4180 reader for contact uploads: comma-separated, double quotes around fields that hold
// commas, quotes ("" inside) or line breaks, CRLF or LF line ends, an optional UTF-8 BOM. Limits are
// checked while reading, so a hostile file costs at most its (already bounded) size.
import { apiError } from '../errors.js';
import { MAX_CONTACTS_PER_UPLOAD, MAX_CSV_COLUMNS, MAX_CSV_ROW_CHARS } from '@voice-platform/schemas';

const invalid = (field: string, message: string) => apiError('validation_failed', { message: 'the CSV upload is invalid', details: [{ field, message }] });

/** Records of the text: header first. A blank line (nothing between two line ends) is skipped. */
export function parseCsv(text: string): string[][] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let rowStart = 0;
  let i = 0;
  const endRow = () => {
    row.push(field);
    field = '';
    if (!(row.length === 1 && row[0] === '')) {
      if (rows.length > MAX_CONTACTS_PER_UPLOAD) throw invalid('csv', `has more than ${MAX_CONTACTS_PER_UPLOAD} data rows`);
      rows.push(row);
    }
    row = [];
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (i - rowStart > MAX_CSV_ROW_CHARS) throw invalid(`csv.row.${rows.length}`, `is longer than ${MAX_CSV_ROW_CHARS} characters`);
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += ch;
      i++;
      continue;
    }
    if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
      if (row.length >= MAX_CSV_COLUMNS) throw invalid(`csv.row.${rows.length}`, `has more than ${MAX_CSV_COLUMNS} columns`);
    } else if (ch === '\r' && text[i + 1] === '\n') {
      endRow();
      i += 2;
      rowStart = i;
      continue;
    } else if (ch === '\n' || ch === '\r') {
      endRow();
      i++;
      rowStart = i;
      continue;
    } else if (ch === '"') throw invalid(`csv.row.${rows.length}`, 'has a quote inside an unquoted field');
    else field += ch;
    i++;
  }
  if (quoted) throw invalid(`csv.row.${rows.length}`, 'ends inside a quoted field');
  if (field !== '' || row.length) endRow();
  return rows;
}
