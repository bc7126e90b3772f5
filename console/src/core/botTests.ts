// Bot tests in the console (docs/design.md §17): a test case as a form (and back), the API's refusals as
// field errors, and how a run reads (progress, summary, which cases failed). The page (bot-tests-page.ts)
// renders; everything here is pure.
import type { TestCaseCreate, TestExpect, TestRun, TestScriptStep, TestTransport } from '@voice-platform/schemas/botTests.js';
import type { FieldErrors } from './validation.js';

export interface StepForm {
  kind: 'say' | 'dtmf';
  /** The words to say, or the keys to press. */
  text: string;
  /** Before the step: wait until the bot has spoken and gone quiet. */
  wait_for_bot: boolean;
  /** Before the step: wait this long (ms), empty for none. */
  after_ms: string;
}
export interface MockForm {
  tool: string;
  status: string;
  /** The tool's result, JSON text (empty: no body). */
  body: string;
}
export interface ToolExpectForm {
  name: string;
  /** The arguments compared, a JSON object as text (empty: any). */
  arguments: string;
}
export interface TestCaseForm {
  name: string;
  transport: TestTransport;
  variables: Array<{ name: string; value: string }>;
  steps: StepForm[];
  mocks: MockForm[];
  end_reason: string;
  tools: ToolExpectForm[];
  /** One regular expression a line. */
  said: string;
  not_said: string;
  max_turn_latency_ms: string;
  /** Expectations the form has no controls for (transfer_to, analysis, answered_by, judge): kept as they are. */
  other: Omit<TestExpect, 'end_reason' | 'tools' | 'said' | 'not_said' | 'max_turn_latency_ms'>;
}

export const emptyStep = (): StepForm => ({ kind: 'say', text: '', wait_for_bot: true, after_ms: '' });
export const emptyMock = (): MockForm => ({ tool: '', status: '200', body: '' });
export const emptyToolExpect = (): ToolExpectForm => ({ name: '', arguments: '' });

/** A new case: one variable row per variable the bot declares, one line to say after the bot's greeting. */
export function emptyCaseForm(declared: ReadonlyArray<{ name: string }> = []): TestCaseForm {
  return { name: '', transport: 'ws', variables: declared.map((v) => ({ name: v.name, value: '' })), steps: [emptyStep()], mocks: [], end_reason: '', tools: [], said: '', not_said: '', max_turn_latency_ms: '', other: {} };
}

const lines = (xs: readonly string[] | undefined): string => (xs ?? []).join('\n');
const json = (x: unknown): string => (x === undefined ? '' : JSON.stringify(x, null, 2));

/** A stored case (or a case body) as the form edits it. A persona caller has no form: use the JSON. */
export function caseToForm(c: TestCaseCreate): TestCaseForm {
  const { end_reason, tools, said, not_said, max_turn_latency_ms, ...other } = c.expect;
  const script = 'script' in c.caller ? c.caller.script : [];
  return {
    name: c.name,
    transport: c.transport,
    variables: Object.entries(c.variables ?? {}).map(([name, value]) => ({ name, value })),
    steps: script.map((s) => ({ kind: 'say' in s ? 'say' : 'dtmf', text: 'say' in s ? s.say : s.dtmf, wait_for_bot: s.wait_for_bot === true, after_ms: s.after_ms === undefined ? '' : String(s.after_ms) })),
    mocks: Object.entries(c.tool_mocks ?? {}).map(([tool, m]) => ({ tool, status: String(m.status), body: json(m.body) })),
    end_reason: end_reason ?? '',
    tools: (tools ?? []).map((t) => ({ name: t.name, arguments: json(t.arguments) })),
    said: lines(said),
    not_said: lines(not_said),
    max_turn_latency_ms: max_turn_latency_ms === undefined ? '' : String(max_turn_latency_ms),
    other,
  };
}

