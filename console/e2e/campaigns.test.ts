// The Campaigns pages in headless Chromium against the real backend (its dialler role runs campaigns), the
// suite's real worker and the test phone (sipp) behind an outbound trunk created here: a draft created
// through the form (validated with the shared schema first), a CSV file (BOM, CRLF, quotes, a blank
// line, bad rows) previewed and mapped (same-named columns mapped already, the rest by hand), uploaded as
// the backend's CSV with the per-row report, then started and watched to `completed` (progress bar and
// counts refreshed by the page: the phone hangs up on one number, answers another busy, knows no third);
// and a second campaign, outside its calling window (with answering machine settings of its own and a voicemail retry), started, paused, resumed and canceled (after
// confirming), with the backend's refusal of a stale action shown. The finished campaign's results download as
// the backend's CSV (fetched with the admin token, saved under its name). Screenshots go to test-artifacts/console/.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { PHONE_NUMBERS } from '@voice-platform/tests/infra';
import { admin, BACKEND, CONSOLE, launchPage, SHOTS, signInAt } from './support.js';

const TRUNKS = '/api/v1/sip/outbound-trunks';
const BOT_NAME = 'Renewal caller (campaign e2e)';
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAY_LABELS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

let browser: Browser;
let page: Page;
let botId = '';
let trunkId = '';
let tmp = '';
/** Every request the page sent to the backend (method, path, content type, body). */
const sent: Array<{ method: string; path: string; type: string; body: string | null }> = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

const campaignIdFromUrl = () => new URL(page.url()).pathname.split('/')[2]!;
const contactsOf = async (id: string) => (await admin('GET', `/api/v1/campaigns/${id}/contacts?limit=100`)).body.items as Array<{ id: string; to_number: string; status: string; attempts: Array<{ call_id: string; status: string; end_reason: string | null }> }>;
const statusText = () => page.getByTestId('campaign-status').locator('[data-status]').textContent();
const count = (s: string) => page.getByTestId(`count-${s}`).textContent();
const selected = (id: string) => page.locator(`#${id} option:checked`).textContent();
/** Each row's cells as the eye reads them (white space collapsed). */
const cellTexts = (rows: Locator) => rows.evaluateAll((trs) => trs.map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.textContent!.replace(/\s+/g, ' ').trim())));
const rowTexts = (table: string) => cellTexts(page.getByRole('table', { name: table }).locator('tbody tr'));

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'vp-campaigns-e2e-'));
  const bot = await admin('POST', '/api/v1/bots', {
    name: BOT_NAME,
    greeting: 'Hello {{customer_name}}, this is about your {{plan}} plan.',
    variables: [
      { name: 'customer_name', required: true, description: 'Who we call' },
      { name: 'plan', required: false },
    ],
  });
  expect(bot.status).toBe(201);
  botId = bot.body.id as string;
  // The campaign's calls go out through a trunk to the suite's test phone.
  const trunk = await admin('POST', TRUNKS, { name: 'Campaigns suite trunk', address: process.env.SIP_PHONE_ADDRESS, numbers: ['+15005550198'] });
  expect(trunk.status).toBe(201);
  trunkId = trunk.body.id as string;
  ({ browser, page } = await launchPage());
  page.on('request', (r) => {
    if (r.url().startsWith(BACKEND) && r.method() !== 'OPTIONS') sent.push({ method: r.method(), path: new URL(r.url()).pathname, type: r.headers()['content-type'] ?? '', body: r.postData() });
  });
});

afterAll(async () => {
  await browser?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  // Campaigns cannot be deleted; both end terminal. The trunk goes (the trunks suite starts from none), and
  // the bot is deactivated (bots cannot be deleted; the dashboard counts active ones).
  if (trunkId) expect((await admin('DELETE', `${TRUNKS}/${trunkId}`)).status).toBe(204);
  if (botId) await admin('PATCH', `/api/v1/bots/${botId}`, { active: false });
});

