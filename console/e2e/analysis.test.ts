// Post-call analysis in the console (docs/design.md §10), in headless Chromium against the real backend (its
// dialler role analyses the calls): the bot editor's Post-call analysis section and an intent's "Sets analysis
// fields", checked like the API, saved and reopened as saved; a call of that bot reported the way a worker reports
// it, whose analysis the call page shows once the dialler has it (the page keeps looking while it is pending); the
// webhook form's call.analyzed event and include_transcript box. Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
/** Backend requests the page sent (method and path). */
const sent: string[] = [];

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
});

afterAll(async () => {
  await browser?.close();
  // Leave the backend as this suite found it: no webhooks.
  const list = await admin('GET', '/api/v1/webhooks');
  for (const w of list.body.items as Array<{ id: string }>) await admin('DELETE', `/api/v1/webhooks/${w.id}`);
});

describe('post-call analysis', () => {
  let botId = '';

  it('the bot editor saves the analysis settings and an intent’s sets, checked like the API, and reopens them as saved', async () => {
    const created = await admin('POST', '/api/v1/bots', {
      name: 'Analysed collector',
      policy: { intents: [{ name: 'pay', examples: ['i will pay'], reply: 'Thank you.', end_call: true }], fallback: { reply: 'Sorry?' } },
    });
    expect(created.status).toBe(201);
    botId = created.body.id as string;
    await signInAt(page, `/bots/${botId}`);
    const section = page.getByRole('group', { name: 'Post-call analysis' });
    await section.waitFor();
    // A bot made before asks for nothing: no summary, no field; an intent sets nothing (and offers nothing to set).
    expect(await section.getByLabel('Write a summary of each call').isChecked()).toBe(false);
    expect(await page.getByRole('group', { name: 'Intent 1' }).getByText('Sets analysis fields').count()).toBe(0);

    await section.getByLabel('Write a summary of each call').check();
    await section.getByRole('button', { name: 'Add field' }).click();
    const outcome = section.getByRole('group', { name: 'Analysis field 1' });
    await outcome.getByRole('textbox', { name: 'Field name' }).fill('outcome');
    await outcome.getByLabel('Type').selectOption({ label: 'One of a list' });
    await outcome.getByRole('textbox', { name: 'Description' }).fill('What the caller agreed to');
    await section.getByRole('button', { name: 'Add field' }).click();
    const amount = section.getByRole('group', { name: 'Analysis field 2' });
    await amount.getByRole('textbox', { name: 'Field name' }).fill('amount');
    await amount.getByLabel('Type').selectOption({ label: 'Number' });
    await section.getByRole('textbox', { name: 'Success criterion' }).fill('The caller promised to pay: the pay intent matched.');

    // The enum has no values yet: refused before anything is sent, the field named.
    const before = sent.length;
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-analysis-fields-0-values-error').textContent()).toBe('List the values it may take, one per line.');
    expect(sent.slice(before).filter((r) => r.startsWith('PATCH'))).toEqual([]);
    await outcome.getByRole('textbox', { name: 'Values' }).fill('promised\nrefused');

    // The intent sets both fields: the enum's values to pick from, the number typed.
    const intent = page.getByRole('group', { name: 'Intent 1' });
    await intent.getByRole('button', { name: 'Set a field' }).click();
    const first = intent.getByRole('group', { name: 'Field 1 set by intent 1' });
    await first.getByLabel('Field', { exact: true }).selectOption('outcome');
    await first.getByLabel('Value', { exact: true }).selectOption('promised');
    await intent.getByRole('button', { name: 'Set a field' }).click();
    const second = intent.getByRole('group', { name: 'Field 2 set by intent 1' });
    await second.getByLabel('Field', { exact: true }).selectOption('amount');
    await second.getByLabel('Value', { exact: true }).fill('forty');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#bot-policy-intents-0-sets-1-value-error').textContent()).toBe('Must be a number.');
    await second.getByLabel('Value', { exact: true }).fill('40');
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect((await saved).status()).toBe(200);
    await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();

    const analysis = {
      summary: true,
      fields: [
        { name: 'outcome', type: 'enum', description: 'What the caller agreed to', values: ['promised', 'refused'] },
        { name: 'amount', type: 'number', description: '' },
      ],
      success: 'The caller promised to pay: the pay intent matched.',
    };
    const bot = (await admin('GET', `/api/v1/bots/${botId}`)).body;
    expect(bot.analysis).toEqual(analysis);
    expect(bot.policy.intents[0].sets).toEqual({ outcome: 'promised', amount: 40 });
    await page.locator('#bot-analysis').screenshot({ path: path.join(SHOTS, 'bot-analysis.png') });

    await page.reload();
    await section.waitFor();
    expect(await section.getByLabel('Write a summary of each call').isChecked()).toBe(true);
    expect(await outcome.getByRole('textbox', { name: 'Values' }).inputValue()).toBe('promised\nrefused');
    expect(await amount.getByLabel('Type').inputValue()).toBe('number');
    expect(await first.getByLabel('Value', { exact: true }).inputValue()).toBe('promised');
    expect(await second.getByLabel('Value', { exact: true }).inputValue()).toBe('40');
  });

  it('the call page shows the analysis once the dialler has it: status, summary, fields and success', async () => {
    const worker = { Authorization: `Bearer ${process.env.VP_WORKER_TOKEN!}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${BACKEND}/api/v1/calls`, { method: 'POST', headers: worker, body: JSON.stringify({ bot_id: botId, direction: 'websocket' }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { call_id: string }).call_id;
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const report = (body: object) => fetch(`${BACKEND}/api/v1/calls/${id}/events`, { method: 'POST', headers: worker, body: JSON.stringify(body) });
    expect((await report({ status: 'in_progress', at: at(1) })).status).toBe(200);
    const transcript = [
      { role: 'bot', text: 'Hello, this is about your open invoice.', at: at(1) },
      { role: 'user', text: 'i will pay', at: at(3) },
      { role: 'bot', text: 'Thank you.', at: at(4) },
    ];
    expect((await report({ status: 'completed', end_reason: 'bot_hangup', at: at(5), transcript })).status).toBe(200);
    // The page is open before the analysis is done: it keeps looking until it is.
    await page.goto(`${CONSOLE}/calls/${id}`);
    expect((await report({ status: 'completed', recording_error: 'no recording in this test' })).status).toBe(200);
    const panel = page.getByTestId('call-analysis');
    await panel.and(page.locator('[data-analysis-status="done"]')).waitFor({ timeout: 30_000 });
    expect(await panel.getByTestId('analysis-status').textContent()).toBe('Done');
    expect(await panel.getByTestId('analysis-summary').textContent()).toBe('Intents: pay. The caller said: "i will pay".');
    expect(await panel.getByTestId('analysis-success').textContent()).toBe('Met');
    expect(await panel.locator('[data-testid="analysis-data"] dt').allTextContents()).toEqual(['outcome', 'amount']);
    expect(await panel.locator('[data-testid="analysis-data"] dd').allTextContents()).toEqual(['promised', '40']);
    await page.screenshot({ path: path.join(SHOTS, 'call-analysis.png'), fullPage: true });
  });

  it('the webhook form subscribes to call.analyzed and asks for the transcript', async () => {
    await page.goto(`${CONSOLE}/webhooks`);
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    const open = page.getByRole('button', { name: /^(Create the first webhook|New webhook)$/ });
    await open.first().click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await dialog.getByLabel('URL').fill('http://127.0.0.1:9/crm');
    await dialog.getByLabel("Call analyzed (the bot's post-call analysis: summary, fields, success) call.analyzed").check();
    await dialog.getByLabel('Include the transcript in call.ended and call.analyzed').check();
    const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/v1/webhooks'));
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const res = await created;
    expect(res.status()).toBe(201);
    expect(JSON.parse(res.request().postData()!)).toEqual({ url: 'http://127.0.0.1:9/crm', events: ['call.ended', 'call.analyzed'], include_transcript: true });
    await page.getByRole('dialog', { name: 'Webhook created: copy its secret now' }).getByRole('button', { name: 'I have stored it' }).click();
    const row = page.locator('tr[data-webhook-id]').filter({ hasText: 'http://127.0.0.1:9/crm' });
    expect(await row.locator('li code').allTextContents()).toEqual(['call.ended', 'call.analyzed']);
    expect(await row.getByText('with the transcript').count()).toBe(1);
  });
});
