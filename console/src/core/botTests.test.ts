import type { TestCaseCreate, TestRun } from '@voice-platform/schemas/botTests.js';
import { caseBody, caseSaveErrors, caseToForm, emptyCaseForm, formToCase, latencyText, parseCaseJson, runActive, runBadge, runProgress, runSummary } from './botTests.js';
import { roleMay } from './permissions.js';

const promiseCase: TestCaseCreate = {
  name: 'promises to pay',
  transport: 'ws',
  variables: { customer_name: 'Alice', amount_due: '42 dollars' },
  caller: { script: [{ say: 'yes i will pay', wait_for_bot: true }, { dtmf: '1#', after_ms: 500 }] },
  tool_mocks: { record_promise: { status: 200, body: { reference: 'R42' } } },
  expect: {
    end_reason: 'bot_hangup',
    tools: [{ name: 'record_promise', arguments: { customer_name: 'Alice' } }],
    said: ['promise is noted', 'R42'],
    not_said: ['did not catch that'],
    max_turn_latency_ms: 3000,
    judge: 'The bot was polite.',
  },
};

describe('a test case as a form', () => {
  it('a case goes to the form and back unchanged (expectations the form has no controls for kept)', () => {
    const f = caseToForm(promiseCase);
    expect(f.steps).toEqual([
      { kind: 'say', text: 'yes i will pay', wait_for_bot: true, after_ms: '' },
      { kind: 'dtmf', text: '1#', wait_for_bot: false, after_ms: '500' },
    ]);
    expect(f.said).toBe('promise is noted\nR42');
    expect(f.other).toEqual({ judge: 'The bot was polite.' });
    expect(formToCase(f)).toEqual({ body: promiseCase, errors: {} });
  });

  it('a new case has a row per declared variable and one step; empty parts are left out of the body', () => {
    const f = emptyCaseForm([{ name: 'customer_name' }]);
    expect(f.variables).toEqual([{ name: 'customer_name', value: '' }]);
    f.name = ' greets ';
    f.variables = [{ name: '', value: '' }];
    f.steps[0]!.text = 'hello';
    expect(formToCase(f)).toEqual({ body: { name: 'greets', transport: 'ws', caller: { script: [{ say: 'hello', wait_for_bot: true }] }, expect: {} }, errors: {} });
  });

  it('numbers that are not, JSON that does not parse, names given twice: errors on the API’s paths', () => {
    const f = caseToForm(promiseCase);
    f.steps[1]!.after_ms = '1.5s';
    f.mocks[0]!.body = '{reference: R42}';
    f.mocks.push({ tool: 'record_promise', status: '200', body: '' }, { tool: '', status: '200', body: '' });
    f.tools[0]!.arguments = '["Alice"]';
    f.max_turn_latency_ms = 'fast';
    f.variables.push({ name: 'customer_name', value: 'Bob' }, { name: '', value: 'orphan' });
    const { errors } = formToCase(f);
    expect(Object.keys(errors).sort()).toEqual(
      ['caller.script.1.after_ms', 'expect.max_turn_latency_ms', 'expect.tools.0.arguments', 'tool_mocks.2', 'tool_mocks.record_promise', 'tool_mocks.record_promise.body', 'variables.2.name', 'variables.3.name'].sort(),
    );
    expect(errors['caller.script.1.after_ms']).toBe('Must be a whole number of milliseconds, e.g. 500.');
    expect(errors['tool_mocks.record_promise']).toBe('record_promise has a mock already.');
    expect(errors['tool_mocks.record_promise.body']).toMatch(/^Must be JSON: /);
    expect(errors['expect.tools.0.arguments']).toBe('Must be a JSON object, e.g. {"customer_name": "Alice"}.');
    expect(errors['variables.2.name']).toBe('customer_name is given twice.');
    expect(errors['variables.3.name']).toBe('Name the variable, or remove the row.');
  });

  it('a stored case loses its ids and times as a body', () => {
    expect(caseBody({ ...promiseCase, id: 'c1', bot_id: 'b', created_at: 'x', updated_at: 'y' })).toEqual(promiseCase);
  });
});

