// An in-process worker on real Redis, MinIO and the suite's backend, listening on a free port.
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { createWorker, type Worker, type WorkerDeps } from '../app.js';
import { createLogger } from '../logger.js';
import { loadSettings, type Settings } from '../settings.js';
import { saveLogs } from '@voice-platform/tests/infra';
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
