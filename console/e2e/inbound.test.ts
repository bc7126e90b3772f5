// The Inbound numbers page in headless Chromium against the real backend, which mirrors every number into
// a real LiveKit (started by jest.global-setup.js): the deep link and navigation, the empty state,
// creating a number with the bot picker, the bot's variables and allowed addresses (validated with the
// shared schema first), editing (only what changed is sent), a taken number refused on its field, and
// deleting behind a confirmation. Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

const NUMBERS = '/api/v1/sip/inbound-numbers';
const BOT_NAME = 'Inbound reception (e2e)';
const OTHER_BOT = 'Inbound sales (e2e)';

interface InboundNumber {
  id: string;
  number: string;
  bot_id: string;
  variables: Record<string, string>;
  allowed_addresses: string[];
}

let browser: Browser;
let page: Page;
let otherBotId = '';
let botId: string;
/** Every request the page sent to the backend (method, path, body). */
const sent: Array<{ method: string; path: string; body: string | null }> = [];

const listNumbers = async () => (await admin('GET', NUMBERS)).body.items as InboundNumber[];
const numberRow = (n: string) => page.locator('tr[data-inbound-id]').filter({ has: page.getByText(n, { exact: true }) });
const sentSince = (n: number) => sent.slice(n).filter((r) => r.path.startsWith(NUMBERS) && r.method !== 'GET');

beforeAll(async () => {
  // This suite starts from no inbound numbers (no other suite of this backend creates any).
  expect(await listNumbers()).toEqual([]);
  const bot = await admin('POST', '/api/v1/bots', {
    name: BOT_NAME,
    variables: [
      { name: 'customer_name', required: true, description: 'Who usually calls' },
      { name: 'plan', required: false },
    ],
  });
  expect(bot.status).toBe(201);
  botId = bot.body.id as string;
  // A second bot, so there is a choice to make (with one bot the picker starts on it).
  const other = await admin('POST', '/api/v1/bots', { name: OTHER_BOT, variables: [{ name: 'account', required: true }] });
  expect(other.status).toBe(201);
  otherBotId = other.body.id as string;
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push({ method: r.method(), path: new URL(r.url()).pathname, body: r.postData() });
  });
});

afterAll(async () => {
  await browser?.close();
  // Leave the backend (and its LiveKit) as this suite found it: no inbound numbers.
  for (const n of await listNumbers()) await admin('DELETE', `${NUMBERS}/${n.id}`);
  // Bots cannot be deleted: inactive ones do not count as the dashboard's active bots (console.test.ts).
  for (const id of [botId, otherBotId]) if (id) await admin('PATCH', `/api/v1/bots/${id}`, { active: false });
});

