// API key scopes on the API keys page in headless Chromium against the real backend: the creation form's
// Scopes (dialout and calls:read ticked by default, at least one before anything is sent), a key made with
// only calls:read (the list and the API say exactly that, and the dial-out refuses it with 403), its scopes
// widened in the edit dialog (only the scopes sent), no scopes to change on an inactive key, and a viewer
// who sees the scopes but no way to change them. Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
const run = Date.now().toString(36);
const READER = `Reporting ${run}`;
/** What the page sent to the backend: method, path and JSON body. */
const sent: Array<{ method: string; path: string; body: unknown }> = [];
/** The full key the once-only dialog showed. */
let readerKey = '';
/** Keys this suite made, deactivated after it (keys are never deleted). */
const made: string[] = [];

const shot = (name: string, p: Page = page) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const keyRow = (p: Page, name: string) => p.locator('tr[data-key-id]').filter({ has: p.getByRole('cell', { name, exact: true }) });
/** The scopes a row lists (the Scopes column holds one `<code>` per scope). */
const rowScopes = (p: Page, name: string) => keyRow(p, name).locator('td').nth(6).locator('code').allTextContents();
const scopeBox = (scope: string, within: Pick<Page, 'getByRole'> = page) => within.getByRole('checkbox', { name: scope, exact: true });

async function apiKeyByPrefix(prefix: string): Promise<{ id: string; scopes: string[] }> {
  const { status, body } = await admin('GET', '/api/v1/api-keys');
  expect(status).toBe(200);
  return (body.items as Array<{ id: string; prefix: string; scopes: string[] }>).find((k) => k.prefix === prefix)!;
}

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    if (!r.url().startsWith(BACKEND) || r.method() === 'OPTIONS') return;
    const data = r.postData();
    sent.push({ method: r.method(), path: new URL(r.url()).pathname, body: data ? JSON.parse(data) : undefined });
  });
});

afterAll(async () => {
  await browser?.close();
  for (const id of made) await admin('PATCH', `/api/v1/api-keys/${id}`, { is_active: false });
});

