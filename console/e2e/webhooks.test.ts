// The Webhooks page in headless Chromium against the real backend (its dialler role delivers): a
// receiver on loopback (the suite's backend runs with WEBHOOK_ALLOW_PRIVATE=true), the secret shown once,
// a test event delivered and verified with that secret, a receiver answering 500 showing as failed
// with its retry, pause/resume, and delete. Screenshots go to test-artifacts/console/.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { adminToken, BACKEND, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
let receiver: http.Server;
let receiverUrl = '';
/** What the receiver got: raw body and signature header. */
const received: Array<{ path: string; body: string; signature: string }> = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

const webhookRow = (url: string) => page.locator('tr[data-webhook-id]').filter({ has: page.locator('code', { hasText: new RegExp(`^${url.replace(/[.?]/g, '\\$&')}$`) }) });

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['x-voice-signature'] ?? '') });
      res.writeHead(req.url === '/broken' ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  ({ browser, page } = await launchPage());
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  // Leave the backend as this suite found it: no webhooks.
  const token = await adminToken();
  const list = (await (await fetch(`${BACKEND}/api/v1/webhooks`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { items: Array<{ id: string }> };
  for (const w of list.items) await fetch(`${BACKEND}/api/v1/webhooks/${w.id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
});

describe('webhooks page', () => {
  it('creates a webhook, shows its secret once, delivers a signed test event, and shows it in the log', async () => {
    await signInAt(page, '/webhooks');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).waitFor();
    await page.getByTestId('webhooks-empty').waitFor();
    await shot('webhooks-empty');

    await page.getByRole('button', { name: 'Create the first webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    // The form checks before sending: no URL, no event.
    await dialog.getByLabel('Call ended (with its outcome and recording) call.ended').uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    expect(await dialog.locator('#webhook-url-error').textContent()).toBe('Enter the URL that receives the events.');
    expect(await dialog.locator('#webhook-events-error').textContent()).toBe('Choose at least one event.');
    await dialog.getByLabel('URL').fill(`${receiverUrl}/hooks`);
    await dialog.getByLabel('Call ended (with its outcome and recording) call.ended').check();
    await dialog.getByLabel('Call queued call.queued').check();
    await dialog.getByLabel('Description').fill('CRM test endpoint');
    await page.getByRole('button', { name: 'Create webhook' }).click();

    const secretDialog = page.getByRole('dialog', { name: 'Webhook created: copy its secret now' });
    const secret = (await secretDialog.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    await shot('webhook-secret-once');
    await secretDialog.getByRole('button', { name: 'I have stored it' }).click();
    await secretDialog.waitFor({ state: 'hidden' });
    // Shown once: nowhere on the page any more, and no API answer carries it.
    expect(await page.content()).not.toContain(secret);
    const row = webhookRow(`${receiverUrl}/hooks`);
    expect(await row.locator('li code').allTextContents()).toEqual(['call.queued', 'call.ended']);
    expect(await row.locator('[data-badge="active"]').count()).toBe(1);

    await row.getByRole('button', { name: `Send a test event to ${receiverUrl}/hooks` }).click();
    const log = page.getByTestId('deliveries');
    // Calls placed by other e2e files sharing the backend are delivered here too: pick the test event's row.
    const delivered = log.locator('tr[data-status="delivered"]', { hasText: 'webhook.test' });
    await delivered.waitFor({ timeout: 30_000 });
    expect(await delivered.locator('td').nth(3).textContent()).toMatch(/^delivered Delivered \(HTTP 204, \d+ ms\)$/);
    await shot('webhook-delivered');
    // The receiver got it, signed with the secret the dialog showed: v1 = HMAC-SHA256(secret, "<t>.<raw body>").
    const got = received.find((r) => r.path === '/hooks')!;
    expect(JSON.parse(got.body)).toMatchObject({ type: 'webhook.test' });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(got.signature)!;
    expect(createHmac('sha256', secret).update(`${t}.${got.body}`).digest('hex')).toBe(v1);
  });

  it('shows a failing receiver\'s attempt with its retry, pauses and resumes, and deletes after confirming', async () => {
    await page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await dialog.getByLabel('URL').fill(`${receiverUrl}/broken`);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('dialog', { name: 'Webhook created: copy its secret now' }).getByRole('button', { name: 'I have stored it' }).click();
    const row = webhookRow(`${receiverUrl}/broken`);
    await row.getByRole('button', { name: `Send a test event to ${receiverUrl}/broken` }).click();
    // This receiver takes every event, and other e2e files share the backend: pick the test event's row.
    const failed = page.getByTestId('deliveries').locator('tr[data-status="failed"]', { hasText: 'webhook.test' });
    await failed.waitFor({ timeout: 30_000 });
    expect(await failed.locator('td').nth(3).textContent()).toMatch(/^failed Failed \(HTTP 500.*\); retrying at /);
    await shot('webhook-failed');

    await row.getByRole('button', { name: `Pause ${receiverUrl}/broken` }).click();
    await row.locator('[data-badge="paused"]').waitFor();
    expect(await row.getByRole('button', { name: `Send a test event to ${receiverUrl}/broken` }).count()).toBe(0);
    await row.getByRole('button', { name: `Resume ${receiverUrl}/broken` }).click();
    await row.locator('[data-badge="active"]').waitFor();

    await row.getByRole('button', { name: `Delete ${receiverUrl}/broken` }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this webhook?' });
    await confirm.getByRole('button', { name: 'Delete webhook' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').first().textContent()).toBe(`Webhook ${receiverUrl}/broken deleted.`);
    expect(await webhookRow(`${receiverUrl}/hooks`).count()).toBe(1);
  });
});
