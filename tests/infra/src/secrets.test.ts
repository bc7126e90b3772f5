// The secrets check that ends `make test` (scanLogs.ts) must find what it looks for: planted secrets of
// every kind are reported by file and line, redacted; ordinary log lines (a key's public prefix, a
// redacted field, hashes and ids) are not; and it refuses to pass on a folder with no logs.
import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { saveLogs } from './logs.js';
import { knownSecrets, scanLogs } from './secrets.js';
import { repoRoot } from './versions.js';

const run = promisify(execFile);
const cli = path.join(repoRoot, 'tests', 'dist', 'infra', 'src', 'scanLogs.js');

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** A key of the format the backend issues (docs/design.md §2: `vx_` + 32 of [A-Za-z0-9]). */
const apiKey = () => `vx_${[...randomBytes(32)].map((b) => ALPHABET[b % ALPHABET.length]).join('')}`;
/** A real HS256 JWT, as the backend's login returns. */
function jwt(secret: string): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'admin', iat: 1700000000, exp: 1700086400 })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'vp-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const harness = () => knownSecrets().filter((s) => s.source.startsWith('backend/testing/harness.ts'));

describe('knownSecrets', () => {
  it("has the harness's worker token, JWT secret and admin password, and the run's LiveKit secret", () => {
    expect(harness().map((s) => s.source.split(' ')[1]).sort()).toEqual(['JWT_SECRET', 'WORKER_TOKEN', 'password']);
    const lk = randomBytes(24).toString('hex');
    expect(knownSecrets(repoRoot, { VP_LIVEKIT_TEST_SECRET: lk }).map((s) => s.value)).toContain(lk);
  });
});

