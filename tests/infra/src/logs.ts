// Where a test run's logs end up, so that one check after every suite (scripts/test.sh → scanLogs.ts)
// can read them all: test-artifacts/logs/ (or VP_LOG_DIR), one folder per test environment.
// - Services and processes a suite starts log into its test folder (VP_TEST_DIR); when the environment
//   stops, every *.log file in it is copied here before the folder goes.
// - Logs a test holds in memory (the backend harness's and the in-process worker's pino sinks) are
//   written here with saveLogs().
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './versions.js';

/** The root of every kept log: VP_LOG_DIR, else test-artifacts/logs/ at the repository root. */
export function logRoot(): string {
  return process.env.VP_LOG_DIR || path.join(repoRoot, 'test-artifacts', 'logs');
}

const stamp = () => new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
const safe = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 120);

/** A new folder under logRoot() for one test environment, named after the workspace running it (made on first write). */
export function newLogFolder(label = path.basename(process.cwd())): string {
  return path.join(logRoot(), `${safe(label)}-${stamp()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`);
}

/** Every *.log file below `dir`, as paths relative to it. */
export function logFilesIn(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return; // removed meanwhile
    }
    for (const e of entries) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if (e.isFile() && e.name.endsWith('.log')) out.push(r);
    }
  };
  walk('');
  return out.sort();
}

/** Copies every *.log file below `from` into `to`, keeping their relative paths. */
export function keepLogs(from: string, to: string): void {
  for (const rel of logFilesIn(from)) {
    mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
    try {
      copyFileSync(path.join(from, rel), path.join(to, rel));
    } catch {
      /* removed meanwhile */
    }
  }
}

let saved = 0;
/**
 * Writes logs a test held in memory to a file in the running suite's log folder (VP_TEST_LOG_DIR, set by
 * jestGlobalSetup), else in logRoot()/unlabelled/. Never throws: a log that cannot be kept is no test failure.
 */
export function saveLogs(name: string, logs: string | readonly string[]): void {
  const text = typeof logs === 'string' ? logs : logs.join('');
  if (!text) return;
  try {
    const dir = process.env.VP_TEST_LOG_DIR || path.join(logRoot(), 'unlabelled');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${safe(name)}-${process.pid}-${++saved}.log`), text.endsWith('\n') ? text : `${text}\n`);
  } catch {
    /* best effort */
  }
}

/** One log line of the backend, the worker or the operator (schemas/src/log.ts), with its own fields. */
export interface LogLine {
  time: string;
  level: string;
  service: 'backend' | 'worker' | 'operator';
  msg: string;
  [field: string]: unknown;
}

const LEVEL_LABELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The log lines of a process's output: its lines that are JSON objects (not node's own warnings, not blank). */
export function parseLogLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/**
 * What every part's log lines share, for tests to compare across parts: the order of the common keys
 * (the line's own fields sit between `service` and `msg`), `time` as ISO 8601 and `level` as a label.
 */
export function logLineShape(line: string | LogLine): { keys: string[]; time: string; level: string; service: string; msg: string } {
  const l = typeof line === 'string' ? (JSON.parse(line) as LogLine) : line;
  const kind = (ok: boolean, v: unknown) => (ok ? 'ok' : `bad: ${JSON.stringify(v)}`);
  return {
    keys: Object.keys(l).filter((k) => ['time', 'level', 'service', 'msg'].includes(k)),
    time: kind(typeof l.time === 'string' && ISO_TIME.test(l.time), l.time),
    level: kind(LEVEL_LABELS.includes(l.level), l.level),
    service: kind(['backend', 'worker', 'operator'].includes(l.service), l.service),
    msg: kind(typeof l.msg === 'string' && Object.keys(l).at(-1) === 'msg', l.msg),
  };
}

/** The shape logLineShape finds in a line of the shared format. */
export const LOG_LINE_SHAPE = { keys: ['level', 'time', 'service', 'msg'], time: 'ok', level: 'ok', service: 'ok', msg: 'ok' };
