// Backend settings: one schema, read once at boot; every missing or bad setting is reported at once.
import { Type, type Static } from '@sinclair/typebox';
import { parseSettings, refuseExampleSecrets, SettingsError } from '@voice-platform/schemas';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
/** Roles of one backend process (docs/design.md §1): `api` serves HTTP, `dialler` runs the dial-out housekeeping. */
export const ROLES = ['api', 'dialler'] as const;
export type Role = (typeof ROLES)[number];

export const SettingsSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  /** Address to listen on: every interface in a container; `make up` and the tests use 127.0.0.1. */
  HOST: Type.String({ pattern: '^[0-9A-Fa-f.:]+$|^localhost$', default: '0.0.0.0' }),
  MONGODB_URI: Type.String({ pattern: '^mongodb(\\+srv)?://', default: 'mongodb://127.0.0.1:27017/' }),
  MONGODB_DB: Type.String({ pattern: '^[A-Za-z0-9_-]{1,63}$', default: 'voice_platform' }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6379' }),
  JWT_SECRET: Type.String({ minLength: 32, description: 'required; at least 32 characters' }),
  JWT_ALGORITHM: Type.Union([Type.Literal('HS256'), Type.Literal('HS384'), Type.Literal('HS512')], { default: 'HS256' }),
  JWT_EXPIRE_MINUTES: Type.Integer({ minimum: 1, maximum: 525600, default: 1440 }),
  LOG_LEVEL: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), { default: 'info' }),
  WORKER_AUTH_TOKEN: Type.String({ minLength: 16, description: 'required; at least 16 characters' }),
  CORS_ORIGINS: Type.String({ default: 'http://localhost:5173,http://127.0.0.1:5173' }),
  ADMIN_EMAIL: Type.Optional(Type.String({ format: 'email' })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8 })),
  DIALOUT_RATE_PER_SECOND: Type.Number({ exclusiveMinimum: 0, default: 10 }),
  DIALOUT_BURST: Type.Integer({ minimum: 1, default: 20 }),
  RESERVATION_TTL_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  LOGIN_MAX_ATTEMPTS: Type.Integer({ minimum: 1, default: 10 }),
  LOGIN_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 300 }),
  AUDIO_SAMPLE_RATE: Type.Integer({ minimum: 8000, maximum: 48000, default: 16000 }),
  /** How long boot keeps retrying an unreachable store before it gives up. */
  BOOT_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 30 }),
  /** How long one MongoDB operation waits for a reachable server, then as long for a free pooled connection,
   *  before it fails (the request then answers 503 naming mongodb). */
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60000, default: 5000 }),
  /** How long one MongoDB operation waits on a silent connection before it fails (a hung or swamped server; a dead one fails at once). */
  MONGODB_SOCKET_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600000, default: 30000 }),
  /** How long any step of one MongoDB operation waits (server selection, a pooled connection, its reply: it caps the two
   *  settings above), so a stalled server fails a request within it (503 naming mongodb). Below a worker's backend timeout. */
  MONGODB_OPERATION_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60000, default: 2000 }),
  /** How long one Redis command waits for its reply before it fails (a hung server; a dead one fails at once). */
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60000, default: 2000 }),
  /** A request body must arrive in full within this long, else 408 `request_timeout` and the connection is
   *  closed (a client trickling bytes must not hold a connection for minutes). The HTTP server gives the
   *  headers as long, and a whole request twice as long. */
  BODY_READ_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 10000 }),
  /** Comma-separated subset of ROLES; checked after the schema (see loadSettings). */
  ROLES: Type.String({ default: ROLES.join(',') }),
  /** Dialler: pause between two passes of the stale-call sweeper. */
  SWEEP_INTERVAL_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 15 }),
  /** Dialler: a dial-out call still `queued` this long after creation was never claimed; it is failed. */
  QUEUED_CALL_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 120 }),
  /** The telephony plane (docs/design.md §7): LiveKit's URL and API key pair. All three or none; without them trunks answer 503. */
  LIVEKIT_URL: Type.Optional(Type.String({ pattern: '^(wss?|https?)://[^\\s]+$' })),
  LIVEKIT_API_KEY: Type.Optional(Type.String({ minLength: 3, maxLength: 200 })),
  LIVEKIT_API_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'at least 32 characters' })),
  /** A developer machine: the example secrets of .env.example are accepted (never set it in production). */
  LOCAL_DEVELOPMENT: Type.Boolean({ default: false }),
  /** LiveKit API calls (trunk mirroring, room deletion). */
  LIVEKIT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000 }),
  /** The key name LiveKit signs its webhooks with (inbound calls), with LIVEKIT_API_SECRET; default LIVEKIT_API_KEY. */
  LIVEKIT_WEBHOOK_API_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' })),
  /** Where browsers reach LiveKit for test calls (POST /livekit/widget); default LIVEKIT_URL. */
  LIVEKIT_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^(wss?|https?)://[^\\s]+$' })),
  /** Where clients reach this API (`https://voice.example.com`): the OpenAPI document's `servers`, else `/` (the
   *  origin it was read from). An http(s) origin: no path beyond `/`, no query, no credentials. */
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?/?$' })),
  /** Lifetime of a browser test call's LiveKit token (at most 10 minutes). */
  WIDGET_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 30, maximum: 600, default: 600 }),
  /** Lifetime of a WebSocket test-call token (POST /api/v1/test-calls/token): a call must start within it. */
  TEST_CALL_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 10, maximum: 600, default: 300 }),
  /** Login attempts per client address, whatever the email (password spraying); a token bucket. */
  LOGIN_IP_MAX_ATTEMPTS: Type.Integer({ minimum: 1, default: 60 }),
  LOGIN_IP_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  /** Login attempts across all addresses and replicas (a spray from many addresses); a token bucket. */
  LOGIN_GLOBAL_MAX_ATTEMPTS: Type.Integer({ minimum: 1, default: 100 }),
  LOGIN_GLOBAL_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 10 }),
  /** Password hashes computed at once per process; a login waits at most LOGIN_HASH_WAIT_MS for a slot, else 503. */
  LOGIN_HASH_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  LOGIN_HASH_WAIT_MS: Type.Integer({ minimum: 0, maximum: 60000, default: 1000 }),
  /** Webhooks (docs/design.md §8): accept URLs whose host resolves to loopback, private, link-local or unique-local
   *  addresses (tests and local use only: in production it would let an admin probe the internal network). */
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  /** Dialler: a delivery attempt without a 2xx answer within this long fails (and is retried). */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60000, default: 10000 }),
  /** Dialler: delivery attempts in flight at once per process, and per webhook per process. */
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
  WEBHOOK_CONCURRENCY_PER_WEBHOOK: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  /** Dialler: how often due retries are looked for (a new event wakes the deliverer at once). */
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 60000, default: 1000 }),
  /** call.ended of an answered call waits up to this long for the worker to report the recording. */
  WEBHOOK_RECORDING_WAIT_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
  /** Delivered and dead deliveries, and the attempts log, are kept this long. */
  WEBHOOK_LOG_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** Post-call analysis of OpenAI-compatible bots (docs/design.md §10): the API root and key, as the worker's settings
   *  of the same names. A bot's own llm.base_url is used instead of OPENAI_BASE_URL, and never gets the key. */
  OPENAI_BASE_URL: Type.String({ pattern: '^https?://[^\\s]+$', default: 'https://api.openai.com/v1' }),
  OPENAI_API_KEY: Type.String({ default: '' }),
  /** Knowledge bases (shared/DESIGN.md §18): an OpenAI-compatible embeddings model (at OPENAI_BASE_URL, with OPENAI_API_KEY);
   *  set, chunks get vectors and retrieval blends their similarity with BM25. Empty: BM25 only. */
  KNOWLEDGE_EMBEDDINGS_MODEL: Type.String({ maxLength: 200, default: '' }),
  /** Sent as the request's `dimensions` (text-embedding-3 models shorten their vectors); 0: the model's own size. Fewer
   *  dimensions, faster retrieval: at 10,000 chunks 1536 dimensions cost ~30 ms p95 a turn, 256 a few (bench:knowledge). */
  KNOWLEDGE_EMBEDDINGS_DIMENSIONS: Type.Integer({ minimum: 0, maximum: 3072, default: 0 }),
  /** How long one embeddings request may take (a document's upload sends one per 96 chunks; a turn's query one). */
  KNOWLEDGE_EMBEDDINGS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 10000 }),
  /** Dialler: how long one analysis request may take before the attempt fails. */
  ANALYSIS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 30000 }),
  /** Dialler: how long a runner's hold on an analysis job outlives the runner if it dies (another dialler takes the
   *  job over after this); longer than ANALYSIS_TIMEOUT_MS. Unset: ANALYSIS_TIMEOUT_MS + 30 s. */
  ANALYSIS_LEASE_MS: Type.Optional(Type.Integer({ minimum: 200, maximum: 3600000 })),
  /** Dialler: a failed analysis attempt is retried this long after, doubling (3 retries). */
  ANALYSIS_RETRY_DELAY_MS: Type.Integer({ minimum: 10, maximum: 3600000, default: 10000 }),
  /** Dialler: how often due analyses are looked for. */
  ANALYSIS_POLL_INTERVAL_MS: Type.Integer({ minimum: 20, maximum: 60000, default: 1000 }),
  /** Dialler: the voice workers' address (http(s)://host:port, e.g. the worker Service) that bot test runs place
   *  their WebSocket calls at (docs/design.md §17). Unset: this dialler runs no tests (runs stay queued). */
  TEST_RUNNER_WORKER_URL: Type.Optional(Type.String({ pattern: '^(https?|wss?)://[^\\s]+$' })),
  /** Where the dialler's simulated phone for `sip` test cases listens (UDP `host:port`, docs/design.md §17; a host name
   *  is resolved to its IPv4 address at start, e.g. the compose service's): livekit-sip dials it through a trunk the
   *  runner makes per case, and its RTP uses free ports of the same address. Needs the LIVEKIT_* settings. Set on the
   *  API too (any address): it accepts `sip` cases only where the phone is set. */
  TEST_PHONE_SIP_ADDRESS: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9.-]{0,252}:\\d{1,5}$' })),
  /** Dialler: how long a runner's hold on a test case outlives the runner if it dies (it is renewed meanwhile). */
  TEST_RUNNER_LEASE_MS: Type.Integer({ minimum: 500, maximum: 600000, default: 15000 }),
  /** Dialler: how often test runs are looked for. */
  TEST_RUNNER_POLL_INTERVAL_MS: Type.Integer({ minimum: 20, maximum: 60000, default: 1000 }),
  /** Dialler: test cases one process runs at once (each is a call). */
  TEST_RUNNER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
  /** Dialler: analyses one process works on at once. */
  ANALYSIS_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  /** Dialler: pause between two passes of the campaign dialler (docs/design.md §8). */
  CAMPAIGN_TICK_MS: Type.Integer({ minimum: 20, maximum: 60000, default: 1000 }),
  /** Dialler: how long a replica's hold on a campaign, and its claim on one contact's attempt, outlive the
   *  replica if it dies (another replica takes over after this). */
  CAMPAIGN_LEASE_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 15000 }),
  /** Campaigns dial only while more than this many fleet slots are free, so API dial-outs keep working beside them. */
  CAMPAIGN_FLEET_HEADROOM_SLOTS: Type.Integer({ minimum: 0, maximum: 100000, default: 1 }),
  /** Object storage (S3 / MinIO) the workers upload recordings to, read by GET /api/v1/calls/{id}/recording: the
   *  worker's settings of the same names. Without both keys recordings cannot be served (503). */
  STORAGE_ENDPOINT: Type.String({ pattern: '^[^\\s/:]+(:[0-9]{1,5})?$', default: '127.0.0.1:9000' }),
  STORAGE_ACCESS_KEY: Type.String({ default: '' }),
  STORAGE_SECRET_KEY: Type.String({ default: '' }),
  STORAGE_BUCKET: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$', default: 'recordings' }),
  STORAGE_SECURE: Type.Boolean({ default: false }),
  /** The bucket's region, which requests are signed for (MinIO's is us-east-1). */
  STORAGE_REGION: Type.String({ pattern: '^[a-z0-9-]{1,64}$', default: 'us-east-1' }),
  /** How long a recording read waits for object storage (an answer, and each pause in the data) before it fails (503 naming storage). */
  STORAGE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 10000 }),
  /** OpenTelemetry (docs/design.md §16): the OTLP/HTTP collector spans are sent to (`http://collector:4318`); empty: tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({ pattern: '^(https?://[^\\s/]+(/[^\\s]*)?)?$', default: '' }),
  /** service.name of this process's spans; default `voice-backend`, `voice-dialler` for a dialler-only process. */
  OTEL_SERVICE_NAME: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' })),
  /** Finished spans waiting for the collector at most; more are dropped (backend_trace_spans_dropped_total), never the calls. */
  OTEL_BSP_MAX_QUEUE_SIZE: Type.Integer({ minimum: 16, maximum: 65536, default: 2048 }),
  /** One export to the collector may take this long before it fails (its spans are dropped and counted). */
  OTEL_EXPORTER_OTLP_TIMEOUT: Type.Integer({ minimum: 100, maximum: 60000, default: 10000 }),
});

