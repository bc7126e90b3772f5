// One error type and one middleware that turns every failure into the documented body
// `{"error":{"code","message","details"?}}`. Unknown errors become a bare 500: no stack, no driver text.
import { types } from 'node:util';
import type { Context, Next } from 'koa';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (code = 'not_found', what = 'resource') => new ApiError(404, code, `${what} not found`);

/** Store outages surface as 503 naming the store (`mongodb` or `redis`, as in /health), so a caller
 *  knows to retry rather than to fix its request, and an operator knows where to look. */
function unavailableStore(err: unknown): 'mongodb' | 'redis' | null {
  // isNativeError, not instanceof: Node's socket errors may come from another realm (e.g. under a VM context).
  if (!types.isNativeError(err)) return null;
  // The MongoDB driver's errors all carry a Mongo… name; these mean "no usable server" (or no connection
  // to it in time; ExpiredSession: the client was reconnected under the operation, see connect.ts).
  if (/^Mongo(Network|ServerSelection|NotConnected|Topology|PoolCleared|ServerClosed|WaitQueueTimeout|ExpiredSession)/.test(err.name)) return 'mongodb';
  // The driver (6.x) passes on, unwrapped, the socket's own error when it writes to a connection the
  // server has just closed. ioredis never hands a socket error to a command (it rejects with the
  // messages below), so a bare EPIPE/ECONNRESET here is MongoDB's.
  if (['EPIPE', 'ECONNRESET'].includes((err as NodeJS.ErrnoException).code ?? '')) return 'mongodb';
  // ioredis: retries exhausted, the connection gone or not writable, no reply in REDIS_COMMAND_TIMEOUT_MS,
  // or a server still loading its data after a restart.
  if (err.name === 'MaxRetriesPerRequestError' || /^(Connection is closed|Stream isn't writeable|Command timed out|LOADING )/.test(err.message)) return 'redis';
  return null;
}

export function errorMiddleware() {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ApiError(404, 'not_found', 'no such endpoint');
      // koa-router answers a method it does not know at all (TRACE, QUERY, …) 501 text/plain; to a client
      // that is no different from a known one the path does not take: 405 with Allow (404 if no route has the path).
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        const allow = String(ctx.response.get('Allow'));
        if (!allow) throw new ApiError(404, 'not_found', 'no such endpoint');
        throw new ApiError(405, 'method_not_allowed', 'method not allowed on this endpoint', undefined, { Allow: allow });
      }
    } catch (err) {
      let apiErr: ApiError;
      let store: 'mongodb' | 'redis' | null;
      if (err instanceof ApiError) apiErr = err;
      else if ((store = unavailableStore(err))) {
        apiErr = new ApiError(503, 'service_unavailable', `${store} is unavailable; retry later`, { failed: [store] }, { 'Retry-After': '5' });
        ctx.state.errorCause = (err as Error).name;
      } else {
        apiErr = new ApiError(500, 'internal_error', 'internal error');
        ctx.state.unexpectedError = err;
      }
      ctx.status = apiErr.status;
      if (apiErr.headers) ctx.set(apiErr.headers);
      ctx.body = { error: { code: apiErr.code, message: apiErr.message, ...(apiErr.details !== undefined ? { details: apiErr.details } : {}) } };
    }
  };
}
