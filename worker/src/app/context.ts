// What the worker's parts share (the entry, the call dispatcher, the lifecycle): its services, the slots
// and the heartbeat that leases calls, the live sessions, and the call events' way to the backend.
// createWorker (app.ts) builds one per worker.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { callListenChannel, type RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';
import type { Logger } from '../core/logger.js';
import { createMetrics, type Metrics } from '../core/metrics.js';
import { createTracing, type WorkerTracing } from '../core/tracing.js';
import { BackendClient } from '../core/backend.js';
import { RECORDINGS_SUBDIR, RecordingStore } from '../call/recording.js';
import { CallSession, type CallObserver, type CallProviders } from '../call/session.js';
import { createProviders } from './providers.js';
import { Spawner } from '../proc/spawner.js';
import { FairScheduler } from '../proc/scheduler.js';
import { LiveDecoder } from '../stt/live-decoder.js';
import { Heartbeat, Slots } from '../fleet/capacity.js';
import { LoadMonitor } from '../fleet/load.js';
import type { CallTransport, TelephonyDialer } from '../transports/transport.js';
import { liveKitDialerFromSettings } from '../transports/livekit.js';
import { CallControls } from '../call/controls.js';
import { createCallEvents, type CallEvents } from './callEvents.js';

/** How long a turn waits for its knowledge passages at most: retrieval is milliseconds; a slow backend must not hold the reply. */
const KNOWLEDGE_TIMEOUT_MS = 1000;

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

export interface WorkerContext {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly redis: Redis;
  readonly version: string;
  readonly metrics: Metrics;
  /** OpenTelemetry (core/tracing.ts): off without OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly tracing: WorkerTracing;
  readonly backend: BackendClient;
  readonly slots: Slots;
  readonly heartbeat: Heartbeat;
  /** This worker's load, sampled from listen on; with LOAD_ADMISSION it bounds what the slots admit. */
  readonly load: LoadMonitor;
  /** The telephony plane; null: calls to phones and rooms end `no_telephony_transport`. */
  readonly dialer: TelephonyDialer | null;
  readonly spawner: Spawner;
  /** The live pocketsphinx decoders (a process under the spawner); null: POCKETSPHINX_LIVE=false. */
  readonly live: LiveDecoder | null;
  /** Supervisors' controls of the calls running here (call/controls.ts). */
  readonly controls: CallControls;
  readonly recordingDir: string;
  readonly sessions: Map<string, CallSession>;
  readonly events: CallEvents;
  /** Work drain must wait for besides the sessions (WebSocket calls still being set up). */
  readonly pending: ReadonlySet<Promise<unknown>>;
  track<T>(p: Promise<T>): Promise<T>;
  /** Config → providers → session; any failure is a BackendError/ProviderError for the caller. */
  newSession(cfg: RuntimeConfig): Promise<CallSession>;
  /** Starts the session on its transport, known to `sessions` until it is done. */
  startSession(session: CallSession, transport: CallTransport): Promise<CallSession>;
}

