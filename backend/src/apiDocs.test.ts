// The API reference: docs/openapi.json is the document the backend serves, `servers` follows PUBLIC_URL, and
// GET /docs renders the served document in Chromium (Redoc from node_modules) under its own policy, loading
// nothing from anywhere else.
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import supertest from 'supertest';
import { chromium } from 'playwright-core';
import { JWT_SECRET, startHarness, WORKER_TOKEN, type Harness } from '../testing/harness.js';
import { createApp } from './app.js';
import { createLogger } from './core/logger.js';
import { loadSettings } from './core/settings.js';
import { DOCS_CSP, REDOC_SCRIPT_PATH } from './apiDocs.js';
import { GEN_OPENAPI_COMMAND, OPENAPI_FILE_SERVER_URL, renderOpenapiFile } from './openapiFile.js';

const FILE = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const SHOTS = fileURLToPath(new URL('../../test-artifacts/backend', import.meta.url));

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** Where two documents differ (JSON pointers, at most `max`). */
function differences(file: unknown, served: unknown, at = '', out: string[] = [], max = 8): string[] {
  if (out.length >= max || JSON.stringify(file) === JSON.stringify(served)) return out;
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObject(file) && isObject(served)) {
    for (const k of new Set([...Object.keys(file), ...Object.keys(served)])) {
      differences(file[k], served[k], `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out, max);
    }
  } else if (out.length < max) {
    out.push(`${at || '/'} (${file === undefined ? 'served, not in the file' : served === undefined ? 'in the file, no longer served' : 'differs'})`);
  }
  return out;
}

describe('docs/openapi.json', () => {
  it('is the document the backend serves (servers aside)', async () => {
    const served = (await h.http.get('/api/v1/openapi.json').expect(200)).body as object;
    const expected = renderOpenapiFile(served);
    let committed = '';
    try {
      committed = readFileSync(FILE, 'utf8');
    } catch {
      // missing: reported below
    }
    if (committed === expected) return;
    let where: string;
    try {
      const found = differences(JSON.parse(committed), JSON.parse(expected));
      where = found.length ? found.join(', ') : 'the same document, written differently';
    } catch {
      where = committed ? 'not JSON' : 'missing';
    }
    throw new Error(`docs/openapi.json is not the document the backend serves: ${where}. Run \`${GEN_OPENAPI_COMMAND}\` and commit docs/openapi.json.`);
  });

  it('carries the local stack address as its server', () => {
    const committed = JSON.parse(readFileSync(FILE, 'utf8')) as { servers: unknown };
    expect(committed.servers).toEqual([{ url: OPENAPI_FILE_SERVER_URL }]);
  });
});

describe('servers', () => {
  it('is `/` (the origin the document was read from) without PUBLIC_URL', async () => {
    const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body as { servers: Array<{ url: string }> };
    expect(doc.servers.map((s) => s.url)).toEqual(['/']);
  });

  it('is PUBLIC_URL, without its trailing slash, when the backend has one', async () => {
    for (const [setting, url] of [
      ['https://voice.example.com/', 'https://voice.example.com'],
      ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ]) {
      const app = createApp({ settings: { ...h.settings, PUBLIC_URL: setting }, db: h.db, redis: h.redis, logger: createLogger('silent'), telephony: null });
      const doc = (await supertest(app.callback()).get('/api/v1/openapi.json').expect(200)).body as { servers: unknown };
      expect(doc.servers).toEqual([{ url }]);
    }
  });

  it('PUBLIC_URL is an http(s) origin: no path beyond `/`, no query, fragment or credentials', () => {
    const load = (PUBLIC_URL: string) => loadSettings({ JWT_SECRET, WORKER_AUTH_TOKEN: WORKER_TOKEN, PUBLIC_URL });
    for (const ok of ['https://voice.example.com', 'https://voice.example.com/', 'http://127.0.0.1:8080', 'https://[2001:db8::1]:8443/']) {
      expect(load(ok).PUBLIC_URL).toBe(ok);
    }
    for (const bad of ['voice.example.com', 'ftp://voice.example.com', 'https://voice.example.com/api', 'https://voice.example.com/?a=1', 'https://voice.example.com#top', 'https://user:pw@voice.example.com', 'https://']) {
      expect(() => load(bad)).toThrow(/PUBLIC_URL/);
    }
    expect(loadSettings({ JWT_SECRET, WORKER_AUTH_TOKEN: WORKER_TOKEN }).PUBLIC_URL).toBeUndefined();
  });
});