export type Settings = Static<typeof SettingsSchema> & { corsOrigins: string[]; roles: Role[] };

/** Names whose values must never be logged or echoed in an error. */
const SECRET_SETTINGS = new Set(['JWT_SECRET', 'WORKER_AUTH_TOKEN', 'ADMIN_PASSWORD', 'MONGODB_URI', 'REDIS_URL', 'LIVEKIT_API_SECRET', 'OPENAI_API_KEY', 'STORAGE_ACCESS_KEY', 'STORAGE_SECRET_KEY']);

export { SettingsError };

export function loadSettings(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Settings {
  const lowered = { ...env, LOG_LEVEL: env.LOG_LEVEL?.toLowerCase() };
  const { value: input, problems, check } = parseSettings(SettingsSchema, lowered, { secret: SECRET_SETTINGS, formats: { email: /^[^\s@]+@[^\s@]+$/ } });
  // Checks the schema cannot express, reported together with the schema's problems.
  // An explicitly empty ROLES is refused rather than defaulted: a process with no role does nothing.
  const rolesRaw = env.ROLES ?? ROLES.join(',');
  const roles = [...new Set(rolesRaw.split(',').map((r) => r.trim()).filter(Boolean))];
  const unknown = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (roles.length === 0) problems.set('ROLES', `ROLES must name at least one of ${ROLES.join(', ')} (got ${JSON.stringify(rolesRaw)})`);
  else if (unknown.length) problems.set('ROLES', `ROLES has unknown role ${unknown.join(', ')}; allowed: ${ROLES.join(', ')} (got ${JSON.stringify(rolesRaw)})`);
  const timeoutS = input.QUEUED_CALL_TIMEOUT_SECONDS;
  const ttlS = input.RESERVATION_TTL_SECONDS;
  // The sweeper must not fail a call whose reservation is still live: a worker may yet claim it.
  if (typeof timeoutS === 'number' && typeof ttlS === 'number' && !problems.has('QUEUED_CALL_TIMEOUT_SECONDS') && !problems.has('RESERVATION_TTL_SECONDS') && timeoutS <= ttlS) {
    problems.set('QUEUED_CALL_TIMEOUT_SECONDS', `QUEUED_CALL_TIMEOUT_SECONDS must be greater than RESERVATION_TTL_SECONDS (got ${timeoutS} <= ${ttlS})`);
  }
  // An attempt outlives its lease otherwise, and another runner starts the same job beside it.
  const leaseMs = input.ANALYSIS_LEASE_MS;
  const attemptMs = input.ANALYSIS_TIMEOUT_MS;
  if (typeof leaseMs === 'number' && typeof attemptMs === 'number' && !problems.has('ANALYSIS_LEASE_MS') && !problems.has('ANALYSIS_TIMEOUT_MS') && leaseMs <= attemptMs) {
    problems.set('ANALYSIS_LEASE_MS', `ANALYSIS_LEASE_MS must be greater than ANALYSIS_TIMEOUT_MS (got ${leaseMs} <= ${attemptMs})`);
  }
  refuseExampleSecrets(env, ['JWT_SECRET', 'WORKER_AUTH_TOKEN', 'ADMIN_PASSWORD', 'LIVEKIT_API_SECRET', 'STORAGE_SECRET_KEY'], problems);
  const lk = (['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'] as const).filter((n) => env[n]);
  if (lk.length && lk.length < 3) {
    for (const n of ['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'] as const) {
      if (!env[n] && !problems.has(n)) problems.set(n, `${n} is required when ${lk.join(', ')} ${lk.length > 1 ? 'are' : 'is'} set (the telephony plane needs all three)`);
    }
  }
  const storageKeys = (['STORAGE_ACCESS_KEY', 'STORAGE_SECRET_KEY'] as const).filter((n) => env[n]);
  if (storageKeys.length === 1) {
    const [given] = storageKeys;
    const other = given === 'STORAGE_ACCESS_KEY' ? 'STORAGE_SECRET_KEY' : 'STORAGE_ACCESS_KEY';
    if (!problems.has(other)) problems.set(other, `${other} is required when ${given} is set (object storage needs both keys)`);
  }
  check();
  const settings = input;
  return {
    ...settings,
    corsOrigins: settings.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    roles: roles as Role[],
  };
}
