// The SDK suite's real services, started once: FerretDB, Redis, LiveKit (outbound trunks are mirrored there),
// and the real backend (backend/dist/main.js, built by the test script's `tsc -b ../backend .`) on a free
// port, with the api and dialler roles (so webhooks are delivered). The SDK talks to it over HTTP only.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, jestGlobalSetup, startProcess, waitUntil } from '@voice-platform/tests/infra';

const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const ADMIN = { email: 'admin@sdk-tests.example.com', password: 'sdk-suite-admin-password' };

export default async function setup() {
  await jestGlobalSetup(['mongodb', 'redis', 'livekit'])();
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    MONGODB_DB: 'sdk_tests',
    JWT_SECRET: 'sdk-suite-jwt-secret-0123456789abcdef-012345',
    WORKER_AUTH_TOKEN: 'sdk-suite-worker-token-0123456789abcdef',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    // A small per-key budget, so a test can meet the dial-out rate limit's 429 (Retry-After: 1) for real.
    DIALOUT_RATE_PER_SECOND: '1',
    DIALOUT_BURST: '2',
    LIVEKIT_URL: process.env.LIVEKIT_URL,
    LIVEKIT_API_KEY: process.env.LIVEKIT_API_KEY,
    LIVEKIT_API_SECRET: process.env.LIVEKIT_API_SECRET,
    // Webhooks go to a receiver in the test, on this machine, and soon.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100',
  };
  execFileSync(process.execPath, [path.join(root, 'backend/dist/seed.js'), 'admin'], { env, stdio: 'pipe' });
  const backend = startProcess('backend', process.execPath, [path.join(root, 'backend/dist/main.js')], {
    env,
    logFile: path.join(process.env.VP_TEST_DIR, 'backend.log'),
  });
  globalThis.__vpBackend = backend;
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/health`)).status === 200, { what: 'backend', proc: backend });
  Object.assign(process.env, { VP_BACKEND_URL: url, VP_ADMIN_EMAIL: ADMIN.email, VP_ADMIN_PASSWORD: ADMIN.password });
}
