// Users and roles in headless Chromium against the real backend: an owner lists users, creates one (its
// one-time password shown once, copied), is refused demoting the last owner (409 last_owner) and deactivates
// and reactivates a user; a new user is held to choosing a password at first sign-in, then goes on; each
// role's console offers only what docs/roles.md lets it do (a viewer: no create/edit buttons, no Users; an
// editor: bots but no API keys, webhooks or trunks edits); an admin may not change an owner (403
// forbidden). Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, ADMIN, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
const run = Date.now().toString(36);
const VIEWER = { email: `viewer-${run}@console-tests.example.com`, name: 'Vera Viewer' };
const NEW_PASSWORD = 'viewer-chosen-password-1';

const shot = (name: string, p: Page = page) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

/** A user made through the API whose one-time password is already changed: their email and password. */
async function userWithRole(role: 'admin' | 'editor' | 'viewer'): Promise<{ email: string; password: string }> {
  const email = `${role}-api-${run}@console-tests.example.com`;
  const created = await admin('POST', '/api/v1/users', { email, name: `${role} by API`, role });
  expect(created.status).toBe(201);
  const login = await fetch(`${BACKEND}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password: created.body.password }) });
  const { access_token } = (await login.json()) as { access_token: string };
  const password = `${role}-own-password-123`;
  const changed = await fetch(`${BACKEND}/api/v1/auth/password`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access_token}` },
    body: JSON.stringify({ current_password: created.body.password, new_password: password }),
  });
  expect(changed.status).toBe(200);
  return { email, password };
}

/** A fresh browser context signed in as `who` at `to`. */
async function signedInAs(who: { email: string; password: string }, to: string): Promise<Page> {
  const p = await (await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } })).newPage();
  await p.goto(`${CONSOLE}${to}`);
  await p.getByLabel('Email').fill(who.email);
  await p.getByLabel('Password').fill(who.password);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.waitForURL(`${CONSOLE}${to}`);
  await p.getByTestId('signed-in-as').waitFor();
  return p;
}

const navLinks = async (p: Page) => (await p.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).map((t) => t.trim());

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: CONSOLE });
  // A bot, so the bots list has rows whose buttons a role may or may not see.
  const bot = await admin('POST', '/api/v1/bots', { name: `Roles bot ${run}`, policy: { intents: [{ name: 'hi', examples: ['hello'], reply: 'Hi.' }], fallback: { reply: 'Sorry?' } } });
  expect(bot.status).toBe(201);
});

afterAll(async () => {
  await browser?.close();
});

