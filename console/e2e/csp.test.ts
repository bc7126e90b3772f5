// The console's Content-Security-Policy (console/csp.js): the admin's JWT sits in sessionStorage, so no
// script may run but the console's own. Every server of the console sends it: serve.js (what `make up` and
// this suite serve the build with), Vite's dev server and its preview server. The policy lets the page
// reach the API it was built for and the LiveKit the test-call page joins, and the page still works under
// it: signed in and moving between pages, Chromium reports no violation.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { freePort, startProcess, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { BACKEND, CONSOLE, launchPage, signInAt } from './support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const consoleDir = path.resolve(here, '..');
const vite = path.join(path.dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');

/** The policy for this suite's backend and LiveKit, written out. */
function expectedPolicy(): string {
  const lk = new URL(process.env.LIVEKIT_URL!); // ws://127.0.0.1:<port>
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "media-src 'self' blob:",
    `connect-src 'self' ${BACKEND} ws://${lk.host} http://${lk.host}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

describe('Content-Security-Policy', () => {
  it('is sent by serve.js with the page, deep links and assets', async () => {
    for (const route of ['/', '/bots/some-bot', '/login']) {
      const res = await fetch(`${CONSOLE}${route}`);
      expect([route, res.status, res.headers.get('content-security-policy')]).toEqual([route, 200, expectedPolicy()]);
    }
  });

  describe("by Vite's servers", () => {
    let proc: ManagedProcess | undefined;
    afterEach(async () => {
      await proc?.stop();
      proc = undefined;
    });
    const env = () => ({ ...process.env, VITE_API_URL: BACKEND });
    const served = async (args: string[], what: string): Promise<Response> => {
      const port = await freePort();
      proc = startProcess(what, process.execPath, [vite, ...args, '--port', String(port), '--strictPort'], {
        cwd: consoleDir,
        env: env(),
        logFile: path.join(process.env.VP_TEST_DIR!, `${what}.log`),
      });
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/`)).status === 200, { what, proc, timeoutMs: 60_000 });
      return fetch(`http://127.0.0.1:${port}/`);
    };

    it('the dev server', async () => {
      const res = await served([], 'vite-dev');
      expect(res.headers.get('content-security-policy')).toBe(expectedPolicy());
    });

    it('the preview server (of the suite’s build)', async () => {
      const res = await served(['preview', '--outDir', path.join(process.env.VP_TEST_DIR!, 'console-dist')], 'vite-preview');
      expect(res.headers.get('content-security-policy')).toBe(expectedPolicy());
      expect(await res.text()).toContain('<vp-app></vp-app>');
    });
  });

  it('lets the console work: signed in and through its pages, Chromium reports no violation', async () => {
    const { browser, page } = await launchPage();
    try {
      // Listening from before the page's own scripts (an init script is the browser's, not the page's).
      await page.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { __cspViolations: string[] }).__cspViolations = seen;
        document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      const messages: string[] = [];
      page.on('console', (m) => {
        if (m.text().includes('Content Security Policy')) messages.push(m.text());
      });
      await signInAt(page, '/api-keys');
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      for (const [to, heading] of [['/bots', 'Bots'], ['/calls', 'Calls'], ['/webhooks', 'Webhooks']] as const) {
        await page.goto(`${CONSOLE}${to}`);
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      }
      expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual([]);
      expect(messages).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
