#!/usr/bin/env node
// `voice-platform test --bot <id> [--junit out.xml] [--url URL] [--api-key KEY]` (docs/design.md §17): runs a bot's
// test cases for CI. Starts a run, polls it until done, prints each case, writes JUnit XML when asked.
// Exit 0: every case passed; 1: a case failed (or the run could not be started or read); 2: usage error.
import { writeFileSync } from 'node:fs';
import type { TestRun } from './types.js';

const USAGE = `usage: voice-platform test --bot <id> [--junit out.xml] [--url URL] [--api-key KEY] [--concurrency N] [--timeout-seconds N]
  --url       the API's address (default env VOICE_PLATFORM_URL, else http://localhost:8000)
  --api-key   an API key with the test_calls scope (default env VOICE_PLATFORM_API_KEY)`;

class UsageError extends Error {}

interface Args {
  bot: string;
  junit: string | null;
  url: string;
  apiKey: string;
  concurrency: number | null;
  timeoutSeconds: number;
}

function parse(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (command !== 'test') throw new UsageError(command ? `unknown command ${command}` : 'a command is required');
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new UsageError(`unexpected argument ${a}`);
    const name = m[1]!;
    if (!['bot', 'junit', 'url', 'api-key', 'concurrency', 'timeout-seconds'].includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = m[2] ?? rest[++i];
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  const bot = flags.get('bot');
  if (!bot) throw new UsageError('--bot is required');
  const apiKey = flags.get('api-key') ?? process.env.VOICE_PLATFORM_API_KEY ?? '';
  if (!apiKey) throw new UsageError('an API key is required: --api-key or VOICE_PLATFORM_API_KEY');
  const num = (name: string) => {
    const v = flags.get(name);
    if (v === undefined) return null;
    if (!/^[1-9][0-9]*$/.test(v)) throw new UsageError(`--${name} must be a positive whole number`);
    return Number(v);
  };
  return {
    bot,
    junit: flags.get('junit') ?? null,
    url: (flags.get('url') ?? process.env.VOICE_PLATFORM_URL ?? 'http://localhost:8000').replace(/\/$/, ''),
    apiKey,
    concurrency: num('concurrency'),
    timeoutSeconds: num('timeout-seconds') ?? 1800,
  };
}

const xml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

/** JUnit XML of a run: one testcase per case, a failure element naming each failed expectation. */
export function junitXml(run: TestRun): string {
  const cases = run.cases.map((c) => {
    const body = c.failures.map((f) => `      <failure message="${xml(f.expectation)}">${xml(`${f.expectation}: ${f.detail}`)}</failure>\n`).join('');
    const attrs = `name="${xml(c.name)}" classname="bot.${xml(run.bot_id)}"`;
    return body ? `    <testcase ${attrs}>\n${body}    </testcase>\n` : `    <testcase ${attrs}/>\n`;
  });
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<testsuites tests="${run.cases.length}" failures="${run.failed}">\n` +
    `  <testsuite name="bot ${xml(run.bot_id)} run ${xml(run.id)}" tests="${run.cases.length}" failures="${run.failed}">\n${cases.join('')}  </testsuite>\n</testsuites>\n`
  );
}

async function api(a: Args, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${a.url}${path}`, {
    method,
    headers: { 'X-API-Key': a.apiKey, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}${json?.error ? ` ${json.error.code}: ${json.error.message}` : ''}`);
  return json;
}

async function main(argv: string[]): Promise<number> {
  let a: Args;
  try {
    a = parse(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  const started = (await api(a, 'POST', `/api/v1/bots/${encodeURIComponent(a.bot)}/test-runs`, a.concurrency ? { concurrency: a.concurrency } : {})) as TestRun;
  process.stdout.write(`run ${started.id}: ${started.cases.length} case(s) of bot ${a.bot}\n`);
  const deadline = Date.now() + a.timeoutSeconds * 1000;
  let run = started;
  const printed = new Set<string>();
  for (;;) {
    run = (await api(a, 'GET', `/api/v1/bots/${encodeURIComponent(a.bot)}/test-runs/${started.id}`)) as TestRun;
    for (const c of run.cases) {
      if (c.status !== 'done' || printed.has(c.case_id)) continue;
      printed.add(c.case_id);
      process.stdout.write(`${c.passed ? 'PASS' : 'FAIL'} ${c.name}${c.call_id ? ` (call ${c.call_id})` : ''}\n`);
      for (const f of c.failures) process.stdout.write(`  ✗ ${f.expectation}: ${f.detail}\n`);
    }
    if (run.status === 'done') break;
    if (Date.now() > deadline) {
      process.stderr.write(`the run is not done after ${a.timeoutSeconds} s (status ${run.status})\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (a.junit) writeFileSync(a.junit, junitXml(run));
  process.stdout.write(`${run.passed} passed, ${run.failed} failed; turn latency p50 ${run.latency.p50_ms ?? '–'} ms, p95 ${run.latency.p95_ms ?? '–'} ms\n`);
  return run.failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
