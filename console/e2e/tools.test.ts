// The bot editor's tools and the call page's actions, in headless Chromium against the real backend:
// a bot with a tool of each type created through the editor (the exact body it sends checked), HTTP tool
// header values that never come back to the page, the tool secret shown once, and a call whose record
// holds actions and a transfer shown in time order with its transcript and statuses.
// The worker's view of the bot (GET /api/v1/config, worker token) proves what was stored: it is the one
// answer that holds header values and the tool secret.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, BACKEND, CONSOLE, launchPage, recordResponseBodies, SHOTS, signInAt } from './support.js';

const HEADER_VALUE = 'Bearer tool-e2e-3f9c1a7b2d64';
const NEW_HEADER_VALUE = 'Bearer tool-e2e-rotated-8e21';
const TENANT = 'acme-tenant-51d0';
/** Loopback: the suite's backend runs with WEBHOOK_ALLOW_PRIVATE (no request is made at save). */
const TOOL_URL = 'http://127.0.0.1:9/promises';
const WORKER = { Authorization: `Bearer ${process.env.VP_WORKER_TOKEN!}`, 'Content-Type': 'application/json' };
const PARAMS = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] };

let browser: Browser;
let page: Page;
const bodies: string[] = [];
const pageErrors: string[] = [];
let botId = '';

/** The bot as the worker gets it: header values opened, the tool secret in the clear. */
async function workerConfig(): Promise<{ bot: { tools: Array<Record<string, unknown>>; tool_secret: string | null } }> {
  const r = await fetch(`${BACKEND}/api/v1/config?bot_id=${botId}`, { headers: WORKER });
  expect(r.status).toBe(200);
  return (await r.json()) as { bot: { tools: Array<Record<string, unknown>>; tool_secret: string | null } };
}

/** Everything the page holds: its markup, its text, every input's current value, its storage. */
async function everythingOnPage(): Promise<string> {
  return page.evaluate(
    () =>
      document.documentElement.outerHTML +
      document.body.innerText +
      Array.from(document.querySelectorAll('input, textarea')).map((el) => (el as HTMLInputElement).value).join('\n') +
      JSON.stringify({ ...sessionStorage }) +
      JSON.stringify({ ...localStorage }),
  );
}

/** The JSON body of the next request `method path` the page sends, once `act` has run. */
async function sentBody(method: string, urlPath: string, act: () => Promise<void>): Promise<Record<string, any>> {
  const req = page.waitForRequest((r) => r.method() === method && new URL(r.url()).pathname === urlPath);
  await act();
  return JSON.parse((await req).postData() ?? 'null') as Record<string, any>;
}

async function saveChanges(): Promise<Record<string, any>> {
  const body = await sentBody('PATCH', `/api/v1/bots/${botId}`, () => page.getByRole('button', { name: 'Save changes' }).click());
  await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
  return body;
}

const tool = (n: number) => page.getByRole('group', { name: `Tool ${n}`, exact: true });

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: CONSOLE });
  recordResponseBodies(page, bodies);
  // A script error (a CSP refusal among them) would otherwise show only as a button that does nothing.
  page.on('pageerror', (e) => pageErrors.push(e.message));
});

afterAll(async () => {
  await browser?.close();
});

