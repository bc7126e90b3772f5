// One error type and one middleware that turns every failure into the documented body
// `{"error":{"code","message","details"?}}`. Unknown errors become a bare 500: no stack, no driver text.
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

/** Store outages surface as 503, so a caller knows to retry rather than to fix its request. */
function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    /^Mongo(Network|ServerSelection|NotConnected|Topology|PoolCleared)/.test(err.name) ||
    err.name === 'MaxRetriesPerRequestError' ||
    /Connection is closed|Stream isn't writeable|ECONNREFUSED|store timeout/.test(err.message)
  );
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
      if (err instanceof ApiError) apiErr = err;
      else if (isStoreUnavailable(err)) {
        apiErr = new ApiError(503, 'service_unavailable', 'a data store is unavailable; retry later', undefined, { 'Retry-After': '5' });
        ctx.state.errorCause = err instanceof Error ? err.name : 'unknown';
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
