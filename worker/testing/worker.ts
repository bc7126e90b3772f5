// An in-process worker on real Redis, MinIO and the suite's backend, listening on a free port; and the
// environment of a worker run as a process (dist/main.js) on the same services.
import path from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { createWorker, type Worker, type WorkerDeps } from '#worker/app.js';
import { createLogger } from '#worker/core/logger.js';
import { loadSettings, type Settings } from '#worker/core/settings.js';
import { repoRoot, saveLogs } from '@voice-platform/tests/infra';
import { backendUrl, workerToken } from './backend.js';

export interface TestWorker {
  worker: Worker;
  settings: Settings;
  url: string;
  wsUrl: string;
  logs: string[];
  redis: Redis;
  stop(): Promise<void>;
}

/** The built worker entry point, for the tests that run the worker as a process. */
export const workerMain = path.join(repoRoot, 'worker', 'dist', 'main.js');

/** A worker process's environment on the suite's backend, listening on `port`; `env` adds or overrides. */
export function workerProcessEnv(port: number, env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    SERVICE_CONFIG_URL: `${backendUrl()}/api/v1/config`,
    WORKER_AUTH_TOKEN: workerToken(),
    LOG_LEVEL: 'info',
    // The suites share two cores with every service they start: tests of something else admit on slots, the
    // load tests turn load admission on themselves (fleet/load.test.ts, admission.test.ts).
    LOAD_ADMISSION: 'false',
    ...env,
  };
}

/** The suite's LiveKit (and so livekit-sip), with dial-outs taken; `env` adds or overrides. */
export function telephonyEnv(env: Record<string, string> = {}): Record<string, string> {
  return {
    LIVEKIT_URL: process.env.LIVEKIT_URL!,
    LIVEKIT_API_KEY: process.env.LIVEKIT_API_KEY!,
    LIVEKIT_API_SECRET: process.env.LIVEKIT_API_SECRET!,
    DIALOUT_ENABLED: 'true',
    ...env,
  };
}

export function testSettings(env: Record<string, string> = {}): Settings {
  return loadSettings({
    SERVICE_CONFIG_URL: `${backendUrl()}/api/v1/config`,
    WORKER_AUTH_TOKEN: workerToken(),
    REDIS_URL: process.env.REDIS_URL,
    STORAGE_ENDPOINT: process.env.STORAGE_ENDPOINT,
    STORAGE_ACCESS_KEY: process.env.STORAGE_ACCESS_KEY,
    STORAGE_SECRET_KEY: process.env.STORAGE_SECRET_KEY,
    STORAGE_BUCKET: 'recordings',
    STORAGE_TIMEOUT_MS: '3000',
    WORKER_ID: `test-worker-${Math.random().toString(36).slice(2, 8)}`,
    LOG_LEVEL: 'info',
    WS_START_TIMEOUT_MS: '300',
    DIALOUT_ENABLED: 'false',
    // As in workerProcessEnv: load admission only where a test turns it on.
    LOAD_ADMISSION: 'false',
    ...env,
  });
}

export async function startWorker(env: Record<string, string> = {}, extra: Partial<WorkerDeps> = {}): Promise<TestWorker> {
  const settings = testSettings(env);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const mk = () => {
    const r = new Redis(settings.REDIS_URL, { maxRetriesPerRequest: 1 });
    r.on('error', () => undefined);
    return r;
  };
  const redis = mk();
  const blockingRedis = settings.DIALOUT_ENABLED ? mk() : undefined;
  const worker = createWorker({ settings, logger: createLogger(settings.LOG_LEVEL, sink), redis, blockingRedis, ...extra });
  const port = await worker.listen(0, '127.0.0.1');
  return {
    worker,
    settings,
    logs,
    redis,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    async stop() {
      await worker.close();
      // Kept with the suite's logs (test-artifacts/logs/) for the secrets check after `make test`.
      saveLogs(`worker-${settings.WORKER_ID}`, logs);
      redis.disconnect();
      blockingRedis?.disconnect();
    },
  };
}
