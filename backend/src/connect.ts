// Store connections with retry and exponential backoff until a deadline, then a clear failure naming
// the store (never the URL: it may hold a password).
import { setTimeout as delay } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export class StoreUnreachableError extends Error {
  constructor(readonly store: 'mongodb' | 'redis', seconds: number) {
    super(`${store} is unreachable after ${seconds} s; check ${store === 'mongodb' ? 'MONGODB_URI' : 'REDIS_URL'}`);
    this.name = 'StoreUnreachableError';
  }
}

async function retry<T>(store: 'mongodb' | 'redis', timeoutSeconds: number, logger: Logger, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let wait = 200;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() + wait > deadline) throw new StoreUnreachableError(store, timeoutSeconds);
      logger.warn({ store, attempt: n, retry_in_ms: wait, cause: err instanceof Error ? err.name : 'unknown' }, 'store not reachable yet');
      await delay(wait);
      wait = Math.min(wait * 2, 5000);
    }
  }
}

export async function connectMongo(uri: string, timeoutSeconds: number, logger: Logger): Promise<MongoClient> {
  return retry('mongodb', timeoutSeconds, logger, async () => {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: Math.min(5000, Math.max(500, timeoutSeconds * 250)), connectTimeoutMS: 5000 });
    try {
      await client.connect();
      await client.db('admin').command({ ping: 1 });
      return client;
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  });
}

export function redisClient(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    // Fail commands fast while Redis is away (the API answers 503) instead of queueing them forever.
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
  });
}

export async function connectRedis(url: string, timeoutSeconds: number, logger: Logger): Promise<Redis> {
  return retry('redis', timeoutSeconds, logger, async () => {
    const client = redisClient(url);
    client.on('error', () => undefined); // reported through the health check, not as unhandled events
    try {
      await client.connect();
      await client.ping();
      return client;
    } catch (err) {
      client.disconnect();
      throw err;
    }
  });
}