/** Whether a case can be edited with the form (a persona caller cannot: the JSON can). */
export const formCanEdit = (c: TestCaseCreate): boolean => 'script' in c.caller;

/** A whole number as written (digits only), else null. */
function wholeNumber(s: string): number | null {
  return /^\s*\d+\s*$/.test(s) ? Number(s.trim()) : null;
}

/**
 * The form as the API body, with the errors only the form can make (a number that is not one, JSON that does
 * not parse, a mock or variable named twice), on the paths the API's 422 details use; the API checks the rest.
 */
export function formToCase(f: TestCaseForm): { body: TestCaseCreate; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const variables: Record<string, string> = {};
  f.variables.forEach((v, i) => {
    const name = v.name.trim();
    if (!name && !v.value) return; // an empty row: left out
    if (!name) errors[`variables.${i}.name`] = 'Name the variable, or remove the row.';
    else if (name in variables) errors[`variables.${i}.name`] = `${name} is given twice.`;
    else variables[name] = v.value;
  });
  const script: TestScriptStep[] = f.steps.map((s, i) => {
    const step: Record<string, unknown> = s.kind === 'say' ? { say: s.text.trim() } : { dtmf: s.text.trim() };
    if (s.wait_for_bot) step.wait_for_bot = true;
    if (s.after_ms.trim()) {
      const ms = wholeNumber(s.after_ms);
      if (ms === null) errors[`caller.script.${i}.after_ms`] = 'Must be a whole number of milliseconds, e.g. 500.';
      else step.after_ms = ms;
    }
    return step as TestScriptStep;
  });
  const tool_mocks: NonNullable<TestCaseCreate['tool_mocks']> = {};
  f.mocks.forEach((m, i) => {
    const tool = m.tool.trim();
    const at = `tool_mocks.${tool || i}`;
    if (!tool) {
      errors[`tool_mocks.${i}`] = 'Name the tool this mock answers.';
      return;
    }
    if (tool in tool_mocks) {
      errors[at] = `${tool} has a mock already.`;
      return;
    }
    const status = wholeNumber(m.status);
    if (status === null) errors[`${at}.status`] = 'Must be an HTTP status, e.g. 200.';
    const mock: { status: number; body?: unknown } = { status: status ?? 0 };
    if (m.body.trim()) {
      try {
        mock.body = JSON.parse(m.body);
      } catch (err) {
        errors[`${at}.body`] = `Must be JSON: ${(err as Error).message}.`;
      }
    }
    tool_mocks[tool] = mock;
  });
  const expect: TestExpect = { ...f.other };
  if (f.end_reason.trim()) expect.end_reason = f.end_reason.trim();
  if (f.tools.length) {
    expect.tools = f.tools.map((t, i) => {
      const out: { name: string; arguments?: Record<string, unknown> } = { name: t.name.trim() };
      if (t.arguments.trim()) {
        try {
          const a: unknown = JSON.parse(t.arguments);
          if (!a || typeof a !== 'object' || Array.isArray(a)) throw new Error('not an object');
          out.arguments = a as Record<string, unknown>;
        } catch {
          errors[`expect.tools.${i}.arguments`] = 'Must be a JSON object, e.g. {"customer_name": "Alice"}.';
        }
      }
      return out;
    });
  }
  const regexes = (s: string) => s.split('\n').map((x) => x.trim()).filter(Boolean);
  if (regexes(f.said).length) expect.said = regexes(f.said);
  if (regexes(f.not_said).length) expect.not_said = regexes(f.not_said);
  if (f.max_turn_latency_ms.trim()) {
    const ms = wholeNumber(f.max_turn_latency_ms);
    if (ms === null) errors['expect.max_turn_latency_ms'] = 'Must be a whole number of milliseconds, e.g. 1500.';
    else expect.max_turn_latency_ms = ms;
  }
  const body: TestCaseCreate = { name: f.name.trim(), transport: f.transport, caller: { script }, expect };
  if (Object.keys(variables).length) body.variables = variables;
  if (Object.keys(tool_mocks).length) body.tool_mocks = tool_mocks;
  return { body, errors };
}

