// Worker settings: one schema, read once at boot; every missing or bad setting is named at once and
// the worker refuses to boot.
import { hostname, tmpdir } from 'node:os';
import { Type, type Static } from '@sinclair/typebox';
import { parseSettings, refuseExampleSecrets, SettingsError } from '@voice-platform/schemas';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const bool = (def: boolean) => Type.Boolean({ default: def });

export const SettingsSchema = Type.Object({
  SERVICE_CONFIG_URL: Type.String({ pattern: '^https?://[^\\s]+$', description: 'required: the backend config URL, e.g. http://127.0.0.1:8080/api/v1/config' }),
  WORKER_AUTH_TOKEN: Type.String({ minLength: 16, description: 'required; the backend worker token' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8000 }),
  /** Address to listen on: every interface in a container; `make up` and the tests use 127.0.0.1. */
  HOST: Type.String({ pattern: '^[0-9A-Fa-f.:]+$|^localhost$', default: '0.0.0.0' }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6379' }),
  STORAGE_ENDPOINT: Type.String({ pattern: '^[^\\s/:]+(:[0-9]{1,5})?$', default: '127.0.0.1:9000' }),
  STORAGE_ACCESS_KEY: Type.String({ default: '' }),
  STORAGE_SECRET_KEY: Type.String({ default: '' }),
  STORAGE_BUCKET: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$', default: 'recordings' }),
  STORAGE_SECURE: bool(false),
  /** Longest a recording upload may take before it counts as failed. */
  STORAGE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /** Calls' recordings are written here (in `vp-worker-recordings/<call_id>/`) until uploaded. Default: the OS temp dir. */
  RECORDING_DIR: Type.String({ minLength: 1, default: tmpdir() }),
  AUDIO_SAMPLE_RATE: Type.Union([8000, 16000, 24000, 48000].map((r) => Type.Literal(r)), { default: 16000 }),
  MAX_CONCURRENT_CALLS: Type.Integer({ minimum: 1, maximum: 1000, default: 30 }),
  /**
   * Take a call only while the worker's projected load (its CPU over its allowance, event-loop lag, queued decodes)
   * stays at or below this, 0–1 (docs/design.md §15). MAX_CONCURRENT_CALLS stays a hard ceiling.
   */
  LOAD_THRESHOLD: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.7 }),
  /** false: admit on free slots alone (load is still measured, reported and scaled on). */
  LOAD_ADMISSION: bool(true),
  /** The CPU cores this worker may use; 0: read its cgroup's quota (cpu.max), else the machine's cores. */
  CPU_ALLOWANCE_CORES: Type.Number({ minimum: 0, maximum: 1024, default: 0 }),
  /** CPU (cores) a call is assumed to cost until the worker has measured its own calls (`npm run bench:capacity -w worker`). */
  CALL_CPU_ESTIMATE_CORES: Type.Number({ exclusiveMinimum: 0, maximum: 16, default: 0.1 }),
  /**
   * Count the machine's CPU pressure (Linux PSI, /proc/pressure/cpu: time runnable tasks waited for a CPU) in the load:
   * for a worker sharing its cores with other services (LiveKit, the stores). Off by default: a machine's own start or
   * an unrelated burst would refuse calls this worker could serve (a `make up` then an inbound call got 486).
   */
  LOAD_CPU_PRESSURE: bool(false),
  /** How often the worker measures its load. */
  LOAD_SAMPLE_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 10_000, default: 1000 }),
  LOG_LEVEL: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), { default: 'info' }),
  /** Unique per worker; heartbeats and job claims use it. Default: hostname-pid. */
  WORKER_ID: Type.String({ pattern: '^[A-Za-z0-9._-]{1,128}$', default: `${hostname()}-${process.pid}`.replace(/[^A-Za-z0-9._-]/g, '-') }),
  /** How long SIGTERM waits for active calls before it ends them. */
  DRAIN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 120_000 }),
  /** Config and call-event requests to the backend. */
  BACKEND_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 3000 }),
  /** A call event the backend has not taken (unreachable, slow, 5xx) is sent again with backoff for this long, then given up (counted). */
  CALL_EVENT_RETRY_MAX_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 900_000 }),
  /** A claimed job's config read is retried while the backend is unreachable or busy, for up to this long (nobody is on the line yet). */
  CONFIG_WAIT_MS: Type.Integer({ minimum: 0, maximum: 300_000, default: 15_000 }),
  /** Wait for the optional `start` message before a WebSocket call starts without variables. */
  WS_START_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 1000 }),
  /**
   * Browser origins allowed to open `WS /ws/{bot_id}` (comma-separated, e.g. `https://console.example.com`).
   * A request with an Origin header not listed is refused 4403; clients that send none (servers, CLIs) are
   * not browsers and need only the token.
   */
  WS_ALLOWED_ORIGINS: Type.String({ pattern: '^\\s*https?://[^\\s,/]+/?\\s*(,\\s*https?://[^\\s,/]+/?\\s*)*$|^$', default: '' }),
  /** Test calls (WebSocket and browser) may hold at most this share of MAX_CONCURRENT_CALLS (at least one slot), so they never starve dial-outs. */
  TEST_CALL_SHARE: Type.Number({ minimum: 0, maximum: 1, default: 0.5 }),
  /** A test call in which no caller audio arrives for this long ends by itself (`caller_idle`). */
  TEST_CALL_IDLE_TIMEOUT_SECONDS: Type.Integer({ minimum: 5, maximum: 3600, default: 30 }),
  /** Take call jobs (dial-outs, browser and inbound calls) from the Redis stream. The DIALOUT_ names are
   *  public configuration, kept from when the stream carried dial-outs only. */
  DIALOUT_ENABLED: bool(true),
  /** A job read but not acked this long ago belongs to a worker that died before starting it. */
  DIALOUT_STALE_CLAIM_MS: Type.Integer({ minimum: 100, default: 60_000 }),
  /** The telephony plane (docs/design.md §7). Without all three the worker takes no dial-out jobs' calls to a phone (they end `no_telephony_transport`). */
  LIVEKIT_URL: Type.String({ pattern: '^(wss?://[^\\s]+)?$', default: '' }),
  LIVEKIT_API_KEY: Type.String({ default: '' }),
  LIVEKIT_API_SECRET: Type.String({ default: '' }),
  /** How long a dialled phone may ring before the call ends `no_answer`. */
  RINGING_TIMEOUT_SECONDS: Type.Integer({ minimum: 5, maximum: 300, default: 30 }),
  /** How long the worker waits in a browser test call's room for the caller to join. */
  WEB_CALLER_WAIT_SECONDS: Type.Integer({ minimum: 5, maximum: 600, default: 60 }),
  /** A developer machine: the example secrets of .env.example are accepted (never set it in production). */
  LOCAL_DEVELOPMENT: Type.Boolean({ default: false }),
  OPENAI_API_KEY: Type.String({ default: '' }),
  OPENAI_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://api.openai.com/v1' }),
  DEEPGRAM_API_KEY: Type.String({ default: '' }),
  DEEPGRAM_URL: Type.String({ pattern: '^wss?://', default: 'wss://api.deepgram.com/v1/listen' }),
  ELEVENLABS_API_KEY: Type.String({ default: '' }),
  /** ElevenLabs API root (no /v1): point it at a proxy or a local stand-in. */
  ELEVENLABS_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://api.elevenlabs.io' }),
  /** Cloud providers: time to first byte, and attempts after the first. */
  PROVIDER_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  PROVIDER_RETRIES: Type.Integer({ minimum: 0, maximum: 5, default: 2 }),
  /** Bots' HTTP tools may call loopback, private and link-local addresses (local development and tests only; like the backend's WEBHOOK_ALLOW_PRIVATE). */
  TOOLS_ALLOW_PRIVATE_ADDRESSES: bool(false),
  ESPEAK_BINARY: Type.String({ default: 'espeak-ng' }),
  POCKETSPHINX_BINARY: Type.String({ default: 'pocketsphinx_continuous' }),
  POCKETSPHINX_MODEL_DIR: Type.String({ default: '/usr/share/pocketsphinx/model/en-us' }),
  /** Bots with phrases: one live decoder per call, fed while the caller speaks (false: each turn decoded whole at its end). */
  POCKETSPHINX_LIVE: bool(true),
  /** The Python whose pocketsphinx binding (Debian python3-pocketsphinx) runs the live decoders; without one, turns are decoded whole. */
  POCKETSPHINX_PYTHON: Type.String({ minLength: 1, default: '/usr/bin/python3' }),
  /** OpenTelemetry (docs/design.md §16): the OTLP/HTTP collector spans are sent to (`http://collector:4318`); empty: tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({ pattern: '^(https?://[^\\s/]+(/[^\\s]*)?)?$', default: '' }),
  /** service.name of the worker's spans. */
  OTEL_SERVICE_NAME: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', default: 'voice-worker' }),
  /** Finished spans waiting for the collector at most; more are dropped (voice_worker_trace_spans_dropped_total), never the calls. */
  OTEL_BSP_MAX_QUEUE_SIZE: Type.Integer({ minimum: 16, maximum: 65536, default: 2048 }),
  /** One export to the collector may take this long before it fails (its spans are dropped and counted). */
  OTEL_EXPORTER_OTLP_TIMEOUT: Type.Integer({ minimum: 100, maximum: 60000, default: 10000 }),
});

export type Settings = Static<typeof SettingsSchema>;

const SECRET = new Set(['LIVEKIT_API_SECRET', 'WORKER_AUTH_TOKEN', 'STORAGE_SECRET_KEY', 'STORAGE_ACCESS_KEY', 'OPENAI_API_KEY', 'DEEPGRAM_API_KEY', 'ELEVENLABS_API_KEY', 'REDIS_URL']);

export { SettingsError };

export function loadSettings(env: Record<string, string | undefined>): Settings {
  const parsed = parseSettings(SettingsSchema, { ...env, LOG_LEVEL: env.LOG_LEVEL?.toLowerCase() }, { secret: SECRET });
  refuseExampleSecrets(env, ['WORKER_AUTH_TOKEN', 'LIVEKIT_API_SECRET', 'STORAGE_SECRET_KEY'], parsed.problems);
  parsed.check();
  return parsed.value;
}
