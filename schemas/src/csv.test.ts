// The shared contact CSV reader on the inputs the backend's upload and the console's file tests use:
// records and their lines, quoting, line ends, BOM, blank lines, the limits and where each problem is.
import { CsvParseError, parseCsvRecords, type CsvLimits } from './csv.js';

const problemOf = (text: string, limits?: CsvLimits) => {
  try {
    parseCsvRecords(text, limits);
  } catch (err) {
    if (!(err instanceof CsvParseError)) throw err;
    return { problem: err.problem, record: err.record, recordLine: err.recordLine, line: err.line, message: err.message };
  }
  throw new Error('no problem found');
};

describe('parseCsvRecords', () => {
  it('reads quoted fields: commas, doubled quotes and line breaks inside, text after the closing quote', () => {
    expect(parseCsvRecords('a,"b, c","say ""hi""","two\nlines",x\n"q"r,\n')).toEqual([
      { line: 1, cells: ['a', 'b, c', 'say "hi"', 'two\nlines', 'x'] },
      { line: 3, cells: ['qr', ''] },
    ]);
    expect(parseCsvRecords('a,"",""""\n')).toEqual([{ line: 1, cells: ['a', '', '"'] }]);
  });

  it('takes CRLF, LF and lone CR line ends, drops a UTF-8 BOM, skips empty lines and keeps their numbers', () => {
    expect(parseCsvRecords('\uFEFFphone,name\r\n+1,Ada\r\n\r\n+2,Bob\r+3,"C\r\nD"\n\n+4,E')).toEqual([
      { line: 1, cells: ['phone', 'name'] },
      { line: 2, cells: ['+1', 'Ada'] },
      { line: 4, cells: ['+2', 'Bob'] },
      { line: 5, cells: ['+3', 'C\r\nD'] },
      { line: 8, cells: ['+4', 'E'] },
    ]);
    // A line of commas is a record of empty cells (the console drops those, the backend reports their width).
    expect(parseCsvRecords('a,b\r\n,\r\n').map((r) => r.cells)).toEqual([['a', 'b'], ['', '']]);
    expect(parseCsvRecords('\uFEFF\n\n')).toEqual([]);
  });

  it('reads the backend upload test body', () => {
    const csv = ['to_number,customer_name,plan,timezone', '+4915100000001,"Lovelace, Ada","say ""hi""",Asia/Tokyo', '+4915100000002,Bob,,', '+4915100000003,Ed', ''].join('\r\n');
    expect(parseCsvRecords(csv).map((r) => r.cells)).toEqual([
      ['to_number', 'customer_name', 'plan', 'timezone'],
      ['+4915100000001', 'Lovelace, Ada', 'say "hi"', 'Asia/Tokyo'],
      ['+4915100000002', 'Bob', '', ''],
      ['+4915100000003', 'Ed'],
    ]);
  });

  it('names the record (header 0) and the lines of a stray quote and an unclosed one', () => {
    expect(problemOf('a,b\nx,y"z\n')).toEqual({ problem: 'quote_in_unquoted_field', record: 1, recordLine: 2, line: 2, message: 'has a quote inside an unquoted field' });
    expect(problemOf('a,b\n\n"two\nlines",y"z\n')).toEqual({ problem: 'quote_in_unquoted_field', record: 1, recordLine: 3, line: 4, message: 'has a quote inside an unquoted field' });
    expect(problemOf('a,b\n1,2\n3,"open\nstill open')).toEqual({ problem: 'unclosed_quote', record: 2, recordLine: 3, line: 4, message: 'ends inside a quoted field' });
  });

  it('keeps to the limits given (none by default), naming the record over them', () => {
    const limits = { dataRows: 2, columns: 3, recordChars: 10 };
    expect(parseCsvRecords('n\n1\n2\n\n', limits)).toHaveLength(3);
    expect(problemOf('n\n1\n2\n3\n', limits)).toMatchObject({ problem: 'too_many_rows', record: 3, message: 'has more than 2 data rows' });
    expect(parseCsvRecords('a,b,c\n', limits)).toHaveLength(1);
    expect(problemOf('a,b\n1,2,3,4\n', limits)).toMatchObject({ problem: 'too_many_columns', record: 1, line: 2, message: 'has more than 3 columns' });
    // recordChars counts the record's characters, quoted line breaks too, not its line end.
    expect(parseCsvRecords('0123456789\r\n"a\nb"\n', limits)).toHaveLength(2);
    expect(problemOf('n\n"0123\n56789x"\n', limits)).toMatchObject({ problem: 'record_too_long', record: 1, recordLine: 2, message: 'is longer than 10 characters' });
    expect(parseCsvRecords(`n\n${'x'.repeat(5000)}\n${'1,'.repeat(100)}\n`)).toHaveLength(3);
  });
});
