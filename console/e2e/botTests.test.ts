// A bot's Tests page in headless Chromium against the real backend (docs/design.md §17): cases for the demo bot
// written with the form (a bad regex refused with the API's 422 on its field, nothing stored) and as JSON, run for
// real — the suite's worker takes the calls, a dialler started here (ROLES=dialler, TEST_RUNNER_WORKER_URL: that
// worker) runs them as worker/src/botTests.test.ts does: espeak-ng speaks the script, the worker hears it with
// pocketsphinx, the case's mock answers the CRM tool. The run is watched until done; the failed case shows its
// failed expectation beside its call's transcript; one case runs alone; a viewer sees no write or run controls.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { freePort, repoRoot, startProcess, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { admin, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

const DEMO = 'demo-bot';
const RUN_TIMEOUT_MS = 180_000;

let browser: Browser;
let page: Page;
let dialler: ManagedProcess | undefined;
const pageErrors: string[] = [];

/** The suite backend's environment (jest.global-setup.js): the dialler and the seed share its database and secrets. */
const backendEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  MONGODB_DB: 'console_tests',
  JWT_SECRET: process.env.VP_JWT_SECRET!,
  WORKER_AUTH_TOKEN: process.env.VP_WORKER_TOKEN!,
  LOG_LEVEL: 'info',
  ...extra,
});

beforeAll(async () => {
  execFileSync(process.execPath, [path.join(repoRoot, 'backend/dist/seed.js'), 'demo-bot'], { env: backendEnv(), stdio: 'pipe' });
  // Cases left by an earlier run of this file on the same database.
  for (const c of (await admin('GET', `/api/v1/bots/${DEMO}/tests`)).body.items as Array<{ id: string }>) await admin('DELETE', `/api/v1/bots/${DEMO}/tests/${c.id}`);
  const port = await freePort();
  dialler = startProcess('test-dialler', process.execPath, [path.join(repoRoot, 'backend/dist/main.js')], {
    env: backendEnv({ PORT: String(port), ROLES: 'dialler', TEST_RUNNER_WORKER_URL: process.env.VP_WORKER_URL!, TEST_RUNNER_POLL_INTERVAL_MS: '200' }),
    logFile: path.join(process.env.VP_TEST_DIR!, 'test-dialler.log'),
  });
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.ok === true || (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200, {
    what: 'test dialler',
    proc: dialler,
  });
  ({ browser, page } = await launchPage());
  page.on('pageerror', (e) => pageErrors.push(e.message));
});
afterAll(async () => {
  await browser?.close();
  await dialler?.stop(2000);
});

const refundCase = {
  name: 'talks about a refund',
  transport: 'ws',
  variables: { customer_name: 'Alice', amount_due: '42 dollars' },
  caller: { script: [{ say: 'yes i will pay', wait_for_bot: true }] },
  tool_mocks: { record_promise: { status: 200, body: { reference: 'R42' } } },
  // Fails on purpose: the demo bot never talks about refunds.
  expect: { end_reason: 'bot_hangup', said: ['your refund is on its way'] },
};

const byLabel = (name: string) => page.getByRole('textbox', { name, exact: true });
/** A text box with suggestions (the bot's tool names). */
const byCombo = (name: string) => page.getByRole('combobox', { name, exact: true });
const notice = (text: string) => page.getByRole('status').filter({ hasText: text });
const runPanel = () => page.getByTestId('test-run');

async function storedCases(): Promise<Array<{ id: string; name: string; expect: unknown; tool_mocks: unknown; variables: unknown; caller: unknown }>> {
  return (await admin('GET', `/api/v1/bots/${DEMO}/tests`)).body.items;
}

