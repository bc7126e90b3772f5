// Redaction and recording in the console (shared/DESIGN.md §16), in headless Chromium against the real backend:
// the bot editor's Privacy section shows a bot made before the settings as no redaction and recorded, saves the
// entities checked, redact_llm and the recording settings, and reopens them as saved. Screenshot in
// test-artifacts/console/.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { admin, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
beforeAll(async () => {
  ({ browser, page } = await launchPage());
});
afterAll(async () => {
  await browser?.close();
});

it('the bot editor saves what is redacted and recorded, and reopens it as saved', async () => {
  const created = await admin('POST', '/api/v1/bots', { name: 'Card taker' });
  expect(created.status).toBe(201);
  const botId = created.body.id as string;
  await signInAt(page, `/bots/${botId}`);
  const section = page.getByRole('group', { name: 'Privacy' });
  await section.waitFor();
  for (const label of ['Card numbers', 'US social security numbers', 'Email addresses', 'Phone numbers', 'Mask them for the language model too', 'Silence keypad tones in the recording']) {
    expect(await section.getByLabel(label).isChecked()).toBe(false);
  }
  expect(await section.getByLabel('Record calls').isChecked()).toBe(true);

  await section.getByLabel('Phone numbers').check();
  await section.getByLabel('Card numbers').check();
  await section.getByLabel('Silence keypad tones in the recording').check();
  await section.getByLabel('Record calls').uncheck();
  const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
  await page.getByRole('button', { name: 'Save changes' }).click();
  expect((await saved).status()).toBe(200);
  const bot = (await admin('GET', `/api/v1/bots/${botId}`)).body;
  expect(bot.redaction).toEqual({ entities: ['card_number', 'phone'], mode: 'mask', redact_llm: false });
  expect(bot.recording).toEqual({ enabled: false, redact_keypad_tones: true });

  await page.reload();
  await section.waitFor();
  expect(await section.getByLabel('Card numbers').isChecked()).toBe(true);
  expect(await section.getByLabel('Phone numbers').isChecked()).toBe(true);
  expect(await section.getByLabel('Email addresses').isChecked()).toBe(false);
  expect(await section.getByLabel('Record calls').isChecked()).toBe(false);
  await page.locator('#bot-privacy').screenshot({ path: path.join(SHOTS, 'bot-privacy.png') });
});
