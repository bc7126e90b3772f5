// The audit page in headless Chromium against the real backend: changes made through the API (a bot's
// prompt by a second admin, an API key created and deactivated, a user created: their one-time password
// redacted, many bot updates for a second page) listed newest first as the API answers the page's own
// request; each change as field: before → after; the actor, resource type, action and day filters change
// the request and the rows; "Show more" reads the next page by cursor; an editor has no Audit link.
// Screenshot: test-artifacts/console/audit.png.
import path from 'node:path';
import type { Browser, Page, Response } from 'playwright-core';
import { admin, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
const run = Date.now().toString(36);
let botId = '';
let keyId = '';
let auditor = { id: '', email: '', password: '', token: '' };

/** A user made through the API with their one-time password changed: id, email, password, a token. */
async function userWithRole(role: 'admin' | 'editor', name: string) {
  const email = `${name}-${run}@console-tests.example.com`;
  const created = await admin('POST', '/api/v1/users', { email, name, role });
  expect(created.status).toBe(201);
  const login = await fetch(`${BACKEND}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password: created.body.password }) });
  const { access_token } = (await login.json()) as { access_token: string };
  const password = `${name}-own-password-123`;
  const changed = await fetch(`${BACKEND}/api/v1/auth/password`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access_token}` },
    body: JSON.stringify({ current_password: created.body.password, new_password: password }),
  });
  expect(changed.status).toBe(200);
  return { id: created.body.id as string, email, password, token: ((await changed.json()) as { access_token: string }).access_token };
}

/** The next audit list answer the page receives (its request's query and its body). */
async function nextAuditAnswer(act: () => Promise<unknown>): Promise<{ query: URLSearchParams; body: { items: Array<{ id: string; action: string; actor: { id: string | null }; changes: Record<string, [unknown, unknown]> }>; next_cursor: string | null } }> {
  const [res] = await Promise.all([page.waitForResponse((r: Response) => new URL(r.url()).pathname === '/api/v1/audit' && r.request().method() === 'GET'), act()]);
  expect(res.status()).toBe(200);
  return { query: new URL(res.url()).searchParams, body: await res.json() };
}

