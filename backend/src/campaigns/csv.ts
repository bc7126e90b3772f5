// Contact uploads as records: the shared reader (schemas/src/csv.ts) within the upload limits, its
// problems as the API's validation errors (`csv` for the row count, else `csv.row.N`, the header being 0).
import { apiError } from '../core/errors.js';
import { CsvParseError, MAX_CONTACTS_PER_UPLOAD, MAX_CSV_COLUMNS, MAX_CSV_ROW_CHARS, parseCsvRecords } from '@voice-platform/schemas';

const LIMITS = { dataRows: MAX_CONTACTS_PER_UPLOAD, columns: MAX_CSV_COLUMNS, recordChars: MAX_CSV_ROW_CHARS };

/** Records of the text: header first. A blank line (nothing between two line ends) is skipped. */
export function parseCsv(text: string): string[][] {
  try {
    return parseCsvRecords(text, LIMITS).map((r) => r.cells);
  } catch (err) {
    if (!(err instanceof CsvParseError)) throw err;
    const field = err.problem === 'too_many_rows' ? 'csv' : `csv.row.${err.record}`;
    throw apiError('validation_failed', { message: 'the CSV upload is invalid', details: [{ field, message: err.message }] });
  }
}
