// JSON request bodies: only application/json in UTF-8 without Content-Encoding, at most 64 KiB, read
// within BODY_READ_TIMEOUT_MS, parsed once. Used per route after authentication, so an unauthenticated
// caller learns nothing about body handling.
import type { Socket } from 'node:net';
import type { Context, Next } from 'koa';
import { apiError, type ApiError } from './errors.js';

const BODY_LIMIT_BYTES = 64 * 1024;
/** After the answer, what the client still sends is read and dropped this long before the socket is
 *  destroyed: closing with unread data makes the kernel send a reset, which may discard the answer. */
const LINGER_MS = 2000;

/**
 * Closes the connection once the answer is sent (`Connection: close`): the request's body was left unread,
 * so the connection cannot carry another request. A lingering close: our FIN first, then the rest the
 * client sends is drained until it closes its side or LINGER_MS pass.
 */
export function closeAfterAnswer(ctx: Context): void {
  const socket = ctx.req.socket as Socket & { destroySoon?: () => void };
  // Node's server calls destroySoon() after an answer sent with `Connection: close`.
  socket.destroySoon = function lingeringClose(this: Socket) {
    const destroy = () => this.destroy();
    this.once('end', destroy);
    setTimeout(destroy, LINGER_MS).unref();
    this.end();
    this.resume();
  };
  // Whatever the client still sends goes nowhere (and must not wait on a paused request stream).
  ctx.req.resume();
}

/** The refusal of a body that cannot be read to its end: the connection is closed after the answer. */
function unread(ctx: Context, err: ApiError): ApiError {
  closeAfterAnswer(ctx);
  return apiError(err.code, { message: err.message, headers: { ...err.headers, Connection: 'close' } });
}

/** The whole body, at most `limitBytes` (else 413 `payload_too_large` with `tooLarge` as its message), within BODY_READ_TIMEOUT_MS. */
export function readRaw(ctx: Context, limitBytes = BODY_LIMIT_BYTES, tooLarge = `body is over ${limitBytes} bytes`): Promise<Buffer> {
  const declared = Number(ctx.request.get('Content-Length') || NaN);
  if (declared > limitBytes) return Promise.reject(unread(ctx, apiError('payload_too_large', tooLarge)));
  // BODY_READ_TIMEOUT_MS, put on every request by app.ts.
  const timeoutMs = (ctx.state.bodyReadTimeoutMs as number | undefined) ?? 10_000;
  const req = ctx.req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const fail = (err: ApiError) => {
      done();
      reject(unread(ctx, err));
    };
    // A deadline for the whole body, not per chunk: a byte every few seconds must not hold a connection for minutes.
    const timer = setTimeout(() => fail(apiError('request_timeout', `the body did not arrive within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) fail(apiError('payload_too_large', tooLarge));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    // The client went away mid-body: nobody is left to answer.
    const onClose = () => {
      if (req.complete) return;
      done();
      reject(new Error('the client closed the connection before the body was complete'));
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Charset and Content-Encoding: a body is read as UTF-8, as sent; anything else would be read wrongly, so it is refused. */
export function encodingProblem(ctx: Context): string | null {
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== 'utf-8') return 'the body must be UTF-8 (charset=utf-8, or no charset)';
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (encoding && encoding !== 'identity') return 'the body must be sent without Content-Encoding';
  return null;
}

export function jsonBody() {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.request.is('application/json')) throw apiError('unsupported_media_type');
    const problem = encodingProblem(ctx);
    if (problem) throw apiError('unsupported_media_type', problem);
    const raw = await readRaw(ctx);
    try {
      ctx.request.body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw apiError('invalid_json');
    }
    await next();
  };
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
