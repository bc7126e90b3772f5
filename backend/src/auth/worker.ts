// Worker authentication: `Authorization: Bearer <WORKER_AUTH_TOKEN>`, compared in constant time
// (both sides hashed first, so lengths never leak either).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { bearer } from './admin.js';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

function isWorkerToken(svc: Services, token: string | undefined): boolean {
  if (!token) return false;
  return timingSafeEqual(digest(token), digest(svc.settings.WORKER_AUTH_TOKEN));
}

export function requireWorker(svc: Services) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const token = bearer(ctx);
    if (!token) throw apiError('unauthorized', 'the worker bearer token is required');
    if (!isWorkerToken(svc, token)) throw apiError('unauthorized', 'the worker bearer token is invalid');
    await next();
  };
}