/** A stored case as the body it would be saved with (ids and times left out): what the JSON view edits. */
export function caseBody(c: TestCaseCreate & Partial<{ id: string; bot_id: string; created_at: string; updated_at: string }>): TestCaseCreate {
  const { id: _i, bot_id: _b, created_at: _c, updated_at: _u, ...body } = c;
  return body;
}

/** The JSON view's text as a body: it must parse to an object (the API checks the rest). */
export function parseCaseJson(text: string): { body: TestCaseCreate; error: null } | { body: null; error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return { body: null, error: `Not valid JSON: ${(err as Error).message}.` };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { body: null, error: 'Must be a JSON object: the test case, e.g. {"name": "…", "transport": "ws", …}.' };
  return { body: v as TestCaseCreate, error: null };
}

/**
 * A refused save as field errors: 422 validation_failed names fields itself; transport_unavailable and
 * variables_mismatch carry their details in their own shapes.
 */
export function caseSaveErrors(err: { code: string; message: string; details?: unknown; fieldErrors: FieldErrors }): FieldErrors {
  if (err.code === 'transport_unavailable') return { transport: err.message };
  if (err.code === 'variables_mismatch') {
    const d = (err.details ?? {}) as { missing?: string[]; unknown?: string[] };
    const parts = [d.missing?.length ? `missing ${d.missing.join(', ')}` : '', d.unknown?.length ? `not declared by the bot: ${d.unknown.join(', ')}` : ''].filter(Boolean);
    return { variables: parts.length ? `The variables do not fit the bot: ${parts.join('; ')}.` : err.message };
  }
  return err.fieldErrors;
}

/** Field errors whose paths the form shows nowhere (a JSON body's stray field): listed under the JSON. */
export function errorLines(errors: FieldErrors): string[] {
  return Object.entries(errors).map(([path, message]) => `${path}: ${message}`);
}

/** How far a run is: cases done of all. */
export function runProgress(run: Pick<TestRun, 'cases'>): { done: number; total: number; pct: number } {
  const total = run.cases.length;
  const done = run.cases.filter((c) => c.status === 'done').length;
  return { done, total, pct: total ? Math.round((done / total) * 100) : 0 };
}

/** Whether the run may still change (keep polling it). */
export const runActive = (run: Pick<TestRun, 'status'>): boolean => run.status !== 'done';

/** A run's one-line outcome. */
export function runSummary(run: Pick<TestRun, 'status' | 'passed' | 'failed' | 'cases'>): string {
  if (run.status === 'queued') return 'Queued: waiting for a test runner.';
  const { done, total } = runProgress(run);
  const counts = `${run.passed} passed, ${run.failed} failed`;
  return run.status === 'running' ? `Running: ${done} of ${total} cases done (${counts}).` : `Done: ${counts}.`;
}

/** What a run's latency reads as: `p50 812 ms · p95 1,204 ms`, or a dash without turns timed. */
export function latencyText(ms: number | null): string {
  return ms === null ? '—' : `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** The run's badge: green all passed, red any failed, else how far it is. */
export function runBadge(run: Pick<TestRun, 'status' | 'failed'>): { text: string; tone: 'good' | 'bad' | 'info' | 'neutral' } {
  if (run.status === 'queued') return { text: 'Queued', tone: 'neutral' };
  if (run.status === 'running') return { text: 'Running', tone: 'info' };
  return run.failed > 0 ? { text: 'Failed', tone: 'bad' } : { text: 'Passed', tone: 'good' };
}

/** A case's result as it reads in a run. */
export function caseResultText(c: TestRun['cases'][number]): string {
  if (c.status === 'pending') return 'Waiting';
  if (c.status === 'running') return 'Running';
  return c.passed ? 'Passed' : 'Failed';
}
