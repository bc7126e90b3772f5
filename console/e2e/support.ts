// What the console's browser suites share: the suite's addresses and admin (from jest.global-setup.js),
// the admin API as the tests call it beside the page, headless Chromium as every suite launches it, and
// signing in through a deep link. Not a test file (jest runs e2e/**/*.test.ts).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CONSOLE = process.env.VP_CONSOLE_URL!;
export const BACKEND = process.env.VP_BACKEND_URL!;
export const ADMIN = { email: process.env.VP_ADMIN_EMAIL!, password: process.env.VP_ADMIN_PASSWORD! };
/** Where the suites' screenshots go. */
export const SHOTS = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../../test-artifacts/console');

export async function adminToken(): Promise<string> {
  const r = await fetch(`${BACKEND}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
  expect(r.status).toBe(200);
  return ((await r.json()) as { access_token: string }).access_token;
}

/** The admin's token for the API calls beside the page: one sign-in reused (every sign-in counts against the
 *  backend's per-address limit, 60 a minute, which a sign-in per request used up), again after a 401. */
let cachedToken: Promise<string> | null = null;

/** One admin API request: its status and JSON body (null for 204). */
export async function admin(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const send = async () =>
    fetch(`${BACKEND}${url}`, {
      method,
      headers: { Authorization: `Bearer ${await (cachedToken ??= adminToken())}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  let r = await send();
  if (r.status === 401) {
    // Revoked or expired meanwhile (a test signed the admin out everywhere): sign in again, once.
    cachedToken = null;
    r = await send();
  }
  return { status: r.status, body: r.status === 204 ? null : await r.json() };
}

/** Debian's Chromium, headless, and a page in a fixed locale and zone (dates on the page are then known exactly). */
export async function launchPage(): Promise<{ browser: Browser; page: Page }> {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 } });
  return { browser, page: await context.newPage() };
}

/** Opens `path` signed out: the console sends the visitor to sign in, then back to `path`. */
export async function signInAt(page: Page, to: string): Promise<void> {
  await page.goto(`${CONSOLE}${to}`);
  await page.waitForURL(`${CONSOLE}/login?next=${encodeURIComponent(to)}`);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${CONSOLE}${to}`);
}

/** Collects into `bodies` every backend response body the page receives (CORS preflights aside). */
export function recordResponseBodies(page: Page, bodies: string[]): void {
  page.on('response', async (r) => {
    if (!r.url().startsWith(BACKEND) || r.request().method() === 'OPTIONS') return;
    try {
      bodies.push(await r.text());
    } catch {
      // a body the page navigated away from: nothing to check
    }
  });
}
