// Bot tests' stores (docs/design.md §17): `test_cases` (a bot's cases) and `test_runs` (each run with a snapshot
// of the cases it runs and each case's result). A run's document is small (≤ MAX_TEST_CASES cases) and is only
// changed under its lock (testRunLock), so a case has one result however runners race.
import type { Db } from 'mongodb';
import type { TestCallerT, TestCase, TestCaseResult, TestExpect, TestFailure, TestRun, TestToolMocks, TestTransport } from './types.js';
import { COLLECTIONS } from '../core/collections.js';

export interface TestCaseDoc {
  _id: string;
  bot_id: string;
  name: string;
  transport: TestTransport;
  variables: Record<string, string>;
  caller: TestCallerT;
  tool_mocks: TestToolMocks;
  expect: TestExpect;
  created_at: Date;
  updated_at: Date;
}

export interface RunCaseDoc {
  case_id: string;
  name: string;
  status: 'pending' | 'running' | 'done';
  passed: boolean | null;
  failures: TestFailure[];
  call_id: string | null;
  /** The case as it was when the run was asked for: later edits do not change a run. */
  spec: Omit<TestCaseDoc, 'created_at' | 'updated_at'>;
  /** Attempts begun (a runner that died mid-case leaves one not finished). */
  attempts: number;
  /** The turn latencies of its call (ms), for the run's p50/p95. */
  latencies_ms: number[];
}

export interface TestRunDoc {
  _id: string;
  bot_id: string;
  /** The bot version tested (1 before bots had versions). */
  version: number;
  status: 'queued' | 'running' | 'done';
  concurrency: number;
  passed: number;
  failed: number;
  cases: RunCaseDoc[];
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  /** test_run.completed is owed: set with the last result, cleared once the outbox has it. */
  webhook_due?: boolean;
}

export const testCases = (db: Db) => db.collection<TestCaseDoc>(COLLECTIONS.testCases);
export const testRuns = (db: Db) => db.collection<TestRunDoc>(COLLECTIONS.testRuns);
/** The lock every change of a run's document is made under (core/locks.ts withDocLock). */
export const testRunLock = (runId: string) => `test_run:${runId}`;

/** The tool mocks of one case of a run (the runtime config of its call, runtimeConfig/routes.ts). */
export async function testCaseMocks(db: Db, runId: string, caseId: string): Promise<TestToolMocks | null> {
  const run = await testRuns(db).findOne({ _id: runId }, { projection: { cases: 1 } });
  return run?.cases.find((c) => c.case_id === caseId)?.spec.tool_mocks ?? null;
}

export function publicTestCase(d: TestCaseDoc): TestCase {
  return {
    id: d._id,
    bot_id: d.bot_id,
    name: d.name,
    transport: d.transport,
    variables: d.variables,
    caller: d.caller,
    tool_mocks: d.tool_mocks,
    expect: d.expect,
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
  };
}

/** The value at `q` (0–1) of sorted `xs`, nearest rank; null for none. */
export function percentile(xs: number[], q: number): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export function publicTestRun(d: TestRunDoc): TestRun {
  const lat = d.cases.flatMap((c) => c.latencies_ms);
  return {
    id: d._id,
    bot_id: d.bot_id,
    status: d.status,
    version: d.version,
    concurrency: d.concurrency,
    passed: d.passed,
    failed: d.failed,
    latency: { p50_ms: percentile(lat, 0.5), p95_ms: percentile(lat, 0.95) },
    cases: d.cases.map((c): TestCaseResult => ({ case_id: c.case_id, name: c.name, status: c.status, passed: c.passed, failures: c.failures, call_id: c.call_id })),
    created_at: d.created_at.toISOString(),
    completed_at: d.completed_at ? d.completed_at.toISOString() : null,
  };
}