const rowIds = () => page.locator('tr[data-audit-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-audit-id')));

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  const bot = await admin('POST', '/api/v1/bots', { name: `Audited bot ${run}`, prompt: 'You remind customers of renewals.' });
  expect(bot.status).toBe(201);
  botId = bot.body.id;
  const key = await admin('POST', '/api/v1/api-keys', { name: `Audited key ${run}` });
  expect(key.status).toBe(201);
  keyId = key.body.id;
  expect((await admin('PATCH', `/api/v1/api-keys/${keyId}`, { is_active: false })).status).toBe(200);
  // A second admin changes the bot's prompt.
  auditor = await userWithRole('admin', 'auditor');
  const patched = await fetch(`${BACKEND}/api/v1/bots/${botId}`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${auditor.token}` },
    body: JSON.stringify({ prompt: 'You remind customers of renewals, politely.' }),
  });
  expect(patched.status).toBe(200);
  // Enough bot updates for a second page of 50.
  for (let i = 0; i < 52; i++) {
    const r = await fetch(`${BACKEND}/api/v1/bots/${botId}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${auditor.token}` },
      body: JSON.stringify({ name: `Audited bot ${run} v${i + 1}` }),
    });
    expect(r.status).toBe(200);
  }
});

afterAll(async () => {
  await browser?.close();
});

describe('audit log', () => {
  it('lists the entries newest first, as the API answers, with each change as field: before → after', async () => {
    const first = await nextAuditAnswer(() => signInAt(page, '/audit'));
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).getAttribute('aria-current')).toBe('page');
    expect([...first.query.keys()].sort()).toEqual(['limit']);
    await page.locator('tr[data-audit-id]').first().waitFor();
    expect(await rowIds()).toEqual(first.body.items.map((e) => e.id));
    // Newest first: the sign-in that opened the page is the first entry.
    expect(first.body.items[0]!.action).toBe('auth.login');
    expect(first.body.items.length).toBe(50);
    expect(first.body.next_cursor).not.toBeNull();
    await page.getByRole('button', { name: 'Show more' }).waitFor();

    // The latest rename by the second admin: name before → after.
    const rename = page.locator('tr[data-action="bot.update"]').first();
    expect(await rename.locator('li[data-field="name"]').textContent()).toMatch(new RegExp(`^\\s*name: Audited bot ${run} v51 → Audited bot ${run} v52\\s*$`));
    expect((await rename.locator('td').nth(1).textContent())!.trim()).toBe(auditor.email);
  });

  it('filters by actor, resource type, action and day; the request carries each filter', async () => {
    // Actor: the second admin; their prompt change among their entries, the rows those of the answer.
    const byActor = await nextAuditAnswer(() => page.getByLabel('Actor').selectOption({ label: auditor.email }));
    expect(byActor.query.get('actor_id')).toBe(auditor.id);
    await page.waitForFunction((id) => Array.from(document.querySelectorAll('tr[data-audit-id] td[data-actor-id]')).every((td) => td.getAttribute('data-actor-id') === id), auditor.id);
    expect(byActor.body.items.every((e) => e.actor.id === auditor.id)).toBe(true);
    // Show more: the next page by cursor, after the first.
    expect(byActor.body.next_cursor).not.toBeNull();
    const more = await nextAuditAnswer(() => page.getByRole('button', { name: 'Show more' }).click());
    expect(more.query.get('cursor')).toBe(byActor.body.next_cursor);
    expect(more.query.get('actor_id')).toBe(auditor.id);
    await page.locator(`tr[data-audit-id="${more.body.items[more.body.items.length - 1]!.id}"]`).waitFor();
    const all = [...byActor.body.items, ...more.body.items];
    expect(await rowIds()).toEqual(all.map((e) => e.id));
    expect(more.body.next_cursor).toBeNull();
    expect(await page.getByRole('button', { name: 'Show more' }).count()).toBe(0);
    // Theirs: the sign-in with the one-time password, its change, then the bot's prompt and 52 renames.
    expect(all.filter((e) => e.action === 'bot.update')).toHaveLength(53);
    expect(all.map((e) => e.action)).toEqual(expect.arrayContaining(['auth.login', 'user.change_password']));
    const prompt = all.find((e) => e.action === 'bot.update' && 'prompt' in e.changes)!;
    expect(prompt.changes.prompt).toEqual(['You remind customers of renewals.', 'You remind customers of renewals, politely.']);
    expect(await page.locator(`tr[data-audit-id="${prompt.id}"] li[data-field="prompt"]`).textContent()).toMatch(/^\s*prompt: You remind customers of renewals\. → You remind customers of renewals, politely\.\s*$/);

    // Resource type and action: the API key's deactivation, alone (with the actor filter cleared).
    await nextAuditAnswer(() => page.getByLabel('Actor').selectOption(''));
    await nextAuditAnswer(() => page.getByLabel('Resource type').selectOption('api_key'));
    const deact = await nextAuditAnswer(async () => {
      await page.getByLabel('Action').fill('api_key.deactivate');
      await page.getByLabel('Action').press('Enter');
      await page.getByLabel('Action').blur();
    });
    expect(Object.fromEntries(deact.query)).toEqual({ resource_type: 'api_key', action: 'api_key.deactivate', limit: '50' });
    const keyEntries = deact.body.items.filter((e) => (e as unknown as { resource: { id: string } }).resource.id === keyId);
    expect(keyEntries).toHaveLength(1);
    const keyRow = page.locator(`tr[data-audit-id="${keyEntries[0]!.id}"]`);
    await keyRow.waitFor();
    expect(await page.locator('tr[data-audit-id]').count()).toBe(deact.body.items.length);
    const changed = Object.entries(keyEntries[0]!.changes);
    expect(changed.length).toBeGreaterThan(0);
    for (const [name] of changed) await keyRow.locator(`li[data-field="${name}"]`).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'audit.png'), fullPage: true });

    // A user's creation: their one-time password never in the entry, "[redacted]" where it was.
    await nextAuditAnswer(() => page.getByRole('button', { name: 'Clear filters' }).click());
    const created = await nextAuditAnswer(() => page.getByLabel('Resource type').selectOption('user'));
    expect(created.query.get('resource_type')).toBe('user');
    const userCreate = created.body.items.find((e) => e.action === 'user.create')!;
    const body = JSON.stringify(userCreate.changes);
    expect(body).toContain('[redacted]');
    const redacted = Object.entries(userCreate.changes).find(([, v]) => v.includes('[redacted]'))![0];
    expect(await page.locator(`tr[data-audit-id="${userCreate.id}"] li[data-field="${redacted}"]`).textContent()).toContain('[redacted]');

    // Days: from tomorrow on, nothing yet; the request carries the day's start.
    const tomorrow = new Date(Date.now() + 24 * 3600_000).toISOString().slice(0, 10);
    const later = await nextAuditAnswer(() => page.getByLabel('From day').fill(tomorrow));
    expect(later.query.get('from')).toBe(`${tomorrow}T00:00:00.000Z`);
    await page.getByText('No entries match these filters.').waitFor();
  });

  it('shows an editor no Audit link', async () => {
    const editor = await userWithRole('editor', 'audit-editor');
    const p = await (await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } })).newPage();
    await p.goto(`${CONSOLE}/bots`);
    await p.getByLabel('Email').fill(editor.email);
    await p.getByLabel('Password').fill(editor.password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${CONSOLE}/bots`);
    await p.getByTestId('signed-in-as').waitFor();
    const links = (await p.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).map((t) => t.trim());
    expect(links).toContain('Bots');
    expect(links).not.toContain('Audit log');
    await p.context().close();
  });
});