describe('API key scopes', () => {
  it('creates a key with only calls:read: the form asks for a scope first, the list and the API show exactly it, and the dial-out refuses it', async () => {
    await signInAt(page, '/api-keys');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    const scopes = page.getByRole('group', { name: 'Scopes' });
    await scopes.waitFor();
    // The defaults: dialout and calls:read.
    const ticked = await Promise.all(['dialout', 'calls:read', 'test_calls', 'campaigns'].map((s) => scopeBox(s, scopes).isChecked()));
    expect(ticked).toEqual([true, true, false, false]);
    expect(await scopeBox('test_calls', scopes).getAttribute('id')).toBe('key-scopes-test_calls');
    expect(await scopeBox('test_calls', scopes).getAttribute('aria-describedby')).toBe('key-scopes-test_calls-hint');
    expect(await page.locator('#key-scopes-test_calls-hint').textContent()).toBe('Start browser and WebSocket test calls.');

    // None ticked: the error on the group and focus on its first box, nothing sent.
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill(READER);
    await scopeBox('dialout', scopes).uncheck();
    await scopeBox('calls:read', scopes).uncheck();
    const before = sent.length;
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.locator('#key-scopes-error').textContent()).toBe('Choose at least one scope.');
    expect(await scopes.getAttribute('aria-describedby')).toBe('key-scopes-error');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('key-scopes-dialout');
    expect(sent.slice(before).filter((r) => r.method === 'POST')).toEqual([]);
    await page.locator('#create-key-form').screenshot({ path: path.join(SHOTS, 'api-key-scopes-error.png') });

    await scopeBox('calls:read', scopes).check();
    expect(await page.locator('#key-scopes-error').count()).toBe(0); // cleared once a scope is chosen
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy your new API key' });
    await dialog.waitFor();
    readerKey = await dialog.getByLabel(`API key “${READER}”`).inputValue();
    await dialog.getByRole('button', { name: 'I have copied the key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(sent.filter((r) => r.method === 'POST' && r.path === '/api/v1/api-keys').map((r) => r.body)).toEqual([{ name: READER, expires_at: null, scopes: ['calls:read'] }]);
    // The form is back at the defaults for the next key.
    expect(await scopeBox('dialout', scopes).isChecked()).toBe(true);

    await keyRow(page, READER).waitFor();
    expect(await page.getByRole('columnheader', { name: 'Scopes' }).count()).toBe(1);
    expect(await rowScopes(page, READER)).toEqual(['calls:read']);

    const stored = await apiKeyByPrefix(readerKey.slice(0, 7));
    made.push(stored.id);
    expect(stored.scopes).toEqual(['calls:read']);
    // A key without dialout may not dial out.
    const r = await fetch(`${BACKEND}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': readerKey },
      body: JSON.stringify({ bot_id: '0123456789abcdef01234567', to_number: '+15005550100' }),
    });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    await shot('api-keys-scopes');
  });

  it('adds dialout in the edit dialog, sending only the scopes; an inactive key offers no scopes to change', async () => {
    const dialog = page.getByRole('dialog', { name: 'Edit API key' });
    await keyRow(page, READER).getByRole('button', { name: `Edit ${READER}` }).click();
    await dialog.waitFor();
    const scopes = dialog.getByRole('group', { name: 'Scopes' });
    expect(await Promise.all(['dialout', 'calls:read', 'test_calls', 'campaigns'].map((s) => scopeBox(s, scopes).isChecked()))).toEqual([false, true, false, false]);

    // Unticking the only scope: refused in the dialog, nothing sent.
    const before = sent.length;
    await scopeBox('calls:read', scopes).uncheck();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('#edit-key-scopes-error').textContent()).toBe('Choose at least one scope.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('edit-key-scopes-dialout');
    expect(sent.length).toBe(before);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // Reopened, it starts from the key again.
    await keyRow(page, READER).getByRole('button', { name: `Edit ${READER}` }).click();
    await dialog.waitFor();
    expect(await scopeBox('calls:read', scopes).isChecked()).toBe(true);
    await scopeBox('dialout', scopes).check();
    await shot('api-key-edit-scopes');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe(`API key “${READER}” updated.`);
    expect(sent.slice(before).filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([{ scopes: ['dialout', 'calls:read'] }]);
    await page.waitForFunction((name) => Array.from(document.querySelectorAll('tr[data-key-id]')).some((tr) => tr.textContent?.includes(name) && tr.textContent.includes('dialout')), READER);
    expect(await rowScopes(page, READER)).toEqual(['dialout', 'calls:read']);
    expect((await apiKeyByPrefix(readerKey.slice(0, 7))).scopes).toEqual(['dialout', 'calls:read']);

    // Renaming alone leaves the scopes out of the request.
    await keyRow(page, READER).getByRole('button', { name: `Edit ${READER}` }).click();
    await dialog.waitFor();
    const renamed = `${READER} (CRM)`;
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill(renamed);
    const beforeRename = sent.length;
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(sent.slice(beforeRename).filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([{ name: renamed }]);
    await keyRow(page, renamed).waitFor();

    // An inactive key: its scopes are listed, with nothing to change them.
    const old = await admin('POST', '/api/v1/api-keys', { name: `Retired ${run}`, scopes: ['test_calls', 'campaigns'] });
    expect(old.status).toBe(201);
    made.push(old.body.id as string);
    expect((await admin('PATCH', `/api/v1/api-keys/${old.body.id as string}`, { is_active: false })).status).toBe(200);
    await page.reload();
    const retired = keyRow(page, `Retired ${run}`);
    await retired.locator('[data-status="inactive"]').waitFor();
    expect(await rowScopes(page, `Retired ${run}`)).toEqual(['test_calls', 'campaigns']);
    expect(await retired.getByRole('button').count()).toBe(0);
    expect(await retired.getByRole('checkbox').count()).toBe(0);
  });

  it('shows a viewer the scopes, with no form and no edit controls', async () => {
    const email = `viewer-keys-${run}@console-tests.example.com`;
    const created = await admin('POST', '/api/v1/users', { email, name: 'Keys viewer', role: 'viewer' });
    expect(created.status).toBe(201);
    const password = 'viewer-keys-password-123';
    const login = await fetch(`${BACKEND}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password: created.body.password }) });
    const { access_token } = (await login.json()) as { access_token: string };
    const changed = await fetch(`${BACKEND}/api/v1/auth/password`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ current_password: created.body.password, new_password: password }),
    });
    expect(changed.status).toBe(200);

    const p = await (await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } })).newPage();
    await p.goto(`${CONSOLE}/api-keys`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${CONSOLE}/api-keys`);
    const renamed = `${READER} (CRM)`;
    await keyRow(p, renamed).waitFor();
    expect(await rowScopes(p, renamed)).toEqual(['dialout', 'calls:read']);
    expect(await p.getByRole('group', { name: 'Scopes' }).count()).toBe(0);
    expect(await p.locator('main').getByRole('checkbox').count()).toBe(0);
    expect(await p.locator('main button:visible').allTextContents()).not.toContainEqual(expect.stringMatching(/^(Create|Edit|Deactivate)/));
    await shot('role-viewer-api-keys-scopes', p);
    await p.context().close();
  });
});