describe('campaigns pages', () => {
  it('creates a draft through the form, uploads a mapped CSV with its per-row report, and runs it to completed', async () => {
    await signInAt(page, '/campaigns');
    await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
    expect(await page.title()).toBe('Campaigns · Voice Platform Console');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).getAttribute('aria-current')).toBe('page');
    await page.getByTestId('campaigns-empty').waitFor();

    // The form checks before sending: a name, a pace within the schema's limit.
    await page.getByRole('button', { name: 'Create the first campaign' }).click();
    const dialog = page.getByRole('dialog', { name: 'New campaign' });
    expect(await dialog.getByLabel('Time zone').inputValue()).toBe('UTC'); // the browser's zone
    const before = sent.length;
    await dialog.getByLabel('Bot').selectOption({ label: BOT_NAME });
    await dialog.getByLabel('Dials per second, at most').fill('11');
    await page.getByRole('button', { name: 'Create draft' }).click();
    expect(await dialog.locator('#campaign-name-error').textContent()).toBe('This field is required.');
    expect(await dialog.locator('#campaign-cps-error').textContent()).toBe('Must be at most 10.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('campaign-name');
    expect(sent.slice(before).filter((r) => r.method === 'POST')).toEqual([]);

    await dialog.getByLabel('Name').fill('Renewals Q3');
    await dialog.getByLabel('Dials per second, at most').fill('5');
    await dialog.getByLabel('Calls at once, at most').fill('3');
    await dialog.getByLabel('Region of national numbers').fill('USA');
    await page.getByRole('button', { name: 'Create draft' }).click();
    expect(await dialog.locator('#campaign-region-error').textContent()).toBe('Use a two-letter country code (ISO 3166), e.g. US, GB or DE.');
    await dialog.getByLabel('Region of national numbers').fill('us');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL(/\/campaigns\/[0-9a-f]{24}$/);
    const id = campaignIdFromUrl();
    expect(JSON.parse(sent.find((r) => r.method === 'POST' && r.path === '/api/v1/campaigns')!.body!)).toEqual({
      name: 'Renewals Q3',
      bot_id: botId,
      default_region: 'US',
      timezone: 'UTC',
      windows: [],
      max_concurrency: 3,
      calls_per_second: 5,
      retry: { max_attempts: 1, delay_seconds: 600, on: [] },
    });
    await page.getByRole('heading', { name: 'Campaign Renewals Q3', level: 1 }).waitFor();
    expect((await admin('GET', `/api/v1/campaigns/${id}`)).body).toMatchObject({ answering_machine: null, default_region: 'US' }); // the bot's settings
    expect(await page.getByTestId('campaign-region').textContent()).toBe('US');
    expect(await page.getByTestId('campaign-amd').textContent()).toBe('The bot’s settings');
    expect(await page.getByTestId('notice').textContent()).toBe('Campaign Renewals Q3 created as a draft. Add its contacts, then start it.');
    expect(await statusText()).toBe('Draft');
    expect(await page.getByRole('button', { name: 'Start' }).isDisabled()).toBe(true); // no contacts yet
    expect(await page.getByTestId('progress').locator('.progress-text').textContent()).toBe('0 of 0 done (0%)');

    // The file: a BOM, CRLF, a quoted comma and quotes, a blank line, a bad number, a duplicate, a missing
    // required variable, an unknown zone, a short row. Its columns are not the backend's names.
    const file = path.join(tmp, 'renewals.csv');
    const lines = [
      'Phone,customer_name,Plan Name,Zone,notes',
      `+1 500 555 0001,"Ada, Countess",Gold,UTC,vip`, // the phone answers, then hangs up: completed
      `${PHONE_NUMBERS.busy},Bob,Silver,Europe/Berlin,`, // 486 Busy Here: busy
      `(500) 555-0404,Cy,,UTC,"says ""call later"""`, // national: read in the campaign's region, US; 404 Not Found: failed
      '',
      '12345,Dee,Basic,UTC,bad number',
      `${PHONE_NUMBERS.busy},Bob again,Gold,UTC,duplicate`,
      '+15005550777,,Gold,UTC,no name',
      '+15005550778,Eve,Gold,Mars/Base,unknown zone',
      '+15005550779,Fay,Gold',
    ];
    expect(PHONE_NUMBERS.hangsUp).toBe('+15005550001');
    expect(PHONE_NUMBERS.notFound).toBe('+15005550404');
    writeFileSync(file, `\uFEFF${lines.join('\r\n')}\r\n`);
    await page.getByLabel('CSV file', { exact: true }).setInputFiles(file);
    await page.getByRole('heading', { name: 'Preview: the first 5 of 8 rows of renewals.csv' }).waitFor();
    const preview = page.getByRole('table', { name: 'Preview of the file' });
    expect(await preview.locator('thead th').allTextContents()).toEqual(['Line', 'Phone', 'customer_name', 'Plan Name', 'Zone', 'notes']);
    expect(await rowTexts('Preview of the file')).toEqual([
      ['2', '+1 500 555 0001', 'Ada, Countess', 'Gold', 'UTC', 'vip'],
      ['3', '+15005550486', 'Bob', 'Silver', 'Europe/Berlin', ''],
      ['4', '(500) 555-0404', 'Cy', '', 'UTC', 'says "call later"'],
      ['6', '12345', 'Dee', 'Basic', 'UTC', 'bad number'],
      ['7', '+15005550486', 'Bob again', 'Gold', 'UTC', 'duplicate'],
    ]);
    // Mapped already: the phone column by its name, the variable of the same name; the rest is not.
    expect(await selected('map-phone')).toBe('Phone');
    expect(await selected('map-var-customer_name')).toBe('customer_name');
    expect(await selected('map-var-plan')).toBe('Not mapped');
    expect(await selected('map-timezone')).toBe("None: the campaign's (UTC)");

    // Without a phone column nothing is sent.
    await page.getByLabel('Phone number').selectOption({ label: 'Choose a column…' });
    const beforeUpload = sent.length;
    await page.getByRole('button', { name: 'Upload 8 contacts' }).click();
    expect(await page.locator('#map-phone-error').textContent()).toBe('Choose the column with the phone numbers.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('map-phone');
    expect(sent.slice(beforeUpload).filter((r) => r.method === 'POST')).toEqual([]);
    await page.getByLabel('Phone number').selectOption({ label: 'Phone' });
    await page.getByLabel('Time zone').selectOption({ label: 'Zone' });
    await page.getByLabel('Variable plan').selectOption({ label: 'Plan Name' });
    await shot('campaign-csv-mapping');
    await page.getByRole('button', { name: 'Upload 8 contacts' }).click();

    await page.getByTestId('upload-summary').waitFor();
    expect(await page.getByTestId('upload-summary').textContent()).toBe('3 contacts added, 1 duplicate, 4 rows rejected.');
    expect(await rowTexts('Rejected rows')).toEqual([
      ['6', '12345', 'Phone number', 'Too short.'],
      ['8', '+15005550777', 'customer_name', 'Is required by the bot.'],
      ['9', '+15005550778', 'Time zone', 'Is not an IANA time zone this server knows.'],
      ['10', '+15005550779', 'Row', 'Has 3 cells; the header has 5.'],
    ]);
    // What went to the backend: its own CSV contract, the mapped columns under its names, nothing else.
    const uploads = sent.filter((r) => r.method === 'POST' && r.path === `/api/v1/campaigns/${id}/contacts`);
    expect(uploads.map((u) => u.type)).toEqual(['text/csv']);
    expect(uploads[0]!.body).toBe(
      'to_number,timezone,customer_name,plan\n' +
        '+15005550001,UTC,"Ada, Countess",Gold\n' +
        '+15005550486,Europe/Berlin,Bob,Silver\n' +
        '5005550404,UTC,Cy,\n' +
        '12345,UTC,Dee,Basic\n' +
        '+15005550486,UTC,Bob again,Gold\n' +
        '+15005550777,UTC,,Gold\n' +
        '+15005550778,Mars/Base,Eve,Gold\n',
    );
    // The preview and mapping are gone; the contacts are listed, pending.
    expect(await page.getByRole('table', { name: 'Preview of the file' }).count()).toBe(0);
    await page.locator('tr[data-number="+15005550404"]').waitFor();
    expect(await rowTexts('Contacts')).toEqual([
      ['+15005550001', 'Pending', '0', '—', '—'],
      ['+15005550486', 'Pending', '0', '—', '—'],
      ['+15005550404', 'Pending', '0', '—', '—'],
    ]);
    const stored = await contactsOf(id);
    expect(stored.map((c) => [c.to_number, c.status])).toEqual([
      ['+15005550001', 'pending'],
      ['+15005550486', 'pending'],
      ['+15005550404', 'pending'],
    ]);
    expect(await count('pending')).toBe('3');
    expect(await page.getByTestId('progress').getAttribute('aria-valuetext')).toBe('0 of 3 done (0%)');
    await shot('campaign-upload-report');

    // Start, and watch the page follow the campaign by itself (no reload) until it completes.
    await page.evaluate(() => {
      const w = window as unknown as { __vpSeen: string[]; __vpSameDocument: boolean };
      w.__vpSameDocument = true;
      w.__vpSeen = [];
      new MutationObserver(() => {
        const p = document.querySelector('[data-testid="progress"]');
        const v = `${p?.getAttribute('data-done')}/${p?.getAttribute('data-total')}`;
        if (w.__vpSeen[w.__vpSeen.length - 1] !== v) w.__vpSeen.push(v);
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-done'] });
    });
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByTestId('notice').getByText('Campaign started: contacts are dialled as the pace and windows allow.').waitFor();
    expect(['Running', 'Completed']).toContain(await statusText());
    await page.getByTestId('campaign-status').locator('[data-status="completed"]').waitFor({ timeout: 90_000 });
    expect(await page.getByTestId('progress').getAttribute('aria-valuetext')).toBe('3 of 3 done (100%)');
    expect(await page.getByTestId('progress').locator('.progress-fill').getAttribute('style')).toBe('width: 100%');
    expect(await Promise.all(['pending', 'dialing', 'retry_scheduled', 'completed', 'busy', 'no_answer', 'failed', 'skipped_dnc', 'canceled'].map(count))).toEqual(['0', '0', '0', '1', '1', '0', '1', '0', '0']);
    const seen = await page.evaluate(() => (window as unknown as { __vpSeen: string[]; __vpSameDocument: boolean }).__vpSeen);
    expect(await page.evaluate(() => (window as unknown as { __vpSameDocument?: boolean }).__vpSameDocument)).toBe(true);
    // Done only grew, to all three; the page read the campaign again while it ran.
    expect(seen[seen.length - 1]).toBe('3/3');
    const done = seen.map((s) => Number(s.split('/')[0]));
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(sent.filter((r) => r.method === 'GET' && r.path === `/api/v1/campaigns/${id}`).length).toBeGreaterThanOrEqual(3);
    expect(await page.getByRole('button', { name: /^(Start|Pause|Resume|Cancel campaign)$/ }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Add contacts from a CSV file' }).count()).toBe(0);

    // The contacts with their outcome and call, as the backend has them.
    await page.locator('tr[data-number="+15005550404"] [data-status="failed"]').waitFor();
    const contacts = await contactsOf(id);
    expect(contacts.map((c) => [c.to_number, c.status, c.attempts.length])).toEqual([
      ['+15005550001', 'completed', 1],
      ['+15005550486', 'busy', 1],
      ['+15005550404', 'failed', 1],
    ]);
    expect(await rowTexts('Contacts')).toEqual(contacts.map((c) => [c.to_number, c.status === 'busy' ? 'Busy' : c.status === 'failed' ? 'Failed' : 'Completed', '1', c.attempts[0]!.call_id, '—']));
    const detail = (await admin('GET', `/api/v1/campaigns/${id}`)).body;
    expect(detail).toMatchObject({ status: 'completed', counts: { completed: 1, busy: 1, failed: 1, pending: 0, dialing: 0 } });
    await shot('campaign-completed');

    // Download results (CSV): the backend's export, saved under its name, one row per contact as listed.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download results (CSV)' }).click()]);
    expect(download.suggestedFilename()).toBe(`campaign-${id}-contacts.csv`);
    const csvLines = readFileSync((await download.path())!, 'utf8').split('\r\n');
    expect(csvLines.pop()).toBe('');
    expect(csvLines[0]).toMatch(/^contact_id,to_number,status,attempts,last_call_id,last_call_status,last_end_reason,answered_by,amd_ms,next_attempt_at(,var_[a-z_]+)*$/);
    expect(csvLines.slice(1).map((l) => l.split(',').slice(0, 7))).toEqual(
      contacts.map((c) => [c.id, c.to_number, c.status, '1', c.attempts[0]!.call_id, c.attempts[0]!.status, c.attempts[0]!.end_reason ?? '']),
    );

    // Once done, the page stops reading: no request for the campaign within 2.5 refresh intervals.
    const after = sent.length;
    await expect(page.waitForRequest((r) => r.url() === `${BACKEND}/api/v1/campaigns/${id}`, { timeout: 5000 })).rejects.toThrow(/Timeout/);
    expect(sent.slice(after).filter((r) => r.path.startsWith(`/api/v1/campaigns/${id}`))).toEqual([]);

    // A call id leads to the call.
    const busyCall = contacts[1]!.attempts[0]!.call_id;
    await page.getByRole('link', { name: busyCall }).click();
    await page.waitForURL(`${CONSOLE}/calls/${busyCall}`);
    await page.locator('[data-status="busy"]').first().waitFor();
    await page.goBack();
    await page.waitForURL(`${CONSOLE}/campaigns/${id}`);
    await page.getByRole('link', { name: '← All campaigns' }).click();
    const row = page.locator(`tr[data-campaign-id="${id}"]`);
    await row.waitFor();
    expect(await cellTexts(row)).toEqual([['Renewals Q3', BOT_NAME, 'Completed', '3 of 3 done (100%)', '1 completed · 1 busy · 1 failed', expect.stringMatching(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{2}:\d{2}:\d{2} [AP]M$/)]]);
    await shot('campaigns');
  });

  it('starts, pauses, resumes and cancels (after confirming) a campaign outside its window, and shows a stale action refused', async () => {
    // A window on a day three days away: the campaign runs but dials no one during this test.
    const today = (new Date().getUTCDay() + 6) % 7;
    const day = (today + 3) % 7;
    await page.goto(`${CONSOLE}/campaigns`);
    await page.getByRole('button', { name: 'New campaign' }).click();
    const dialog = page.getByRole('dialog', { name: 'New campaign' });
    await dialog.getByLabel('Name').fill('Off hours');
    await dialog.getByLabel('Bot').selectOption({ label: BOT_NAME });
    await dialog.getByRole('button', { name: 'Add window' }).click();
    const win = dialog.getByRole('group', { name: 'Window 1' });
    for (const label of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']) await win.getByLabel(label, { exact: true }).uncheck();
    await win.getByLabel(DAY_LABELS[day]!, { exact: true }).check();
    await win.getByLabel('Closes at').fill('08:00');
    await page.getByRole('button', { name: 'Create draft' }).click();
    expect(await dialog.locator('#campaign-window-0-end-error').textContent()).toBe('Must be after the start.');
    await win.getByLabel('Closes at').fill('17:00');
    await dialog.getByLabel('Dials per contact, at most').fill('3');
    await dialog.getByLabel('Wait before a retry (seconds)').fill('60');
    await dialog.getByLabel('Busy').check();
    await dialog.getByLabel('Voicemail').check();
    // Its own answering machine settings over the bot's (which neither detects nor has a message to leave).
    const detect = dialog.getByLabel('Detect answering machines');
    expect(await detect.locator('option').allTextContents()).toEqual(['The bot’s setting (does not detect)', 'Detect', 'Don’t detect']);
    expect(await dialog.getByTestId('campaign-amd-note').textContent()).toBe('Machines are not detected on these calls: none ends as voicemail, so the voicemail retry never applies.');
    await detect.selectOption({ label: 'Detect' });
    await dialog.getByLabel('When a machine answers').selectOption({ label: 'Leave a message' });
    expect(await dialog.getByTestId('campaign-amd-note').textContent()).toBe('This bot has no message for machines, so it hangs up on them: write one in the bot’s Answering machines section.');
    await shot('campaign-answering-machine');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL(/\/campaigns\/[0-9a-f]{24}$/);
    const id = campaignIdFromUrl();
    await page.getByRole('heading', { name: 'Campaign Off hours', level: 1 }).waitFor();
    expect((await admin('GET', `/api/v1/campaigns/${id}`)).body).toMatchObject({
      status: 'draft',
      windows: [{ days: [WEEKDAYS[day]], start: '09:00', end: '17:00' }],
      retry: { max_attempts: 3, delay_seconds: 60, on: ['busy', 'voicemail'] },
      answering_machine: { detect: true, on_machine: 'leave_message' },
    });
    expect(JSON.parse(sent.filter((r) => r.method === 'POST' && r.path === '/api/v1/campaigns').pop()!.body!)).toMatchObject({ answering_machine: { detect: true, on_machine: 'leave_message' } });
    expect(await page.getByTestId('campaign-amd').textContent()).toBe('Detection: on · when a machine answers: leave a message');

    const file = path.join(tmp, 'off-hours.csv');
    writeFileSync(file, 'to_number,customer_name\n+15005551001,Gus\n+15005551002,Hal\n');
    await page.getByLabel('CSV file', { exact: true }).setInputFiles(file);
    await page.getByRole('button', { name: 'Upload 2 contacts' }).click();
    await page.getByTestId('upload-summary').getByText('2 contacts added, 0 duplicates, 0 rows rejected.').waitFor();
    await page.locator('tr[data-number="+15005551002"]').waitFor();

    // Started behind the page's back: the page's Start is refused with the error body, and the page catches up.
    expect((await admin('POST', `/api/v1/campaigns/${id}/start`)).status).toBe(200);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByRole('alert').getByText('A running campaign cannot start.', { exact: true }).waitFor();
    await page.getByTestId('campaign-status').locator('[data-status="running"]').waitFor();
    await shot('campaign-stale-action');

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByTestId('campaign-status').locator('[data-status="paused"]').waitFor();
    expect(await page.getByTestId('notice').textContent()).toBe('Campaign paused: no new dials; calls in progress finish.');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect((await admin('GET', `/api/v1/campaigns/${id}`)).body.status).toBe('paused');
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByTestId('campaign-status').locator('[data-status="running"]').waitFor();
    expect(await page.getByTestId('notice').textContent()).toBe('Campaign resumed.');
    expect((await admin('GET', `/api/v1/campaigns/${id}`)).body.status).toBe('running');

    // Cancel asks first; keeping the campaign changes nothing.
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    const confirm = page.getByRole('dialog', { name: 'Cancel this campaign?' });
    expect(await confirm.getByText(/contacts not dialled yet are canceled/).textContent()).toBe('Off hours stops for good: contacts not dialled yet are canceled, calls in progress finish. A canceled campaign cannot be started again.');
    await shot('campaign-cancel-confirm');
    await confirm.getByRole('button', { name: 'Keep the campaign' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect((await admin('GET', `/api/v1/campaigns/${id}`)).body.status).toBe('running');
    expect(sent.filter((r) => r.path === `/api/v1/campaigns/${id}/cancel`)).toEqual([]);

    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await confirm.getByRole('button', { name: 'Cancel campaign' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByTestId('campaign-status').locator('[data-status="canceled"]').waitFor();
    expect(await page.getByTestId('notice').textContent()).toBe('Campaign canceled: contacts not dialled yet are canceled; calls in progress finish.');
    expect(await count('canceled')).toBe('2');
    expect(await page.getByTestId('progress').getAttribute('aria-valuetext')).toBe('2 of 2 done (100%)');
    expect(await page.getByRole('button', { name: /^(Start|Pause|Resume|Cancel campaign)$/ }).count()).toBe(0);
    // The contacts are read again after the campaign (a request of their own): wait for their rows.
    for (const n of ['+15005551001', '+15005551002']) await page.locator(`tr[data-number="${n}"] [data-status="canceled"]`).waitFor();
    expect(await rowTexts('Contacts')).toEqual([
      ['+15005551001', 'Canceled', '0', '—', '—'],
      ['+15005551002', 'Canceled', '0', '—', '—'],
    ]);
    const detail = (await admin('GET', `/api/v1/campaigns/${id}`)).body;
    expect(detail).toMatchObject({ status: 'canceled', counts: { canceled: 2, pending: 0, dialing: 0 } });
    expect(detail.canceled_at).toEqual(expect.any(String));
    expect((await contactsOf(id)).map((c) => [c.status, c.attempts.length])).toEqual([
      ['canceled', 0],
      ['canceled', 0],
    ]);
    expect(sent.filter((r) => r.method === 'POST' && /\/api\/v1\/campaigns\/[^/]+\/(start|pause|resume|cancel)$/.test(r.path) && r.path.includes(id)).map((r) => r.path.split('/').pop())).toEqual(['start', 'pause', 'resume', 'cancel']);
    await shot('campaign-canceled');
  });
});
