// The real backend (node backend/dist/main.js) for suites that sync bots into it, on the FerretDB and
// Redis that globalSetup put in the environment, with an admin seeded for the operator to sign in as.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startProcess, waitUntil } from '@voice-platform/tests/infra';
import { repoRoot } from '../src/crds/generate.js';

export interface TestBackend {
  url: string;
  /** GET `p` as the seeded admin (a fresh login); expects 200. */
  adminGet(p: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Starts the backend with its own database (`operator_<suite>_test_<port>`) and `admin` seeded. */
export async function startTestBackend(suite: string, admin: { email: string; password: string }): Promise<TestBackend> {
  const main = path.join(repoRoot, 'backend', 'dist', 'main.js');
  if (!existsSync(main)) throw new Error('backend/dist/main.js missing: build the backend first (npx tsc -b backend)');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    PORT: String(port),
    MONGODB_DB: `operator_${suite}_test_${port}`,
    JWT_SECRET: `operator-${suite}-jwt-secret-0123456789abcdef`,
    WORKER_AUTH_TOKEN: `operator-${suite}-worker-token-0123456789`,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
  };
  await promisify(execFile)('node', [path.join(repoRoot, 'backend', 'dist', 'seed.js'), 'admin'], { env });
  const dir = mkdtempSync(path.join(process.env.VP_TEST_DIR ?? tmpdir(), 'backend-'));
  const proc = startProcess('backend', 'node', [main], { env, cwd: dir, logFile: path.join(dir, 'backend.log') });
  await waitUntil(async () => (await fetch(`${url}/health`)).status === 200, { what: 'backend', proc });
  return {
    url,
    async adminGet(p) {
      const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admin) });
      const { access_token } = (await login.json()) as { access_token: string };
      const res = await fetch(`${url}${p}`, { headers: { authorization: `Bearer ${access_token}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    },
    stop: () => proc.stop(),
  };
}