describe('inbound numbers page', () => {
  it('is a deep link behind sign-in, in the navigation, and explains inbound numbers when there are none', async () => {
    await signInAt(page, '/inbound-numbers');
    await page.getByRole('heading', { name: 'Inbound numbers', level: 1 }).waitFor();
    expect(await page.title()).toBe('Inbound numbers · Voice Platform Console');
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Inbound numbers' }).getAttribute('aria-current')).toBe('page');
    const empty = page.getByTestId('inbound-empty');
    await empty.waitFor();
    expect(await empty.getByRole('heading').textContent()).toBe('No inbound numbers yet');
    await page.screenshot({ path: path.join(SHOTS, 'inbound-empty.png'), fullPage: true });

    await nav.getByRole('link', { name: 'Calls' }).click();
    await page.waitForURL(`${CONSOLE}/calls`);
    await nav.getByRole('link', { name: 'Inbound numbers' }).click();
    await page.waitForURL(`${CONSOLE}/inbound-numbers`);
    await empty.waitFor();
  });

  it('validates a new number (bot, required variables, addresses) before sending, then creates it', async () => {
    await page.getByRole('button', { name: 'Add the first number' }).click();
    const dialog = page.getByRole('dialog', { name: 'New inbound number' });
    await dialog.waitFor();
    const before = sent.length;
    await dialog.getByRole('button', { name: 'Create inbound number' }).click();
    expect(await page.locator('#inbound-number-error').textContent()).toBe('This field is required.');
    expect(await page.locator('#inbound-bot-error').textContent()).toBe('Choose the bot that answers calls to this number.');
    expect(await dialog.getByRole('alert').textContent()).toBe('Fix the highlighted fields and save again.');

    await dialog.getByLabel('Number').fill('+49 30 555 0101');
    // Each bot brings its own variables.
    await dialog.getByLabel('Bot').selectOption({ label: OTHER_BOT });
    await dialog.getByLabel('account').waitFor();
    await dialog.getByLabel('Bot').selectOption({ label: BOT_NAME });
    // The bot's declared variables appear, the required one marked.
    await dialog.getByLabel('customer_name').waitFor();
    expect(await dialog.getByLabel('customer_name').getAttribute('aria-required')).toBe('true');
    await dialog.getByLabel('plan').fill('gold');
    await dialog.getByLabel('Allowed addresses').fill('203.0.113.0/24\n203.0.113.300');
    await dialog.getByRole('button', { name: 'Create inbound number' }).click();
    expect(await page.locator('#inbound-var-customer_name-error').textContent()).toBe('The bot needs this value.');
    expect(await page.locator('#inbound-addresses-error').textContent()).toMatch(/^203\.0\.113\.300: Must be an IPv4 or IPv6 address/);
    expect(await page.locator('#inbound-number-error').count()).toBe(0);
    expect(await dialog.getByLabel('account').count()).toBe(0);
    expect(sentSince(before)).toEqual([]);

    await dialog.getByLabel('customer_name').fill('Ada');
    await dialog.getByLabel('Allowed addresses').fill('203.0.113.0/24\n2001:db8::1');
    const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${BACKEND}${NUMBERS}`);
    await dialog.getByRole('button', { name: 'Create inbound number' }).click();
    const res = await created;
    expect(res.status()).toBe(201);
    expect(JSON.parse(res.request().postData()!)).toEqual({
      number: '+49305550101',
      bot_id: botId,
      variables: { customer_name: 'Ada', plan: 'gold' },
      allowed_addresses: ['203.0.113.0/24', '2001:db8::1'],
    });
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe('Inbound number +49305550101 created.');
    const row = numberRow('+49305550101');
    await row.waitFor();
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(0, 4).map((c) => c.replace(/\s+/g, ' ').trim())).toEqual([
      '+49305550101',
      BOT_NAME,
      'customer_name=Ada plan=gold',
      '203.0.113.0/24 2001:db8::1',
    ]);
    await page.screenshot({ path: path.join(SHOTS, 'inbound-numbers.png'), fullPage: true });
  });

  it('edits sending only what changed, and refuses a taken number on its field', async () => {
    const row = numberRow('+49305550101');
    await row.getByRole('button', { name: 'Edit +49305550101' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit inbound number +49305550101' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('customer_name').inputValue()).toBe('Ada');
    expect(await dialog.getByLabel('Allowed addresses').inputValue()).toBe('203.0.113.0/24\n2001:db8::1');
    const before = sent.length;
    await dialog.getByLabel('Allowed addresses').fill('');
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    expect((await saved).status()).toBe(200);
    await dialog.waitFor({ state: 'hidden' });
    const patches = sentSince(before);
    expect(patches.map((r) => JSON.parse(r.body!))).toEqual([{ allowed_addresses: [] }]);
    await row.getByText('Any address').waitFor();
    expect((await listNumbers())[0]).toMatchObject({ number: '+49305550101', allowed_addresses: [], variables: { customer_name: 'Ada', plan: 'gold' } });

    // A second number may not take the first one's number: 409, shown on the number field.
    await page.getByRole('button', { name: 'New inbound number' }).click();
    const create = page.getByRole('dialog', { name: 'New inbound number' });
    await create.waitFor();
    await create.getByLabel('Number').fill('+49305550101');
    await create.getByLabel('Bot').selectOption({ label: BOT_NAME });
    await create.getByLabel('customer_name').fill('Bob');
    const refused = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${BACKEND}${NUMBERS}`);
    await create.getByRole('button', { name: 'Create inbound number' }).click();
    expect((await refused).status()).toBe(409);
    expect(await page.locator('#inbound-number-error').textContent()).toBe('This number is already an inbound number.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('inbound-number');
    await create.getByRole('button', { name: 'Cancel' }).click();
    await create.waitFor({ state: 'hidden' });
    expect(await listNumbers()).toHaveLength(1);
  });

  it('deletes after a confirmation', async () => {
    const row = numberRow('+49305550101');
    await row.getByRole('button', { name: 'Delete +49305550101' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this inbound number?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('Calls to +49305550101 will no longer reach a bot.');
    const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE');
    await confirm.getByRole('button', { name: 'Delete number' }).click();
    expect((await deleted).status()).toBe(204);
    await page.getByTestId('inbound-empty').waitFor();
    expect(await page.getByRole('status').first().textContent()).toBe('Inbound number +49305550101 deleted.');
    expect(await listNumbers()).toEqual([]);
  });
});