describe('the Tests page of a bot', () => {
  it('writes a case with the form (its 422 on the field) and one as JSON, runs them for real, and shows the failure beside the transcript', async () => {
    await signInAt(page, `/bots/${DEMO}`);
    await page.getByRole('link', { name: 'Tests', exact: true }).click();
    await page.waitForURL(`${CONSOLE}/bots/${DEMO}/tests`);
    await page.getByText('No test cases yet.').waitFor();

    // The form: a regex that does not compile is refused by the API, named on its field; nothing is stored.
    await page.getByRole('button', { name: 'New test case' }).click();
    await byLabel('Name').fill('promises to pay');
    await byLabel('Value of customer_name').fill('Alice');
    await byLabel('Value of amount_due').fill('42 dollars');
    await byLabel('Step 1 words').fill('yes i will pay');
    expect(await page.getByRole('checkbox', { name: 'Step 1: wait for the bot first' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Add mock' }).click();
    await byCombo('Mock 1 tool').fill('record_promise');
    await byLabel('Mock 1 body (JSON)').fill('{"reference": "R42"}');
    await byLabel('End reason').fill('bot_hangup');
    await page.getByRole('button', { name: 'Expect a tool' }).click();
    await byCombo('Expected tool 1').fill('record_promise');
    await byLabel('Expected tool 1 arguments (JSON)').fill('{"customer_name": "Alice", "amount_due": "42 dollars"}');
    await byLabel('Bot says').fill('(unclosed');
    await byLabel('Bot never says').fill('did not catch that');
    await page.getByRole('button', { name: 'Add case' }).click();
    const saidError = page.locator('#case-expect-said-error');
    await saidError.waitFor();
    expect(await saidError.textContent()).toMatch(/^Is not a regular expression: .*unclosed/);
    expect(await byLabel('Bot says').getAttribute('aria-invalid')).toBe('true');
    expect(await storedCases()).toEqual([]);

    await byLabel('Bot says').fill('promise is noted under reference R42');
    await page.getByRole('button', { name: 'Add case' }).click();
    await notice('Test case “promises to pay” added.').waitFor();
    const [stored] = await storedCases();
    // The exact body the form sent.
    expect(stored).toMatchObject({
      name: 'promises to pay',
      variables: { customer_name: 'Alice', amount_due: '42 dollars' },
      caller: { script: [{ say: 'yes i will pay', wait_for_bot: true }] },
      tool_mocks: { record_promise: { status: 200, body: { reference: 'R42' } } },
      expect: {
        end_reason: 'bot_hangup',
        tools: [{ name: 'record_promise', arguments: { customer_name: 'Alice', amount_due: '42 dollars' } }],
        said: ['promise is noted under reference R42'],
        not_said: ['did not catch that'],
      },
    });

    // As JSON: a mock for a tool the bot lacks is refused, its path listed; then the failing case is added.
    await page.getByRole('button', { name: 'New test case' }).click();
    await page.getByRole('button', { name: 'Edit as JSON' }).click();
    const json = page.getByLabel('Test case (JSON)');
    await json.fill(JSON.stringify({ ...refundCase, tool_mocks: { refund: { status: 200 } } }));
    await page.getByRole('button', { name: 'Add case' }).click();
    await page.getByTestId('case-errors').filter({ hasText: 'tool_mocks.refund: The bot has no tool named refund.' }).waitFor();
    expect(await storedCases()).toHaveLength(1);
    await json.fill(JSON.stringify(refundCase, null, 2));
    await page.getByRole('button', { name: 'Add case' }).click();
    await notice('Test case “talks about a refund” added.').waitFor();
    const cases = page.getByTestId('test-cases');
    expect(await cases.locator('tbody tr td:first-child').allTextContents()).toEqual(['promises to pay', 'talks about a refund']);

    // Run all: the run shows queued or running at once, and is read again until done.
    await page.getByRole('button', { name: 'Run all cases' }).click();
    await runPanel().waitFor();
    expect(await page.getByTestId('run-summary').textContent()).toMatch(/^(Queued: waiting for a test runner\.|Running: \d of 2 cases done)/);
    await page.locator('[data-testid="test-run"][data-status="done"]').waitFor({ timeout: RUN_TIMEOUT_MS });
    expect(await page.getByTestId('run-summary').textContent()).toBe('Done: 1 passed, 1 failed.');

    const history = (await admin('GET', `/api/v1/bots/${DEMO}/test-runs`)).body.items;
    const run = history[0];
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 1, version: 1 });
    const failedResult = run.cases.find((c: { name: string }) => c.name === 'talks about a refund');
    expect(failedResult.failures).toEqual([{ expectation: 'said.0', detail: expect.stringContaining('never said /your refund is on its way/i') }]);

    const failed = runPanel().locator('li.case-failed');
    expect(await failed.count()).toBe(1);
    expect(await failed.locator('.row-head').textContent()).toContain('talks about a refund');
    expect(await failed.getByTestId('failures').locator('li').allTextContents()).toEqual([`said.0 ${failedResult.failures[0].detail}`]);
    // The call's transcript beside it: the greeting with the case's variable, the caller's words, the reply.
    const transcript = failed.getByTestId('case-transcript');
    await transcript.locator('.transcript li').first().waitFor();
    const said = await transcript.locator('.transcript li').allTextContents();
    expect(said[0]).toBe('BotHello Alice, this is a friendly reminder from Example Company.');
    expect(said.some((s) => s.startsWith('Caller'))).toBe(true);
    expect(said.filter((s) => s.startsWith('Bot')).join(' ')).toContain('your promise is noted under reference R42');
    expect(await failed.getByRole('link', { name: 'Open the call' }).getAttribute('href')).toBe(`/calls/${failedResult.call_id}`);
    expect(await runPanel().locator('li.case-passed').textContent()).toContain('promises to pay');

    // The history: the run's row highlighted as failed, with its version, counts and latencies.
    const row = page.getByTestId('test-runs').locator(`tr[data-run="${run.id}"]`);
    expect(await row.getAttribute('class')).toBe('run-failed');
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(1, 5)).toEqual(['1', 'Failed', '1', '1']);
    expect(cells[5]).toBe(`${Math.round(run.latency.p50_ms).toLocaleString('en-US')} ms`);
    expect(cells[6]).toBe(`${Math.round(run.latency.p95_ms).toLocaleString('en-US')} ms`);
    await page.screenshot({ path: path.join(SHOTS, 'bot-tests.png'), fullPage: true });

    // The call page the link opens.
    await failed.getByRole('link', { name: 'Open the call' }).click();
    await page.waitForURL(`${CONSOLE}/calls/${failedResult.call_id}`);
    expect(pageErrors).toEqual([]);
  });

  it('deletes a case, and runs one case alone', async () => {
    await page.goto(`${CONSOLE}/bots/${DEMO}/tests`); // signed in by the first test
    await page.getByRole('button', { name: 'Delete talks about a refund' }).click();
    await page.getByRole('button', { name: 'Delete test case' }).click();
    await notice('Test case “talks about a refund” deleted.').waitFor();
    expect((await storedCases()).map((c) => c.name)).toEqual(['promises to pay']);

    const before = (await admin('GET', `/api/v1/bots/${DEMO}/test-runs`)).body.items.length as number;
    await page.getByTestId('test-run').waitFor(); // the newest run, the last test's
    await page.getByRole('button', { name: 'Run promises to pay' }).click();
    let started: { id: string } | undefined;
    await waitUntil(async () => {
      const items = (await admin('GET', `/api/v1/bots/${DEMO}/test-runs`)).body.items;
      started = items.length > before ? items[0] : undefined;
      return started !== undefined;
    }, { what: 'the run started' });
    await page.locator(`[data-testid="test-run"][data-run="${started!.id}"][data-status="done"]`).waitFor({ timeout: RUN_TIMEOUT_MS });
    expect(await page.getByTestId('run-summary').textContent()).toBe('Done: 1 passed, 0 failed.');
    const runs = (await admin('GET', `/api/v1/bots/${DEMO}/test-runs`)).body.items;
    expect(runs).toHaveLength(before + 1);
    expect(runs[0]).toMatchObject({ status: 'done', passed: 1, failed: 0, cases: [expect.objectContaining({ name: 'promises to pay', passed: true })] });
    expect(await page.getByTestId('test-runs').locator(`tr[data-run="${runs[0].id}"]`).getAttribute('class')).toBe('');
    expect(pageErrors).toEqual([]);
  });

  it('shows a viewer the cases and runs, read-only', async () => {
    const email = `viewer-tests-${Date.now()}@console-tests.example.com`;
    const created = await admin('POST', '/api/v1/users', { email, name: 'Tests viewer', role: 'viewer' });
    expect(created.status).toBe(201);
    const password = 'viewer-tests-password-123';
    const login = await fetch(`${BACKEND}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password: created.body.password }) });
    const { access_token } = (await login.json()) as { access_token: string };
    const changed = await fetch(`${BACKEND}/api/v1/auth/password`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ current_password: created.body.password, new_password: password }),
    });
    expect(changed.status).toBe(200);

    const p = await (await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } })).newPage();
    await p.goto(`${CONSOLE}/bots/${DEMO}/tests`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${CONSOLE}/bots/${DEMO}/tests`);
    await p.getByTestId('test-runs').waitFor();
    expect(await p.locator('main button:visible').allTextContents()).not.toContainEqual(expect.stringMatching(/^(New test case|Run|Edit|Delete)/));
    await p.getByRole('button', { name: 'View promises to pay' }).click();
    const json = p.getByLabel('Test case (JSON)');
    expect(await json.getAttribute('readonly')).not.toBeNull();
    expect(JSON.parse(await json.inputValue())).toMatchObject({ name: 'promises to pay', expect: { end_reason: 'bot_hangup' } });
    expect(await p.getByRole('button', { name: /^(Save case|Add case|Edit as JSON)$/ }).count()).toBe(0);
    await p.context().close();
  });
});
