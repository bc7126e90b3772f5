// The console in headless Chromium against the real backend (FerretDB + Redis) and a real worker:
// sign-in, bots (with tools, turn-taking and answering machine settings), API keys (shown once, working on dial-out, renamed and re-dated, refused
// once deactivated), calls (refreshing themselves), and session expiry. Screenshots of the main pages go to test-artifacts/console/.
// Dial-outs need an outbound trunk: one to the suite's test phone (sipp) is created through the API and
// deleted after it. The worker really dials: the phone's 404 number, so each call ends at once `failed` /
// `invalid_number` (Queued → Dialing → Failed).
import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PHONE_NUMBERS } from '@voice-platform/tests/infra';
import { ADMIN, adminToken, BACKEND, CONSOLE, recordResponseBodies, SHOTS } from './support.js';

const MASK = '••••••••';
/** The test phone answers this number 404 Not Found: a real dial that fails fast. */
const TO_NUMBER = PHONE_NUMBERS.notFound;
const TRUNKS = '/api/v1/sip/outbound-trunks';
/** An HTTP tool's address (the suite's backend allows loopback; nothing calls it here). */
const ORDERS_URL = 'http://127.0.0.1:9/orders';

let browser: Browser;
let context: BrowserContext;
let page: Page;
let trunkId = '';
/** Every request the page sent to the backend (method + path), and every backend response body. */
const sent: string[] = [];
const bodies: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function adminGet<T>(p: string): Promise<T> {
  const r = await fetch(`${BACKEND}${p}`, { headers: { Authorization: `Bearer ${await adminToken()}` } });
  expect(r.status).toBe(200);
  return (await r.json()) as T;
}

