// checkExpectations (docs/design.md §17), pure: each expectation kind against a stored call that meets it (no
// failure) and one that does not (one failure naming the expectation, its detail saying what the call did).
import type { TestExpect } from '@voice-platform/schemas';
import { checkExpectations, turnLatencies, type CheckedCall } from './checks.js';

const at = new Date('2030-01-01T00:00:00Z');
const tool = (name: string, args: Record<string, unknown>) => ({ type: 'tool' as const, name, at, duration_ms: 20, status: 'ok' as const, arguments_json: JSON.stringify(args), result: '{}', error: null });

/** A call that meets every expectation of `MET` below. */
const call: CheckedCall = {
  end_reason: 'bot_hangup',
  actions: [tool('record_promise', { customer_name: 'Alice', amount_due: '42 dollars', note: 'extra' }), tool('lookup', {})] as CheckedCall['actions'],
  transfer: { mode: 'cold', target: 'sip:agent@example.com', status: 'accepted', sip_status_code: null, at },
  answered_by: 'human',
  turns: [{ latency_ms: 800 }, { latency_ms: 1200 }, { latency_ms: null }] as unknown as CheckedCall['turns'],
  transcript: [
    { role: 'bot', text: 'Hello Alice, you owe 42 dollars.', at },
    { role: 'user', text: 'I will pay a refund', at },
    { role: 'bot', text: 'Your promise is noted under reference R42.', at },
  ],
  analysis: { status: 'done', summary: 's', data: { outcome: 'promised', amount: 42 }, success: true, error: null, completed_at: at },
};

const MET: TestExpect = {
  end_reason: 'bot_hangup',
  tools: [{ name: 'record_promise', arguments: { amount_due: '42 dollars' } }, { name: 'lookup' }],
  transfer_to: 'sip:agent@example.com',
  analysis: { outcome: 'promised', amount: 42 },
  said: ['noted under reference R\\d+', 'HELLO alice'],
  not_said: ['refund'],
  max_turn_latency_ms: 1200,
  answered_by: 'human',
  judge: 'The bot was polite.',
};

describe('checkExpectations', () => {
  it('a call that meets every expectation (a judge that passed) has no failures', () => {
    expect(checkExpectations(MET, call, { passed: true, reason: 'polite throughout' })).toEqual([]);
  });

  it('no expectations: nothing to fail', () => {
    expect(checkExpectations({}, { ...call, actions: [], transcript: [] })).toEqual([]);
  });

  it.each<[string, TestExpect, Partial<CheckedCall>, { expectation: string; detail: string }]>([
    ['end_reason', { end_reason: 'caller_hangup' }, {}, { expectation: 'end_reason', detail: 'expected caller_hangup, the call ended with bot_hangup' }],
    ['end_reason of a call with none', { end_reason: 'bot_hangup' }, { end_reason: null }, { expectation: 'end_reason', detail: 'expected bot_hangup, the call ended with (none)' }],
    ['a tool never called', { tools: [{ name: 'lookup' }, { name: 'refund' }] }, {}, { expectation: 'tools.1', detail: 'refund was not called (called: record_promise, lookup)' }],
    ['a tool when none ran', { tools: [{ name: 'refund' }] }, { actions: [] }, { expectation: 'tools.0', detail: 'refund was not called (called: none)' }],
    [
      'a tool called with other arguments',
      { tools: [{ name: 'record_promise', arguments: { amount_due: '40 dollars' } }] },
      {},
      { expectation: 'tools.0', detail: 'record_promise was called with {"customer_name":"Alice","amount_due":"42 dollars","note":"extra"}, expected {"amount_due":"40 dollars"}' },
    ],
    ['transfer_to another target', { transfer_to: 'sip:billing@example.com' }, {}, { expectation: 'transfer_to', detail: 'expected a transfer to sip:billing@example.com, got sip:agent@example.com (accepted)' }],
    ['transfer_to without a transfer', { transfer_to: 'sip:billing@example.com' }, { transfer: null }, { expectation: 'transfer_to', detail: 'expected a transfer to sip:billing@example.com, got no transfer' }],
    ['an analysis field with another value', { analysis: { amount: 40 } }, {}, { expectation: 'analysis.amount', detail: 'expected 40, the analysis has 42' }],
    ['an analysis field not worked out', { analysis: { outcome: 'paid' } }, { analysis: { status: 'failed', summary: null, data: null, success: null, error: 'HTTP 500', completed_at: at } }, { expectation: 'analysis.outcome', detail: 'expected "paid", the analysis has none (failed)' }],
    ['an analysis the bot never asked for', { analysis: { outcome: 'paid' } }, { analysis: null }, { expectation: 'analysis.outcome', detail: 'expected "paid", the analysis has none (not asked for)' }],
    ['said: a line the bot never said', { said: ['R42', 'your refund is on its way'] }, {}, { expectation: 'said.1', detail: 'the bot never said /your refund is on its way/i; it said: "Hello Alice, you owe 42 dollars.\\nYour promise is noted under reference R42."' }],
    ['not_said: what the bot did say (only the bot’s lines count)', { not_said: ['refund', 'OWE \\d+'] }, {}, { expectation: 'not_said.1', detail: 'the bot said "owe 42" (/OWE \\d+/i)' }],
    ['max_turn_latency_ms', { max_turn_latency_ms: 1000 }, {}, { expectation: 'max_turn_latency_ms', detail: '1 turn(s) slower than 1000 ms: 1200 ms' }],
    ['answered_by', { answered_by: 'machine' }, {}, { expectation: 'answered_by', detail: 'expected machine, detected human' }],
    ['answered_by when nothing was detected', { answered_by: 'human' }, { answered_by: null }, { expectation: 'answered_by', detail: 'expected human, detected (none)' }],
  ])('%s: one failure naming it, saying what the call did', (_what, expectation, change, failure) => {
    expect(checkExpectations(expectation, { ...call, ...change })).toEqual([failure]);
  });

  it("judge: a verdict that failed is the judge's failure with its reason; no verdict at all fails too (never a silent pass)", () => {
    expect(checkExpectations({ judge: 'The bot offered a refund.' }, call, { passed: false, reason: 'The bot never mentioned a refund.' })).toEqual([{ expectation: 'judge', detail: 'The bot never mentioned a refund.' }]);
    expect(checkExpectations({ judge: 'The bot offered a refund.' }, call)).toEqual([{ expectation: 'judge', detail: 'the judge gave no verdict' }]);
  });

  it('every failed expectation is named, in the order of the kinds', () => {
    const none: Partial<CheckedCall> = { end_reason: 'caller_hangup', actions: [], transfer: null, answered_by: 'machine', transcript: [] };
    expect(checkExpectations(MET, { ...call, ...none }, { passed: false, reason: 'no' }).map((f) => f.expectation)).toEqual(['end_reason', 'tools.0', 'tools.1', 'transfer_to', 'said.0', 'said.1', 'answered_by', 'judge']);
  });

  it("a long transcript is cut in the detail (a said failure never carries the whole call)", () => {
    const long = [{ role: 'bot' as const, text: 'x'.repeat(2000), at }];
    const [f] = checkExpectations({ said: ['never'] }, { ...call, transcript: long });
    expect(f!.detail.length).toBeLessThan(600);
  });
});

describe('turnLatencies', () => {
  it("each measured turn's latency in order; turns without one left out; none for a call without turns", () => {
    expect(turnLatencies(call)).toEqual([800, 1200]);
    expect(turnLatencies({ turns: undefined })).toEqual([]);
  });
});
