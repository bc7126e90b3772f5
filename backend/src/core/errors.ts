// One error type and one middleware that turns every failure into the documented body
// `{"error":{"code","message","details"?}}`. Errors are raised by code (the catalogue in @voice-platform/schemas
// gives each its status). Unknown errors become a bare 500: no stack, no driver text.
import { types } from 'node:util';
import type { Context, Next } from 'koa';
import { MongoExpiredSessionError, MongoNetworkError, MongoNotConnectedError, MongoServerClosedError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import { ERROR_CODES, errorBody, type ErrorCode } from '@voice-platform/schemas';
import { RedisUnavailableError } from './connect.js';

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
  }
}

interface ApiErrorOptions {
  /** Else the catalogue's message of the code. */
  message?: string;
  details?: unknown;
  headers?: Record<string, string>;
}

/** The error of `code`, its status from the catalogue; a string is its message. */
export function apiError(code: ErrorCode, opts: string | ApiErrorOptions = {}): ApiError {
  const o = typeof opts === 'string' ? { message: opts } : opts;
  return new ApiError(code, o.message ?? ERROR_CODES[code].message, o.details, o.headers);
}

/** The driver's errors that mean "no usable server" (or no connection to it in time; ExpiredSession: the
 *  client was reconnected under the operation, see connect.ts). MongoPoolClearedError and
 *  MongoNetworkTimeoutError are MongoNetworkErrors. */
const MONGO_OUTAGES = [MongoNetworkError, MongoServerSelectionError, MongoNotConnectedError, MongoTopologyClosedError, MongoServerClosedError, MongoExpiredSessionError];

/** Store outages surface as 503 naming the store (`mongodb` or `redis`, as in /health), so a caller
 *  knows to retry rather than to fix its request, and an operator knows where to look. */
function unavailableStore(err: unknown): 'mongodb' | 'redis' | null {
  // Every command of the backend's Redis clients that fails for want of Redis rejects with this (connect.ts).
  if (err instanceof RedisUnavailableError) return 'redis';
  if (MONGO_OUTAGES.some((type) => err instanceof type)) return 'mongodb';
  // isNativeError, not instanceof: Node's socket errors may come from another realm (e.g. under a VM context).
  if (!types.isNativeError(err)) return null;
  // The wait for a pooled connection timed out: the driver does not export this error's class.
  if (err.name === 'MongoWaitQueueTimeoutError') return 'mongodb';
  // The driver (6.x) passes on, unwrapped, the socket's own error when it writes to a connection the
  // server has just closed. A Redis command never fails with a socket error (connect.ts), so a bare
  // EPIPE/ECONNRESET here is MongoDB's.
  if (['EPIPE', 'ECONNRESET'].includes((err as NodeJS.ErrnoException).code ?? '')) return 'mongodb';
  return null;
}

export function errorMiddleware() {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw apiError('not_found', 'no such endpoint');
      // koa-router answers a method it does not know at all (TRACE, QUERY, …) 501 text/plain; to a client
      // that is no different from a known one the path does not take: 405 with Allow (404 if no route has the path).
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        const allow = String(ctx.response.get('Allow'));
        if (!allow) throw apiError('not_found', 'no such endpoint');
        throw apiError('method_not_allowed', { headers: { Allow: allow } });
      }
    } catch (err) {
      let apiErr: ApiError;
      let store: 'mongodb' | 'redis' | null;
      if (err instanceof ApiError) apiErr = err;
      else if ((store = unavailableStore(err))) {
        apiErr = apiError('service_unavailable', { message: `${store} is unavailable; retry later`, details: { failed: [store] }, headers: { 'Retry-After': '5' } });
        ctx.state.errorCause = err instanceof RedisUnavailableError ? err.cause.name : (err as Error).name;
      } else {
        apiErr = apiError('internal_error');
        ctx.state.unexpectedError = err;
      }
      ctx.status = apiErr.status;
      if (apiErr.headers) ctx.set(apiErr.headers);
      ctx.body = errorBody(apiErr.code, apiErr.message, apiErr.details);
    }
  };
}
