// The console's Test call in headless Chromium against the real backend, LiveKit and a real worker (all
// started by jest.global-setup.js): Chromium's fake microphone plays a WAV of a phrase of the bot's
// policy (espeak-ng; Chromium loops the file), the page asks POST /livekit/widget for a call, joins the
// room with livekit-client and shows the live transcript: the greeting, the caller's phrase, the bot's
// reply. Hanging up leaves a completed `web` call with a recording. The keypad presses keys into the call
// (LiveKit DTMF packets, which the worker collects into a keypad turn and answers from a `dtmf` intent).
// Also: a dropped connection, the no-capacity message and a denied microphone. Screenshots go to
// test-artifacts/console/.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { binary } from '@voice-platform/tests/infra';
import { CONNECTION_LOST_MESSAGE, MIC_DENIED_MESSAGE, NO_CAPACITY_MESSAGE } from '../src/core/testCall.js';
import { admin, ADMIN, BACKEND, CONSOLE, SHOTS } from './support.js';

const BOT_NAME = 'Test call bot (e2e)';
/** What the fake microphone says: an example phrase of the bot's `amount` intent. */
const PHRASE = 'how much';
/** The reply of the bot's `keys` intent to the keys 1 2 (then #). */
const KEYS_REPLY = 'Keys one and two: 12 received.';

interface Call {
  id: string;
  direction: string;
  status: string;
  end_reason: string | null;
  recording_key: string | null;
  started_at: string | null;
  ended_at: string | null;
  variables: Record<string, string>;
  transcript: Array<{ role: string; text: string; dtmf?: boolean }>;
  actions?: Array<{ type: string; name: string; arguments: unknown }>;
}

let browser: Browser;
let context: BrowserContext;
let page: Page;
let botId = '';
/** Every request the pages sent to the backend (method + path). */
const sent: string[] = [];

/** The phrase as Chromium's fake microphone plays it: 48 kHz mono PCM16, 1.5 s of silence either side. */
function phraseWav(): string {
  const dir = mkdtempSync(path.join(process.env.VP_TEST_DIR ?? tmpdir(), 'testcall-'));
  const spoken = path.join(dir, 'spoken.wav');
  const wav = path.join(dir, 'microphone.wav');
  execFileSync(binary('espeak-ng'), ['-v', 'en-us', '-s', '150', '-w', spoken, PHRASE], { stdio: 'pipe' });
  execFileSync(binary('sox'), [spoken, '-r', '48000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'pad', '1.5', '1.5'], { stdio: 'pipe' });
  return wav;
}

async function signIn(p: Page): Promise<void> {
  await p.goto(`${CONSOLE}/login`);
  await p.getByLabel('Email').fill(ADMIN.email);
  await p.getByLabel('Password').fill(ADMIN.password);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
}

/** Polls `check` until it holds (30 s at most). */
async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function callUntil(id: string, check: (c: Call) => boolean, what: string, timeoutMs = 30_000): Promise<Call> {
  const deadline = Date.now() + timeoutMs;
  let last: Call | null = null;
  while (Date.now() < deadline) {
    const r = await admin('GET', `/api/v1/calls/${id}`);
    expect(r.status).toBe(200);
    last = r.body as Call;
    if (check(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`call ${id}: timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

/** Removes a participant from a LiveKit room (RoomService over Twirp, with a room-admin token). */
async function removeParticipant(room: string, identity: string): Promise<void> {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss: process.env.LIVEKIT_API_KEY, nbf: now - 10, exp: now + 60, video: { roomAdmin: true, room } })}`;
  const token = `${head}.${createHmac('sha256', process.env.LIVEKIT_API_SECRET!).update(head).digest('base64url')}`;
  const r = await fetch(`${process.env.LIVEKIT_URL!.replace(/^ws/, 'http')}/twirp/livekit.RoomService/RemoveParticipant`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ room, identity }),
  });
  expect(r.status).toBe(200);
}

const newContext = () => browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } });

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const bot = await admin('POST', '/api/v1/bots', {
    name: BOT_NAME,
    greeting: 'Hello {{customer_name}}, this is a test call.',
    variables: [
      { name: 'customer_name', required: true, description: 'Who the bot greets' },
      { name: 'amount_due', required: false, description: '' },
    ],
    policy: {
      intents: [
        { name: 'amount', examples: ['how much', 'what amount'], reply: 'The open amount is {{amount_due}} dollars.' },
        { name: 'stop', examples: ['stop calling', 'goodbye'], reply: 'Understood. Goodbye {{customer_name}}.', end_call: true },
        // Selected by the keypad alone.
        { name: 'keys', examples: [], dtmf: '12', reply: 'Keys one and two: {{digits}} received.' },
      ],
      fallback: { reply: 'Sorry, I did not catch that.' },
    },
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 120,
  });
  expect(bot.status).toBe(201);
  botId = bot.body.id as string;

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // A microphone without a person: the permission prompt is accepted and the device plays the WAV.
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${phraseWav()}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  context = await newContext();
  page = await context.newPage();
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  await signIn(page);
});