describe('bot tools in the console', () => {
  it('creates a bot with a tool of each type through the editor, sending exactly the body', async () => {
    await signInAt(page, '/bots/new');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Promise taker');

    await page.getByRole('button', { name: 'Add tool' }).click();
    const http = tool(1);
    expect(await http.getByLabel('Tool type').inputValue()).toBe('http'); // a new tool calls a URL
    await http.getByRole('textbox', { name: 'Tool name' }).fill('record_promise');
    await http.getByRole('textbox', { name: 'Tool description' }).fill('Record a promise to pay.');
    // Before sending: the URL an http tool needs, and a header without a name, named on their inputs.
    await http.getByRole('button', { name: 'Add header' }).click();
    await http.getByRole('group', { name: 'Header 1' }).getByLabel('Header value').fill(HEADER_VALUE);
    const before = bodies.length;
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-tools-0-url-error').textContent()).toBe('This field is required.');
    expect(await page.locator('#bot-tools-0-headers-0-name-error').textContent()).toBe('This field is required.');
    expect(bodies.length).toBe(before);

    await http.getByRole('textbox', { name: 'URL', exact: true }).fill(TOOL_URL);
    await http.getByLabel('Method').selectOption('POST');
    await http.getByRole('textbox', { name: 'Timeout (ms)' }).fill('3000');
    await http.getByRole('textbox', { name: 'Say while waiting' }).fill('One moment, please.');
    await http.getByRole('textbox', { name: 'Parameters (JSON Schema)' }).fill(JSON.stringify(PARAMS));
    await http.getByRole('group', { name: 'Header 1' }).getByRole('textbox', { name: 'Header name' }).fill('Authorization');
    await http.getByRole('button', { name: 'Add header' }).click();
    await http.getByRole('group', { name: 'Header 2' }).getByRole('textbox', { name: 'Header name' }).fill('X-Tenant');
    await http.getByRole('group', { name: 'Header 2' }).getByLabel('Header value').fill(TENANT);

    await page.getByRole('button', { name: 'Add tool' }).click();
    const transfer = tool(2);
    await transfer.getByRole('textbox', { name: 'Tool name' }).fill('to_agent');
    await transfer.getByLabel('Tool type').selectOption({ label: 'Transfer to a person' });
    expect(await transfer.getByRole('textbox', { name: 'Whisper' }).count()).toBe(0); // warm mode only
    const dest = transfer.getByRole('group', { name: 'Destination 1' });
    await dest.getByRole('textbox', { name: 'Destination name' }).fill('billing');
    await dest.getByRole('textbox', { name: 'Number or SIP URI' }).fill('+15005553000');
    await dest.getByRole('textbox', { name: 'When to use it' }).fill('Questions about money.');
    await transfer.getByRole('button', { name: 'Add destination' }).click();
    const dest2 = transfer.getByRole('group', { name: 'Destination 2' });
    await dest2.getByRole('textbox', { name: 'Destination name' }).fill('desk');
    await dest2.getByRole('textbox', { name: 'Number or SIP URI' }).fill('sip:desk@pbx.example.com');
    await transfer.getByLabel('Mode').selectOption('warm');
    await transfer.getByRole('textbox', { name: 'Announcement' }).fill('Let me connect you.');
    await transfer.getByRole('textbox', { name: 'Whisper' }).fill('A caller about {{summary}}.');
    await transfer.getByRole('textbox', { name: 'On failure' }).fill('Nobody is free right now.');

    await page.getByRole('button', { name: 'Add tool' }).click();
    await tool(3).getByRole('textbox', { name: 'Tool name' }).fill('hang_up');
    await tool(3).getByLabel('Tool type').selectOption({ label: 'End the call' });
    await page.getByRole('button', { name: 'Add tool' }).click();
    await tool(4).getByRole('textbox', { name: 'Tool name' }).fill('press_keys');
    await tool(4).getByLabel('Tool type').selectOption({ label: 'Press keys (DTMF)' });
    // A warm transfer dials numbers only (through the call's trunk): its SIP URI is refused before sending.
    const beforeWarm = bodies.length;
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-tools-1-destinations-1-target-error').textContent()).toBe(
      'A warm transfer dials a number through the call’s trunk: enter a number (E.164), or pick cold mode for a SIP URI.',
    );
    expect(bodies.length).toBe(beforeWarm);
    // A number that cannot exist: libphonenumber's reason (the backend's check), nothing sent.
    await dest2.getByRole('textbox', { name: 'Number or SIP URI' }).fill('+1 555 0100 000 000');
    await page.getByRole('button', { name: 'Create bot' }).click();
    expect(await page.locator('#bot-tools-1-destinations-1-target-error').textContent()).toBe('Too long for a phone number.');
    expect(bodies.length).toBe(beforeWarm);
    // International format with punctuation: sent as typed, stored and shown as E.164.
    await dest2.getByRole('textbox', { name: 'Number or SIP URI' }).fill('+1 (500) 555-3001');
    await page.locator('#bot-tools').screenshot({ path: path.join(SHOTS, 'bot-tool-types.png') });

    const body = await sentBody('POST', '/api/v1/bots', () => page.getByRole('button', { name: 'Create bot' }).click());
    const tools = [
      {
        name: 'record_promise',
        description: 'Record a promise to pay.',
        type: 'http',
        parameters: PARAMS,
        url: TOOL_URL,
        method: 'POST',
        timeout_ms: 3000,
        say_while_waiting: 'One moment, please.',
        headers: { Authorization: HEADER_VALUE, 'X-Tenant': TENANT },
      },
      {
        name: 'to_agent',
        description: '',
        type: 'transfer_call',
        destinations: [
          { name: 'billing', number: '+15005553000', description: 'Questions about money.' },
          { name: 'desk', number: '+1 (500) 555-3001' },
        ],
        mode: 'warm',
        announcement: 'Let me connect you.',
        whisper: 'A caller about {{summary}}.',
        on_failure: 'Nobody is free right now.',
      },
      { name: 'hang_up', description: '', type: 'end_call' },
      { name: 'press_keys', description: '', type: 'send_dtmf' },
    ];
    expect(body).toEqual({
      name: 'Promise taker',
      active: true,
      require_passing_tests: false,
      language: 'en-US',
      prompt: '',
      greeting: '',
      variables: [],
      voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 },
      stt: { provider: 'pocketsphinx', model: 'en-us', language: 'en-US' },
      llm: { provider: 'scripted', model: 'policy', temperature: 0 },
      max_call_seconds: 300,
      turn_detection: { mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 },
      interruption: { ignore_backchannels: true, min_words: 2 },
      dtmf: { inter_digit_timeout_ms: 1500 },
      answering_machine: { detect: false, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: 30 },
      audio: { noise_suppression: false },
      analysis: { summary: false, fields: [], success: null },
      redaction: { entities: [], mode: 'mask', redact_llm: false },
      recording: { enabled: true, redact_keypad_tones: false },
      knowledge_base_ids: [],
      mcp_servers: [],
      tools,
      policy: null,
    });

    await page.getByRole('heading', { name: 'Edit bot: Promise taker' }).waitFor();
    botId = new URL(page.url()).pathname.split('/').pop()!;
    // The API answers header names only; the worker gets the values.
    const stored = (await admin('GET', `/api/v1/bots/${botId}`)).body as { tools: Array<Record<string, unknown>>; has_tool_secret: boolean };
    expect(stored.tools[0]).toMatchObject({ name: 'record_promise', header_names: ['Authorization', 'X-Tenant'] });
    expect(stored.tools[0]).not.toHaveProperty('headers');
    expect(stored.has_tool_secret).toBe(false);
    const e164 = tools.map((t) => (t.destinations ? { ...t, destinations: t.destinations.map((d) => ({ ...d, number: d.number.replace(/[^+0-9]/g, '') })) } : t));
    expect((await workerConfig()).bot.tools).toEqual(e164);

    // The saved page shows the names, empty values and the hint; the values are nowhere.
    const saved = tool(1);
    for (const [j, name] of [['1', 'Authorization'], ['2', 'X-Tenant']] as const) {
      const row = saved.getByRole('group', { name: `Header ${j}` });
      expect(await row.getByRole('textbox', { name: 'Header name' }).inputValue()).toBe(name);
      expect(await row.getByLabel('Header value').inputValue()).toBe('');
      expect(await row.getByText('Leave empty to keep the stored value.').count()).toBe(1);
    }
    expect(await tool(2).getByRole('group', { name: 'Destination 2' }).getByRole('textbox', { name: 'Number or SIP URI' }).inputValue()).toBe('+15005553001');
    const onPage = await everythingOnPage();
    expect(onPage).not.toContain(HEADER_VALUE);
    expect(onPage).not.toContain(TENANT);
    const created = bodies.findIndex((b) => b.includes('"Promise taker"'));
    expect(created).toBeGreaterThanOrEqual(0);
    for (const b of bodies.slice(created)) {
      expect(b).not.toContain(HEADER_VALUE);
      expect(b).not.toContain(TENANT);
    }
    await page.locator('#bot-tools').screenshot({ path: path.join(SHOTS, 'bot-tool-headers-saved.png') });
  });

  it('keeps header values on an edit that does not touch them, shows the backend’s 422 on the tool’s input, and replaces them all once one changes', async () => {
    await tool(1).getByRole('textbox', { name: 'Tool description' }).fill('Record a promise to pay, with the amount.');
    const edit = await saveChanges();
    expect(edit.tools[0]).not.toHaveProperty('headers');
    expect(edit.tools[0].description).toBe('Record a promise to pay, with the amount.');
    expect((await workerConfig()).bot.tools[0]).toMatchObject({ headers: { Authorization: HEADER_VALUE, 'X-Tenant': TENANT } });

    // Not checked before sending (the schema takes any text): the backend's detail lands on the URL input.
    const url = tool(1).getByRole('textbox', { name: 'URL', exact: true });
    await url.fill('ftp://files.example.com/promises');
    const refused = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect((await refused).status()).toBe(422);
    await page.locator('#bot-tools-0-url-error').getByText('Must be an http:// or https:// URL.', { exact: true }).waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    await url.fill(TOOL_URL);

    // One value changed: every header is sent, so the one left empty must be typed again.
    const row1 = tool(1).getByRole('group', { name: 'Header 1' });
    const row2 = tool(1).getByRole('group', { name: 'Header 2' });
    await row1.getByLabel('Header value').fill(NEW_HEADER_VALUE);
    const before = bodies.length;
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-tools-0-headers-1-value-error').textContent()).toBe('Enter the value again: changing this tool’s headers (or its name) replaces all of them.');
    expect(bodies.length).toBe(before);
    await row2.getByLabel('Header value').fill(TENANT);
    const replaced = await saveChanges();
    expect(replaced.tools[0].headers).toEqual({ Authorization: NEW_HEADER_VALUE, 'X-Tenant': TENANT });
    expect((await workerConfig()).bot.tools[0]).toMatchObject({ headers: { Authorization: NEW_HEADER_VALUE, 'X-Tenant': TENANT } });
    expect(await everythingOnPage()).not.toContain(NEW_HEADER_VALUE);

    // Removing every row sends {}: the stored values go.
    await tool(1).getByRole('button', { name: 'Remove header 2 of tool 1' }).click();
    await tool(1).getByRole('button', { name: 'Remove header 1 of tool 1' }).click();
    const cleared = await saveChanges();
    expect(cleared.tools[0].headers).toEqual({});
    expect((await workerConfig()).bot.tools[0]).not.toHaveProperty('headers');
    expect(await tool(1).getByRole('group', { name: /^Header \d/ }).count()).toBe(0);
  });

  it('creates the tool secret and rotates it after a confirmation, each shown once', async () => {
    expect(await page.getByTestId('tool-secret').textContent()).toContain('Tool secret: none.');
    await page.getByRole('button', { name: 'Create secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy the tool secret' });
    await dialog.waitFor();
    expect(await dialog.getByRole('alert').textContent()).toContain('This is the only time the secret is shown: you will not see it again.');
    const first = await dialog.getByLabel('Tool secret of “Promise taker”').inputValue();
    expect(first).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Copy');
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first);
    expect((await workerConfig()).bot.tool_secret).toBe(first);
    await page.screenshot({ path: path.join(SHOTS, 'bot-tool-secret.png'), fullPage: true });
    await dialog.getByRole('button', { name: 'I have copied the secret' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe('Tool secret saved. Its value is no longer shown.');
    expect(await everythingOnPage()).not.toContain(first);
    expect(await page.getByTestId('tool-secret').textContent()).toContain('Tool secret: set.');

    // Rotating asks first: Cancel sends nothing and keeps the secret.
    const confirm = page.getByRole('dialog', { name: 'Rotate the tool secret?' });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await confirm.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    const before = bodies.length;
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(bodies.length).toBe(before);
    expect((await workerConfig()).bot.tool_secret).toBe(first);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await sentBody('POST', `/api/v1/bots/${botId}/tool-secret`, () => confirm.getByRole('button', { name: 'Rotate secret' }).click());
    expect(rotated).toBeNull(); // no body: the backend makes the secret
    await dialog.waitFor();
    const second = await dialog.getByLabel('Tool secret of “Promise taker”').inputValue();
    expect(second).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    expect(second).not.toBe(first);
    expect((await workerConfig()).bot.tool_secret).toBe(second);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await everythingOnPage()).not.toContain(second);

    // After a reload nothing the page receives holds either secret.
    const fromReload = bodies.length;
    await page.reload();
    await page.getByRole('button', { name: 'Rotate secret' }).waitFor();
    const html = await everythingOnPage();
    for (const s of [first, second]) {
      expect(html).not.toContain(s);
      for (const b of bodies.slice(fromReload)) expect(b).not.toContain(s);
    }
    expect((await admin('GET', `/api/v1/bots/${botId}`)).body.has_tool_secret).toBe(true);
  });

  it('shows a call’s actions and transfer in its timeline, in time order with the transcript and statuses', async () => {
    // A call as a worker records it: created, answered, ended with its transcript, actions and transfer.
    const created = await fetch(`${BACKEND}/api/v1/calls`, { method: 'POST', headers: WORKER, body: JSON.stringify({ bot_id: botId, direction: 'websocket' }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { call_id: string }).call_id;
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const post = (body: object) => fetch(`${BACKEND}/api/v1/calls/${id}/events`, { method: 'POST', headers: WORKER, body: JSON.stringify(body) });
    expect((await post({ status: 'in_progress', at: at(1) })).status).toBe(200);
    const transcript = [
      { role: 'bot', text: 'Hello, this is your reminder.', at: at(1) },
      { role: 'user', text: 'I will pay forty dollars', at: at(3) },
      { role: 'bot', text: 'Noted, your reference is P-17.', at: at(5) },
      { role: 'user', text: 'let me talk to someone', at: at(6) },
      { role: 'bot', text: 'Nobody is free right now. Goodbye.', at: at(9) },
    ];
    const actions = [
      { type: 'tool', name: 'record_promise', at: at(4), duration_ms: 412, status: 'ok', arguments: { amount: 40 }, result: '{"ref":"P-17"}' },
      { type: 'dtmf_in', name: 'keypad', at: at(5.5), duration_ms: 0, status: 'ok', arguments: { digits: '1#' } },
      { type: 'transfer', name: 'to_agent', at: at(7), duration_ms: 1800, status: 'failed', arguments: { destination: 'billing' }, error: 'busy' },
      { type: 'dtmf_out', name: 'press_keys', at: at(8), duration_ms: 500, status: 'ok', arguments: { digits: '2' } },
      { type: 'tool', name: 'record_promise', at: at(8.5), duration_ms: 5000, status: 'failed', arguments: { amount: 40 }, error: 'timeout' },
    ];
    const transfer = { mode: 'warm', target: '+15005553000', status: 'failed', sip_status_code: 486, at: at(7.5) };
    expect((await post({ status: 'completed', end_reason: 'bot_hangup', at: at(10), transcript, actions, transfer })).status).toBe(200);
    const call = (await admin('GET', `/api/v1/calls/${id}`)).body as { actions: unknown[]; transfer: unknown; status_times: Record<string, string> };
    expect(call.actions).toMatchObject(actions);
    expect(call.transfer).toEqual(transfer);
    // The statuses a worker-created call passed before it was answered (its creation), each before the rest.
    const early = Object.entries(call.status_times)
      .filter(([s]) => s !== 'in_progress' && s !== 'completed')
      .sort(([, a], [, b]) => a.localeCompare(b));
    for (const [, t] of early) expect(new Date(t).getTime()).toBeLessThanOrEqual(t0 + 1000);
    const label = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).replace(/_/g, ' ');

    await page.goto(`${CONSOLE}/calls/${id}`);
    const list = page.getByRole('region', { name: 'Timeline' }).getByTestId('call-events');
    await list.locator('li').first().waitFor();
    const rows = await list.locator(':scope > li').evaluateAll((lis) =>
      lis.map((li) => [
        li.getAttribute('data-kind'),
        li.querySelector('.who')?.textContent?.trim(),
        li.querySelector('time')?.getAttribute('datetime'),
        (li.querySelector('.what') ?? li.querySelector('p'))?.textContent?.replace(/\s+/g, ' ').trim(),
      ]),
    );
    expect(rows).toEqual([
      ...early.map(([s, t]) => ['status', 'Status', t, label(s)]),
      ['status', 'Status', at(1), 'In progress'],
      ['turn', 'Bot', at(1), 'Hello, this is your reminder.'],
      ['turn', 'Caller', at(3), 'I will pay forty dollars'],
      ['action', 'Tool', at(4), 'record_promise OK 412 ms'],
      ['turn', 'Bot', at(5), 'Noted, your reference is P-17.'],
      ['action', 'Keys pressed', at(5.5), 'keypad OK 0 ms'],
      ['turn', 'Caller', at(6), 'let me talk to someone'],
      ['action', 'Transfer', at(7), 'to_agent Failed 1800 ms'],
      ['transfer', 'Transfer (warm)', at(7.5), '+15005553000 Failed SIP 486'],
      ['action', 'Keys sent', at(8), 'press_keys OK 500 ms'],
      ['action', 'Tool', at(8.5), 'record_promise Failed 5000 ms'],
      ['turn', 'Bot', at(9), 'Nobody is free right now. Goodbye.'],
      ['status', 'Status', at(10), 'Completed'],
    ]);
    // Arguments and the result or error, on the action's row.
    const promise = list.locator('li[data-kind="action"]').first();
    expect(await promise.locator('.detail').allTextContents()).toEqual(['Arguments {"amount":40}', 'Result {"ref":"P-17"}']);
    expect(await list.locator('li[data-kind="action"]').last().locator('.detail').allTextContents()).toEqual(['Arguments {"amount":40}', 'Error timeout']);
    expect(await page.getByTestId('end-reason').textContent()).toBe('bot_hangup');
    // A call reported without turns (as every call before they were recorded) has no Turns panel.
    expect(await page.getByTestId('call-turns').count()).toBe(0);
    await page.screenshot({ path: path.join(SHOTS, 'call-actions.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it('draws each turn as a waterfall of its stages beside its words, all turns on one scale', async () => {
    const created = await fetch(`${BACKEND}/api/v1/calls`, { method: 'POST', headers: WORKER, body: JSON.stringify({ bot_id: botId, direction: 'websocket' }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { call_id: string }).call_id;
    const t0 = Date.now();
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const post = (body: object) => fetch(`${BACKEND}/api/v1/calls/${id}/events`, { method: 'POST', headers: WORKER, body: JSON.stringify(body) });
    expect((await post({ status: 'in_progress', at: at(1000) })).status).toBe(200);
    const base = { tool_ms: 0, preemptive: false, interrupted: false };
    const turns = [
      // Waited the end-of-turn silence, then words, model and voice: 1000 ms, the slowest (100 %).
      { ...base, index: 1, user_text: 'how much', user_end_at: at(3000), decided_at: at(3700), stt_ms: 50, llm_first_token_ms: 100, tts_first_audio_ms: 140, latency_ms: 1000 },
      // A reply prepared during the pause: ended at the pause, played at once, then cut short.
      { ...base, index: 2, user_text: 'when is it due', user_end_at: at(6000), decided_at: at(6250), stt_ms: 0, llm_first_token_ms: 0, tts_first_audio_ms: 0, latency_ms: 260, preemptive: true, interrupted: true },
      // A tool before the first sentence.
      { ...base, index: 3, user_text: 'i will pay forty dollars', user_end_at: at(9000), decided_at: at(9300), stt_ms: 20, llm_first_token_ms: 80, tool_ms: 400, tts_first_audio_ms: 100, latency_ms: 900 },
    ];
    expect((await post({ status: 'completed', end_reason: 'bot_hangup', at: at(12_000), turn_latencies_ms: turns.map((t) => t.latency_ms), turns })).status).toBe(200);
    expect((await admin('GET', `/api/v1/calls/${id}`)).body.turns).toEqual(turns);

    await page.goto(`${CONSOLE}/calls/${id}`);
    const panel = page.getByRole('region', { name: 'Turns' });
    const rows = panel.getByTestId('turn');
    await rows.first().waitFor();
    expect(
      await rows.evaluateAll((lis) =>
        lis.map((li) => [
          li.querySelector('.turn-index')?.textContent,
          li.querySelector('.turn-words')?.textContent,
          li.querySelector('.turn-latency')?.textContent,
          Array.from(li.querySelectorAll('.badge')).map((b) => b.textContent),
          Array.from(li.querySelectorAll<HTMLElement>('.seg')).map((s) => [s.dataset.segment, s.style.left, s.style.width]),
          li.querySelector('.waterfall')?.getAttribute('aria-label'),
        ]),
      ),
    ).toEqual([
      ['1', 'how much', '1000 ms', [], [['wait', '0%', '70%'], ['words', '70%', '5%'], ['model', '75%', '10%'], ['voice', '85%', '14%'], ['other', '99%', '1%']], 'End of turn 700 ms, Words 50 ms, Model 100 ms, Voice 140 ms, Other 10 ms; 1000 ms in all'],
      ['2', 'when is it due', '260 ms', ['prepared', 'interrupted'], [['wait', '0%', '25%'], ['other', '25%', '1%']], 'End of turn 250 ms, Other 10 ms; 260 ms in all'],
      ['3', 'i will pay forty dollars', '900 ms', [], [['wait', '0%', '30%'], ['words', '30%', '2%'], ['model', '32%', '8%'], ['tools', '40%', '40%'], ['voice', '80%', '10%']], 'End of turn 300 ms, Words 20 ms, Model 80 ms, Tools 400 ms, Voice 100 ms; 900 ms in all'],
    ]);
    await panel.screenshot({ path: path.join(SHOTS, 'call-turns.png') });
    expect(pageErrors).toEqual([]);
  });

  it('edits a scripted intent’s action, arguments, error reply and keys: refused before sending as the backend would, kept when reopened', async () => {
    await page.goto(`${CONSOLE}/bots/${botId}`);
    await page.getByRole('heading', { name: 'Edit bot: Promise taker' }).waitFor();
    await page.getByLabel('Use a scripted dialogue policy').check();
    await page.getByRole('button', { name: 'Add intent' }).click();
    const intent = page.getByRole('group', { name: 'Intent 1', exact: true });
    await intent.getByRole('textbox', { name: 'Intent name' }).fill('promise');
    await intent.getByRole('textbox', { name: 'Reply', exact: true }).fill('Noted, your reference is {{result.ref}}.');
    await intent.getByRole('textbox', { name: 'Keys (DTMF)' }).fill('1a');
    await page.getByRole('textbox', { name: 'Fallback reply' }).fill('Pardon?');
    // The action offers the tools a script can run (not hang_up); its arguments and error reply show once one is picked.
    const action = intent.getByLabel('Action');
    expect(await action.locator('option').allTextContents()).toEqual(['No action', 'record_promise (HTTP)', 'to_agent (transfer)', 'press_keys (press keys)']);
    expect(await intent.getByRole('textbox', { name: 'Reply if the tool fails' }).count()).toBe(0);
    await action.selectOption('record_promise');
    await intent.getByRole('button', { name: 'Add argument' }).click();
    const arg1 = intent.getByRole('group', { name: 'Argument 1 of intent 1' });
    await arg1.getByRole('textbox', { name: 'Argument name' }).fill('amount');
    await arg1.getByRole('textbox', { name: 'Argument value' }).fill('{{digits}}');
    await intent.getByRole('button', { name: 'Add argument' }).click();
    await intent.getByRole('group', { name: 'Argument 2 of intent 1' }).getByRole('textbox', { name: 'Argument name' }).fill('order-id');
    await intent.getByRole('textbox', { name: 'Reply if the tool fails' }).fill('Sorry, I could not note that.');

    // Not keys, and an argument name the API has no place for: named on their inputs, nothing sent.
    const before = bodies.length;
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-policy-intents-0-dtmf-error').textContent()).toBe('Keys 0–9, * and # only (1 to 32 of them), e.g. 1 or 42.');
    expect(await page.locator('#bot-policy-intents-0-action-arguments-1-name-error').textContent()).toBe('Letters, digits and _ only (1 to 64 characters), e.g. order_id.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('bot-policy-intents-0-dtmf');
    expect(bodies.length).toBe(before);
    await intent.getByRole('textbox', { name: 'Keys (DTMF)' }).fill('1');
    await intent.getByRole('button', { name: 'Remove argument 2 of intent 1' }).click();
    await page.getByRole('group', { name: 'Intent 1', exact: true }).screenshot({ path: path.join(SHOTS, 'bot-intent-action.png') });
    const policy = {
      intents: [
        {
          name: 'promise',
          examples: [],
          reply: 'Noted, your reference is {{result.ref}}.',
          action: { tool: 'record_promise', arguments: { amount: '{{digits}}' } },
          on_error_reply: 'Sorry, I could not note that.',
          dtmf: '1',
        },
      ],
      fallback: { reply: 'Pardon?' },
    };
    expect((await saveChanges()).policy).toEqual(policy);
    expect((await admin('GET', `/api/v1/bots/${botId}`)).body.policy).toEqual(policy);

    // Reopened: every field as saved.
    await page.reload();
    const reopened = page.getByRole('group', { name: 'Intent 1', exact: true });
    expect(await reopened.getByRole('textbox', { name: 'Keys (DTMF)' }).inputValue()).toBe('1');
    expect(await reopened.getByLabel('Action').inputValue()).toBe('record_promise');
    const arg = reopened.getByRole('group', { name: 'Argument 1 of intent 1' });
    expect([await arg.getByRole('textbox', { name: 'Argument name' }).inputValue(), await arg.getByRole('textbox', { name: 'Argument value' }).inputValue()]).toEqual(['amount', '{{digits}}']);
    expect(await reopened.getByRole('textbox', { name: 'Reply if the tool fails' }).inputValue()).toBe('Sorry, I could not note that.');
    expect(await reopened.getByRole('group', { name: /^Argument \d/ }).count()).toBe(1);

    // A tool that now hangs up cannot be the action: refused on its select before sending.
    await tool(1).getByLabel('Tool type').selectOption({ label: 'End the call' });
    expect(await reopened.getByLabel('Action').locator('option:checked').textContent()).toBe('record_promise (not a tool this intent can run)');
    const beforeRetype = bodies.length;
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-policy-intents-0-action-tool-error').textContent()).toBe(
      'record_promise ends the call: tick “End the call after this reply” instead, or pick another tool.',
    );
    expect(bodies.length).toBe(beforeRetype);
    // Back to HTTP, and no action: the arguments and error reply typed for it are not sent (nor kept).
    await tool(1).getByLabel('Tool type').selectOption({ label: 'Call a URL (HTTP)' });
    await reopened.getByLabel('Action').selectOption({ label: 'No action' });
    expect(await reopened.getByRole('textbox', { name: 'Reply if the tool fails' }).count()).toBe(0);
    await reopened.getByRole('textbox', { name: 'Reply', exact: true }).fill('Noted.');
    const plain = await saveChanges();
    expect(plain.policy.intents).toEqual([{ name: 'promise', examples: [], reply: 'Noted.', dtmf: '1' }]);
    expect(plain.tools[0]).toMatchObject({ name: 'record_promise', type: 'http', url: TOOL_URL });
    expect(pageErrors).toEqual([]);
  });
});
