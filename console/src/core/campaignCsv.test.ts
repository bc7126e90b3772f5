// Contact CSVs in the browser: reading (quotes, CRLF, BOM, blank lines), the automatic column mapping,
// what the mapping still lacks, the rewritten upload bodies (and their limits), and the merged report.
import { autoMap, csvField, CsvError, describeProblem, mappingErrors, mergeReport, parseCsv, prepareUpload, readCsvTable, reportSummary, type CsvMapping } from './campaignCsv.js';

describe('parseCsv', () => {
  it('reads quoted fields: commas, doubled quotes and line breaks inside, text after the closing quote', () => {
    expect(parseCsv('a,"b, c","say ""hi""","two\nlines",x\n"q"r,\n')).toEqual([
      { line: 1, cells: ['a', 'b, c', 'say "hi"', 'two\nlines', 'x'] },
      { line: 3, cells: ['qr', ''] },
    ]);
  });

  it('takes CRLF, LF and lone CR line ends, drops a UTF-8 BOM, skips empty lines and keeps their numbers', () => {
    expect(parseCsv('\uFEFFphone,name\r\n+1,Ada\r\n\r\n+2,Bob\r+3,"C\r\nD"\n\n+4,E')).toEqual([
      { line: 1, cells: ['phone', 'name'] },
      { line: 2, cells: ['+1', 'Ada'] },
      { line: 4, cells: ['+2', 'Bob'] },
      { line: 5, cells: ['+3', 'C\r\nD'] },
      { line: 8, cells: ['+4', 'E'] },
    ]);
  });

  it('refuses a quote inside an unquoted field and an unclosed quote, naming the line', () => {
    expect(() => parseCsv('a,b\nx,y"z\n')).toThrow(new CsvError('Line 2: a quote inside an unquoted field; put the whole field in quotes and double the quote ("").'));
    expect(() => parseCsv('a,b\n1,2\n3,"open\nstill open')).toThrow(new CsvError('Line 3: a quoted field is never closed.'));
  });
});

describe('readCsvTable', () => {
  it('trims the header and drops rows with nothing in them', () => {
    expect(readCsvTable(' Phone , Name\n+1,Ada\n,\n , \n+2,\n')).toEqual({
      header: ['Phone', 'Name'],
      rows: [
        { line: 2, cells: ['+1', 'Ada'] },
        { line: 5, cells: ['+2', ''] },
      ],
    });
  });

  it('says what is wrong with an empty file or one without contacts', () => {
    expect(() => readCsvTable('\uFEFF\n\n')).toThrow('The file is empty: its first line must name the columns.');
    expect(() => readCsvTable('phone,name\r\n\r\n')).toThrow('The file has a header but no contacts.');
  });
});

describe('autoMap and mappingErrors', () => {
  it('maps same-named columns whatever their case and punctuation, and known phone and time zone names', () => {
    expect(autoMap(['Phone Number', 'Customer Name', 'TZ', 'plan', 'notes'], ['customer_name', 'plan', 'amount_due'])).toEqual({
      phone: 0,
      timezone: 2,
      variables: { customer_name: 1, plan: 3, amount_due: null },
    });
    // to_number beats a column that is merely called "number"; no time zone column: none.
    expect(autoMap(['number', 'to_number'], [])).toEqual({ phone: 1, timezone: null, variables: {} });
    expect(autoMap(['name', 'email'], ['name'])).toEqual({ phone: null, timezone: null, variables: { name: 0 } });
  });

  it('asks for the phone column and a column for each required variable', () => {
    const vars = [{ name: 'customer_name', required: true }, { name: 'plan' }];
    expect(mappingErrors({ phone: null, timezone: null, variables: { customer_name: null, plan: null } }, vars)).toEqual({
      phone: 'Choose the column with the phone numbers.',
      'variables.customer_name': 'The bot needs this variable: choose its column.',
    });
    expect(mappingErrors({ phone: 0, timezone: null, variables: { customer_name: 1, plan: null } }, vars)).toEqual({});
  });
});

