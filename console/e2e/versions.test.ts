// Bot versions in the console, in headless Chromium against the real backend (shared/DESIGN.md §17): a save
// is a new version, published at once; the list shows which one calls run; a rollback publishes an older
// one; a diff of two versions shows the changed lines; a bot that requires passing tests keeps a save as a
// draft and its publish is refused with the reason while no test run is green.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

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

const versions = () => page.getByTestId('bot-versions');
const row = (n: number) => versions().locator(`tr[data-version="${n}"]`);

async function saveWithPrompt(text: string, notice: RegExp): Promise<void> {
  await page.getByRole('textbox', { name: 'Prompt' }).fill(text);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: notice }).waitFor();
}

describe('bot versions in the console', () => {
  it('saves versions, rolls back, and shows the diff of two versions', async () => {
    const created = await admin('POST', '/api/v1/bots', { name: 'Versions e2e', prompt: 'Remind the customer politely.' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await signInAt(page, `/bots/${id}`);
    await row(1).waitFor();
    expect(await row(1).textContent()).toContain('Published');

    await saveWithPrompt('Remind the customer briefly and politely.', /Changes saved\. Version 2 is published\./);
    await row(2).waitFor();
    expect(await row(2).textContent()).toContain('Published');
    expect(await row(1).getByRole('button').textContent()).toContain('Roll back to version 1');

    // The rollback: calls run version 1 again; version 2 is offered for publishing as a newer one.
    await row(1).getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByRole('status').filter({ hasText: 'Rolled back: calls now run version 1.' }).waitFor();
    expect(await page.getByTestId('published-version').textContent()).toBe('version 1');
    expect(await row(1).textContent()).toContain('Published');
    expect(await row(2).textContent()).toContain('Draft');
    expect((await admin('GET', `/api/v1/bots/${id}`)).body).toMatchObject({ version: 2, published_version: 1 });

    // Compare the published version 1 with the latest, 2 (the defaults): the prompt's line, removed and added.
    await versions().getByRole('button', { name: 'Show differences' }).click();
    const diff = page.getByTestId('bot-diff');
    await diff.waitFor();
    expect(await diff.locator('del').allTextContents()).toEqual(['-   "prompt": "Remind the customer politely.",\n']);
    expect(await diff.locator('ins').allTextContents()).toEqual(['+   "prompt": "Remind the customer briefly and politely.",\n']);
    expect(await versions().getByRole('status').textContent()).toBe('2 lines differ between version 1 and version 2.');
    await versions().screenshot({ path: path.join(SHOTS, 'bot-versions.png') });

    await row(2).getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 2 published: calls now run it.' }).waitFor();
    expect(await page.getByTestId('published-version').textContent()).toBe('version 2');
    expect(pageErrors).toEqual([]);
  });

  it('a bot requiring passing tests keeps a save as a draft, and its publish is refused while no run is green', async () => {
    const created = await admin('POST', '/api/v1/bots', { name: 'Gated e2e', prompt: 'First.', require_passing_tests: true });
    const id = created.body.id as string;
    await page.goto(`${CONSOLE}/bots/${id}`); // signed in by the first test
    await row(1).waitFor();
    expect(await page.getByLabel('Require passing tests to publish').isChecked()).toBe(true);
    await saveWithPrompt('Second.', /Changes saved\. Version 2 is a draft: publish it once its tests pass\./);
    await row(2).waitFor();
    expect(await row(2).textContent()).toContain('Draft');
    expect(await page.getByTestId('published-version').textContent()).toBe('version 1');

    await row(2).getByRole('button', { name: 'Publish version 2' }).click();
    await versions().getByRole('alert').filter({ hasText: 'Version 2 cannot be published: its last test run is not all green.' }).waitFor();
    expect((await admin('GET', `/api/v1/bots/${id}`)).body).toMatchObject({ version: 2, published_version: 1 });
    await page.screenshot({ path: path.join(SHOTS, 'bot-versions-draft.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