describe('users and roles', () => {
  let oneTime = '';

  it('lists users and creates one, showing its one-time password once with a copy button', async () => {
    await signInAt(page, '/users');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');
    const owner = page.locator(`tr[data-email="${ADMIN.email}"]`);
    await owner.waitFor();
    expect(await owner.locator('td[data-role]').textContent()).toBe('owner');
    expect(await page.getByTestId('signed-in-as').textContent()).toContain('owner');

    await page.getByRole('button', { name: 'New user' }).click();
    const form = page.getByRole('dialog', { name: 'New user' });
    await form.getByRole('button', { name: 'Create user' }).click();
    expect(await page.locator('#user-email-error').textContent()).toBe('Enter an email address, e.g. ana@example.com.');
    expect(await page.locator('#user-name-error').textContent()).toBe('Enter a name.');
    await form.getByLabel('Email').fill(VIEWER.email);
    await form.getByLabel('Name').fill(VIEWER.name);
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Create user' }).click();

    const dialog = page.getByRole('dialog', { name: 'Copy the one-time password' });
    await dialog.waitFor();
    expect(await dialog.getByRole('alert').textContent()).toContain('This is the only time the password is shown.');
    oneTime = await dialog.getByLabel(`One-time password for ${VIEWER.email}`).inputValue();
    expect(oneTime.length).toBeGreaterThanOrEqual(12);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(oneTime);
    await shot('users-created');
    await dialog.getByRole('button', { name: 'I have copied the password' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe(`User ${VIEWER.email} created. They choose their own password when they first sign in.`);
    expect(await page.content()).not.toContain(oneTime);
    const row = page.locator(`tr[data-email="${VIEWER.email}"]`);
    expect(await row.locator('td[data-role]').textContent()).toBe('viewer');
    await row.locator('[data-badge="one-time"]').waitFor();
  });

  it('refuses demoting the last owner (409 last_owner), deactivates and reactivates a user', async () => {
    await page.getByRole('button', { name: `Edit ${ADMIN.email}` }).click();
    const form = page.getByRole('dialog', { name: `Edit user ${ADMIN.email}` });
    await form.getByLabel('Role').selectOption('admin');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toContain('last active owner');
    await shot('users-last-owner');
    await form.getByRole('button', { name: 'Cancel' }).click();
    expect((await admin('GET', '/api/v1/auth/me')).body.role).toBe('owner');

    await page.getByRole('button', { name: `Deactivate ${VIEWER.email}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Deactivate this user?' });
    await confirm.getByRole('button', { name: 'Deactivate user' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(await page.getByRole('status').first().textContent()).toBe(`User ${VIEWER.email} deactivated: they are signed out and cannot sign in.`);
    const row = page.locator(`tr[data-email="${VIEWER.email}"]`);
    expect(await row.locator('vp-status-badge').getAttribute('status')).toBe('inactive');
    await page.getByRole('button', { name: `Reactivate ${VIEWER.email}` }).click();
    await page.getByRole('status').filter({ hasText: 'reactivated' }).waitFor();
    expect(await row.locator('vp-status-badge').getAttribute('status')).toBe('active');
    await shot('users');
  });

  it('holds a new user to choosing a password at first sign-in, then shows a viewer no buttons it cannot use', async () => {
    const p = await (await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } })).newPage();
    await p.goto(`${CONSOLE}/bots`);
    await p.getByLabel('Email').fill(VIEWER.email);
    await p.getByLabel('Password').fill(oneTime);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${CONSOLE}/change-password?next=%2Fbots`);
    await p.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await p.getByLabel('Current password').fill(oneTime);
    await p.locator('#password-new').fill('short');
    await p.getByRole('button', { name: 'Change password' }).click();
    expect(await p.locator('#password-new-error').textContent()).toBe('At least 12 characters.');
    await p.locator('#password-new').fill(NEW_PASSWORD);
    await p.locator('#password-repeat').fill(NEW_PASSWORD);
    await shot('change-password', p);
    await p.getByRole('button', { name: 'Change password' }).click();
    await p.waitForURL(`${CONSOLE}/bots`);
    await p.getByRole('heading', { name: 'Bots', level: 1 }).waitFor();
    await p.locator('tr[data-bot-id]').first().waitFor();

    // The old one-time password no longer signs in; the new one does (through the API).
    const login = await fetch(`${BACKEND}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: VIEWER.email, password: NEW_PASSWORD }) });
    expect(login.status).toBe(200);
    expect(((await login.json()) as { must_change_password: boolean }).must_change_password).toBe(false);

    // A viewer: no Users link, no create or change buttons anywhere.
    expect(await navLinks(p)).toEqual(['Dashboard', 'API keys', 'Bots', 'Calls', 'Trunks', 'Inbound numbers', 'Knowledge', 'Campaigns', 'Webhooks', 'Do-not-call']);
    expect(await p.getByRole('link', { name: 'New bot' }).count()).toBe(0);
    expect(await p.getByRole('button', { name: /^(Activate|Deactivate) / }).count()).toBe(0);
    // The rows' Test call buttons (links to /bots/{id}/test-call); a bot's own name may start with "Test call"
    // (testcall.test's bot shares this backend).
    expect(await p.locator('a[href$="/test-call"]').count()).toBe(0);
    await shot('role-viewer-bots', p);
    for (const [link, heading] of [['API keys', 'API keys'], ['Trunks', 'Outbound trunks'], ['Inbound numbers', 'Inbound numbers'], ['Webhooks', 'Webhooks'], ['Do-not-call', 'Do-not-call list'], ['Campaigns', 'Campaigns']] as const) {
      await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link, exact: true }).click();
      await p.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await p.locator('.loading').waitFor({ state: 'detached' });
      const buttons = await p.locator('main button:visible, main a.button:visible').allTextContents();
      expect([link, buttons.map((b) => b.trim()).filter((b) => /^(New|Create|Edit|Delete|Remove|Deactivate|Add|Make default|Pause|Resume|Send test)/.test(b))]).toEqual([link, []]);
    }
    await shot('role-viewer-dnc', p);
    await p.context().close();
  });

  it('shows an editor bots, campaigns and do-not-call changes, but no API keys, webhooks or trunks edits and no Users', async () => {
    const p = await signedInAs(await userWithRole('editor'), '/bots');
    expect(await navLinks(p)).not.toContain('Users');
    await p.getByRole('link', { name: 'New bot' }).waitFor();
    await p.getByRole('button', { name: /^(Activate|Deactivate) / }).first().waitFor();
    expect(await p.locator('a[href$="/test-call"]').count()).toBe(await p.locator('tr[data-bot-id]').count()); // a Test call on each bot
    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await p.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    expect(await p.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Do-not-call' }).click();
    await p.getByRole('button', { name: 'Add to the list' }).waitFor();
    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await p.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await p.locator('.loading').waitFor({ state: 'detached' });
    expect(await p.getByRole('button', { name: /^(New webhook|Create the first webhook|Edit |Delete )/ }).count()).toBe(0);
    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trunks' }).click();
    await p.getByRole('heading', { name: 'Outbound trunks', level: 1 }).waitFor();
    await p.locator('.loading').waitFor({ state: 'detached' });
    expect(await p.getByRole('button', { name: /^(New trunk|Create the first trunk|Edit |Delete |Make )/ }).count()).toBe(0);
    await shot('role-editor-trunks', p);
    await p.context().close();
  });

  it('lets an admin manage users but not change an owner (403 forbidden shown)', async () => {
    const p = await signedInAs(await userWithRole('admin'), '/users');
    const owner = p.locator(`tr[data-email="${ADMIN.email}"]`);
    await owner.waitFor();
    await p.getByRole('button', { name: 'New user' }).click();
    const newForm = p.getByRole('dialog', { name: 'New user' });
    expect(await newForm.getByLabel('Role').locator('option').allTextContents()).toEqual(['admin', 'editor', 'viewer']);
    await newForm.getByRole('button', { name: 'Cancel' }).click();

    await p.getByRole('button', { name: `Edit ${ADMIN.email}` }).click();
    const form = p.getByRole('dialog', { name: `Edit user ${ADMIN.email}` });
    await form.getByLabel('Name').fill('Renamed by an admin');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toBe('Only an owner may change an owner or make one.');
    await shot('users-admin-forbidden', p);
    await p.context().close();
  });
});
