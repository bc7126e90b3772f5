// The worker: HTTP (/health, /health/live, /health/fleet, /metrics), `WS /ws/{bot_id}`, the dial-out claim loop, the
// fleet heartbeat, and drain. createWorker(deps) wires it; main.ts adds settings, signals and listen.
import http from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { verifyTestCallToken } from '@voice-platform/schemas/test-call-token';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { CALL_FINAL_EVENTS_KEY, TERMINAL_CALL_STATUSES, type CallEvent, type RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from './settings.js';
import type { Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { BackendClient, BackendError } from './backend.js';
import { RECORDINGS_SUBDIR, RecordingStore, sweepRecordings } from './call/recording.js';
import { CallSession, type CallObserver } from './call/session.js';
import { CallEventOutbox, type Delivery } from './call/outbox.js';
import { createProviders, type CallProviders } from './providers.js';
import { refusalFor } from './providers/errors.js';
import { Spawner } from './proc/spawner.js';
import { Heartbeat, readFleet, Slots } from './fleet/capacity.js';
import { ClaimLoop, type CallJob } from './fleet/claim.js';
import { CLOSE_CODES, DialError, type CallErrorCode, type CallTransport, type DialOutcome, type TelephonyDialer } from './transports/transport.js';
import { liveKitDialerFromSettings } from './transports/livekit.js';
import { parseClientMessage, WebSocketTransport } from './transports/websocket.js';

export const VERSION = '0.1.0';

export interface WorkerDeps {
  settings: Settings;
  logger: Logger;
  /** Commands: heartbeat, fleet view, job acks. */
  redis: Redis;
  /** A second connection for the claim loop's blocking reads; no claim loop without it. */
  blockingRedis?: Redis;
  backend?: BackendClient;
  storage?: RecordingStore | null;
  metrics?: Metrics;
  /** Places dial-out calls; default: LiveKit when LIVEKIT_URL/KEY/SECRET are set, else none (jobs end `no_telephony_transport`). */
  dialer?: TelephonyDialer | null;
  observer?: CallObserver;
  /** Builds a call's providers (tests swap nothing here in practice; the bench counts them). */
  providers?: (cfg: RuntimeConfig) => Promise<CallProviders>;
  /** Starts the offline providers' processes; default: a new one, which the worker closes last. */
  spawner?: Spawner;
  version?: string;
}

export interface Worker {
  readonly server: http.Server;
  readonly slots: Slots;
  readonly metrics: Metrics;
  readonly sessions: ReadonlyMap<string, CallSession>;
  readonly spawner: Spawner;
  /** Call events on their way to the backend. */
  readonly events: CallEventOutbox;
  listen(port: number, host?: string): Promise<number>;
  /** Stop taking calls, let active ones finish (ending them at the deadline), then stop. */
  drain(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

const STALE_RECORDING_MS = 60 * 60 * 1000;
/** How long answering an inbound call may take once its job is claimed (joining the room, livekit-sip's 200 OK). */
const INBOUND_ANSWER_TIMEOUT_MS = 15_000;
/** Data a caller may send before its token is checked (a start message and a little audio). */
const EARLY_BYTES_MAX = 1 << 20;
/** How long a WebSocket call's config read is retried while the backend is busy (the caller is waiting). */
const WS_CONFIG_WAIT_MS = 3000;
/** How long a prepared dial-out waits for the backend's answer to its dialing move before it dials anyway. */
const DIALING_WAIT_MS = 1000;
/** Stopping, the outbox gets at least this long to deliver the last calls' events. */
const MIN_EVENT_FLUSH_MS = 5000;
const WS_PATH = /^\/ws\/([A-Za-z0-9_-]{1,128})\/?$/;

export function createWorker(deps: WorkerDeps): Worker {
  const { settings, logger, redis } = deps;
  const version = deps.version ?? VERSION;
  const metrics = deps.metrics ?? createMetrics();
  const backend = deps.backend ?? new BackendClient({ configUrl: settings.SERVICE_CONFIG_URL, token: settings.WORKER_AUTH_TOKEN, timeoutMs: settings.BACKEND_TIMEOUT_MS });
  const storage =
    deps.storage !== undefined
      ? deps.storage
      : new RecordingStore({
          endpoint: settings.STORAGE_ENDPOINT,
          accessKey: settings.STORAGE_ACCESS_KEY,
          secretKey: settings.STORAGE_SECRET_KEY,
          bucket: settings.STORAGE_BUCKET,
          secure: settings.STORAGE_SECURE,
          timeoutMs: settings.STORAGE_TIMEOUT_MS,
        });
  const spawner = deps.spawner ?? new Spawner();
  const providers = deps.providers ?? ((cfg: RuntimeConfig) => createProviders(cfg, settings, spawner));
  const sessions = new Map<string, CallSession>();
  const pending = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => undefined);
    return p;
  };

  let heartbeat: Heartbeat | null = null;
  const slots = new Slots(
    settings.MAX_CONCURRENT_CALLS,
    () => {
      metrics.activeCalls.set(slots.active);
      heartbeat?.nudge();
    },
    settings.TEST_CALL_SHARE,
  );
  metrics.maxCalls.set(settings.MAX_CONCURRENT_CALLS);
  heartbeat = new Heartbeat(
    redis,
    () => ({ worker_id: settings.WORKER_ID, active_calls: slots.active, max_calls: slots.max, draining: slots.draining, test_calls: slots.testActive, max_test_calls: slots.testMax, version, updated_at: Date.now() }),
    logger,
  );

  const dialer: TelephonyDialer | null = deps.dialer !== undefined ? deps.dialer : liveKitDialerFromSettings(settings, logger);

  // ---- call events: the outbox, and the final event parked in Redis for the dialler ----
  const events = new CallEventOutbox((id, ev) => backend.sendEvent(id, ev), metrics, logger, {
    firstRetryDelayMs: 200,
    maxRetryDelayMs: 5000,
    retryMaxMs: settings.CALL_EVENT_RETRY_MAX_MS,
  });
  /** Each ended call's final event as parked (merged with its recording report), until its lease goes. */
  const parked = new Map<string, CallEvent>();

  /**
   * Hands a call event to the outbox (never waits for the backend). A terminal event is also parked in
   * Redis (best effort): should this worker die before the backend took it, the dialler closes the call
   * from it instead of as `worker_lost`.
   */
  function report(callId: string, event: CallEvent): Promise<Delivery> {
    const ev: CallEvent = { ...event, event_id: event.event_id ?? randomUUID(), at: event.at ?? new Date().toISOString() };
    if (TERMINAL_CALL_STATUSES.includes(ev.status)) {
      const before = parked.get(callId);
      const final = before && before.status === ev.status ? { ...before, ...(ev.recording_key ? { recording_key: ev.recording_key } : {}), ...(ev.recording_error ? { recording_error: ev.recording_error } : {}) } : ev;
      parked.set(callId, final);
      redis.hset(CALL_FINAL_EVENTS_KEY, callId, JSON.stringify(final)).catch(() => undefined);
    }
    return events.report(callId, ev);
  }

  /**
   * The call is over on this worker: its lease (and parked end) go once the backend has taken its events.
   * If one was given up instead, the lease is only no longer renewed: it expires, and the dialler closes
   * the call from the parked end.
   */
  function releaseLease(callId: string): void {
    void events.settled(callId).then(async () => {
      parked.delete(callId);
      if (events.takeUndelivered(callId)) heartbeat!.forget(callId);
      else await heartbeat!.release(callId);
    });
  }

  const recordingDir = path.join(settings.RECORDING_DIR, RECORDINGS_SUBDIR);
  const callDeps = { report, storage, metrics, logger, sampleRate: settings.AUDIO_SAMPLE_RATE, recordingDir, observer: deps.observer, testCallIdleTimeoutMs: settings.TEST_CALL_IDLE_TIMEOUT_SECONDS * 1000 };

  /** Config → providers → session; any failure is a BackendError/ProviderError for the caller. */
  async function newSession(cfg: RuntimeConfig): Promise<CallSession> {
    return new CallSession(cfg, await providers(cfg), callDeps);
  }

  async function startSession(session: CallSession, transport: CallTransport): Promise<CallSession> {
    sessions.set(session.callId, session);
    void session.done.finally(() => sessions.delete(session.callId));
    await session.start(transport);
    return session;
  }

  /**
   * A claimed call's session with its providers open and the greeting synthesised, before the caller is
   * there; null when the bot cannot talk (the call is then failed, and nobody was rung or waited for).
   */
  async function preparedSession(callId: string, cfg: RuntimeConfig, log: Logger): Promise<CallSession | null> {
    try {
      const session = await newSession(cfg);
      await session.prepare();
      return session;
    } catch (err) {
      const reason = refusalFor(err).endReason;
      log.warn({ reason, err: err instanceof Error ? err.message : String(err) }, 'call could not be prepared');
      metrics.callsTotal.inc({ result: 'failed' });
      void report(callId, { status: 'failed', end_reason: reason });
      return null;
    }
  }

  /** Runs a prepared session on the caller's transport until the call is over. */
  async function runSession(callId: string, session: CallSession, transport: CallTransport): Promise<void> {
    try {
      await startSession(session, transport);
      await session.done;
    } catch (err) {
      transport.close(1011, 'internal_error');
      void report(callId, { status: 'failed', end_reason: refusalFor(err).endReason });
    }
  }

  // ---- WebSocket calls ----
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
  async function admitTestCall(req: http.IncomingMessage, transport: WebSocketTransport, botId: string): Promise<string | null> {
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
    return checked.claims.sub;
  }

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
    const by = await admitTestCall(req, transport, botId);
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
            : `this worker runs ${slots.max} calls already`;
      refuse(transport, got === 'test_share_full' ? 'worker_at_capacity' : got, message);
      return;
    }
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
      const created = await backend.createCall(botId, variables);
      callId = created.call_id;
      await heartbeat!.lease(callId);
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
      const session = await startSession(await newSession(cfg), transport);
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
  }

  // ---- dial-out jobs ----
  async function dialoutCall(job: CallJob): Promise<void> {
    metrics.jobsClaimed.inc();
    const log = logger.child({ call_id: job.call_id, bot_id: job.bot_id });
    // The lease comes first: should this worker die from here on, the dialler ends the call (and deletes
    // its room, which hangs up the phone), and while it lives the dialler leaves the call to it.
    await heartbeat!.lease(job.call_id);
    try {
      let cfg: RuntimeConfig;
      try {
        // Nobody is on the line yet: a busy or restarting backend gets CONFIG_WAIT_MS.
        cfg = await backend.fetchConfig(job.bot_id, job.call_id, settings.CONFIG_WAIT_MS);
      } catch (err) {
        const reason = err instanceof BackendError ? err.code : 'config_unreachable';
        log.warn({ reason }, 'dial-out job failed at config');
        void report(job.call_id, { status: 'failed', end_reason: reason });
        return;
      }
      if (!dialer) {
        // No telephony plane on this worker: say so on the call instead of pretending it rang.
        log.warn('dial-out job claimed but no telephony transport is configured');
        metrics.callsTotal.inc({ result: 'failed' });
        void report(job.call_id, { status: 'failed', end_reason: 'no_telephony_transport' });
        return;
      }
      if (job.direction === 'web') return await webCall(job, cfg, dialer, log);
      if (job.direction === 'inbound') return await inboundCall(job, cfg, dialer, log);
      if (!job.sip_trunk_id || !job.from_number) {
        log.warn('dial-out job without a trunk (queued before trunks existed)');
        void report(job.call_id, { status: 'failed', end_reason: 'no_outbound_trunk' });
        return;
      }
      // Reported, not awaited: the phone rings whatever the backend's latency. Should the backend refuse the
      // move (the call was closed meanwhile), the dial is called off, or the call ended, at once.
      const closed = new AbortController();
      let running: CallSession | null = null;
      const dialing = report(job.call_id, { status: 'dialing' }).then((d) => {
        if (d !== 'refused') return;
        log.warn('the backend refused the dialing move (the call is closed): calling it off');
        closed.abort(new Error('call closed by the backend'));
        void running?.end('call_closed', 'failed');
      });
      // Providers and the greeting get ready before the phone rings: the callee hears the bot as soon as
      // they answer, and a bot that cannot talk never rings anyone.
      const session = await preparedSession(job.call_id, cfg, log);
      if (!session) return;
      // A healthy backend has answered the move by now; a closed call is then never dialled. A slow one
      // gets DIALING_WAIT_MS more, then the phone rings anyway (its report follows).
      await Promise.race([dialing, new Promise((r) => setTimeout(r, DIALING_WAIT_MS).unref())]);
      let transport;
      try {
        if (closed.signal.aborted) {
          session.discard();
          return;
        }
        transport = await dialer.dial({
          callId: job.call_id,
          toNumber: job.to_number,
          fromNumber: job.from_number,
          sipTrunkId: job.sip_trunk_id,
          signal: AbortSignal.any([AbortSignal.timeout((settings.RINGING_TIMEOUT_SECONDS + 60) * 1000), closed.signal]),
          onRinging: () => void report(job.call_id, { status: 'ringing' }),
        });
      } catch (err) {
        session.discard();
        const outcome: DialOutcome = err instanceof DialError ? err.outcome : { status: 'failed', reason: 'dial_failed', sipStatusCode: null };
        log.info({ status: outcome.status, reason: outcome.reason, sip_status_code: outcome.sipStatusCode }, 'callee not reached');
        metrics.callsTotal.inc({ result: outcome.reason });
        void report(job.call_id, {
          status: outcome.status,
          end_reason: outcome.reason,
          ...(outcome.sipStatusCode !== null ? { sip_status_code: outcome.sipStatusCode } : {}),
        });
        return;
      }
      // The session starts at once; `ringing` and `in_progress` reach the backend in order behind it.
      running = session;
      await runSession(job.call_id, session, transport);
    } finally {
      releaseLease(job.call_id);
    }
  }

  /** A browser test call (docs/design.md §7 widget): the caller joins the call's room with the backend's token. */
  async function webCall(job: CallJob, cfg: RuntimeConfig, plane: TelephonyDialer, log: Logger): Promise<void> {
    if (!plane.joinWebCall) {
      metrics.callsTotal.inc({ result: 'failed' });
      void report(job.call_id, { status: 'failed', end_reason: 'no_telephony_transport' });
      return;
    }
    // Browser calls are test calls: within their share of the slots (the claim took one as for a dial-out).
    if (!slots.markTest(job.call_id)) {
      log.warn({ test_calls: slots.testActive, test_max: slots.testMax }, 'browser call refused: test calls hold their share of this worker');
      metrics.callsRefused.inc({ code: 'worker_at_capacity' });
      void report(job.call_id, { status: 'failed', end_reason: 'fleet_at_capacity' });
      return;
    }
    const session = await preparedSession(job.call_id, cfg, log);
    if (!session) return;
    let transport: CallTransport;
    try {
      transport = await plane.joinWebCall({ callId: job.call_id, signal: AbortSignal.timeout(settings.WEB_CALLER_WAIT_SECONDS * 1000) });
    } catch (err) {
      session.discard();
      log.info({ err: err instanceof Error ? err.message : String(err) }, 'the browser caller never joined');
      metrics.callsTotal.inc({ result: 'failed' });
      void report(job.call_id, { status: 'failed', end_reason: 'not_started' });
      return;
    }
    await runSession(job.call_id, session, transport);
  }

  /** A call to one of our numbers (docs/design.md §7): the caller rings in `job.room_name` until the bot joins it. */
  async function inboundCall(job: CallJob, cfg: RuntimeConfig, plane: TelephonyDialer, log: Logger): Promise<void> {
    if (!plane.answerInbound || !job.room_name) {
      metrics.callsTotal.inc({ result: 'failed' });
      void report(job.call_id, { status: 'failed', end_reason: 'no_telephony_transport' });
      return;
    }
    // The caller's phone rings already: answered whatever the backend's latency. A call the backend closed
    // meanwhile (refused move) is called off.
    const closed = new AbortController();
    let running: CallSession | null = null;
    const ringing = report(job.call_id, { status: 'ringing' }).then((d) => {
      if (d !== 'refused') return;
      log.warn('the backend refused the ringing move (the call is closed): calling it off');
      closed.abort(new Error('call closed by the backend'));
      void running?.end('call_closed', 'failed');
    });
    // The greeting is ready before the call is answered: the caller hears the bot at once.
    const session = await preparedSession(job.call_id, cfg, log);
    if (!session) return;
    await Promise.race([ringing, new Promise((r) => setTimeout(r, DIALING_WAIT_MS).unref())]);
    if (closed.signal.aborted) {
      session.discard();
      return;
    }
    let transport: CallTransport;
    try {
      transport = await plane.answerInbound({ callId: job.call_id, roomName: job.room_name, signal: AbortSignal.any([AbortSignal.timeout(INBOUND_ANSWER_TIMEOUT_MS), closed.signal]) });
    } catch (err) {
      session.discard();
      const gone = err instanceof Error && /caller was (gone|not in the room)/.test(err.message);
      log.info({ err: err instanceof Error ? err.message : String(err) }, 'inbound call not answered');
      metrics.callsTotal.inc({ result: gone ? 'canceled' : 'failed' });
      void report(job.call_id, gone ? { status: 'canceled', end_reason: 'caller_hangup' } : { status: 'failed', end_reason: 'answer_failed' });
      return;
    }
    running = session;
    await runSession(job.call_id, session, transport);
  }

  const claim = deps.blockingRedis && settings.DIALOUT_ENABLED ? new ClaimLoop({ redis, blockingRedis: deps.blockingRedis, slots, workerId: settings.WORKER_ID, logger, run: dialoutCall, onClaim: (id) => heartbeat!.claim(id), staleAfterMs: settings.DIALOUT_STALE_CLAIM_MS }) : null;

  // ---- HTTP ----
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    void (async () => {
      try {
        if (req.method === 'GET' && path === '/health') {
          // 503 while draining so load balancers stop sending calls here.
          return json(res, slots.draining ? 503 : 200, {
            status: slots.draining ? 'draining' : 'ok',
            active_calls: slots.active,
            max_calls: slots.max,
            draining: slots.draining,
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
    wss.handleUpgrade(req, socket, head, (ws) => void track(wsCall(req, ws, m[1]!)));
  });

  /** Waits up to `ms` for the outbox; what it still holds then stays parked in Redis for the dialler. */
  async function flushEvents(ms: number): Promise<void> {
    if (!events.pending) return;
    logger.info({ pending: events.pending, wait_ms: ms }, 'waiting for call events to reach the backend');
    if (!(await events.flush(ms))) {
      logger.warn({ pending: events.pending }, 'call events not taken before shutdown; the dialler closes their calls from the parked ends');
      events.close();
    }
  }

  let closed = false;
  const worker: Worker = {
    server,
    slots,
    metrics,
    sessions,
    spawner,
    events,
    async listen(port, host = '0.0.0.0') {
      // Track files of calls a crashed worker left behind; an hour untouched means no live call owns them.
      try {
        const removed = await sweepRecordings(recordingDir, STALE_RECORDING_MS);
        if (removed.length) logger.info({ removed: removed.length, dir: recordingDir }, 'removed stale recording files');
      } catch (err) {
        logger.warn({ dir: recordingDir, err: err instanceof Error ? err.message : String(err) }, 'could not sweep stale recording files');
      }
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      await heartbeat!.start();
      claim?.start();
      // Forked now, while the worker is still small and idle, not on the first call's first sentence.
      if (!deps.providers) spawner.start();
      const addr = server.address();
      const bound = typeof addr === 'object' && addr ? addr.port : port;
      logger.info({ port: bound, worker_id: settings.WORKER_ID, max_calls: slots.max, version }, 'worker listening');
      return bound;
    },
    async drain(timeoutMs) {
      slots.draining = true;
      metrics.draining.set(1);
      await heartbeat!.beat();
      logger.info({ active_calls: slots.active, timeout_ms: timeoutMs }, 'draining');
      await claim?.stop();
      const started = Date.now();
      const all = () => Promise.allSettled([...pending, ...[...sessions.values()].map((s) => s.done), claim?.settled()]);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const outcome = await Promise.race([all().then(() => 'done' as const), deadline]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        logger.warn({ active_calls: sessions.size }, 'drain timeout: ending the remaining calls');
        await Promise.allSettled([...sessions.values()].map((s) => s.end('worker_shutdown', 'completed')));
        await all();
      }
      // The calls' reports get what is left of the drain time (at least a few seconds) to reach the backend.
      await flushEvents(Math.max(MIN_EVENT_FLUSH_MS, timeoutMs - (Date.now() - started)));
      await worker.close();
    },
    async close() {
      if (closed) return;
      closed = true;
      await claim?.stop();
      for (const s of sessions.values()) void s.end('worker_shutdown', 'completed');
      await Promise.allSettled([...sessions.values()].map((s) => s.done));
      await flushEvents(MIN_EVENT_FLUSH_MS);
      for (const client of wss.clients) client.terminate();
      await heartbeat!.stop(settings.WORKER_ID);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Last: every call has ended, so no provider process is still needed.
      await spawner.close();
    },
  };
  return worker;
}
