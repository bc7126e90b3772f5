// A test case's expectations against its stored call (docs/design.md §17): every failed one named, with what
// the call did instead. Pure: the runner reads the call and, for a judge, the LLM's verdict first.
import { isDeepStrictEqual } from 'node:util';
import type { TestExpect, TestFailure } from '@voice-platform/schemas';
import type { CallDoc } from '../calls/store.js';

export type CheckedCall = Pick<CallDoc, 'end_reason' | 'actions' | 'transfer' | 'answered_by' | 'turns' | 'transcript' | 'analysis'>;

/** Each turn's latency (ms) the worker measured; turns without one are left out. */
export const turnLatencies = (call: Pick<CallDoc, 'turns'>): number[] =>
  (call.turns ?? []).map((t) => (t as { latency_ms?: number | null }).latency_ms).filter((v): v is number => typeof v === 'number');

const said = (call: CheckedCall) => (call.transcript ?? []).filter((t) => t.role === 'bot').map((t) => t.text).join('\n');
const short = (v: unknown) => JSON.stringify(v)?.slice(0, 300) ?? 'undefined';

/** `want`'s fields (only those) equal in `got`. */
function argsMatch(want: Record<string, unknown> | undefined, got: Record<string, unknown>): boolean {
  return !want || Object.entries(want).every(([k, v]) => isDeepStrictEqual(got[k], v));
}

export function checkExpectations(expect: TestExpect, call: CheckedCall, judge?: { passed: boolean; reason: string }): TestFailure[] {
  const failures: TestFailure[] = [];
  const fail = (expectation: string, detail: string) => failures.push({ expectation, detail });
  if (expect.end_reason !== undefined && call.end_reason !== expect.end_reason) fail('end_reason', `expected ${expect.end_reason}, the call ended with ${call.end_reason ?? '(none)'}`);
  const ran = (call.actions ?? []).filter((a) => a.type === 'tool').map((a) => ({ name: a.name, status: a.status, args: a.arguments_json ? (JSON.parse(a.arguments_json) as Record<string, unknown>) : {} }));
  expect.tools?.forEach((t, i) => {
    const named = ran.filter((r) => r.name === t.name);
    if (!named.length) fail(`tools.${i}`, `${t.name} was not called (called: ${ran.map((r) => r.name).join(', ') || 'none'})`);
    else if (!named.some((r) => argsMatch(t.arguments, r.args))) fail(`tools.${i}`, `${t.name} was called with ${named.map((r) => short(r.args)).join(' and ')}, expected ${short(t.arguments)}`);
  });
  if (expect.transfer_to !== undefined && call.transfer?.target !== expect.transfer_to) fail('transfer_to', `expected a transfer to ${expect.transfer_to}, got ${call.transfer ? `${call.transfer.target} (${call.transfer.status})` : 'no transfer'}`);
  for (const [field, value] of Object.entries(expect.analysis ?? {})) {
    const got = call.analysis?.data?.[field];
    if (!isDeepStrictEqual(got, value)) fail(`analysis.${field}`, `expected ${short(value)}, the analysis has ${call.analysis?.status === 'done' ? short(got) : `none (${call.analysis?.status ?? 'not asked for'})`}`);
  }
  const text = said(call);
  expect.said?.forEach((re, i) => {
    if (!new RegExp(re, 'i').test(text)) fail(`said.${i}`, `the bot never said /${re}/i; it said: ${JSON.stringify(text.slice(0, 500))}`);
  });
  expect.not_said?.forEach((re, i) => {
    const m = new RegExp(re, 'i').exec(text);
    if (m) fail(`not_said.${i}`, `the bot said ${JSON.stringify(m[0])} (/${re}/i)`);
  });
  if (expect.max_turn_latency_ms !== undefined) {
    const slow = turnLatencies(call).filter((ms) => ms > expect.max_turn_latency_ms!);
    if (slow.length) fail('max_turn_latency_ms', `${slow.length} turn(s) slower than ${expect.max_turn_latency_ms} ms: ${slow.join(', ')} ms`);
  }
  if (expect.answered_by !== undefined && call.answered_by !== expect.answered_by) fail('answered_by', `expected ${expect.answered_by}, detected ${call.answered_by ?? '(none)'}`);
  // No verdict is not a pass: a judge the runner never asked cannot vouch for the call.
  if (expect.judge !== undefined && !judge?.passed) fail('judge', judge?.reason ?? 'the judge gave no verdict');
  return failures;
}
