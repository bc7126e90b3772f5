// FerretDB v1 applies an update as a read followed by a separate write, so two conditional updates of
// one document can both "win" there, where MongoDB serialises them. Read-check-write sections on one
// document therefore hold this short Redis lock, which makes both stores behave the same.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { apiError } from './errors.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

interface LockOptions {
  /** The lock frees itself after this long if its holder dies. */
  ttlMs?: number;
  /** How long to wait for a busy lock before answering 409 `conflict`. */
  waitMs?: number;
}

export async function withDocLock<T>(redis: Redis, name: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const key = `vp:lock:${name}`;
  const token = randomBytes(12).toString('hex');
  const deadline = Date.now() + (opts.waitMs ?? 3000);
  let pauseMs = 2;
  while ((await redis.set(key, token, 'PX', opts.ttlMs ?? 5000, 'NX')) !== 'OK') {
    if (Date.now() > deadline) {
      throw apiError('conflict', { headers: { 'Retry-After': '1' } });
    }
    await delay(pauseMs); // a holder finishes in milliseconds: poll with a short, growing back-off
    pauseMs = Math.min(pauseMs * 2, 50);
  }
  try {
    return await fn();
  } finally {
    await redis.eval(RELEASE, 1, key, token).catch(() => undefined); // expires by itself if Redis is gone
  }
}