async function adminPatch(p: string, body: unknown): Promise<number> {
  const r = await fetch(`${BACKEND}${p}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${await adminToken()}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return r.status;
}

async function dialout(key: string, botId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${BACKEND}/api/v1/sip/dialout`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ bot_id: botId, to_number: TO_NUMBER, variables: { customer_name: 'Ada' } }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

function jwtHs256(payload: object, secret: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

/** The suite's outbound trunk (dial-outs are refused without one), to the suite's test phone. */
async function createTrunk(): Promise<string> {
  const r = await fetch(`${BACKEND}${TRUNKS}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${await adminToken()}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Console suite trunk', address: process.env.SIP_PHONE_ADDRESS, numbers: ['+15005550199'] }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

const keyRow = (name: string) => page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // Fixed locale and zone: the dates the page shows are then known exactly.
  context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: CONSOLE });
  trunkId = await createTrunk();
  page = await context.newPage();
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  recordResponseBodies(page, bodies);
});

afterAll(async () => {
  await browser?.close();
  if (trunkId) {
    const r = await fetch(`${BACKEND}${TRUNKS}/${trunkId}`, { method: 'DELETE', headers: { Authorization: `Bearer ${await adminToken()}` } });
    expect(r.status).toBe(204);
  }
});

describe('console', () => {
  let botId = '';
  let key = '';
  let callId = '';
  let trialKey = '';

  it('sends a deep link to sign-in, shows the error body on bad credentials, and returns to the link', async () => {
    await page.goto(`${CONSOLE}/bots`);
    await page.waitForURL(`${CONSOLE}/login?next=%2Fbots`);
    await page.getByRole('heading', { name: 'Sign in to the Voice Platform console' }).waitFor();

    const before = sent.length;
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#login-email-error').getByText('Enter your email address.', { exact: true }).waitFor();
    expect(await page.locator('#login-password-error').textContent()).toBe('Enter your password.');
    expect(await page.getByLabel('Email').getAttribute('aria-describedby')).toBe('login-email-error');
    expect(sent.length).toBe(before); // validated before any request

    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Email or password is wrong.');
    await shot('login');

    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${CONSOLE}/bots`);
    await page.getByRole('heading', { name: 'Bots', level: 1 }).waitFor();
    expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0); // the JWT stays in sessionStorage
    expect(await page.evaluate(() => sessionStorage.getItem('vp.token'))).toMatch(/^ey/);
  });

  it('validates a new bot before sending it, creates it, and edits it', async () => {
    await page.getByRole('link', { name: 'New bot' }).click();
    await page.waitForURL(`${CONSOLE}/bots/new`);
    const before = sent.length;
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-name-error').textContent()).toBe('This field is required.');
    expect(await page.getByRole('textbox', { name: 'Name', exact: true }).getAttribute('aria-invalid')).toBe('true');
    // The invalid field gets the focus, so a keyboard user lands on it.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-name');

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Renewal reminder');
    await page.getByLabel('Greeting').fill('Hello {{customer_name}}');
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-greeting-error').textContent()).toBe('{{customer_name}} is not a declared variable.');

    await page.getByRole('button', { name: 'Add variable' }).click();
    const variable = page.getByRole('group', { name: 'Variable 1' });
    await variable.getByRole('textbox', { name: 'Name', exact: true }).fill('customer_name');
    await variable.getByLabel('Required on every call').check();
    await page.getByLabel('Speed').fill('9');
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-voice-speed-error').textContent()).toBe('Must be at most 4.');
    expect(await page.locator('#bot-greeting-error').count()).toBe(0);
    expect(sent.length).toBe(before);

    // A tool, checked by the same schema: its name pattern, and parameters that must be a JSON object.
    await page.getByRole('button', { name: 'Add tool' }).click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-tools-0-name'); // focus moves into the new tool
    const tool = page.getByRole('group', { name: 'Tool 1' });
    await tool.getByRole('textbox', { name: 'Tool name' }).fill('look up order');
    await tool.getByRole('textbox', { name: 'Parameters (JSON Schema)' }).fill('{"type": "object"');
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-tools-0-name-error').textContent()).toBe('Letters, digits, _ and - only (1 to 64 characters).');
    expect(await page.locator('#bot-tools-0-parameters-error').textContent()).toBe('Must be a JSON object, e.g. {"type": "object"}.');
    expect(await tool.getByRole('textbox', { name: 'Tool name' }).getAttribute('aria-describedby')).toBe('bot-tools-0-name-hint bot-tools-0-name-error');
    expect(await tool.getByRole('textbox', { name: 'Parameters (JSON Schema)' }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#bot-voice-speed-error').textContent()).toBe('Must be at most 4.');
    expect(sent.length).toBe(before);
    await page.locator('#bot-tools').screenshot({ path: path.join(SHOTS, 'bot-tools-errors.png') });
    await tool.getByRole('textbox', { name: 'Tool name' }).fill('lookup_order');
    await tool.getByRole('textbox', { name: 'Tool description' }).fill('Find an order by its number.');
    await tool.getByRole('textbox', { name: 'URL', exact: true }).fill(ORDERS_URL); // a new tool calls a URL
    await tool.getByRole('textbox', { name: 'Parameters (JSON Schema)' }).fill('{"type": "object", "properties": {"order_id": {"type": "string"}}}');

    await page.getByLabel('Speed').fill('1.2');
    await page.getByLabel('Use a scripted dialogue policy').check();
    await page.getByRole('button', { name: 'Add intent' }).click();
    const intent = page.getByRole('group', { name: 'Intent 1' });
    await intent.getByRole('textbox', { name: 'Intent name', exact: true }).fill('confirm');
    await intent.getByRole('textbox', { name: 'Example phrases', exact: true }).fill('yes\nsure');
    await intent.getByRole('textbox', { name: 'Reply', exact: true }).fill('Great, {{customer_name}}. Goodbye.');
    await intent.getByLabel('End the call after this reply').check();
    await page.getByRole('textbox', { name: 'Fallback reply', exact: true }).fill('Sorry, could you repeat that?');
    await page.getByRole('button', { name: 'Create bot' }).click();

    await page.getByRole('heading', { name: 'Edit bot: Renewal reminder' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'created' }).textContent()).toBe('Bot “Renewal reminder” created.');
    botId = new URL(page.url()).pathname.split('/').pop()!;
    const created = await adminGet<Record<string, unknown>>(`/api/v1/bots/${botId}`);
    expect(created).toMatchObject({
      id: botId,
      name: 'Renewal reminder',
      active: true,
      greeting: 'Hello {{customer_name}}',
      variables: [{ name: 'customer_name', required: true, description: '' }],
      voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1.2 },
      llm: { provider: 'scripted', model: 'policy', temperature: 0 },
      policy: { intents: [{ name: 'confirm', examples: ['yes', 'sure'], reply: 'Great, {{customer_name}}. Goodbye.', end_call: true }], fallback: { reply: 'Sorry, could you repeat that?' } },
      tools: [{ name: 'lookup_order', description: 'Find an order by its number.', type: 'http', url: ORDERS_URL, method: 'POST', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }],
    });

    await page.getByLabel('Greeting').fill('Hi {{customer_name}}, this is Acme.');
    await page.getByLabel('LLM model').fill('policy-v2');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    expect(await adminGet<Record<string, unknown>>(`/api/v1/bots/${botId}`)).toMatchObject({ greeting: 'Hi {{customer_name}}, this is Acme.', llm: { model: 'policy-v2' } });

    // A deep link straight to the bot shows the saved values.
    await page.reload();
    expect(await page.getByLabel('Greeting').inputValue()).toBe('Hi {{customer_name}}, this is Acme.');
    await shot('bot-edit');
  });

  it('edits, adds and removes the bot’s tools', async () => {
    const saveBot = async () => {
      const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect((await saved).status()).toBe(200);
      await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    };
    const tool1 = page.getByRole('group', { name: 'Tool 1' });
    expect(await tool1.getByRole('textbox', { name: 'Tool name' }).inputValue()).toBe('lookup_order');
    expect(JSON.parse(await tool1.getByRole('textbox', { name: 'Parameters (JSON Schema)' }).inputValue())).toEqual({ type: 'object', properties: { order_id: { type: 'string' } } });

    const params = { type: 'object', properties: { order_id: { type: 'string', description: 'as printed on the invoice' } }, required: ['order_id'] };
    await tool1.getByRole('textbox', { name: 'Tool description' }).fill('Look up an order.');
    await tool1.getByRole('textbox', { name: 'Parameters (JSON Schema)' }).fill(JSON.stringify(params));
    await page.getByRole('button', { name: 'Add tool' }).click();
    await page.keyboard.type('hang-up'); // the new tool's name has the focus
    await page.getByRole('group', { name: 'Tool 2' }).getByLabel('Tool type').selectOption({ label: 'End the call' });
    await saveBot();
    let stored = await adminGet<{ tools: unknown[]; greeting: string }>(`/api/v1/bots/${botId}`);
    expect(stored.tools).toEqual([
      { name: 'lookup_order', description: 'Look up an order.', type: 'http', url: ORDERS_URL, method: 'POST', parameters: params },
      { name: 'hang-up', description: '', type: 'end_call' },
    ]);
    expect(stored.greeting).toBe('Hi {{customer_name}}, this is Acme.'); // the rest of the bot is untouched
    await page.locator('#bot-tools').screenshot({ path: path.join(SHOTS, 'bot-tools.png') });

    await page.getByRole('button', { name: 'Remove tool 1' }).click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-add-tool');
    expect(await page.getByRole('group', { name: 'Tool 1' }).getByRole('textbox', { name: 'Tool name' }).inputValue()).toBe('hang-up');
    await saveBot();
    stored = await adminGet(`/api/v1/bots/${botId}`);
    expect(stored.tools).toEqual([{ name: 'hang-up', description: '', type: 'end_call' }]);

    await page.getByRole('button', { name: 'Remove tool 1' }).click();
    expect(await page.getByRole('group', { name: /^Tool \d/ }).count()).toBe(0);
    await saveBot();
    expect((await adminGet<{ tools: unknown[] }>(`/api/v1/bots/${botId}`)).tools).toEqual([]);
  });

  it('saves the bot’s answering machine settings, checked like the API, and reopens them as saved', async () => {
    const saveBot = async () => {
      const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect((await saved).status()).toBe(200);
      await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    };
    const section = page.getByRole('group', { name: 'Answering machines' });
    const detect = section.getByLabel('Detect answering machines');
    const onMachine = section.getByLabel('When a machine answers');
    const message = section.getByRole('textbox', { name: 'Message for the machine' });
    const wait = section.getByRole('textbox', { name: 'Longest wait for the beep (seconds)' });
    // A bot made before: no detection, hang up; the message belongs to "leave a message" and is not shown.
    expect(await detect.isChecked()).toBe(false);
    expect(await onMachine.inputValue()).toBe('hangup');
    expect(await message.count()).toBe(0);

    await detect.check();
    await onMachine.selectOption({ label: 'Leave a message' });
    expect(await wait.inputValue()).toBe('30');
    const before = sent.length;
    // The schema first (the wait's range), then the API's rules: a message is required, its placeholders declared.
    await wait.fill('200');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-answering_machine-max_wait_for_beep_seconds-error').textContent()).toBe('Must be at most 120.');
    await wait.fill('45');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-answering_machine-message-error').textContent()).toBe('Said to the machine after its beep: required when the bot leaves a message.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-answering_machine-message');
    await message.fill('Hello {{customer}}, please call Acme back.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-answering_machine-message-error').textContent()).toBe('{{customer}} is not a declared variable.');
    expect(sent.slice(before).filter((r) => r.startsWith('PATCH'))).toEqual([]);
    await message.fill('Hello {{customer_name}}, please call Acme back.');
    await saveBot();
    const am = { detect: true, on_machine: 'leave_message', message: 'Hello {{customer_name}}, please call Acme back.', max_wait_for_beep_seconds: 45 };
    expect((await adminGet<{ answering_machine: unknown }>(`/api/v1/bots/${botId}`)).answering_machine).toEqual(am);
    await page.locator('#bot-answering-machine').screenshot({ path: path.join(SHOTS, 'bot-answering-machine.png') });

    await page.reload();
    expect(await detect.isChecked()).toBe(true);
    expect(await onMachine.inputValue()).toBe('leave_message');
    expect(await message.inputValue()).toBe(am.message);
    expect(await wait.inputValue()).toBe('45');

    // Hanging up instead hides the message, and keeps it: back to "leave a message", it is there again.
    await onMachine.selectOption({ label: 'Hang up' });
    expect(await message.count()).toBe(0);
    await saveBot();
    expect((await adminGet<{ answering_machine: unknown }>(`/api/v1/bots/${botId}`)).answering_machine).toEqual({ ...am, on_machine: 'hangup' });
    await page.reload();
    expect(await onMachine.inputValue()).toBe('hangup');
    await onMachine.selectOption({ label: 'Leave a message' });
    expect(await message.inputValue()).toBe(am.message);
  });

  it('saves the bot’s turn-taking settings, checked like the API, and reopens them as saved', async () => {
    /** The body of the PATCH that saving sends, once the page says it is saved. */
    const saveBot = async (): Promise<Record<string, unknown>> => {
      const req = page.waitForRequest((r) => r.method() === 'PATCH' && new URL(r.url()).pathname === `/api/v1/bots/${botId}`);
      const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect((await saved).status()).toBe(200);
      await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
      return JSON.parse((await req).postData() ?? 'null') as Record<string, unknown>;
    };
    await page.reload();
    const section = page.getByRole('group', { name: 'Turn-taking' });
    const mode = section.getByLabel('End of the caller’s turn');
    const minSilence = section.getByRole('textbox', { name: 'Minimum silence (ms)' });
    const maxSilence = section.getByRole('textbox', { name: 'Maximum silence (ms)' });
    const endSilence = section.getByRole('textbox', { name: 'End-of-turn silence (ms)' });
    const ignore = section.getByLabel('Ignore backchannels while the bot speaks');
    const words = section.getByRole('textbox', { name: 'Words that always interrupt' });
    // A bot made before shows the defaults, each setting with what it trades.
    expect(await mode.inputValue()).toBe('smart');
    expect(await minSilence.inputValue()).toBe('250');
    expect(await maxSilence.inputValue()).toBe('700');
    expect(await ignore.isChecked()).toBe(true);
    expect(await words.inputValue()).toBe('2');
    expect(await page.locator('#bot-turn_detection-mode-hint').textContent()).toBe('Answers sooner when the caller’s sentence is complete; waits longer when it is not.');
    expect(await page.locator('#bot-turn_detection-min_silence_ms-hint').textContent()).toBe('Ends a complete sentence: lower answers faster but may cut in on a pause. 100 to 5000.');
    expect(await page.locator('#bot-turn_detection-end_of_turn_silence_ms-hint').textContent()).toBe('Higher lets callers pause mid-sentence, but every incomplete turn waits this long. 100 to 5000.');
    expect(await page.locator('#bot-interruption-ignore_backchannels-hint').textContent()).toBe('On: the bot keeps talking over “uh-huh”, “okay”, “yeah” (other speech stops it); off: any sound stops it.');
    expect(await page.locator('#bot-interruption-min_words-hint').textContent()).toBe('This many acknowledgements in a row stop the bot: lower yields sooner, higher talks over more. 1 to 10.');

    // The API's rules before sending: the minimum at most the maximum, and the ranges.
    const before = sent.length;
    await minSilence.fill('900');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-turn_detection-min_silence_ms-error').textContent()).toBe('Must be at most the maximum silence (700 ms).');
    expect(await minSilence.getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-turn_detection-min_silence_ms');
    await page.locator('#bot-turn-taking').screenshot({ path: path.join(SHOTS, 'bot-turn-taking-errors.png') });
    await maxSilence.fill('1200');
    await words.fill('11');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-interruption-min_words-error').textContent()).toBe('Must be at most 10.');
    expect(await page.locator('#bot-turn_detection-min_silence_ms-error').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-interruption-min_words');
    expect(sent.slice(before).filter((r) => r.startsWith('PATCH'))).toEqual([]);

    await minSilence.fill('300');
    await words.fill('3');
    let body = await saveBot();
    const td = { mode: 'smart', end_of_turn_silence_ms: 1200, min_silence_ms: 300 };
    expect(body.turn_detection).toEqual(td);
    expect(body.interruption).toEqual({ ignore_backchannels: true, min_words: 3 });
    let stored = await adminGet<{ turn_detection: unknown; interruption: unknown }>(`/api/v1/bots/${botId}`);
    expect(stored.turn_detection).toEqual(td);
    expect(stored.interruption).toEqual({ ignore_backchannels: true, min_words: 3 });
    expect(await page.locator('#bot-turn_detection-min_silence_ms-error').count()).toBe(0);
    await page.locator('#bot-turn-taking').screenshot({ path: path.join(SHOTS, 'bot-turn-taking.png') });

    await page.reload();
    expect(await mode.inputValue()).toBe('smart');
    expect(await minSilence.inputValue()).toBe('300');
    expect(await maxSilence.inputValue()).toBe('1200');
    expect(await words.inputValue()).toBe('3');

    // Fixed mode: one silence ends every turn; the minimum is hidden and kept. Backchannels not ignored: any
    // sound stops the bot; the word count is hidden and kept (both sent as they were).
    await mode.selectOption({ label: 'Fixed silence' });
    expect(await minSilence.count()).toBe(0);
    expect(await maxSilence.count()).toBe(0);
    expect(await endSilence.inputValue()).toBe('1200');
    expect(await page.locator('#bot-turn_detection-mode-hint').textContent()).toBe('Waits the same silence after every turn: predictable, but slower after a complete sentence.');
    await ignore.uncheck();
    expect(await words.count()).toBe(0);
    body = await saveBot();
    expect(body.turn_detection).toEqual({ mode: 'fixed', end_of_turn_silence_ms: 1200, min_silence_ms: 300 });
    expect(body.interruption).toEqual({ ignore_backchannels: false, min_words: 3 });
    // An end-of-turn silence below the hidden minimum lowers it with it (as the API does when none is given).
    await endSilence.fill('200');
    body = await saveBot();
    const fixed = { mode: 'fixed', end_of_turn_silence_ms: 200, min_silence_ms: 200 };
    expect(body.turn_detection).toEqual(fixed);
    stored = await adminGet(`/api/v1/bots/${botId}`);
    expect(stored.turn_detection).toEqual(fixed);
    expect(stored.interruption).toEqual({ ignore_backchannels: false, min_words: 3 });
    await page.reload();
    expect(await mode.inputValue()).toBe('fixed');
    expect(await endSilence.inputValue()).toBe('200');
    expect(await ignore.isChecked()).toBe(false);
    expect(await minSilence.count()).toBe(0);
    // Back to smart: the minimum shows again.
    await mode.selectOption('smart');
    expect(await minSilence.inputValue()).toBe('200');
    await ignore.check();
    expect(await words.inputValue()).toBe('3');

    // The API's own answer, had the page not checked first: 422 on the same field.
    expect(await adminPatch(`/api/v1/bots/${botId}`, { turn_detection: { min_silence_ms: 300 } })).toBe(422);
  });

  it('turns noise suppression on and off from the speech recognition settings', async () => {
    await page.reload();
    const box = page.getByRole('group', { name: 'Speech recognition (STT)' }).getByLabel('Suppress background noise');
    expect(await box.isChecked()).toBe(false);
    expect(await page.locator('#bot-audio-noise_suppression-hint').textContent()).toBe('RNNoise cleans the caller’s audio before the bot listens: better on noisy lines, about 2 % of a CPU core per call.');
    for (const on of [true, false]) {
      await box.setChecked(on);
      const req = page.waitForRequest((r) => r.method() === 'PATCH' && new URL(r.url()).pathname === `/api/v1/bots/${botId}`);
      const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect((await saved).status()).toBe(200);
      expect((JSON.parse((await req).postData() ?? 'null') as { audio: unknown }).audio).toEqual({ noise_suppression: on });
      expect((await adminGet<{ audio: unknown }>(`/api/v1/bots/${botId}`)).audio).toEqual({ noise_suppression: on });
      await page.reload();
      expect(await box.isChecked()).toBe(on);
    }
  });

  it('deactivates and reactivates a bot from the list', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Renewal reminder' });
    expect(await row.locator('vp-status-badge').textContent()).toBe('Active');
    await row.getByRole('button', { name: 'Deactivate Renewal reminder' }).click();
    await row.locator('[data-status="inactive"]').getByText('Inactive', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Activate Renewal reminder' }).click();
    await row.locator('[data-status="active"]').getByText('Active', { exact: true }).waitFor();
    expect(await page.getByRole('status').textContent()).toBe('Bot “Renewal reminder” is now active.');
    await shot('bots');
  });

  it('creates an API key and shows the full key once, in a dialog with a copy button', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    // Other e2e files share the backend and may have made keys before this one ran (audit.test does).
    const existing = await adminGet<{ items: unknown[] }>('/api/v1/api-keys');
    if (existing.items.length === 0) await page.getByText('No API keys yet. Create one above for your CRM.').waitFor();
    else await page.getByRole('table').waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.locator('#key-name-error').textContent()).toBe('This field is required.');

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('CRM production');
    await page.getByLabel('Expires').selectOption({ label: 'Never' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy your new API key' });
    await dialog.waitFor();
    expect(await dialog.getByRole('alert').textContent()).toContain('This is the only time the full key is shown. Copy it now and store it somewhere safe: it cannot be shown again.');
    key = await dialog.getByLabel('API key “CRM production”').inputValue();
    expect(key).toMatch(/^vx_[A-Za-z0-9]{32}$/);

    // The copy button is focused first; it puts exactly the key on the clipboard.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Copy');
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await shot('api-key-created');

    // Escape closes it; the key is gone from the page with it.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe('API key “CRM production” created. Its full value is no longer shown.');
    expect(await page.content()).not.toContain(key);
  });

  it('the new key places a real dial-out, and after a reload the full key is nowhere', async () => {
    const r = await dialout(key, botId);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'queued', bot_id: botId, to_number: TO_NUMBER });
    callId = r.body.call_id as string;

    const fromReload = bodies.length;
    await page.reload();
    const row = keyRow('CRM production');
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).locator('code').textContent()).toBe(`${key.slice(0, 7)}${MASK}`);
    expect(await row.locator('vp-status-badge').textContent()).toBe('Active');
    expect(await row.getByRole('cell').nth(4).textContent()).toBe('Never');
    expect(await row.getByRole('cell').nth(5).textContent()).not.toBe('Never'); // the dial-out used it

    const html = await page.evaluate(() => document.documentElement.outerHTML + document.body.innerText + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));
    expect(html).not.toContain(key);
    expect(html).not.toContain(key.slice(7));
    expect(bodies.length).toBeGreaterThan(fromReload);
    for (const body of bodies.slice(fromReload)) expect(body).not.toContain(key.slice(7));
    await shot('api-keys');
  });

  it('deactivates the key after a confirmation, and the dial-out then refuses it', async () => {
    const row = keyRow('CRM production');
    await row.getByRole('button', { name: 'Deactivate CRM production' }).click();
    const confirm = page.getByRole('dialog', { name: 'Deactivate this API key?' });
    await confirm.waitFor();
    // Focus starts on Cancel and Tab wraps inside the dialog.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Deactivate key');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    expect(await row.locator('vp-status-badge').textContent()).toBe('Active');

    const fromHere = bodies.length;
    await row.getByRole('button', { name: 'Deactivate CRM production' }).click();
    await confirm.getByRole('button', { name: 'Deactivate key' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.locator('[data-status="inactive"]').getByText('Inactive', { exact: true }).waitFor();
    expect(await row.getByRole('button').count()).toBe(0); // no way back: deactivation is final
    expect(await page.getByRole('status').first().textContent()).toBe('API key “CRM production” deactivated. Requests with it are refused from now on.');
    for (const body of bodies.slice(fromHere)) expect(body).not.toContain(key.slice(7));

    const r = await dialout(key, botId);
    expect(r.status).toBe(401);
    expect((r.body.error as { code: string }).code).toBe('api_key_inactive');
  });

  it('creates keys that expire, by preset and on a chosen date', async () => {
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Partner trial');
    await page.getByLabel('Expires').selectOption({ label: '30 days' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy your new API key' });
    await dialog.waitFor();
    trialKey = await dialog.getByLabel('API key “Partner trial”').inputValue();
    await dialog.getByRole('button', { name: 'I have copied the key' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const { items } = await adminGet<{ items: Array<{ name: string; created_at: string; expires_at: string | null; status: string }> }>('/api/v1/api-keys');
    const trial = items.find((k) => k.name === 'Partner trial')!;
    const lifetimeMs = new Date(trial.expires_at!).getTime() - new Date(trial.created_at).getTime();
    expect(lifetimeMs).toBeGreaterThan(30 * 86_400_000 - 60_000);
    expect(lifetimeMs).toBeLessThanOrEqual(30 * 86_400_000);
    const shown = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }).format(new Date(trial.expires_at!));
    await keyRow('Partner trial').getByRole('cell', { name: shown, exact: true }).waitFor();

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Year-end campaign');
    await page.getByLabel('Expires').selectOption({ label: 'On a date…' });
    await page.getByLabel('Expiry date').fill('2020-01-01');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.locator('#key-expiry-date-error').textContent()).toBe('Must be in the future.');
    await page.getByLabel('Expiry date').fill('2099-12-31');
    await page.getByRole('button', { name: 'Create key' }).click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'I have copied the key' }).click();
    const row = keyRow('Year-end campaign');
    await row.getByRole('cell', { name: 'Dec 31, 2099', exact: true }).waitFor();
    expect(await row.locator('vp-status-badge').textContent()).toBe('Active');
    const after = await adminGet<{ items: Array<{ name: string; expires_at: string | null }> }>('/api/v1/api-keys');
    expect(after.items.find((k) => k.name === 'Year-end campaign')!.expires_at).toBe('2099-12-31T23:59:59.999Z');
  });

  it('renames an active key and changes its expiry in a keyboard-usable dialog; inactive keys offer no Edit', async () => {
    expect(await keyRow('CRM production').getByRole('button', { name: 'Edit CRM production' }).count()).toBe(0);
    const trialRow = keyRow('Partner trial');
    const dialog = page.getByRole('dialog', { name: 'Edit API key' });

    // Keyboard: focus starts on the name, Tab wraps inside, Escape cancels without a request.
    const before = sent.length;
    await trialRow.getByRole('button', { name: 'Edit Partner trial' }).click();
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('edit-key-name');
    expect(await dialog.getByLabel('Expires').inputValue()).toBe('keep');
    const focusOrder: string[] = [];
    for (let i = 0; i < 9; i++) {
      await page.keyboard.press('Tab');
      focusOrder.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent || ''));
    }
    expect(focusOrder).toEqual([
      'edit-key-expiry',
      ...['dialout', 'calls-read', 'test_calls', 'campaigns', 'calls-control'].map((s) => `edit-key-scopes-${s}`),
      'Cancel',
      'Save changes',
      'edit-key-name',
    ]);
    await page.keyboard.type(' (renamed?)');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Edit Partner trial'); // focus returns
    expect(sent.length).toBe(before);

    // Rename and move the expiry to a date; validated like creation, submitted with Enter.
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Name', exact: true }).inputValue()).toBe('Partner trial');
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('Partner pilot');
    await dialog.getByLabel('Expires').selectOption({ label: 'On a date…' });
    await dialog.getByLabel('Expiry date').fill('2020-01-01');
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).press('Enter');
    expect(await page.locator('#edit-key-expiry-date-error').textContent()).toBe('Must be in the future.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('edit-key-expiry-date');
    expect(await dialog.getByLabel('Expiry date').getAttribute('aria-describedby')).toBe('edit-key-expiry-date-hint edit-key-expiry-date-error');
    expect(sent.length).toBe(before);
    await dialog.getByLabel('Expiry date').fill('2098-06-30');
    expect(await page.locator('#edit-key-expiry-date-error').count()).toBe(0); // cleared once edited
    await shot('api-key-edit');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe('API key “Partner pilot” updated.');
    const pilotRow = keyRow('Partner pilot');
    await pilotRow.getByRole('cell', { name: 'Jun 30, 2098', exact: true }).waitFor();
    expect(await keyRow('Partner trial').count()).toBe(0);
    const { items } = await adminGet<{ items: Array<{ name: string; prefix: string; expires_at: string | null; status: string }> }>('/api/v1/api-keys');
    expect(items.find((k) => k.prefix === trialKey.slice(0, 7))).toMatchObject({ name: 'Partner pilot', expires_at: '2098-06-30T23:59:59.999Z', status: 'active' });

    // A key revoked behind the dialog's back: the backend's 409 is shown, and the row loses its actions.
    const yearEnd = keyRow('Year-end campaign');
    await yearEnd.getByRole('button', { name: 'Edit Year-end campaign' }).click();
    await dialog.waitFor();
    const yearEndKey = (await adminGet<{ items: Array<{ id: string; name: string }> }>('/api/v1/api-keys')).items.find((k) => k.name === 'Year-end campaign')!;
    expect(await adminPatch(`/api/v1/api-keys/${yearEndKey.id}`, { is_active: false })).toBe(200);
    await dialog.getByLabel('Expires').selectOption({ label: '7 days' });
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe('The API key is inactive or expired; revocation is final.');
    await yearEnd.locator('[data-status="inactive"]').waitFor();
    await shot('api-key-edit-revoked');
    expect(await yearEnd.getByRole('button').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await shot('api-keys-edited');
  });

  it('shows the call, its status timeline and recording key', async () => {
    await page.goto(`${CONSOLE}/calls/${callId}`);
    await page.getByRole('heading', { name: `Call ${callId}` }).waitFor();
    // The real worker claims the job and dials through LiveKit; the test phone answers 404 Not Found.
    const timeline = page.locator('ol.timeline');
    await timeline.locator('[data-status="failed"]').waitFor({ timeout: 30_000 });
    expect(await timeline.locator('vp-status-badge').allTextContents()).toEqual(['Queued', 'Dialing', 'Failed']);
    expect(await page.getByTestId('end-reason').textContent()).toBe('invalid_number');
    expect(await page.getByTestId('answered-by').textContent()).toBe('—'); // it never got answered: nothing listened
    expect(await page.getByTestId('amd-ms').count()).toBe(0);
    expect(await page.getByTestId('sip-status').textContent()).toBe('404');
    expect(await page.getByTestId('recording-key').textContent()).toBe('No recording');
    expect(await page.getByTestId('from-number').textContent()).toBe('+15005550199');
    expect(await page.getByRole('region', { name: 'Timeline' }).getByText('Nothing was said on this call.').count()).toBe(1);
    const call = await adminGet<{ status: string; status_times: Record<string, string> }>(`/api/v1/calls/${callId}`);
    expect(call.status).toBe('failed');
    expect(Object.keys(call.status_times).sort()).toEqual(['dialing', 'failed', 'queued']);
    await shot('call-detail');

    await page.getByRole('link', { name: '← All calls' }).click();
    const row = page.locator(`tr[data-call-id="${callId}"]`);
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([callId, 'Renewal reminder', 'Outbound', TO_NUMBER, 'Failed', '—', expect.any(String)]);
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Call', 'Bot', 'Direction', 'To', 'Status', 'Answered by', 'Created']);
    await shot('calls');

    await page.getByLabel('Status').selectOption({ label: 'Failed' });
    await page.waitForURL(`${CONSOLE}/calls?status=failed`);
    await row.waitFor();
    await page.getByLabel('Bot').selectOption({ label: 'Renewal reminder' });
    await page.waitForURL(`${CONSOLE}/calls?status=failed&bot_id=${botId}`);
    await row.waitFor();
    await page.getByLabel('Status').selectOption({ label: 'Completed' });
    await page.getByText('No calls match these filters.').waitFor();

    // Back and forward walk the filter history.
    await page.goBack();
    await page.waitForURL(`${CONSOLE}/calls?status=failed&bot_id=${botId}`);
    await row.waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
    await page.goForward();
    await page.getByText('No calls match these filters.').waitFor();
  });

  it('refreshes the calls list by itself, keeping the filters and the focus', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calls' }).click();
    await page.waitForURL(`${CONSOLE}/calls`);
    await page.getByLabel('Bot').selectOption({ label: 'Renewal reminder' });
    await page.waitForURL(`${CONSOLE}/calls?bot_id=${botId}`);
    await page.locator(`tr[data-call-id="${callId}"]`).waitFor();
    const updated = page.getByTestId('calls-updated');
    await updated.locator('time').waitFor();
    const firstUpdate = await updated.locator('time').getAttribute('datetime');
    await page.getByLabel('Status').focus(); // a keyboard user sits on a filter

    // A real dial-out with the renamed key (its value never changed), and no press on Refresh.
    const r = await dialout(trialKey, botId);
    expect(r.status).toBe(201);
    const newId = r.body.call_id as string;
    const newRow = page.locator(`tr[data-call-id="${newId}"]`);
    await newRow.waitFor({ timeout: 30_000 });
    // Its status moves on in place too: the worker dials it and the phone answers 404.
    await newRow.locator('[data-status="failed"]').waitFor({ timeout: 30_000 });

    expect(await page.locator('tbody tr').evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-call-id')))).toEqual([newId, callId]);
    expect(page.url()).toBe(`${CONSOLE}/calls?bot_id=${botId}`);
    expect(await page.getByLabel('Bot').inputValue()).toBe(botId);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter-status');
    expect(new Date((await updated.locator('time').getAttribute('datetime'))!).getTime()).toBeGreaterThan(new Date(firstUpdate!).getTime());
    expect(await updated.textContent()).toMatch(/^Updated \d\d:\d\d:\d\d [AP]M$/);
    await shot('calls-auto-refresh');

    // The manual Refresh stays, and refreshes in place.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await newRow.waitFor();
  });

  it('shows a dashboard of keys, bots and the latest calls', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await page.locator(`a[href="/calls/${callId}"]`).waitFor();
    // Partner pilot (Year-end campaign was revoked), and any other file's live keys: the API says how many.
    const keys = await adminGet<{ items: Array<{ status: string }> }>('/api/v1/api-keys');
    expect(await page.getByTestId('active-keys').textContent()).toBe(String(keys.items.filter((k) => k.status === 'active').length));
    // Other e2e files share the backend and may have made bots before this one ran: the API says how many are active.
    const bots = await adminGet<{ items: Array<{ active: boolean; name: string }> }>('/api/v1/bots');
    expect(bots.items.some((b) => b.name === 'Renewal reminder' && b.active)).toBe(true);
    expect(await page.getByTestId('active-bots').textContent()).toBe(String(bots.items.filter((b) => b.active).length));
    await shot('dashboard-overview');
  });

  it('shows API errors from the error body and unknown pages', async () => {
    await page.goto(`${CONSOLE}/bots/000000000000000000000000`);
    expect(await page.getByRole('alert').textContent()).toBe('Bot not found.');
    await page.goto(`${CONSOLE}/nowhere`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  });

  // Last but one: its bot and call would change the counts the dashboard and list tests above expect.
  it('shows what was said on a call, its caller ID and SIP status', async () => {
    // A call as a worker records it: created, answered, ended with its transcript.
    const worker = { Authorization: `Bearer ${process.env.VP_WORKER_TOKEN!}`, 'Content-Type': 'application/json' };
    const bot = await fetch(`${BACKEND}/api/v1/bots`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await adminToken()}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Transcript demo' }),
    });
    expect(bot.status).toBe(201);
    const botId = ((await bot.json()) as { id: string }).id;
    const created = await fetch(`${BACKEND}/api/v1/calls`, { method: 'POST', headers: worker, body: JSON.stringify({ bot_id: botId, direction: 'websocket' }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { call_id: string }).call_id;
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const post = (body: object) => fetch(`${BACKEND}/api/v1/calls/${id}/events`, { method: 'POST', headers: worker, body: JSON.stringify(body) });
    expect((await post({ status: 'in_progress', at: at(1) })).status).toBe(200);
    const transcript = [
      { role: 'bot', text: 'Hello, this is your reminder.', at: at(1) },
      { role: 'user', text: 'how much', at: at(3) },
      { role: 'bot', text: 'The open amount is forty dollars.', at: at(4) },
    ];
    expect((await post({ status: 'completed', end_reason: 'bot_hangup', at: at(6), transcript })).status).toBe(200);
    await page.goto(`${CONSOLE}/calls/${id}`);
    const list = page.getByTestId('call-events');
    await list.locator('li[data-kind="turn"]').first().waitFor();
    expect(await list.locator('li[data-kind="turn"] .who').allTextContents()).toEqual(['Bot', 'Caller', 'Bot']);
    expect(await list.locator('li[data-kind="turn"] p').allTextContents()).toEqual(transcript.map((t) => t.text));
    expect(await page.getByTestId('from-number').textContent()).toBe('—');
    expect(await page.getByTestId('sip-status').count()).toBe(0);
    expect(await page.getByTestId('answered-by').textContent()).toBe('—');
    await shot('call-transcript');

    // A call a machine answered, as a worker reports it: the verdict and its time on the call's facts, the
    // end reason in words, the verdict in the list.
    const machineCall = await fetch(`${BACKEND}/api/v1/calls`, { method: 'POST', headers: worker, body: JSON.stringify({ bot_id: botId, direction: 'websocket' }) });
    const machineId = ((await machineCall.json()) as { call_id: string }).call_id;
    const report = (body: object) => fetch(`${BACKEND}/api/v1/calls/${machineId}/events`, { method: 'POST', headers: worker, body: JSON.stringify(body) });
    expect((await report({ status: 'in_progress', at: at(1), answered_by: 'machine', amd_ms: 2437 })).status).toBe(200);
    expect((await report({ status: 'completed', end_reason: 'voicemail_left', at: at(20) })).status).toBe(200);
    await page.goto(`${CONSOLE}/calls/${machineId}`);
    await page.getByTestId('answered-by').getByText('Machine', { exact: true }).waitFor();
    expect(await page.getByTestId('amd-ms').textContent()).toBe('2.4 s');
    expect(await page.getByTestId('end-reason').textContent()).toBe('Message left on voicemail');
    expect(await page.getByTestId('end-reason').getAttribute('data-end-reason')).toBe('voicemail_left');
    await shot('call-voicemail');
    await page.goto(`${CONSOLE}/calls?bot_id=${botId}`);
    const machineRow = page.locator(`tr[data-call-id="${machineId}"]`);
    await machineRow.waitFor();
    expect(await machineRow.getByTestId('answered-by').textContent()).toBe('Machine');
    expect(await page.locator(`tr[data-call-id="${id}"]`).getByTestId('answered-by').textContent()).toBe('—');
  });

  it('sends an expired or rejected session back to sign-in with a message', async () => {
    const me = await adminGet<{ id: string; email: string }>('/api/v1/auth/me');
    const iat = Math.floor(Date.now() / 1000) - 7200;
    const expired = jwtHs256({ sub: me.id, email: me.email, role: 'admin', iat, exp: iat + 60 }, process.env.VP_JWT_SECRET!);
    await page.evaluate((t) => sessionStorage.setItem('vp.token', t), expired);
    await page.goto(`${CONSOLE}/calls`);
    await page.waitForURL(`${CONSOLE}/login?next=%2Fcalls`);
    expect(await page.getByRole('status').textContent()).toBe('Your session has expired. Please sign in again.');
    expect(await page.evaluate(() => sessionStorage.getItem('vp.token'))).toBeNull();

    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${CONSOLE}/calls`);
    // The console reads who signed in (their role decides the navigation) before it shows the page.
    await page.getByRole('heading', { name: 'Calls', level: 1 }).waitFor();

    await page.evaluate(() => sessionStorage.setItem('vp.token', 'not-a-jwt'));
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${CONSOLE}/login?next=%2Fapi-keys`);
    expect(await page.getByRole('status').textContent()).toBe('Your session is no longer valid. Please sign in again.');
  });
});
