// The console suite's real services, started once: FerretDB, Redis, MinIO (the worker's recordings),
// LiveKit (livekit-server and livekit-sip: the backend mirrors trunks into it, the worker runs calls in
// its rooms), the test phone (sipp: the suite's trunk points at it), the real backend, a real worker
// (its heartbeat gives dial-outs capacity; it claims the jobs and joins browser test calls), and the
// production build of the console (built here with VITE_API_URL pointing at this backend) behind the
// same static server `make up` uses.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, jestGlobalSetup, startProcess, waitUntil } from '@voice-platform/tests/infra';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const WORKER_TOKEN = 'console-suite-worker-token-0123456789abcdef';
const JWT_SECRET = 'console-suite-jwt-secret-0123456789abcdef-0123';
const ADMIN = { email: 'admin@console-tests.example.com', password: 'console-suite-admin-password' };
const LIVEKIT_VARS = ['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET', 'LIVEKIT_SIP_ADDRESS'];

async function healthy(url) {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}

export default async function setup() {
  await jestGlobalSetup(['mongodb', 'redis', 'minio', 'livekit', 'phone'])();
  // The LiveKit service's settings (LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET, LIVEKIT_SIP_ADDRESS).
  const livekitEnv = Object.fromEntries(LIVEKIT_VARS.map((name) => [name, process.env[name]]));
  const missing = LIVEKIT_VARS.filter((name) => !livekitEnv[name]);
  if (missing.length) throw new Error(`the livekit test service did not provide ${missing.join(', ')}`);
  const dir = process.env.VP_TEST_DIR;
  const [backendPort, workerPort, consolePort] = [await freePort(), await freePort(), await freePort()];
  const backendUrl = `http://127.0.0.1:${backendPort}`;
  const consoleUrl = `http://127.0.0.1:${consolePort}`;
  globalThis.__vpProcs = [];

  const backendEnv = {
    ...process.env,
    PORT: String(backendPort),
    MONGODB_DB: 'console_tests',
    JWT_SECRET,
    WORKER_AUTH_TOKEN: WORKER_TOKEN,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    CORS_ORIGINS: consoleUrl,
    // The webhooks page test's receiver listens on loopback.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    ...livekitEnv,
  };
  execFileSync(process.execPath, [path.join(root, 'backend/dist/seed.js'), 'admin'], { env: backendEnv, stdio: 'pipe' });
  const backend = startProcess('backend', process.execPath, [path.join(root, 'backend/dist/main.js')], { env: backendEnv, logFile: path.join(dir, 'backend.log') });
  globalThis.__vpProcs.push(backend);
  await waitUntil(() => healthy(`${backendUrl}/health`), { what: 'backend', proc: backend });

  // The worker has the telephony plane (browser test calls join LiveKit rooms; dial-outs ring the test
  // phone) and the suite's MinIO for recordings (STORAGE_* from the minio service, never the stack's).
  for (const name of ['STORAGE_ENDPOINT', 'STORAGE_ACCESS_KEY', 'STORAGE_SECRET_KEY', 'SIP_PHONE_ADDRESS']) {
    if (!process.env[name]) throw new Error(`the test services did not provide ${name}`);
  }
  const worker = startProcess('worker', process.execPath, [path.join(root, 'worker/dist/main.js')], {
    env: {
      ...process.env,
      PORT: String(workerPort),
      SERVICE_CONFIG_URL: `${backendUrl}/api/v1/config`,
      WORKER_AUTH_TOKEN: WORKER_TOKEN,
      WORKER_ID: 'console-suite-worker',
      LIVEKIT_URL: livekitEnv.LIVEKIT_URL,
      LIVEKIT_API_KEY: livekitEnv.LIVEKIT_API_KEY,
      LIVEKIT_API_SECRET: livekitEnv.LIVEKIT_API_SECRET,
      STORAGE_BUCKET: 'recordings',
      // A browser that never joins (a test that stops early) frees its slot soon.
      WEB_CALLER_WAIT_SECONDS: '20',
      // Test calls may take every slot: the test-call page's no-capacity test fills the fleet with them
      // (30 calls on two cores shared with the suite: admission on slots alone, so the slots are what fills).
      TEST_CALL_SHARE: '1',
      LOAD_ADMISSION: 'false',
      LOG_LEVEL: 'warn',
    },
    cwd: path.join(root, 'worker'),
    logFile: path.join(dir, 'worker.log'),
  });
  globalThis.__vpProcs.push(worker);
  await waitUntil(() => healthy(`http://127.0.0.1:${workerPort}/health`), { what: 'worker', proc: worker });

  // The production build, with this suite's backend baked in as VITE_API_URL.
  const distDir = path.join(dir, 'console-dist');
  const vite = path.join(path.dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  execFileSync(process.execPath, [vite, 'build', '--outDir', distDir, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: here,
    env: { ...process.env, VITE_API_URL: backendUrl },
    stdio: 'pipe',
  });
  const server = startProcess('console', process.execPath, [path.join(here, 'serve.js')], {
    env: { ...process.env, PORT: String(consolePort), DIST_DIR: distDir },
    logFile: path.join(dir, 'console.log'),
  });
  globalThis.__vpProcs.push(server);
  await waitUntil(() => healthy(`${consoleUrl}/healthz`), { what: 'console server', proc: server });

  Object.assign(process.env, {
    VP_BACKEND_URL: backendUrl,
    VP_CONSOLE_URL: consoleUrl,
    VP_WORKER_URL: `http://127.0.0.1:${workerPort}`,
    VP_JWT_SECRET: JWT_SECRET,
    VP_WORKER_TOKEN: WORKER_TOKEN,
    VP_ADMIN_EMAIL: ADMIN.email,
    VP_ADMIN_PASSWORD: ADMIN.password,
  });
}
