// The worker suite's real services, started once: FerretDB, Redis, MinIO, LiveKit (server + SIP), the
// test phone (sipp), and the real backend
// (backend/dist/main.js, built by the test script's `tsc -b ../backend .`; the worker itself does not depend on it) on a free port.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, jestGlobalSetup, startProcess, waitUntil } from '@voice-platform/tests/infra';

const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
export const WORKER_TOKEN = 'worker-suite-token-0123456789abcdef';
const ADMIN = { email: 'admin@worker-tests.example.com', password: 'worker-suite-admin-password' };

export default async function setup() {
  // The test phone's line once it answers (tests/infra Phone): a TEST_POLICY phrase that ends the call.
  process.env.VP_PHONE_PHRASE ??= 'stop calling';
  // The backend's port is known before LiveKit starts: its signed webhooks (inbound calls) go there.
  const port = await freePort();
  process.env.VP_LIVEKIT_WEBHOOK_URL = `http://127.0.0.1:${port}/livekit/webhook`;
  await jestGlobalSetup(['mongodb', 'redis', 'minio', 'livekit', 'phone'])();
  const env = {
    ...process.env,
    PORT: String(port),
    MONGODB_DB: 'worker_tests',
    JWT_SECRET: 'worker-suite-jwt-secret-0123456789abcdef-0123',
    WORKER_AUTH_TOKEN: WORKER_TOKEN,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    // The suite's many dial-outs must not trip the per-key rate limit.
    DIALOUT_RATE_PER_SECOND: '100',
    DIALOUT_BURST: '100',
    // The suite's telephony plane (tests/infra: livekit-server + livekit-sip, and sipp as the phone).
    LIVEKIT_URL: process.env.LIVEKIT_URL,
    LIVEKIT_API_KEY: process.env.LIVEKIT_API_KEY,
    LIVEKIT_API_SECRET: process.env.LIVEKIT_API_SECRET,
    // The dialler sweeps lost calls every second, so a SIGKILLed worker's call ends within seconds.
    SWEEP_INTERVAL_SECONDS: '1',
    // The API accepts `sip` test cases (the suite's diallers each run a simulated phone at their own address).
    TEST_PHONE_SIP_ADDRESS: '127.0.0.1:5099',
    // Bots' HTTP tools (and webhooks) point at receivers on this machine.
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
  execFileSync(process.execPath, [path.join(root, 'backend/dist/seed.js'), 'admin'], { env, stdio: 'pipe' });
  const backend = startProcess('backend', process.execPath, [path.join(root, 'backend/dist/main.js')], {
    env,
    logFile: path.join(process.env.VP_TEST_DIR, 'backend.log'),
  });
  globalThis.__vpBackend = backend;
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/health`)).status === 200, { what: 'backend', proc: backend });
  Object.assign(process.env, {
    VP_BACKEND_URL: url,
    VP_WORKER_TOKEN: WORKER_TOKEN,
    VP_ADMIN_EMAIL: ADMIN.email,
    VP_ADMIN_PASSWORD: ADMIN.password,
    VP_BACKEND_LOG: backend.logFile,
  });
}
