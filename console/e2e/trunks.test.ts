// The Outbound trunks page in headless Chromium against the real backend, which mirrors every trunk
// into a real LiveKit (livekit-server + livekit-sip, started by jest.global-setup.js): the empty state,
// creating a trunk with a SIP password (validated with the shared schema first), the write-only
// password (nowhere in the page, the storage or any API answer), editing the numbers, a second trunk
// made the default, the 409 for deleting the default, removing credentials, and deleting behind a
// keyboard-safe confirmation. Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { readableMessage } from '../src/core/errorMessage.js';
import { adminToken, BACKEND, CONSOLE, launchPage, recordResponseBodies, SHOTS, signInAt } from './support.js';

const TRUNKS = '/api/v1/sip/outbound-trunks';
/** The SIP password typed into the form: unique enough that any occurrence is a leak. */
const PASSWORD = 'Qx7-trunk pass 5e1d9c!';

interface Trunk {
  id: string;
  name: string;
  address: string;
  transport: string;
  numbers: string[];
  auth_username: string | null;
  has_password: boolean;
  default: boolean;
}

let browser: Browser;
let page: Page;
/** Every request the page sent to the backend (method, path, body), and every backend response body. */
const sent: Array<{ method: string; path: string; body: string | null }> = [];
const bodies: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function listTrunks(): Promise<{ text: string; items: Trunk[] }> {
  const r = await fetch(`${BACKEND}${TRUNKS}`, { headers: { Authorization: `Bearer ${await adminToken()}` } });
  expect(r.status).toBe(200);
  const text = await r.text();
  return { text, items: (JSON.parse(text) as { items: Trunk[] }).items };
}

const trunkRow = (name: string) => page.locator('tr[data-trunk-id]').filter({ has: page.locator('.trunk-name', { hasText: new RegExp(`^${name}$`) }) });
const sentSince = (n: number) => sent.slice(n).filter((r) => r.path.startsWith(TRUNKS));

/** Everything the page holds: its HTML (with every input's live value), its text, and both storages. */
async function pageEverything(): Promise<string> {
  return page.evaluate(
    () =>
      document.documentElement.outerHTML +
      document.body.innerText +
      JSON.stringify(Array.from(document.querySelectorAll('input, textarea'), (el) => (el as HTMLInputElement).value)) +
      JSON.stringify({ ...sessionStorage }) +
      JSON.stringify({ ...localStorage }),
  );
}

beforeAll(async () => {
  // This suite starts from no trunks (other suites of this backend create none).
  expect((await listTrunks()).items).toEqual([]);
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push({ method: r.method(), path: new URL(r.url()).pathname, body: r.postData() });
  });
  recordResponseBodies(page, bodies);
});