describe('scanLogs', () => {
  it('reports planted secrets by file and line, redacted, and nothing else', () => {
    const key = apiKey();
    const token = jwt('planted');
    const [workerToken] = harness().filter((s) => s.source.endsWith('WORKER_TOKEN'));
    mkdirSync(path.join(dir, 'backend'));
    const clean = [
      '{"level":"info","msg":"api key created","prefix":"' + key.slice(0, 7) + '","id":"65a1b2c3d4e5f60718293a4b"}',
      '{"level":"info","msg":"login","email":"admin@example.com","password":"[Redacted]"}',
      '{"level":"info","msg":"key hash","hash":"' + 'ab'.repeat(32) + '"}',
      '{"level":"info","msg":"trunk","has_password":true,"authorization":"[Redacted]"}',
      'plain text with eyJ but no token, and Bearer short',
    ];
    writeFileSync(path.join(dir, 'backend', 'backend.log'), [
      ...clean,
      `{"level":"error","msg":"request failed","headers":{"x-api-key":"${key}"}}`, // line 6
      `{"level":"debug","msg":"issued","token":"${token}"}`, // line 7
      '{"level":"info","body":"{\\"email\\":\\"a@b.c\\",\\"password\\":\\"hunter22\\"}"}', // line 8
      `GET /api/v1/config Authorization: Bearer ${workerToken!.value}`, // line 9
      `{"msg":"webhook created","secret":"whsec_${'A1b2'.repeat(8)}"}`, // line 10
    ].join('\n'));
    writeFileSync(path.join(dir, 'clean.log'), clean.join('\n'));
    writeFileSync(path.join(dir, 'notes.txt'), key); // not a log file

    const { files, findings } = scanLogs(dir, knownSecrets());
    expect(files).toBe(2);
    expect(findings.map((f) => `${f.file}:${f.line}: ${f.kind}`)).toEqual([
      'backend/backend.log:6: API key',
      'backend/backend.log:7: JWT',
      'backend/backend.log:8: password',
      'backend/backend.log:9: known secret (backend/testing/harness.ts WORKER_TOKEN), Authorization credentials',
      'backend/backend.log:10: webhook secret',
    ]);
    const shown = findings.map((f) => f.excerpt).join('\n');
    for (const secret of [key, token, token.split('.')[2]!, 'hunter22', workerToken!.value, `whsec_${'A1b2'.repeat(8)}`]) expect(shown).not.toContain(secret);
    expect(findings.find((f) => f.line === 6)!.excerpt).toContain(`"x-api-key":"${key.slice(0, 4)}…[redacted, 35 chars]"`);
    expect(findings.find((f) => f.line === 8)!.excerpt).toContain('\\"password\\":\\"hu…[redacted, 8 chars]\\"');
    expect(findings.find((f) => f.line === 9)!.excerpt).toMatch(/Authorization: Bearer \S{1,4}…\[redacted, \d+ chars\]$/);
  });

  it('reports card numbers (Luhn-valid, a network\'s prefix and length) in any form, and not timestamps, ids or other numbers', () => {
    const cards = [
      '{"level":"info","msg":"turn","text":"my card is 4111 1111 1111 1111"}', // line 1
      '{"level":"info","digits":"4111111111111111"}', // line 2
      'keys 5555-5555-5555-4444 pressed', // line 3
      '{"msg":"amex","n":378282246310005}', // line 4
      '{"text":"4111111111111111 2029."}', // line 5
    ];
    const clean = [
      '{"level":"info","digits":"[card_number]","text":"Card [card_number] noted."}',
      '{"time":"2026-11-29T09:31:07.123Z","at_ms":1764408667123,"ns":1764408667123456789}',
      '{"msg":"luhn-invalid","digits":"4111111111111112","other":"1234567812345670"}',
      '{"id":"65a1b2c3d4e5f60718293a4b","phone":"+14155550100","ip":"10.0.0.4111111111111111"}',
      'version 4.111111111111111 and a longer number 41111111111111111111',
      '{"msg":"sip", "traceID": "6555555555554444", "span_id": "4111111111111111"}', // all-digit identifiers
      'o=- 6537000000000000005 6537000000000000005 IN IP4 127.0.0.1', // an SDP origin line's session id
    ];
    writeFileSync(path.join(dir, 'worker.log'), [...cards, ...clean].join('\n'));
    const { findings } = scanLogs(dir, []);
    expect(findings.map((f) => `${f.line}: ${f.kind}`)).toEqual(['1: card number', '2: card number', '3: card number', '4: card number', '5: card number']);
    expect(findings.map((f) => f.excerpt).join('\n')).not.toMatch(/4111111111111111|4111 1111 1111 1111|5555-5555-5555-4444|378282246310005/);
  });

  it('finds what saveLogs kept of a harness-style in-memory log', () => {
    const key = apiKey();
    const was = process.env.VP_TEST_LOG_DIR;
    process.env.VP_TEST_LOG_DIR = path.join(dir, 'suite');
    try {
      saveLogs('harness', ['{"msg":"ok"}\n', `{"msg":"oops","key":"${key}"}\n`]);
    } finally {
      process.env.VP_TEST_LOG_DIR = was;
    }
    const { findings } = scanLogs(dir, []);
    expect(findings).toEqual([{ file: expect.stringMatching(/^suite\/harness-\d+-\d+\.log$/), line: 2, kind: 'API key', excerpt: expect.stringContaining('…[redacted, 35 chars]') }]);
  });

  it('as the last step of make test: exit 1 naming file and line, 0 when clean, 1 when there is nothing to scan', async () => {
    const key = apiKey();
    writeFileSync(path.join(dir, 'worker.log'), `{"msg":"fine"}\n{"msg":"leak","k":"${key}"}\n`);
    const leaked = await run(process.execPath, [cli, dir]).then(
      () => null,
      (err: { code: number; stdout: string }) => err,
    );
    expect(leaked?.code).toBe(1);
    expect(leaked?.stdout).toContain('worker.log:2: API key:');
    expect(leaked?.stdout).not.toContain(key);

    writeFileSync(path.join(dir, 'worker.log'), '{"msg":"fine"}\n');
    expect((await run(process.execPath, [cli, dir])).stdout).toMatch(/^secrets scan: 1 log files under .*: none found\n$/);

    const empty = mkdtempSync(path.join(tmpdir(), 'vp-secrets-empty-'));
    try {
      const none = await run(process.execPath, [cli, empty]).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(none?.code).toBe(1);
      expect(none?.stderr).toContain('no suite kept its logs');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