describe('prepareUpload and mergeReport', () => {
  const table = readCsvTable(
    'Phone,customer_name,Plan Name,Zone,notes\n' +
      '+1 (500) 555-0001,"Ada, Countess","Gold ""plus""",UTC,vip\n' +
      '+15005550486,Bob,,Europe/Berlin ,\n' +
      '+15005550404,Cy\n' +
      '12345,Dee,Basic,UTC,x\n',
  );
  const mapping: CsvMapping = { phone: 0, timezone: 3, variables: { customer_name: 1, plan: 2, amount_due: null } };

  it('rewrites the header to the backend\'s names, drops unmapped columns, cleans the number, and quotes what needs it', () => {
    const up = prepareUpload(table, mapping);
    expect(up.chunks).toEqual([
      {
        csv: 'to_number,timezone,customer_name,plan\n+15005550001,UTC,"Ada, Countess","Gold ""plus"""\n+15005550486,Europe/Berlin,Bob,\n12345,UTC,Dee,Basic\n',
        rows: [
          { line: 2, to_number: '+15005550001' },
          { line: 3, to_number: '+15005550486' },
          { line: 5, to_number: '12345' },
        ],
      },
    ]);
    // A row with the wrong number of cells is not sent (its cells would land in the wrong columns).
    expect(up.problems).toEqual([{ line: 4, to_number: '+15005550404', field: '(row)', message: 'has 2 cells; the header has 5' }]);
    // Without a time zone column, none is sent.
    expect(prepareUpload(table, { ...mapping, timezone: null }).chunks[0]!.csv.split('\n')[0]).toBe('to_number,customer_name,plan');
  });

  it('splits into bodies within the row and byte limits, and refuses an over-long line', () => {
    const many = readCsvTable(`phone\n${Array.from({ length: 5 }, (_, i) => `+1500555000${i}`).join('\n')}\n`);
    const byRows = prepareUpload(many, { phone: 0, timezone: null, variables: {} }, { rows: 2, bytes: 1 << 20 });
    expect(byRows.chunks.map((c) => c.rows.map((r) => r.line))).toEqual([[2, 3], [4, 5], [6]]);
    expect(byRows.chunks[1]!.csv).toBe('to_number\n+15005550002\n+15005550003\n');
    // Header "to_number\n" is 10 bytes, each row 13: 10 + 13 + 13 = 36 fits, a third does not.
    const byBytes = prepareUpload(many, { phone: 0, timezone: null, variables: {} }, { rows: 100, bytes: 36 });
    expect(byBytes.chunks.map((c) => c.rows.length)).toEqual([2, 2, 1]);
    const long = readCsvTable(`phone,note\n+15005550001,${'x'.repeat(5000)}\n`);
    expect(prepareUpload(long, { phone: 0, timezone: null, variables: { note: 1 } }).problems).toEqual([
      { line: 2, to_number: '+15005550001', field: '(row)', message: 'is longer than 4096 characters' },
    ]);
  });

  it('reports the backend\'s rejections by file line and number, with the rows not sent, in line order', () => {
    const up = prepareUpload(table, mapping);
    const report = mergeReport(up, [{ added: 2, duplicates: 0, rejected: [{ row: 3, field: 'to_number', message: 'must match pattern' }] }]);
    expect(report).toEqual({
      added: 2,
      duplicates: 0,
      rejected: [
        { line: 4, to_number: '+15005550404', field: '(row)', message: 'has 2 cells; the header has 5' },
        { line: 5, to_number: '12345', field: 'to_number', message: 'must match pattern' },
      ],
    });
  });

  it('quotes a field only when it must', () => {
    expect(['plain', ' spaced ', 'a,b', 'say "x"', 'two\nlines', ''].map(csvField)).toEqual(['plain', ' spaced ', '"a,b"', '"say ""x"""', '"two\nlines"', '']);
  });
});

describe('describeProblem and reportSummary', () => {
  it('names the column as the mapping does and says what is wrong as a sentence', () => {
    const pattern = 'must match pattern "^\\+[1-9]\\d{1,14}$"';
    expect(describeProblem({ field: 'to_number', message: pattern, to_number: '12345' })).toEqual({ field: 'Phone number', problem: 'Is not an E.164 number (+ and the country code, e.g. +4915112345678).' });
    expect(describeProblem({ field: 'to_number', message: pattern, to_number: '' })).toEqual({ field: 'Phone number', problem: 'Is empty.' });
    expect(describeProblem({ field: 'timezone', message: 'is not an IANA time zone this server knows', to_number: '+1' })).toEqual({ field: 'Time zone', problem: 'Is not an IANA time zone this server knows.' });
    expect(describeProblem({ field: 'variables.customer_name', message: 'is required by the bot', to_number: '+1' })).toEqual({ field: 'customer_name', problem: 'Is required by the bot.' });
    expect(describeProblem({ field: '(row)', message: 'has 2 cells; the header has 5', to_number: '+1' })).toEqual({ field: 'Row', problem: 'Has 2 cells; the header has 5.' });
  });

  it('sums up a report, counting rejected rows once however many problems they have', () => {
    const p = { to_number: '', field: 'x', message: 'y' };
    expect(reportSummary({ added: 1, duplicates: 0, rejected: [] })).toBe('1 contact added, 0 duplicates, 0 rows rejected.');
    expect(reportSummary({ added: 3, duplicates: 1, rejected: [{ ...p, line: 4 }, { ...p, line: 4 }, { ...p, line: 7 }] })).toBe('3 contacts added, 1 duplicate, 2 rows rejected.');
  });
});
