// The worker's entry: HTTP (/health, /health/live, /health/fleet, /metrics) and `WS /ws/{bot_id}`, whose test
// calls are admitted here (Origin, a one-use test-call token, a test slot) and run on the caller's socket.
// Calls from jobs come through the dispatcher instead.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { verifyTestCallToken } from '@voice-platform/schemas/test-call-token';
import { BackendError } from '../core/backend.js';
import { refusalFor } from '../providers/errors.js';
import { readFleet } from '../fleet/capacity.js';
import { CLOSE_CODES, type CallErrorCode } from '../transports/transport.js';
import { parseClientMessage, WebSocketTransport } from '../transports/websocket.js';
import type { WorkerContext } from './context.js';

/** Data a caller may send before its token is checked (a start message and a little audio). */
const EARLY_BYTES_MAX = 1 << 20;
/** How long a WebSocket call's config read is retried while the backend is busy (the caller is waiting). */
const WS_CONFIG_WAIT_MS = 3000;
const WS_PATH = /^\/ws\/([A-Za-z0-9_-]{1,128})\/?$/;

export function createEntry(ctx: WorkerContext): { server: http.Server; wss: WebSocketServer } {
  const { settings, logger, redis, metrics, backend, slots, heartbeat, version } = ctx;
  const { report, releaseLease } = ctx.events;

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });

  /** Refuses a WebSocket call: the worker's own codes close as CLOSE_CODES says, provider failures as `refusalFor`. */
  function refuse(transport: WebSocketTransport, code: CallErrorCode, message: string): void;
  function refuse(transport: WebSocketTransport, code: string, message: string, closeCode: number): void;
  function refuse(transport: WebSocketTransport, code: string, message: string, closeCode: number = CLOSE_CODES[code as CallErrorCode]): void {
    metrics.callsRefused.inc({ code });
    transport.fail(closeCode, code, message);
  }

  const allowedOrigins = new Set(settings.WS_ALLOWED_ORIGINS.split(',').map((o) => o.trim().replace(/\/$/, '').toLowerCase()).filter(Boolean));

  /**
   * A WebSocket test call must come from an allowed browser Origin (or none: not a browser) and carry a
   * test-call token for this bot that no call has used yet; else it is refused before it holds a slot.
   */
  async function admitTestCall(req: http.IncomingMessage, transport: WebSocketTransport, botId: string): Promise<{ sub: string; test?: { run_id: string; case_id: string } } | null> {
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.trim().replace(/\/$/, '').toLowerCase())) {
      refuse(transport, 'origin_not_allowed', 'this Origin may not open test calls (WS_ALLOWED_ORIGINS)');
      return null;
    }
    const token = new URL(req.url ?? '/', 'http://worker').searchParams.get('token');
    if (!token) {
      refuse(transport, 'unauthorized', 'a test-call token is required: POST /api/v1/test-calls/token, then connect with ?token=');
      return null;
    }
    const checked = verifyTestCallToken(settings.WORKER_AUTH_TOKEN, token, botId);
    if (!checked.ok) {
      const why = { malformed: 'the test-call token is malformed', bad_signature: 'the test-call token is not genuine', expired: 'the test-call token has expired', wrong_bot: 'the test-call token is for another bot' }[checked.problem];
      refuse(transport, 'unauthorized', why);
      return null;
    }
    // One call per token: the first socket to present it wins, on any worker (the mark outlives the token).
    const ttlMs = Math.max(1000, checked.claims.exp * 1000 - Date.now() + 60_000);
    const first = await redis.set(`vp:test-call-token:${checked.claims.jti}`, '1', 'PX', ttlMs, 'NX').catch(() => 'error' as const);
    if (first === 'error') {
      refuse(transport, 'config_unreachable', 'the worker cannot check the token now (redis is unreachable)');
      return null;
    }
    if (first !== 'OK') {
      refuse(transport, 'unauthorized', 'the test-call token has started a call already');
      return null;
    }
    return { sub: checked.claims.sub, ...(checked.claims.test ? { test: checked.claims.test } : {}) };
  }

  /** A WebSocket test call: admitted, its optional start message read, then a call the worker creates itself. */
  async function wsCall(req: http.IncomingMessage, ws: WebSocket, botId: string): Promise<void> {
    const transport = new WebSocketTransport(ws);
    // What the caller sends while the token is checked (one Redis round trip) is kept for the call, in order.
    const early: Array<[Buffer, boolean]> = [];
    let earlyBytes = 0;
    const keep = (data: Buffer, isBinary: boolean) => {
      earlyBytes += data.length;
      if (earlyBytes <= EARLY_BYTES_MAX) early.push([data, isBinary]);
    };
    let gone = false;
    const onEarlyClose = () => (gone = true);
    ws.on('message', keep);
    ws.on('close', onEarlyClose);
    const admitted = await admitTestCall(req, transport, botId);
    const by = admitted?.sub ?? null;
    ws.off('message', keep);
    ws.off('close', onEarlyClose);
    if (by === null || gone) return;
    if (earlyBytes > EARLY_BYTES_MAX) {
      refuse(transport, 'invalid_message', 'too much data before the call started');
      return;
    }
    const slotId = `ws:${Math.random().toString(36).slice(2)}`;
    const got = slots.tryAcquire(slotId, 'test');
    if (got !== 'ok') {
      const message =
        got === 'worker_draining'
          ? 'this worker is shutting down'
          : got === 'test_share_full'
            ? `test calls hold their share of this worker already (${slots.testMax} of ${slots.max} slots; the rest are kept for dial-outs)`
            : got === 'worker_overloaded'
              ? `this worker is at its load threshold (load ${ctx.load.sample.load}); another call would slow the ${slots.active} it runs`
              : `this worker runs ${slots.max} calls already`;
      refuse(transport, got === 'worker_draining' ? got : 'worker_at_capacity', message);
      return;
    }
    // The call's span (docs/design.md §16): its backend requests, turns and log lines join one trace.
    await ctx.tracing.wsCall(botId, async (named) => {
      let callId: string | null = null;
      try {
        // The optional start message: the first text message, or none (audio first, or a short wait).
        const variables = await new Promise<Record<string, string> | Error>((resolve) => {
          const timer = setTimeout(() => done({}), settings.WS_START_TIMEOUT_MS);
          const onMessage = (data: Buffer, isBinary: boolean) => {
            if (isBinary) {
              transport.onClientData(data, true);
              return done({});
            }
            const msg = parseClientMessage(data.toString('utf8'));
            if (msg?.type === 'start') done(msg.variables);
            else if (msg?.type === 'stop') done(new Error('stop'));
            else done(new Error('invalid'));
          };
          const onClose = () => done(new Error('stop'));
          function done(v: Record<string, string> | Error) {
            clearTimeout(timer);
            ws.off('message', onMessage);
            ws.off('close', onClose);
            // From here on the call's messages go to the transport, in this same tick: frames that came in
            // with the start (ws emits a batch of them synchronously) would otherwise reach no listener.
            if (!(v instanceof Error)) ws.on('message', (data: Buffer, isBinary: boolean) => transport.onClientData(data, isBinary));
            resolve(v);
          }
          ws.on('message', onMessage);
          ws.on('close', onClose);
          // Replayed through the listeners of the moment: the start handler first, the transport once it took over.
          for (const [data, isBinary] of early.splice(0)) ws.emit('message', data, isBinary);
        });
        if (variables instanceof Error) {
          if (variables.message === 'invalid') refuse(transport, 'invalid_message', 'the first text message must be {"type":"start","variables":{…}}');
          else transport.close(1000, 'caller_hangup');
          return;
        }
        const created = await backend.createCall(botId, variables, admitted?.test);
        callId = created.call_id;
        named(callId);
        await heartbeat.lease(callId);
        // The caller waits on the line: a busy backend gets a short while (WS_CONFIG_WAIT_MS).
        const cfg = await backend.fetchConfig(botId, callId, WS_CONFIG_WAIT_MS);
        // A caller gone before the call could start (or closed for a protocol error) gets no pipeline:
        // the record ends `canceled`, as a call that never connected, not as one started and ended.
        const gone = transport.hangupReason;
        if (gone) {
          transport.close(1000, gone);
          metrics.callsTotal.inc({ result: 'canceled' });
          void report(callId, { status: 'canceled', end_reason: gone });
          return;
        }
        const session = await ctx.startSession(await ctx.newSession(cfg), transport);
        await session.done;
      } catch (err) {
        // Backend answers have their own close codes; a provider failure (or anything else) is the table's.
        const backendCode: CallErrorCode | null = err instanceof BackendError ? (err.code === 'invalid_config' ? 'config_unreachable' : err.code) : null;
        const { code, closeCode } = backendCode ? { code: backendCode, closeCode: CLOSE_CODES[backendCode] } : refusalFor(err);
        logger.warn({ bot_id: botId, call_id: callId, by, code, err: err instanceof Error ? err.message : String(err) }, 'websocket call refused');
        refuse(transport, code, err instanceof Error ? err.message : 'the call could not start', closeCode);
        if (callId) void report(callId, { status: 'failed', end_reason: code });
      } finally {
        if (callId) releaseLease(callId);
        slots.release(slotId);
      }
    });
  }

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    void (async () => {
      try {
        if (req.method === 'GET' && path === '/health') {
          // 503 while draining so load balancers stop sending calls here, and until the first heartbeat
          // is written: ready means the dial-out API can already place a call on this worker.
          const ready = !slots.draining && heartbeat.visible;
          return json(res, ready ? 200 : 503, {
            status: slots.draining ? 'draining' : ready ? 'ok' : 'starting',
            active_calls: slots.active,
            max_calls: slots.max,
            draining: slots.draining,
            load: ctx.load.sample.load,
            admittable: slots.free,
            version,
            worker_id: settings.WORKER_ID,
          });
        }
        if (req.method === 'GET' && path === '/health/live') {
          // Liveness stays 200 while draining: a kubelet restarting a draining worker would cut its calls.
          return json(res, 200, { status: 'alive', draining: slots.draining });
        }
        if (req.method === 'GET' && path === '/health/fleet') {
          try {
            return json(res, 200, await readFleet(redis));
          } catch {
            return json(res, 503, { error: { code: 'service_unavailable', message: 'redis is unreachable' } });
          }
        }
        if (req.method === 'GET' && path === '/metrics') {
          metrics.draining.set(slots.draining ? 1 : 0);
          res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
          return res.end(await metrics.registry.metrics());
        }
        json(res, 404, { error: { code: 'not_found', message: 'not found' } });
      } catch (err) {
        logger.error({ err: err instanceof Error ? err.message : String(err) }, 'http handler failed');
        if (!res.headersSent) json(res, 500, { error: { code: 'internal_error', message: 'internal error' } });
      }
    })();
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const m = WS_PATH.exec((req.url ?? '').split('?')[0]!);
    if (!m) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => void ctx.track(wsCall(req, ws, m[1]!)));
  });

  return { server, wss };
}