describe('GET /docs', () => {
  it('is an HTML page without auth, under a policy that allows only this origin, with Redoc from node_modules', async () => {
    const page = await h.http.get('/docs').expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.text).toContain('<redoc spec-url="/api/v1/openapi.json"');
    // Every script is a file of this origin: none inline, none elsewhere.
    expect([...page.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1])).toEqual([` src="${REDOC_SCRIPT_PATH}"`]);
    const script = await h.http.get(REDOC_SCRIPT_PATH).buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    }).expect(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const bundle = readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
    expect(Buffer.compare(script.body as Buffer, bundle)).toBe(0);
  });

  it('renders the served document in Chromium: the dial-out operation is on the page, nothing is fetched elsewhere', async () => {
    const server = http.createServer(h.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      const elsewhere: string[] = [];
      const fetchedElsewhere: string[] = [];
      // Redoc's sidebar links to Redocly with a logo from their CDN: the policy blocks it (Redoc then hides it).
      const redoclyLogo = /^Loading the image 'https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini\.svg' violates the following Content Security Policy directive/;
      page.on('console', (m) => {
        if (m.type() === 'error' && !redoclyLogo.test(m.text())) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      const isElsewhere = (url: string) => !url.startsWith(`${base}/`) && !/^(blob|data):/.test(url);
      page.on('request', (r) => {
        if (isElsewhere(r.url())) elsewhere.push(r.url());
      });
      page.on('response', (r) => {
        if (isElsewhere(r.url())) fetchedElsewhere.push(r.url());
      });
      await page.goto(`${base}/docs`);
      // Redoc names an operation's section by its operationId; its panel shows the method and path.
      const dialout = page.locator('[id="operation/dialout"]');
      await dialout.waitFor({ timeout: 30_000 });
      const served = (await h.http.get('/api/v1/openapi.json').expect(200)).body as { paths: Record<string, { post: { summary: string } }> };
      await expect(dialout.getByRole('heading', { level: 2 }).first().textContent()).resolves.toContain(served.paths['/api/v1/sip/dialout']!.post.summary);
      await expect(dialout.textContent()).resolves.toContain('/api/v1/sip/dialout');
      await expect(dialout.locator('span', { hasText: /^post$/i }).count()).resolves.toBeGreaterThan(0);
      mkdirSync(SHOTS, { recursive: true });
      await page.goto(`${base}/docs#operation/dialout`);
      await dialout.getByRole('heading', { level: 2 }).first().waitFor();
      await page.waitForTimeout(500); // Redoc scrolls to the anchor once it has laid the page out
      await page.screenshot({ path: path.join(SHOTS, 'docs-dialout.png') });
      // The search (a worker from a blob) works under the policy too.
      await page.getByPlaceholder('Search...').fill('dialout');
      await page.locator('[role="search"] li, [data-role="search:result"]').first().waitFor({ timeout: 10_000 });
      expect(problems).toEqual([]);
      // Nothing came from another origin; the only request for one was that logo, blocked.
      expect(fetchedElsewhere).toEqual([]);
      expect([...new Set(elsewhere)].filter((u) => u !== 'https://cdn.redoc.ly/redoc/logo-mini.svg')).toEqual([]);
    } finally {
      await browser.close();
      server.close();
    }
  });
});
