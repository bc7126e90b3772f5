// The Do-not-call page in headless Chromium against the real backend: numbers added (with separators,
// duplicates counted, stored and shown as E.164), numbers that cannot exist refused before sending with
// libphonenumber's reason, a number looked up, one removed after confirming, and the list as the API holds
// it. Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { adminToken, BACKEND, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
let sent: Array<{ method: string; path: string; body: string | null }> = [];

async function listed(): Promise<string[]> {
  const r = await fetch(`${BACKEND}/api/v1/dnc?limit=100`, { headers: { Authorization: `Bearer ${await adminToken()}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { items: Array<{ number: string }> }).items.map((i) => i.number).sort();
}

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push({ method: r.method(), path: new URL(r.url()).pathname, body: r.postData() });
  });
});

afterAll(async () => {
  await browser?.close();
  const token = await adminToken();
  for (const n of await listed()) await fetch(`${BACKEND}/api/v1/dnc/${encodeURIComponent(n)}`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
});

describe('do-not-call page', () => {
  it('adds numbers, refuses a bad one before sending, looks one up, and removes one after confirming', async () => {
    expect(await listed()).toEqual([]);
    await signInAt(page, '/do-not-call');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Do-not-call' }).getAttribute('aria-current')).toBe('page');
    await page.getByTestId('dnc-empty').waitFor();

    // Numbers that cannot exist: each named with the backend's reason (libphonenumber), nothing sent.
    sent = [];
    await page.getByLabel('Numbers', { exact: true }).fill('+49 151 1234 5678\n12345\n+1 555 0100 000 000');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    expect(await page.locator('#dnc-numbers-error').textContent()).toBe(
      '12345: Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678. +15550100000000: Too long for a phone number.',
    );
    expect(sent.filter((r) => r.method === 'POST')).toEqual([]);
    await page.getByLabel('Look up a number').fill('+1 234');
    await page.getByRole('button', { name: 'Look up' }).click();
    expect(await page.locator('#dnc-search-error').textContent()).toBe('Too short for a phone number.');
    await page.getByLabel('Look up a number').fill('');

    await page.getByLabel('Numbers', { exact: true }).fill('+49 151 1234 5678\n(+1) 212-555-0100\n+4915112345678');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await page.getByRole('status').filter({ hasText: 'numbers added' }).waitFor();
    expect(await page.getByRole('status').textContent()).toBe('2 numbers added; 1 already on the list.');
    expect(sent.filter((r) => r.method === 'POST').map((r) => JSON.parse(r.body!))).toEqual([{ numbers: ['+4915112345678', '+12125550100', '+4915112345678'] }]);
    await page.locator('tr[data-number="+12125550100"]').waitFor();
    expect(await listed()).toEqual(['+12125550100', '+4915112345678']);
    await page.screenshot({ path: path.join(SHOTS, 'dnc.png'), fullPage: true });

    await page.getByLabel('Look up a number').fill('+4915112345678');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.locator('tr[data-number="+12125550100"]').waitFor({ state: 'detached' });
    expect(await page.locator('tr[data-number]').count()).toBe(1);

    await page.getByRole('button', { name: 'Remove +4915112345678' }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove this number?' });
    await confirm.getByRole('button', { name: 'Remove number' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').textContent()).toBe('+4915112345678 removed: campaigns may dial it again.');
    await page.locator('tr[data-number="+12125550100"]').waitFor();
    expect(await listed()).toEqual(['+12125550100']);
  });
});