describe('the JSON view and the API’s refusals', () => {
  it('the JSON must parse to an object', () => {
    expect(parseCaseJson('{"name": "x"}')).toEqual({ body: { name: 'x' }, error: null });
    expect(parseCaseJson('{"name": ')).toMatchObject({ body: null, error: expect.stringMatching(/^Not valid JSON: /) });
    expect(parseCaseJson('[1]')).toMatchObject({ body: null, error: expect.stringMatching(/^Must be a JSON object/) });
  });

  it('422 details become field errors; transport and variables refusals land on their fields', () => {
    expect(caseSaveErrors({ code: 'validation_failed', message: 'x', fieldErrors: { 'expect.said.0': 'Is not a regular expression.' } })).toEqual({ 'expect.said.0': 'Is not a regular expression.' });
    expect(caseSaveErrors({ code: 'transport_unavailable', message: 'transport sip is not available yet', details: { field: 'transport', available: ['ws'] }, fieldErrors: {} })).toEqual({
      transport: 'transport sip is not available yet',
    });
    expect(caseSaveErrors({ code: 'variables_mismatch', message: 'm', details: { missing: ['customer_name'], unknown: ['x'] }, fieldErrors: {} })).toEqual({
      variables: 'The variables do not fit the bot: missing customer_name; not declared by the bot: x.',
    });
  });
});

const run = (patch: Partial<TestRun>): TestRun => ({
  id: 'r1',
  bot_id: 'b',
  status: 'running',
  version: 3,
  concurrency: 1,
  passed: 1,
  failed: 0,
  latency: { p50_ms: 812.4, p95_ms: 1204 },
  cases: [
    { case_id: 'a', name: 'a', status: 'done', passed: true, failures: [], call_id: 'c1' },
    { case_id: 'b', name: 'b', status: 'running', passed: null, failures: [], call_id: 'c2' },
    { case_id: 'c', name: 'c', status: 'pending', passed: null, failures: [], call_id: null },
  ],
  created_at: '2026-01-01T00:00:00Z',
  completed_at: null,
  ...patch,
});

describe('how a run reads', () => {
  it('progress, summary and badge while it runs, and once done', () => {
    expect(runProgress(run({}))).toEqual({ done: 1, total: 3, pct: 33 });
    expect(runSummary(run({}))).toBe('Running: 1 of 3 cases done (1 passed, 0 failed).');
    expect(runSummary(run({ status: 'queued', passed: 0 }))).toBe('Queued: waiting for a test runner.');
    expect(runSummary(run({ status: 'done', passed: 2, failed: 1 }))).toBe('Done: 2 passed, 1 failed.');
    expect(runActive(run({}))).toBe(true);
    expect(runActive(run({ status: 'done' }))).toBe(false);
    expect(runBadge(run({ status: 'done', failed: 1 }))).toEqual({ text: 'Failed', tone: 'bad' });
    expect(runBadge(run({ status: 'done', failed: 0 }))).toEqual({ text: 'Passed', tone: 'good' });
    expect(runProgress(run({ cases: [] }))).toEqual({ done: 0, total: 0, pct: 0 });
  });

  it('latency in whole ms, a dash when no turn was timed', () => {
    expect(latencyText(1204.4)).toBe('1,204 ms');
    expect(latencyText(null)).toBe('—');
  });
});

describe('who may do what (the generated permissions table)', () => {
  it('viewers read cases and runs; editors write and run them', () => {
    for (const op of ['GET /api/v1/bots/{id}/tests', 'GET /api/v1/bots/{id}/test-runs', 'GET /api/v1/bots/{id}/test-runs/{run_id}']) expect(roleMay('viewer', op)).toBe(true);
    for (const op of ['POST /api/v1/bots/{id}/tests', 'PUT /api/v1/bots/{id}/tests/{case_id}', 'DELETE /api/v1/bots/{id}/tests/{case_id}', 'POST /api/v1/bots/{id}/test-runs']) {
      expect(roleMay('viewer', op)).toBe(false);
      expect(roleMay('editor', op)).toBe(true);
    }
  });
});
