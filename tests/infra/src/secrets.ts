// The secrets check of a test run: no log may hold a full API key, JWT, password, worker token or webhook
// secret (docs/design.md §2: "no secrets in bodies or logs"). scanLogs() reads every *.log file below a folder
// (test-artifacts/logs/, where logs.ts keeps them) and reports each line holding
// - a secret of the suites by value: the values of secret-named settings in .env.example / .env, every
//   secret-named string literal of the tests' own sources (the harness's WORKER_TOKEN, JWT_SECRET and
//   admin password, each suite's global setup, …) and the suite's LiveKit secret (VP_LIVEKIT_TEST_SECRET,
//   which scripts/test.sh sets for the whole run);
// - anything shaped like one: an API key (`vx_` + 32), a webhook secret (`whsec_` + 32), a JWT
//   (`eyJ….eyJ….…`), a JSON `password` with a value, an Authorization header's credentials;
// - a payment card number (shared/DESIGN.md §16: calls redact them): a card network's prefix and length,
//   as one run or in groups split by single spaces or dashes, passing the Luhn check. Checked here on its
//   own, not with the platform's masking module: the scan must not share the blind spots of what it checks.
// Findings name file and line and never print the secret: only its first characters.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { logFilesIn } from './logs.js';
import { parseEnvFile, repoRoot } from './versions.js';

export interface KnownSecret {
  value: string;
  /** Where the value comes from (file and name), to say what leaked without saying it. */
  source: string;
}

export interface SecretFinding {
  file: string;
  line: number;
  kind: string;
  /** The line around the finding, every secret on it redacted. */
  excerpt: string;
}

