// Boot: settings (every problem at once, refuse to boot) → Redis → listen. SIGTERM/SIGINT drain:
// no new calls, active calls finish (up to DRAIN_TIMEOUT_MS), exit 0.
import { settingsOrExit } from '@voice-platform/schemas';
import { Redis } from 'ioredis';
import { createWorker, VERSION } from './app.js';
import { createLogger } from './core/logger.js';
import { loadSettings } from './core/settings.js';
import { loadRnnoise } from './noise/rnnoise.js';

/** Commands wait at most this long for Redis (a frozen Redis must not hold a call's start); the blocking reads have their own. */
const REDIS_COMMAND_TIMEOUT_MS = 2000;

function redisClient(url: string, commandTimeout?: number): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    commandTimeout,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
  });
  client.on('error', () => undefined); // heartbeat and /health/fleet report Redis trouble
  return client;
}

async function main(): Promise<void> {
  const settings = settingsOrExit('worker', () => loadSettings(process.env));
  const logger = createLogger(settings.LOG_LEVEL);
  const redis = redisClient(settings.REDIS_URL, REDIS_COMMAND_TIMEOUT_MS);
  const blockingRedis = redisClient(settings.REDIS_URL);
  try {
    await redis.connect();
    await blockingRedis.connect();
  } catch {
    // Redis carries capacity; a worker that cannot heartbeat would take calls nobody counts.
    logger.fatal('redis is unreachable; check REDIS_URL');
    process.stderr.write('worker: redis is unreachable; check REDIS_URL\n');
    process.exit(3);
  }
  // rtc-node 1.1 can throw "trying to drop an invalid handle" from a finalizer, outside any call, after a
  // failed room join (seen under load). It concerns a handle already gone: log it and keep the other
  // calls running. Anything else uncaught still ends the process, as it would by default.
  process.on('uncaughtException', (err: Error & { code?: string }) => {
    if (err?.message === 'trying to drop an invalid handle') {
      logger.warn({ err: err.message, code: err.code }, 'rtc-node released a handle twice; ignored');
      return;
    }
    logger.fatal({ err: err instanceof Error ? err.name : 'unknown' }, 'uncaught exception');
    process.stderr.write(`worker: uncaught exception: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  });
  // Any bot may turn noise suppression on: a worker that cannot load RNNoise says so now, not at a call.
  await loadRnnoise();
  const worker = createWorker({ settings, logger, redis, blockingRedis, version: VERSION });
  await worker.listen(settings.PORT, settings.HOST);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, active_calls: worker.slots.active }, 'stopping');
    void worker
      .drain(settings.DRAIN_TIMEOUT_MS)
      .then(async () => {
        redis.disconnect();
        logger.info('stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err: err instanceof Error ? err.message : String(err) }, 'drain failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`worker: boot failed: ${err instanceof Error ? err.message : 'unknown error'}\n`);
  process.exit(1);
});