afterAll(async () => {
  await browser?.close();
  // Inactive from here on: console.test.ts counts the active bots on the dashboard.
  if (botId) expect((await admin('PATCH', `/api/v1/bots/${botId}`, { active: false })).status).toBe(200);
});

describe('test call', () => {
  it('calls the bot from the bot list: the greeting, the caller’s phrase and the bot’s reply, then a hang-up leaves a completed web call', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).click();
    await page.getByRole('link', { name: `Test call ${BOT_NAME}` }).click();
    await page.waitForURL(`${CONSOLE}/bots/${botId}/test-call`);
    await page.getByRole('heading', { name: `Test call: ${BOT_NAME}`, level: 1 }).waitFor();
    // The declared variables, prefilled; the required one is checked before any request.
    expect(await page.getByLabel('customer_name').inputValue()).toBe('Alex');
    expect(await page.getByLabel('amount_due').inputValue()).toBe('42');
    await page.getByLabel('customer_name').fill('');
    const before = sent.length;
    await page.getByRole('button', { name: 'Start test call' }).click();
    expect(await page.locator('#test-call-var-customer_name-error').textContent()).toBe('This field is required.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('test-call-var-customer_name');
    expect(sent.length).toBe(before);
    await page.getByLabel('customer_name').fill('Sam');

    const widget = page.waitForResponse((r) => r.url() === `${BACKEND}/livekit/widget` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Start test call' }).click();
    const created = await widget;
    expect(created.status()).toBe(201);
    expect(JSON.parse(created.request().postData()!)).toEqual({ bot_id: botId, variables: { customer_name: 'Sam', amount_due: '42' } });
    const callId = ((await created.json()) as { call_id: string }).call_id;
    const botSpoke = page.getByText('Bot speaking', { exact: true }).waitFor({ timeout: 45_000 });
    const userSpoke = page.getByText('You are speaking', { exact: true }).waitFor({ timeout: 45_000 });

    // During the call the record opens in another tab (leaving the page would hang up).
    const link = page.getByRole('link', { name: `${callId} (opens in a new tab)`, exact: true });
    await link.waitFor();
    expect([await link.getAttribute('href'), await link.getAttribute('target')]).toEqual([`/calls/${callId}`, '_blank']);

    const transcript = page.getByRole('log', { name: 'Live transcript' });
    const finalLine = (role: 'bot' | 'user', text: string) => transcript.locator(`li.${role}:not(.interim)`).filter({ has: page.getByText(text, { exact: true }) });
    await finalLine('bot', 'Hello Sam, this is a test call.').waitFor({ timeout: 45_000 });
    expect(await page.getByTestId('call-phase').textContent()).toBe('In call');
    await finalLine('user', PHRASE).first().waitFor({ timeout: 45_000 });
    await finalLine('bot', 'The open amount is 42 dollars.').first().waitFor({ timeout: 30_000 });
    await Promise.all([botSpoke, userSpoke]);
    // The bot's voice plays from an <audio> element fed by its LiveKit track.
    expect(await page.locator('#test-call-audio').evaluate((a: HTMLAudioElement) => a.srcObject instanceof MediaStream && a.srcObject.getAudioTracks().length)).toBe(1);
    await page.locator('main').screenshot({ path: path.join(SHOTS, 'test-call.png') });

    await page.getByRole('button', { name: 'Mute microphone' }).click();
    await page.getByText('Microphone muted', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Unmute microphone' }).click();
    await page.getByRole('button', { name: 'Mute microphone' }).waitFor();

    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByTestId('call-end').getByText('You hung up.', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Hang up' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Start another test call' }).waitFor();
    await page.locator('main').screenshot({ path: path.join(SHOTS, 'test-call-ended.png') });

    const call = await callUntil(callId, (c) => c.status !== 'queued' && c.status !== 'in_progress' && c.recording_key !== null, 'the end of the call and its recording');
    expect(call).toMatchObject({ direction: 'web', status: 'completed', end_reason: 'caller_hangup', variables: { customer_name: 'Sam', amount_due: '42' } });
    expect(call.recording_key).toEqual(expect.any(String));
    expect(call.transcript.slice(0, 3).map((t) => [t.role, t.text])).toEqual([
      ['bot', 'Hello Sam, this is a test call.'],
      ['user', PHRASE],
      ['bot', 'The open amount is 42 dollars.'],
    ]);

    // After the call the id links to its record in place.
    await page.getByRole('link', { name: callId, exact: true }).click();
    await page.getByRole('heading', { name: `Call ${callId}` }).waitFor();
    await page.getByTestId('recording-key').getByText(call.recording_key!).waitFor();
    // The recording plays on the call page: fetched with the admin token (GET …/recording), an <audio> on its
    // object URL (media-src blob: in the CSP), which Chromium decodes and plays as the call's WAV.
    const audio = page.getByTestId('recording-audio');
    await audio.waitFor({ timeout: 30_000 });
    expect(sent).toContain(`GET /api/v1/calls/${callId}/recording`);
    expect(await audio.getAttribute('src')).toMatch(/^blob:/);
    expect(await audio.getAttribute('controls')).not.toBeNull();
    await page.waitForFunction((el) => (el as HTMLAudioElement).readyState >= HTMLMediaElement.HAVE_METADATA, await audio.elementHandle(), { timeout: 15_000 });
    const duration = await audio.evaluate((a: HTMLAudioElement) => a.duration);
    const callSeconds = (Date.parse(call.ended_at!) - Date.parse(call.started_at!)) / 1000;
    expect(duration).toBeGreaterThan(callSeconds / 2);
    expect(duration).toBeLessThan(callSeconds + 5);
    await audio.evaluate(async (a: HTMLAudioElement) => {
      a.muted = true;
      await a.play();
    });
    await page.waitForFunction((el) => (el as HTMLAudioElement).currentTime > 0.2, await audio.elementHandle(), { timeout: 15_000 });
    expect(await audio.evaluate((a: HTMLAudioElement) => a.error)).toBeNull();
  });

  it('presses keys on the keypad: the keys show as a keypad turn and the bot answers the intent they select', async () => {
    await page.goto(`${CONSOLE}/bots/${botId}/test-call`);
    // No keypad before a call.
    await page.getByRole('button', { name: 'Start test call' }).waitFor();
    expect(await page.getByRole('group', { name: 'Keypad' }).count()).toBe(0);
    const widget = page.waitForResponse((r) => r.url() === `${BACKEND}/livekit/widget` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Start test call' }).click();
    const callId = ((await (await widget).json()) as { call_id: string }).call_id;
    const transcript = page.getByRole('log', { name: 'Live transcript' });
    await transcript.locator('li.bot:not(.interim)').filter({ hasText: 'Hello Alex, this is a test call.' }).waitFor({ timeout: 45_000 });
    // The fake microphone says its phrase over and over: muted, no late words of it interrupt the keys' answer.
    await page.getByRole('button', { name: 'Mute microphone' }).click();
    await page.getByText('Microphone muted', { exact: true }).waitFor();
    await page.waitForTimeout(3000);

    const keypad = page.getByRole('group', { name: 'Keypad' });
    expect(await keypad.getByRole('button').evaluateAll((keys) => keys.map((k) => [k.textContent, k.getAttribute('aria-label')]))).toEqual(
      ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'].map((k) => [k, `Key ${k === '*' ? 'star' : k === '#' ? 'hash' : k}`]),
    );
    // 1 clicked, 2 typed while the keypad has focus, # clicked: the worker takes the keys up to # as one turn.
    await keypad.getByRole('button', { name: 'Key 1', exact: true }).click();
    await page.keyboard.press('2');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Key 2');
    // Shown until the worker echoes them (# ends the turn at once; without it, a 1.5 s pause would).
    expect(await page.getByTestId('keys-pressed').textContent()).toBe('Pressed: 12');
    await keypad.getByRole('button', { name: 'Key hash' }).click();

    const keysLine = transcript.locator('li.user.dtmf');
    await keysLine.waitFor({ timeout: 15_000 });
    expect(await keysLine.locator('p').textContent()).toBe('⌨ 12');
    expect(await keysLine.getByRole('img').getAttribute('aria-label')).toBe('Keys pressed:');
    // Echoed: the keys shown as pressed are cleared.
    expect((await page.getByTestId('keys-pressed').textContent())?.trim()).toBe('');
    await transcript.locator('li.bot:not(.interim)').filter({ has: page.getByText(KEYS_REPLY, { exact: true }) }).waitFor({ timeout: 30_000 });
    await page.locator('main').screenshot({ path: path.join(SHOTS, 'test-call-keypad.png') });

    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByTestId('call-end').getByText('You hung up.', { exact: true }).waitFor();
    expect(await page.getByRole('group', { name: 'Keypad' }).count()).toBe(0);
    // The record keeps the keypad turn (marked), the answer and the keys as an action.
    const call = await callUntil(callId, (c) => c.status !== 'queued' && c.status !== 'in_progress', 'the end of the call');
    const turn = call.transcript.findIndex((t) => t.dtmf === true);
    expect(call.transcript[turn]).toMatchObject({ role: 'user', text: '12', dtmf: true });
    expect(call.transcript.slice(turn + 1).map((t) => [t.role, t.text])).toContainEqual(['bot', KEYS_REPLY]);
    expect(call.actions).toContainEqual(expect.objectContaining({ type: 'dtmf_in', name: 'keypad', arguments: { digits: '12' } }));
    // The call's page marks the turn as keys too.
    await page.getByRole('link', { name: callId, exact: true }).click();
    const recorded = page.getByTestId('call-events').locator('li.user[data-kind="turn"]').filter({ has: page.getByRole('img', { name: 'Keys pressed:' }) });
    expect(await recorded.locator('p').textContent()).toBe('⌨ 12');
  });

  it('opens the test call from the bot’s edit page', async () => {
    await page.goto(`${CONSOLE}/bots/${botId}`);
    await page.getByRole('heading', { name: `Edit bot: ${BOT_NAME}` }).waitFor();
    await page.getByRole('link', { name: 'Test call', exact: true }).click();
    await page.waitForURL(`${CONSOLE}/bots/${botId}/test-call`);
    await page.getByRole('button', { name: 'Start test call' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).getAttribute('aria-current')).toBe('page');
  });

  it('says so when the connection to the call drops', async () => {
    await page.goto(`${CONSOLE}/bots/${botId}/test-call`);
    const widget = page.waitForResponse((r) => r.url() === `${BACKEND}/livekit/widget` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Start test call' }).click();
    const callId = ((await (await widget).json()) as { call_id: string }).call_id;
    await page.getByRole('log', { name: 'Live transcript' }).locator('li.bot:not(.interim)').first().waitFor({ timeout: 45_000 });
    // The browser is put out of the room (as when its network goes): not a hang-up the page asked for.
    await removeParticipant(callId, 'caller');
    expect(await page.getByRole('alert').textContent()).toBe(CONNECTION_LOST_MESSAGE);
    expect(await page.getByRole('button', { name: 'Hang up' }).count()).toBe(0);
    await page.locator('main').screenshot({ path: path.join(SHOTS, 'test-call-dropped.png') });
    // For the worker the caller left: the call ends as a hang-up.
    const call = await callUntil(callId, (c) => c.status !== 'queued' && c.status !== 'in_progress', 'the end of the call');
    expect(call).toMatchObject({ direction: 'web', status: 'completed', end_reason: 'caller_hangup' });
  });

  it('says so when no voice worker is free (503 fleet_at_capacity)', async () => {
    // Fill the fleet for real: the suite's one worker (30 slots, TEST_CALL_SHARE 1 here) holds 30 WebSocket
    // test calls of a bot that stays silent, each with its own token from the backend.
    const quiet = await admin('POST', '/api/v1/bots', { name: 'Fleet filler (e2e)', greeting: '', policy: { intents: [], fallback: { reply: 'Okay.' } } });
    expect(quiet.status).toBe(201);
    const wsBase = process.env.VP_WORKER_URL!.replace(/^http/, 'ws');
    const fleet = async () => ((await (await fetch(`${process.env.VP_WORKER_URL}/health/fleet`)).json()) as { totals: { free_slots: number } }).totals;
    const sockets: WebSocket[] = [];
    try {
      for (let i = 0; i < 30; i++) {
        const token = await admin('POST', '/api/v1/test-calls/token', { bot_id: quiet.body.id });
        expect(token.status).toBe(201);
        const ws = new WebSocket(`${wsBase}${token.body.ws_path as string}`);
        sockets.push(ws);
        await new Promise<void>((resolve, reject) => {
          ws.once('message', () => resolve()); // `started`
          ws.once('error', reject);
          ws.once('open', () => ws.send(JSON.stringify({ type: 'start' })));
        });
      }
      await waitFor(async () => (await fleet()).free_slots === 0, 'the fleet full');
      await page.goto(`${CONSOLE}/bots/${botId}/test-call`);
      await page.getByRole('button', { name: 'Start test call' }).click();
      expect(await page.getByRole('alert').textContent()).toBe(NO_CAPACITY_MESSAGE);
      // Back to the form, the microphone released: the admin can try again.
      await page.getByRole('button', { name: 'Start test call' }).waitFor();
      expect(await page.getByRole('button', { name: 'Hang up' }).count()).toBe(0);
      await page.locator('main').screenshot({ path: path.join(SHOTS, 'test-call-no-capacity.png') });
    } finally {
      for (const ws of sockets) ws.close();
      await admin('PATCH', `/api/v1/bots/${quiet.body.id as string}`, { active: false });
      await waitFor(async () => (await fleet()).free_slots === 30, 'the fleet free again');
    }
  });

  it('says so when the browser denies the microphone, and places no call', async () => {
    const denied = await newContext();
    try {
      // What a browser answers when the user (or a policy) blocks the microphone.
      await denied.addInitScript(() => {
        navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
      });
      const p = await denied.newPage();
      const widgetRequests: string[] = [];
      p.on('request', (r) => {
        if (r.url() === `${BACKEND}/livekit/widget`) widgetRequests.push(r.method());
      });
      await signIn(p);
      await p.goto(`${CONSOLE}/bots/${botId}/test-call`);
      await p.getByRole('button', { name: 'Start test call' }).click();
      expect(await p.getByRole('alert').textContent()).toBe(MIC_DENIED_MESSAGE);
      expect(widgetRequests).toEqual([]);
      await p.locator('main').screenshot({ path: path.join(SHOTS, 'test-call-mic-denied.png') });
    } finally {
      await denied.close();
    }
  });
});
