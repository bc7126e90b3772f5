// The Knowledge page and the bot editor's knowledge, MCP and filler fields, in headless Chromium against the real
// backend (its MinIO for the originals): a base created, a document uploaded and listed with its chunk count, a
// "PDF" that is not one refused with the backend's reason, the base picked on a bot with an MCP server (header
// values write-only) and a tool filler, the base kept while a bot uses it, and a document deleted after
// confirming. Screenshots go to test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, launchPage, SHOTS, signInAt } from './support.js';

/** Unique per run: the suite's backend keeps what earlier runs made. */
const BASE = `Help centre ${Date.now().toString(36)}`;
const MD = '# Refunds\n\nRefunds are paid within fourteen days.\n';
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ browser, page } = await launchPage());
});
afterAll(async () => {
  await browser?.close();
});

describe('knowledge page', () => {
  it('creates a base, uploads a document, refuses a fake PDF, and a bot picks the base with an MCP server and a filler', async () => {
    await signInAt(page, '/knowledge');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Knowledge' }).getAttribute('aria-current')).toBe('page');
    await page.getByLabel('New knowledge base').fill(BASE);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').filter({ hasText: `${BASE} created` }).waitFor();

    await page.getByLabel('Document', { exact: true }).setInputFiles({ name: 'refunds.md', mimeType: 'text/markdown', buffer: Buffer.from(MD) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('status').filter({ hasText: 'refunds.md added: 1 chunk.' }).waitFor();
    const row = page.locator('tr[data-document="refunds.md"]');
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(0, 4)).toEqual(['refunds.md', 'text/markdown', `${Buffer.byteLength(MD)} B`, '1']);

    await page.getByLabel('Document', { exact: true }).setInputFiles({ name: 'fake.pdf', mimeType: 'application/pdf', buffer: Buffer.from('not a pdf at all') });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.locator('#kb-file-error').waitFor();
    expect(await page.locator('#kb-file-error').textContent()).toContain('not a PDF');
    const bases = (await admin('GET', '/api/v1/knowledge-bases')).body.items as Array<{ id: string; name: string; document_count: number; chunk_count: number }>;
    const kb = bases.find((b) => b.name === BASE)!;
    await page.locator(`tr[data-kb="${kb.id}"]`).waitFor();
    expect(kb).toMatchObject({ document_count: 1, chunk_count: 1 });
    expect(await page.locator(`tr[data-kb="${kb.id}"] td`).allTextContents()).toEqual([BASE, '1', '1', 'Delete']);
    await page.screenshot({ path: path.join(SHOTS, 'knowledge.png'), fullPage: true });

    // The bot editor: the base picked, an MCP server with a write-only header, an HTTP tool's filler.
    const bot = await admin('POST', '/api/v1/bots', { name: `Knowledge e2e ${BASE}`, tools: [{ name: 'lookup', description: 'Looks up an order', type: 'http', url: 'http://127.0.0.1:9/lookup' }] });
    expect(bot.status).toBe(201);
    await page.goto(`${process.env.VP_CONSOLE_URL}/bots/${bot.body.id}`);
    await page.locator('#bot-knowledge').getByLabel(BASE).check();
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    await page.getByLabel('Server name').fill('crm');
    await page.getByLabel('Server URL').fill('http://127.0.0.1:9/mcp');
    await page.getByLabel('Allowed tools').fill('lookup_order, open_amount');
    await page.locator('#bot-mcp').getByLabel('Headers').fill('Authorization: Bearer mcp-e2e-secret');
    await page.getByLabel('Filler when slow').fill('Still checking, one moment.');
    await page.getByLabel('Filler after (ms)').fill('1200');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: /saved/i }).waitFor();
    const saved = (await admin('GET', `/api/v1/bots/${bot.body.id}`)).body;
    expect(saved.knowledge_base_ids).toEqual([kb.id]);
    expect(saved.mcp_servers).toEqual([{ name: 'crm', url: 'http://127.0.0.1:9/mcp', allowed_tools: ['lookup_order', 'open_amount'], header_names: ['Authorization'] }]);
    expect(saved.tools[0]).toMatchObject({ filler: 'Still checking, one moment.', filler_after_ms: 1200 });
    expect(await page.content()).not.toContain('mcp-e2e-secret');
    await page.locator('#bot-mcp').screenshot({ path: path.join(SHOTS, 'bot-mcp-knowledge.png') });

    // A base a bot uses is kept; a document goes after confirming.
    await page.goto(`${process.env.VP_CONSOLE_URL}/knowledge`);
    await page.locator(`tr[data-kb="${kb.id}"]`).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alert').filter({ hasText: 'Knowledge e2e' }).waitFor();
    await page.locator('tr[data-document="refunds.md"]').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('kb-docs-empty').waitFor();
    expect((await admin('GET', `/api/v1/knowledge-bases/${kb.id}/documents`)).body.items).toEqual([]);
  });
});