/** Secrets recognised by shape. */
export const SECRET_SHAPES: ReadonlyArray<{ kind: string; re: RegExp }> = [
  { kind: 'API key', re: /(?<![A-Za-z0-9])vx_[A-Za-z0-9]{32}(?![A-Za-z0-9])/g },
  { kind: 'webhook secret', re: /(?<![A-Za-z0-9])whsec_[A-Za-z0-9]{32,}/g },
  { kind: 'test-call token', re: /vt1\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{43}/g },
  { kind: 'JWT', re: /eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+/g },
  // "password":"…", also inside escaped JSON and for any *password key; a redacted value is fine.
  { kind: 'password', re: /(?<=password\\*"\s*:\s*\\*")(?!\[Redacted\]|\*+\\*")[^"\\]+/gi },
  { kind: 'Authorization credentials', re: /(?<=\b(?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{16,}/g },
];

/** A card network's number: Visa 13/16/19, Mastercard 16, Amex 15, Discover 16–19, JCB 16–19, Diners 14. */
const CARD_NETWORKS: ReadonlyArray<{ prefix: RegExp; lengths: readonly number[] }> = [
  { prefix: /^4/, lengths: [13, 16, 19] },
  { prefix: /^(5[1-5]|2[2-7])/, lengths: [16] },
  { prefix: /^3[47]/, lengths: [15] },
  { prefix: /^(6011|65|64[4-9])/, lengths: [16, 17, 18, 19] },
  { prefix: /^35/, lengths: [16, 17, 18, 19] },
  { prefix: /^3(0[0-5]|[689])/, lengths: [14] },
];
/** Digit groups split by single spaces or dashes; not part of a word, a decimal, a time, an address or a path. */
const DIGIT_RUN = /(?<![\w./-]|\d:)\d+(?:[ -]\d+)*(?!\w|[.:/]\w)/g;

/** A JSON or logfmt key naming an identifier, right before a value: `"traceID": "`, `span_id=`, `"hash":`. */
const ID_KEY = /["']?[\w-]*(?:id|ID|Id|trace|span|hash|sid|SID|nonce|seq)["']?\s*[:=]\s*["']?$/;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1 && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

const isCard = (digits: string) => CARD_NETWORKS.some((n) => n.prefix.test(digits) && n.lengths.includes(digits.length)) && luhn(digits);

/** Where a line holds a card number: whole digit groups of a run (a card and the year after it too), of a network's prefix and length, Luhn-valid. */
export function cardNumbersIn(line: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  // An SDP origin line (sipp's message log) holds the session's id and version: random numbers.
  if (/^\s*o=/.test(line)) return out;
  for (const run of line.matchAll(DIGIT_RUN)) {
    if (run[0].replace(/\D/g, '').length < 13) continue;
    // An identifier that came out all digits (a hex trace id: livekit-sip logs them) is not a card.
    if (ID_KEY.test(line.slice(Math.max(0, run.index! - 80), run.index!))) continue;
    const groups = [...run[0].matchAll(/\d+/g)].map((g) => ({ start: run.index! + g.index!, end: run.index! + g.index! + g[0].length, digits: g[0] }));
    for (let i = 0; i < groups.length; i++) {
      let digits = '';
      for (let j = i; j < groups.length && digits.length < 19; j++) {
        digits += groups[j]!.digits;
        if (isCard(digits)) {
          out.push({ start: groups[i]!.start, end: groups[j]!.end });
          i = j;
          break;
        }
      }
    }
  }
  return out;
}

/** Names whose values are secrets, in settings and in the tests' sources. */
const SECRET_NAME = /secret|token|passw(or)?d|api_?key/i;
/** Secret-named things that are not secrets: names of secrets, URLs, lifetimes, LiveKit's key id (its user name). */
const NOT_A_SECRET_NAME = /(_?name|_?url|_?ttl|_minutes|_seconds|_ms|_?file|_?path|credentials_?secret|livekit_api_key)$/i;
/** A sentence (a validation message bound to a password field in a form test), not a secret. */
const PROSE = /\s.*[.)]$/;
const MIN_SECRET_LENGTH = 8;

/** Where the suites define their secrets; each must yield at least these names, or the scan refuses to run. */
const REQUIRED: ReadonlyArray<{ file: string; names: string[] }> = [
  { file: 'backend/testing/harness.ts', names: ['WORKER_TOKEN', 'JWT_SECRET', 'password'] },
  { file: 'worker/jest.global-setup.js', names: ['WORKER_TOKEN', 'JWT_SECRET', 'password'] },
  { file: '.env.example', names: ['JWT_SECRET', 'WORKER_AUTH_TOKEN', 'ADMIN_PASSWORD', 'LIVEKIT_API_SECRET'] },
];

/** Folders of test code whose secret-named string literals count as known secrets (the harnesses first: a value is named by the first file that has it). */
const SOURCE_DIRS = ['backend/testing', 'backend/src', 'worker/testing', 'worker/src', 'operator/testing', 'operator/src', 'console/e2e', 'console/src', 'tests/infra/src', 'tests/services'];
const isTestSource = (rel: string) =>
  /\.test\.[jt]s$/.test(rel) || /(^|\/)testing\//.test(rel) || /^tests\/infra\/src\/[^/]+\.ts$/.test(rel) || /(^|\/)jest\.global-setup\.js$/.test(rel);

function walk(root: string, rel: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(path.join(root, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const r = path.join(rel, e.name);
    if (e.isDirectory()) walk(root, r, out);
    else if (/\.[jt]s$/.test(e.name)) out.push(r);
  }
}

/** `NAME: 'value'`, `NAME = "value"`: string literals bound to a secret-looking name. */
export function secretLiterals(text: string): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = [];
  for (const m of text.matchAll(/\b([A-Za-z_$][\w$]*)\s*[:=]\s*(['"`])([^'"`\n\\$]+)\2/g)) {
    const [, name, , value] = m;
    if (!SECRET_NAME.test(name!) || NOT_A_SECRET_NAME.test(name!) || value!.length < MIN_SECRET_LENGTH) continue;
    if (/^[A-Z][A-Z0-9_]*$/.test(value!) || PROSE.test(value!)) continue; // a setting's name, or a sentence
    out.push({ name: name!, value: value! });
  }
  return out;
}

/** Every secret the suites use by value (see the header). Throws when a REQUIRED source yields too little. */
export function knownSecrets(root = repoRoot, env: NodeJS.ProcessEnv = process.env): KnownSecret[] {
  const found = new Map<string, KnownSecret>();
  const add = (value: string, source: string) => {
    if (value.length >= MIN_SECRET_LENGTH && !found.has(value)) found.set(value, { value, source });
  };
  const names = new Map<string, Set<string>>();
  const note = (file: string, name: string) => (names.get(file) ?? names.set(file, new Set()).get(file)!).add(name);

  for (const file of ['.env.example', '.env']) {
    let text: string;
    try {
      text = readFileSync(path.join(root, file), 'utf8');
    } catch {
      continue;
    }
    for (const [name, value] of Object.entries(parseEnvFile(text))) {
      if (!SECRET_NAME.test(name) || NOT_A_SECRET_NAME.test(name) || value.length < MIN_SECRET_LENGTH) continue;
      add(value, `${file} ${name}`);
      note(file, name);
    }
  }
  const files: string[] = [];
  for (const dir of SOURCE_DIRS) walk(root, dir, files);
  for (const name of readdirSync(root)) if (existsFile(path.join(root, name, 'jest.global-setup.js'))) files.push(path.join(name, 'jest.global-setup.js'));
  for (const rel of files.filter(isTestSource)) {
    for (const { name, value } of secretLiterals(readFileSync(path.join(root, rel), 'utf8'))) {
      add(value, `${rel} ${name}`);
      note(rel, name);
    }
  }
  if (env.VP_LIVEKIT_TEST_SECRET) add(env.VP_LIVEKIT_TEST_SECRET, 'the suites\' LiveKit secret (VP_LIVEKIT_TEST_SECRET)');

  const missing = REQUIRED.flatMap(({ file, names: want }) => want.filter((n) => !names.get(file)?.has(n)).map((n) => `${n} in ${file}`));
  if (missing.length) throw new Error(`secrets scan: cannot find ${missing.join(', ')}; update tests/infra/src/secrets.ts to where the suites keep their secrets now`);
  return [...found.values()];
}

function existsFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `abcd…[redacted, 32 chars]`: enough to find it, not enough to use it. */
export function redact(secret: string): string {
  return `${secret.slice(0, Math.min(4, Math.floor(secret.length / 4)))}…[redacted, ${secret.length} chars]`;
}

/** What one line of text holds (every kind found, comma-separated), or null. */
export function scanLine(line: string, known: readonly KnownSecret[]): { kind: string; excerpt: string } | null {
  const hits: Array<{ kind: string; start: number; end: number }> = [];
  for (const k of known) {
    for (let at = line.indexOf(k.value); at >= 0; at = line.indexOf(k.value, at + 1)) hits.push({ kind: `known secret (${k.source})`, start: at, end: at + k.value.length });
  }
  for (const { kind, re } of SECRET_SHAPES) {
    for (const m of line.matchAll(re)) hits.push({ kind, start: m.index!, end: m.index! + m[0].length });
  }
  for (const h of cardNumbersIn(line)) hits.push({ kind: 'card number', ...h });
  if (!hits.length) return null;
  // The excerpt: the line around the first hit, with every hit on the line redacted.
  let redacted = '';
  let last = 0;
  const sorted = [...hits].sort((a, b) => a.start - b.start || b.end - a.end);
  let first = -1;
  for (const h of sorted) {
    if (h.start < last) continue; // inside a hit already redacted
    redacted += line.slice(last, h.start);
    if (first < 0) first = redacted.length;
    redacted += redact(line.slice(h.start, h.end));
    last = h.end;
  }
  redacted += line.slice(last);
  const from = Math.max(0, first - 80);
  const excerpt = `${from > 0 ? '…' : ''}${redacted.slice(from, first + 160)}${first + 160 < redacted.length ? '…' : ''}`;
  return { kind: [...new Set(hits.map((h) => h.kind))].join(', '), excerpt };
}

/** Every finding in every *.log file below `dir`, with its path relative to `dir`. */
export function scanLogs(dir: string, known: readonly KnownSecret[]): { files: number; findings: SecretFinding[] } {
  const files = logFilesIn(dir);
  const findings: SecretFinding[] = [];
  for (const rel of files) {
    const lines = readFileSync(path.join(dir, rel), 'utf8').split('\n');
    lines.forEach((text, i) => {
      const f = scanLine(text, known);
      if (f) findings.push({ file: rel, line: i + 1, ...f });
    });
  }
  return { files: files.length, findings };
}