export function createContext(deps: WorkerDeps, version: string): WorkerContext {
  const { settings, logger, redis } = deps;
  const metrics = deps.metrics ?? createMetrics();
  const tracing = createTracing(settings, logger, version);
  tracing.t.onDropped((reason, spans) => metrics.traceSpansDropped.inc({ reason }, spans));
  const backend = deps.backend ?? new BackendClient({ configUrl: settings.SERVICE_CONFIG_URL, token: settings.WORKER_AUTH_TOKEN, timeoutMs: settings.BACKEND_TIMEOUT_MS, tracing });
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
  // Each call's offline recogniser and synthesiser runs take their turn: one at a time per call, the oldest
  // first, as many at once as the CPU allowance has cores.
  let allowanceCores = () => 1;
  const scheduler = new FairScheduler(spawner, () => allowanceCores());
  // The live decoders' one long-lived process starts through the spawner itself: it is no turn's job, and it is
  // in the spawner's process tree, which the load counts.
  const live = settings.POCKETSPHINX_LIVE
    ? new LiveDecoder({
        python: settings.POCKETSPHINX_PYTHON,
        spawner,
        onReady: () => logger.info({ python: settings.POCKETSPHINX_PYTHON }, 'live pocketsphinx decoders running'),
        onUnavailable: (why) => logger.warn({ python: settings.POCKETSPHINX_PYTHON, reason: why }, 'live pocketsphinx decoding unavailable: each turn is decoded whole at its end'),
        onLost: (err, calls) =>
          calls
            ? logger.error({ err: err.message, calls }, 'the live pocketsphinx decoder process died; its calls failed, the next call starts a new one')
            : logger.info({ err: err.message }, 'the live pocketsphinx decoder process exited'),
      })
    : null;
  const providers = deps.providers ?? ((cfg: RuntimeConfig) => createProviders(cfg, settings, scheduler.forCall(randomUUID()), live));
  const sessions = new Map<string, CallSession>();
  const controls = new CallControls(deps.redis, logger);
  const pending = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => undefined);
    return p;
  };

  // The slots nudge the heartbeat, which reports the slots: the heartbeat comes second.
  let beat: Heartbeat | null = null;
  const slots = new Slots(
    settings.MAX_CONCURRENT_CALLS,
    () => {
      metrics.activeCalls.set(slots.active);
      beat?.nudge();
    },
    settings.TEST_CALL_SHARE,
  );
  metrics.maxCalls.set(settings.MAX_CONCURRENT_CALLS);
  const load = new LoadMonitor({
    threshold: settings.LOAD_THRESHOLD,
    callCostEstimateCores: settings.CALL_CPU_ESTIMATE_CORES,
    // The spawner's tree holds every pocketsphinx and espeak-ng run of this worker's calls.
    childRoots: () => (spawner.pid === undefined ? [] : [spawner.pid]),
    activeCalls: () => slots.active,
    oldestQueuedMs: () => scheduler.oldestQueuedMs(),
    pressureFile: settings.LOAD_CPU_PRESSURE ? undefined : null,
  });
  allowanceCores = () => load.cpuAllowance.cores;
  if (settings.LOAD_ADMISSION) slots.admitBy((active) => load.admittable(active));
  const heartbeat = new Heartbeat(
    redis,
    () => ({
      worker_id: settings.WORKER_ID,
      active_calls: slots.active,
      max_calls: slots.max,
      draining: slots.draining,
      test_calls: slots.testActive,
      max_test_calls: slots.testMax,
      load: load.sample.load,
      admittable: slots.free,
      version,
      updated_at: Date.now(),
    }),
    logger,
  );
  beat = heartbeat;

  const dialer: TelephonyDialer | null = deps.dialer !== undefined ? deps.dialer : liveKitDialerFromSettings(settings, logger);
  const events = createCallEvents({ backend, redis, heartbeat, metrics, logger, retryMaxMs: settings.CALL_EVENT_RETRY_MAX_MS });

  const recordingDir = path.join(settings.RECORDING_DIR, RECORDINGS_SUBDIR);
  const callDeps = {
    tracing,
    report: events.report,
    storage,
    metrics,
    logger,
    sampleRate: settings.AUDIO_SAMPLE_RATE,
    recordingDir,
    observer: deps.observer,
    testCallIdleTimeoutMs: settings.TEST_CALL_IDLE_TIMEOUT_SECONDS * 1000,
    // A listener's frames: fire and forget (a frame lost to a Redis hiccup is a click, not a lost record).
    listen: (callId: string, frame: Buffer) => void deps.redis.publish(callListenChannel(callId), frame).catch(() => undefined),
    // A turn waits at most KNOWLEDGE_TIMEOUT_MS for its passages (then answers without them).
    knowledge: (botId: string, query: string) => backend.knowledge(botId, query, KNOWLEDGE_TIMEOUT_MS),
    // A handoff (shared/DESIGN.md §18): the other bot's config read as the call's own was (no call: it is the first bot's),
    // its prompt and greeting as written (the session renders them with the call's variables), its providers made alike.
    handoff: { config: (botId: string) => backend.fetchConfig(botId, undefined, 1000, { rawTemplates: true }), providers },
  };

  return {
    settings,
    logger,
    redis,
    version,
    metrics,
    tracing,
    backend,
    slots,
    heartbeat,
    load,
    dialer,
    spawner,
    live,
    controls,
    recordingDir,
    sessions,
    events,
    pending,
    track,
    async newSession(cfg) {
      return new CallSession(cfg, await providers(cfg), callDeps);
    },
    async startSession(session, transport) {
      sessions.set(session.callId, session);
      void session.done.finally(() => sessions.delete(session.callId));
      await controls.watch(session);
      await session.start(transport);
      return session;
    },
  };
}
