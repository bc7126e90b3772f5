// Live supervision in the console (docs/design.md §16) against the real backend and worker (jest.global-setup.js):
// a WebSocket test call in progress, its page shows the Supervise panel; "Say" reaches the caller at once (the
// caller's socket gets the bot's transcript of it), "End the call" hangs up, and both are on the call's timeline.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import WebSocket from 'ws';
import { holdNumber } from '@voice-platform/tests/infra';
import { admin, BACKEND, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  page.on('pageerror', (e) => pageErrors.push(e.message));
});
afterAll(async () => {
  await browser?.close();
});

describe('supervising a live call', () => {
  it('says something into the call now and ends it from the call page; both on its timeline', async () => {
    const bot = await admin('POST', '/api/v1/bots', { name: 'Supervised (e2e)', greeting: '', policy: { intents: [], fallback: { reply: 'Okay.' } } });
    expect(bot.status).toBe(201);
    const token = await admin('POST', '/api/v1/test-calls/token', { bot_id: bot.body.id });
    expect(token.status).toBe(201);
    const ws = new WebSocket(`${process.env.VP_WORKER_URL!.replace(/^http/, 'ws')}${token.body.ws_path as string}`);
    const messages: Array<Record<string, unknown>> = [];
    ws.on('message', (data, binary) => {
      if (!binary) messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
    });
    const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => {
        ws.send(JSON.stringify({ type: 'start' }));
        resolve();
      });
    });
    const until = async <T>(check: () => T | undefined, what: string): Promise<T> => {
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const v = check();
        if (v !== undefined) return v;
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    const callId = (await until(() => messages.find((m) => m.type === 'started'), 'started')).call_id as string;
    try {
      await signInAt(page, `/calls/${callId}`);
      const panel = page.getByRole('region', { name: 'Supervise' });
      await panel.waitFor();
      await panel.getByLabel('Say now').fill('A supervisor joined the call.');
      await panel.getByRole('button', { name: 'Say', exact: true }).click();
      await panel.getByRole('status').filter({ hasText: 'The bot is saying it now.' }).waitFor();
      // The caller gets it at once: the bot's transcript of the words, over the call's own socket.
      await until(() => messages.find((m) => m.type === 'transcript' && m.role === 'bot' && m.text === 'A supervisor joined the call.'), "the supervisor's words at the caller");
      await panel.screenshot({ path: path.join(SHOTS, 'call-supervise.png') });
      await panel.getByRole('button', { name: 'End the call' }).click();
      await closed;
      // The page follows the call to its end: the panel goes, the controls are on the timeline.
      await page.getByTestId('end-reason').filter({ hasText: 'supervisor_ended' }).waitFor({ timeout: 20_000 });
      expect(await page.getByTestId('call-supervise').count()).toBe(0);
      const controls = page.getByTestId('call-events').locator('li[data-kind="action"]');
      expect(await controls.evaluateAll((lis) => lis.map((li) => li.querySelector('.who')?.textContent?.trim()))).toEqual(['Supervisor', 'Supervisor']);
      expect(pageErrors).toEqual([]);
    } finally {
      ws.close();
    }
  });

  it('listens in to a phone call: joins its room hidden and hears both voices, until stopped', async () => {
    const trunk = await admin('POST', '/api/v1/sip/outbound-trunks', { name: 'Supervise suite trunk', address: process.env.SIP_PHONE_ADDRESS, numbers: ['+15005550198'], default: true });
    expect(trunk.status).toBe(201);
    const bot = await admin('POST', '/api/v1/bots', { name: 'Listened (e2e)', greeting: 'Hello, this is a reminder from Example Company about your open invoice.', policy: { intents: [], fallback: { reply: 'Okay.' } } });
    const key = await admin('POST', '/api/v1/api-keys', { name: 'supervise e2e', scopes: ['dialout'] });
    try {
      const dial = await fetch(`${BACKEND}/api/v1/sip/dialout`, { method: 'POST', headers: { 'X-API-Key': key.body.key as string, 'Content-Type': 'application/json' }, body: JSON.stringify({ bot_id: bot.body.id, to_number: holdNumber(25) }) });
      expect(dial.status).toBe(201);
      const callId = ((await dial.json()) as { call_id: string }).call_id;
      for (let i = 0; i < 200 && (await admin('GET', `/api/v1/calls/${callId}`)).body.status !== 'in_progress'; i++) await new Promise((r) => setTimeout(r, 100));
      await page.goto(`${process.env.VP_CONSOLE_URL}/calls/${callId}`);
      const panel = page.getByRole('region', { name: 'Supervise' });
      await panel.getByRole('button', { name: 'Listen' }).click();
      // The phone's voice (livekit-sip's participant) and the bot's, both subscribed by the hidden listener.
      await panel.locator('[data-testid="listening"][data-voices="2"]').waitFor({ timeout: 15_000 });
      expect(await page.locator('#call-listen-audio audio').count()).toBe(2);
      await panel.screenshot({ path: path.join(SHOTS, 'call-listen.png') });
      // The call never saw the listener: its bot goes on, nobody joined its conversation.
      await panel.getByRole('button', { name: 'Stop listening' }).click();
      expect(await page.locator('#call-listen-audio audio').count()).toBe(0);
      await panel.getByRole('button', { name: 'End the call' }).click();
      await page.getByTestId('end-reason').filter({ hasText: 'supervisor_ended' }).waitFor({ timeout: 20_000 });
      const audit = await admin('GET', `/api/v1/audit?resource_type=call&resource_id=${callId}`);
      expect((audit.body.items as Array<{ action: string }>).map((e) => e.action).sort()).toEqual(['call.control.end', 'call.listen']);
      expect(pageErrors).toEqual([]);
    } finally {
      await admin('DELETE', `/api/v1/sip/outbound-trunks/${trunk.body.id as string}`);
      await admin('PATCH', `/api/v1/api-keys/${key.body.id as string}`, { active: false });
    }
  });
});