afterAll(async () => {
  await browser?.close();
  // Leave the backend as this suite found it: no trunks (non-defaults first, the default last).
  const token = await adminToken();
  const { items } = await listTrunks();
  for (const t of [...items].sort((a, b) => Number(a.default) - Number(b.default))) {
    await fetch(`${BACKEND}${TRUNKS}/${t.id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
  }
});

describe('outbound trunks page', () => {
  it('is a deep link behind sign-in, in the navigation, and explains trunks when there are none', async () => {
    await signInAt(page, '/trunks');
    await page.getByRole('heading', { name: 'Outbound trunks', level: 1 }).waitFor();
    expect(await page.title()).toBe('Outbound trunks · Voice Platform Console');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trunks' }).getAttribute('aria-current')).toBe('page');

    const empty = page.getByTestId('trunks-empty');
    await empty.waitFor();
    expect(await empty.getByRole('heading').textContent()).toBe('No outbound trunks yet');
    expect(await empty.textContent()).toMatch(/connection to your SIP carrier: every dial-out goes through one/);
    await shot('trunks-empty');

    // Reached from the navigation too.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calls' }).click();
    await page.waitForURL(`${CONSOLE}/calls`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trunks' }).click();
    await page.waitForURL(`${CONSOLE}/trunks`);
    await empty.waitFor();
  });

  it('validates a new trunk with the shared schema, then creates it with a password', async () => {
    await page.getByRole('button', { name: 'Create the first trunk' }).click();
    const dialog = page.getByRole('dialog', { name: 'New outbound trunk' });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('trunk-name');
    const password = dialog.getByLabel('Password', { exact: true });
    expect(await password.getAttribute('type')).toBe('password');
    expect(await password.getAttribute('autocomplete')).toBe('new-password');
    expect(await password.inputValue()).toBe('');
    expect(await dialog.getByLabel('Transport').inputValue()).toBe('udp');
    expect(await dialog.getByLabel('Make this the default trunk').isChecked()).toBe(true); // the first trunk is the default

    // Nothing filled in, then a bad address and number: each named on its field, and nothing sent.
    const before = sent.length;
    await dialog.getByRole('button', { name: 'Create trunk' }).click();
    expect(await page.locator('#trunk-name-error').textContent()).toBe('This field is required.');
    expect(await page.locator('#trunk-address-error').textContent()).toBe('This field is required.');
    expect(await page.locator('#trunk-numbers-error').textContent()).toBe('Add at least one.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('trunk-name');

    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('Carrier EU');
    await dialog.getByLabel('Address').fill('sip:sip.carrier-eu.example.com:5060');
    await dialog.getByLabel('Numbers').fill('+4930123456789\n030 1234567');
    await dialog.getByLabel('Username').fill('acme-eu');
    await password.fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Create trunk' }).click();
    expect(await page.locator('#trunk-address-error').textContent()).toBe(
      'Must be a host name or IPv4 address with an optional port (1 to 65535), e.g. sip.example.com or 203.0.113.5:5060. No sip: prefix.',
    );
    expect(await dialog.getByLabel('Address').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByLabel('Address').getAttribute('aria-describedby')).toBe('trunk-address-hint trunk-address-error');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('trunk-address');
    expect(await page.locator('#trunk-numbers-error').textContent()).toBe('0301234567: Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.');
    expect(await page.locator('#trunk-name-error').count()).toBe(0);
    expect(await dialog.getByRole('alert').textContent()).toBe('Fix the highlighted fields and save again.');
    expect(sent.length).toBe(before);
    await shot('trunk-create-errors');

    await dialog.getByLabel('Address').fill('sip.carrier-eu.example.com:5060');
    expect(await page.locator('#trunk-address-error').count()).toBe(0); // cleared once edited
    await dialog.getByLabel('Numbers').fill('+4930123456789\n+49 30 1234567');
    const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${BACKEND}${TRUNKS}`);
    await dialog.getByRole('button', { name: 'Create trunk' }).click();
    const res = await created;
    expect(res.status()).toBe(201);
    expect(JSON.parse(res.request().postData()!)).toEqual({
      name: 'Carrier EU',
      address: 'sip.carrier-eu.example.com:5060',
      transport: 'udp',
      numbers: ['+4930123456789', '+49301234567'],
      auth_username: 'acme-eu',
      auth_password: PASSWORD,
      default: true,
    });
    const answer = await res.text();
    expect(answer).not.toContain(PASSWORD);
    expect(JSON.parse(answer)).toMatchObject({ name: 'Carrier EU', has_password: true, default: true, auth_username: 'acme-eu' });
    expect(JSON.parse(answer)).not.toHaveProperty('auth_password');

    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe('Trunk “Carrier EU” created.');
    const row = trunkRow('Carrier EU');
    await row.waitFor();
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(0, 5).map((c) => c.replace(/\s+/g, ' ').trim())).toEqual([
      'Carrier EU Default',
      'sip.carrier-eu.example.com:5060',
      'UDP',
      '+4930123456789 +49301234567',
      'acme-eu Password set',
    ]);
    expect(await row.locator('[data-badge="default"]').textContent()).toBe('Default');
    expect(await row.locator('[data-badge="password"]').textContent()).toBe('Password set');
    // Submitted: the password is gone from the page with the dialog.
    expect(await pageEverything()).not.toContain(PASSWORD);
    await shot('trunks');
  });

  it('after a reload, the password is nowhere: page, storage, or any API answer', async () => {
    const fromReload = bodies.length;
    const listed = page.waitForResponse((r) => r.request().method() === 'GET' && r.url() === `${BACKEND}${TRUNKS}`);
    await page.reload();
    const list = await listed;
    expect(list.status()).toBe(200);
    const listText = await list.text();
    expect(listText).not.toContain(PASSWORD);
    const [item] = (JSON.parse(listText) as { items: Array<Record<string, unknown>> }).items;
    expect(item).toMatchObject({ name: 'Carrier EU', auth_username: 'acme-eu', has_password: true, default: true });
    expect(item).not.toHaveProperty('auth_password');

    await trunkRow('Carrier EU').locator('[data-badge="password"]').waitFor();
    expect(await pageEverything()).not.toContain(PASSWORD);
    expect(bodies.length).toBeGreaterThan(fromReload);
    for (const body of bodies) expect(body).not.toContain(PASSWORD);
    const direct = await listTrunks();
    expect(direct.text).not.toContain(PASSWORD);
  });

  it('edits the numbers, keeping the stored password when the field stays empty', async () => {
    const row = trunkRow('Carrier EU');
    await row.getByRole('button', { name: 'Edit Carrier EU' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit trunk “Carrier EU”' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Numbers').inputValue()).toBe('+4930123456789\n+49301234567');
    expect(await dialog.getByLabel('Username').inputValue()).toBe('acme-eu');
    // Never prefilled; the hint says what an empty field means.
    const password = dialog.getByLabel('New password', { exact: true });
    expect(await password.inputValue()).toBe('');
    expect(await page.locator('#trunk-auth-password-hint').textContent()).toBe('A password is stored. Leave this empty to keep it, or type a new one to replace it. It is never shown.');
    expect(await dialog.getByTestId('trunk-auth-state').textContent()).toBe('Stored: username acme-eu, a password.');

    const before = sent.length;
    await dialog.getByLabel('Numbers').fill('+4930123456789\n+4930123456780\n+4930123456781');
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    expect((await saved).status()).toBe(200);
    await dialog.waitFor({ state: 'hidden' });
    const patches = sentSince(before).filter((r) => r.method !== 'GET');
    expect(patches.map((r) => r.method)).toEqual(['PATCH']);
    expect(JSON.parse(patches[0]!.body!)).toEqual({ numbers: ['+4930123456789', '+4930123456780', '+4930123456781'] }); // only what changed
    expect(await page.getByRole('status').first().textContent()).toBe('Trunk “Carrier EU” updated.');
    await row.getByText('+4930123456781', { exact: true }).waitFor();
    expect(await row.getByText('+49301234567', { exact: true }).count()).toBe(0);

    const [stored] = (await listTrunks()).items;
    expect(stored).toMatchObject({ numbers: ['+4930123456789', '+4930123456780', '+4930123456781'], auth_username: 'acme-eu', has_password: true, default: true });

    // Nothing changed: the dialog closes without a request.
    const quiet = sent.length;
    await row.getByRole('button', { name: 'Edit Carrier EU' }).click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(sentSince(quiet)).toEqual([]);
  });

  it('creates a second trunk, refuses to delete the default while it exists, and makes the second the default', async () => {
    await page.getByRole('button', { name: 'New trunk' }).click();
    const dialog = page.getByRole('dialog', { name: 'New outbound trunk' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Make this the default trunk').isChecked()).toBe(false);
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('Carrier US');
    await dialog.getByLabel('Address').fill('203.0.113.5:5061');
    await dialog.getByLabel('Transport').selectOption({ label: 'TCP' });
    // A number the first trunk already has: the backend's 409 lands on the numbers field, naming that trunk.
    await dialog.getByLabel('Numbers').fill('+14155550100\n+4930123456780');
    const refusedCreate = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${BACKEND}${TRUNKS}`);
    await dialog.getByRole('button', { name: 'Create trunk' }).click();
    expect((await refusedCreate).status()).toBe(409);
    await page.locator('#trunk-numbers-error').waitFor();
    expect(await page.locator('#trunk-numbers-error').textContent()).toBe('+4930123456780 already belongs to trunk “Carrier EU”.');
    expect(await dialog.getByLabel('Numbers').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByRole('alert').textContent()).toMatch(/^A number can belong to one trunk only.*trunk “Carrier EU”\.$/);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('trunk-numbers');
    await shot('trunk-create-conflict');
    await dialog.getByLabel('Numbers').fill('+14155550100');
    await dialog.getByRole('button', { name: 'Create trunk' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const us = trunkRow('Carrier US');
    await us.waitFor();
    expect((await us.getByRole('cell').allInnerTexts()).slice(0, 5).map((c) => c.replace(/\s+/g, ' ').trim())).toEqual([
      'Carrier US',
      '203.0.113.5:5061',
      'TCP',
      '+14155550100',
      'No username',
    ]);
    const eu = trunkRow('Carrier EU');
    expect(await eu.locator('[data-badge="default"]').count()).toBe(1);

    // The default trunk cannot go while another exists: the backend's 409 message is shown.
    await eu.getByRole('button', { name: 'Delete Carrier EU' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this trunk?' });
    await confirm.waitFor();
    const refused = page.waitForResponse((r) => r.request().method() === 'DELETE');
    await confirm.getByRole('button', { name: 'Delete trunk' }).click();
    const r409 = await refused;
    expect(r409.status()).toBe(409);
    const err = (JSON.parse(await r409.text()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('conflict');
    const alert = confirm.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(readableMessage(err.code, err.message, undefined));
    expect(err.message).toMatch(/default/i); // it says to mark another trunk the default first
    await shot('trunk-delete-default-refused');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await eu.waitFor();

    // Make the second one the default: the badge moves.
    await us.getByRole('button', { name: 'Make Carrier US the default' }).click();
    await us.locator('[data-badge="default"]').waitFor();
    expect(await page.getByRole('status').first().textContent()).toBe('“Carrier US” is now the default trunk.');
    expect(await eu.locator('[data-badge="default"]').count()).toBe(0);
    expect(await us.getByRole('button', { name: /^Make .* default$/ }).count()).toBe(0);
    await eu.getByRole('button', { name: 'Make Carrier EU the default' }).waitFor();
    const { items } = await listTrunks();
    expect(Object.fromEntries(items.map((t) => [t.name, t.default]))).toEqual({ 'Carrier EU': false, 'Carrier US': true });
    await shot('trunks-two');
  });

  it('removes the credentials of a trunk', async () => {
    const eu = trunkRow('Carrier EU');
    await eu.getByRole('button', { name: 'Edit Carrier EU' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit trunk “Carrier EU”' });
    await dialog.waitFor();
    await dialog.getByLabel('Remove the credentials').check();
    expect(await dialog.getByLabel('Username').isDisabled()).toBe(true);
    expect(await dialog.getByLabel('New password', { exact: true }).isDisabled()).toBe(true);
    const before = sent.length;
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const patch = sentSince(before).find((r) => r.method === 'PATCH')!;
    expect(JSON.parse(patch.body!)).toEqual({ auth_username: null, auth_password: null });
    await eu.getByText('No username', { exact: true }).waitFor();
    expect(await eu.locator('[data-badge="password"]').count()).toBe(0);
    const stored = (await listTrunks()).items.find((t) => t.name === 'Carrier EU')!;
    expect(stored).toMatchObject({ auth_username: null, has_password: false });
  });

  it('deletes a trunk behind a confirmation that keeps the keyboard inside', async () => {
    const eu = trunkRow('Carrier EU');
    await eu.getByRole('button', { name: 'Delete Carrier EU' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this trunk?' });
    await confirm.waitFor();
    // Focus starts on Cancel and Tab wraps inside the dialog; Escape cancels without a request.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Delete trunk');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Delete trunk');
    const before = sent.length;
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Delete Carrier EU'); // focus returns
    expect(sentSince(before)).toEqual([]);

    await page.keyboard.press('Enter');
    await confirm.waitFor();
    expect(await confirm.getByRole('alert').count()).toBe(0); // the earlier refusal is not shown again
    const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE');
    await confirm.getByRole('button', { name: 'Delete trunk' }).click();
    expect((await deleted).status()).toBe(204);
    await confirm.waitFor({ state: 'hidden' });
    await eu.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').first().textContent()).toBe('Trunk “Carrier EU” deleted.');
    const { items } = await listTrunks();
    expect(items.map((t) => [t.name, t.default])).toEqual([['Carrier US', true]]);
  });

  it('shows a bad address on its field when editing, and sends nothing', async () => {
    const us = trunkRow('Carrier US');
    await us.getByRole('button', { name: 'Edit Carrier US' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit trunk “Carrier US”' });
    await dialog.waitFor();
    expect(await dialog.getByText('This is the default trunk.', { exact: false }).count()).toBe(1);
    const before = sent.length;
    await dialog.getByLabel('Address').fill('carrier-us.example.com:70000');
    await dialog.getByLabel('Address').press('Enter');
    expect(await page.locator('#trunk-address-error').textContent()).toBe(
      'Must be a host name or IPv4 address with an optional port (1 to 65535), e.g. sip.example.com or 203.0.113.5:5060. No sip: prefix.',
    );
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('trunk-address');
    expect(sentSince(before)).toEqual([]);
    await shot('trunk-edit-address-error');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await listTrunks()).items[0]).toMatchObject({ name: 'Carrier US', address: '203.0.113.5:5061', transport: 'tcp' });

    // Over the whole run, no answer from the backend ever carried the password.
    for (const body of bodies) expect(body).not.toContain(PASSWORD);
    expect(await pageEverything()).not.toContain(PASSWORD);
  });
});
