// The HTTP server around the Koa app: time limits for receiving a request, and the documented error body
// (not Node's empty one) for requests Node's parser refuses before the app ever sees them.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, ERROR_CODES, type ErrorCode } from '@voice-platform/schemas';
import type Koa from 'koa';
import type { Settings } from './core/settings.js';

/** What Node's parser errors mean for the client (the codes Node itself answers 431 and 408 for). */
function clientErrorCode(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADERS_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

/** A raw error answer with the documented body; the connection is closed after it (it cannot be trusted to frame another request). */
export function clientErrorAnswer(code: ErrorCode): string {
  const { status, message } = ERROR_CODES[code];
  const body = JSON.stringify(errorBody(code, message));
  return [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function createHttpServer(app: Koa, settings: Pick<Settings, 'BODY_READ_TIMEOUT_MS'>): http.Server {
  // Checked this often, so a request over its limit is answered within a few seconds of it.
  const handle = app.callback();
  const server = http.createServer({ connectionsCheckingInterval: Math.min(5000, settings.BODY_READ_TIMEOUT_MS) }, handle);
  server.keepAliveTimeout = 65_000;
  // The body has its own deadline (body.ts); these bound the headers, and a request whose body no route
  // reads (Node drains it after the answer). Node checks them every few seconds, then answers through clientError.
  server.headersTimeout = settings.BODY_READ_TIMEOUT_MS;
  server.requestTimeout = 2 * settings.BODY_READ_TIMEOUT_MS;
  // A WebSocket upgrade goes through the app like any request (its authentication, errors and routes): the route
  // that accepts it takes the socket (calls/listen.ts); any other answer is written to it and the socket closed.
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    (req as http.IncomingMessage & { upgrade?: { socket: Duplex; head: Buffer } }).upgrade = { socket, head };
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as import('node:net').Socket);
    res.on('finish', () => socket.destroy());
    socket.on('error', () => socket.destroy());
    void handle(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's own handler: no answer on a dead socket, nor into an answer already started on it.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorAnswer(clientErrorCode(err)));
  });
  return server;
}
