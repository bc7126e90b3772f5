// The local stack of `make up` / `make down`: the real services on their standard ports, in the
// background, with data and logs under .run/. `up` is idempotent; `down` stops only what `up` started
// (the process groups recorded in .run/pids/).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { alive, freePort, killGroup, redisPing, startProcess, tcpOpen, waitUntil, type ManagedProcess } from './process.js';
import { FerretDB, MinIO, Redis, mongoPing } from './services.js';
import { Jaeger, jaegerReady } from './jaeger.js';
import { callInbound, LiveKit, Phone, PHONE_NUMBERS } from './telephony.js';
import { parseEnvFile, repoRoot } from './versions.js';

// VP_RUN_DIR and VP_STACK_PORTS (JSON, e.g. {"ferretdb":27017}) let the stack's own test run a second
// stack beside a developer's without touching it (it names every port).
const runDir = process.env.VP_RUN_DIR ?? path.join(repoRoot, '.run');
const pidDir = path.join(runDir, 'pids');
const defaultPorts = {
  ferretdb: 27017,
  ferretdbDebug: 27018,
  redis: 6379,
  minio: 9000,
  minioConsole: 9001,
  livekit: 7880,
  livekitUdp: 7882,
  livekitRedis: 6380,
  sip: 5060,
  sipHealth: 8089,
  rtpStart: 10000,
  phone: 5070,
  phoneMedia: 6000,
  phoneControl: 8889,
  backend: 8080,
  worker: 8000,
  console: 5173,
  crm: 8091,
  // The trace collector, with tracing on (Jaeger's standard ports)
  jaegerOtlpGrpc: 4317,
  jaegerOtlpHttp: 4318,
  jaegerQuery: 16686,
  jaegerQueryGrpc: 16685,
};
const portOverrides = JSON.parse(process.env.VP_STACK_PORTS ?? '{}') as Partial<typeof defaultPorts>;
const stackPorts: typeof defaultPorts = { ...defaultPorts, ...portOverrides };

/** Settings: .env when present, else .env.example (the local defaults). */
function stackSettings(): Record<string, string> {
  const file = existsSync(path.join(repoRoot, '.env')) ? '.env' : '.env.example';
  return parseEnvFile(readFileSync(path.join(repoRoot, file), 'utf8'));
}

/** TRACING=1 (`make up TRACING=1`, or in .env): a trace collector beside the stack that the platform's parts
 *  export to. The shell's value wins over the settings' (scripts/setup.sh decides the same way whether to build it). */
function tracingOn(settings: Record<string, string>): boolean {
  return ['1', 'true', 'yes', 'on'].includes((process.env.TRACING || settings.TRACING || '').toLowerCase());
}

/** What the stack needs of a started part: a service of services.ts, or one of the platform's own. */
interface Startable {
  start(): Promise<void>;
  processes(): ManagedProcess[];
}

interface StackEntry {
  name: string;
  port: number;
  url: string;
  create(): Promise<Startable>;
  healthy(): Promise<boolean>;
  /** Runs after the entry is healthy, on every `up` (so it must be idempotent), e.g. seeds. */
  afterStart?(): Promise<void>;
}

/** Settings of the platform's own processes: the stack's settings, pointed at the stack's stores. */
function appEnv(settings: Record<string, string>, port: number): NodeJS.ProcessEnv {
  const p = stackPorts;
  return {
    ...process.env,
    ...settings,
    PORT: String(port),
    HOST: '127.0.0.1',
    MONGODB_URI: `mongodb://127.0.0.1:${p.ferretdb}/`,
    REDIS_URL: `redis://127.0.0.1:${p.redis}`,
    STORAGE_ENDPOINT: `127.0.0.1:${p.minio}`,
    SERVICE_CONFIG_URL: `http://127.0.0.1:${p.backend}/api/v1/config`,
    LIVEKIT_URL: `ws://127.0.0.1:${p.livekit}`,
    // With tracing on, the parts export to the stack's collector unless the settings name another.
    ...(tracingOn(settings) ? { OTEL_EXPORTER_OTLP_ENDPOINT: settings.OTEL_EXPORTER_OTLP_ENDPOINT || `http://127.0.0.1:${p.jaegerOtlpHttp}` } : {}),
  };
}

/** The demo bot's HTTP tool goes to the stack's small CRM (crm.ts), which reads the bot's tool secret here. */
const crmDir = () => path.join(runDir, 'crm');
const crmSecretFile = () => path.join(crmDir(), 'tool-secret');
const crmUrl = () => `http://127.0.0.1:${stackPorts.crm}/promises`;

const backendEnv = (settings: Record<string, string>) => ({ ...appEnv(settings, stackPorts.backend), DEMO_CRM_URL: crmUrl() });

/** Settings of the backend alone, its secrets among them: the worker (which runs bots, tools and
 *  providers) never reads them, so it is not given them; what it does not hold it cannot leak. */
export const BACKEND_ONLY_SETTINGS = ['JWT_SECRET', 'JWT_ALGORITHM', 'JWT_EXPIRE_MINUTES', 'ADMIN_EMAIL', 'ADMIN_PASSWORD', 'MONGODB_URI', 'MONGODB_DB', 'CORS_ORIGINS'] as const;

/** The worker's environment: the stack's settings (and this process's environment) without the backend's own. */
export function workerEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  // As in its image: rtc-node logs at debug level to stdout otherwise.
  const env: NodeJS.ProcessEnv = { ...appEnv(settings, stackPorts.worker), NODE_ENV: 'production' };
  for (const name of BACKEND_ONLY_SETTINGS) delete env[name];
  return env;
}

/** One of the platform's Node services, from its compiled dist/main.js, ready when `/health` is 200. */
function nodeApp(name: 'backend' | 'worker', env: NodeJS.ProcessEnv, port: number, dir: string): Startable {
  const main = path.join(repoRoot, name, 'dist', 'main.js');
  let proc: ManagedProcess | undefined;
  return {
    async start() {
      if (!existsSync(main)) throw new Error(`${main} is missing: run \`npx tsc -b\` first`);
      mkdirSync(dir, { recursive: true });
      proc = startProcess(name, process.execPath, [main], {
        env,
        cwd: path.join(repoRoot, name),
        logFile: path.join(dir, `${name}.log`),
        persistent: true,
      });
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200, {
        what: name,
        proc,
        timeoutMs: 60_000,
      });
    },
    processes: () => (proc?.isRunning() ? [proc] : []),
  };
}

/** The trunk `make up` seeds: to the local test phone, with this caller ID. */
const STACK_TRUNK_NUMBER = '+15550100000';
/** The inbound number `make up` seeds for the demo bot, and who `make call-in` calls from. */
const STACK_INBOUND_NUMBER = '+15550100200';
const CALL_IN_FROM = '+15550109999';

/** The admin, the demo bot and a default trunk to the test phone; every seed is idempotent and never overwrites. */
async function seedBackend(settings: Record<string, string>): Promise<void> {
  const seed = path.join(repoRoot, 'backend', 'dist', 'seed.js');
  for (const what of ['admin', 'demo-bot']) {
    const out = execFileSync(process.execPath, [seed, what], { env: backendEnv(settings), encoding: 'utf8' });
    process.stdout.write(`==> ${out}`);
  }
  // The trunk goes through the API like an admin's would (it is mirrored into LiveKit on the way).
  const api = `http://127.0.0.1:${stackPorts.backend}/api/v1`;
  const login = await fetch(`${api}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: settings.ADMIN_EMAIL, password: settings.ADMIN_PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`seeding the trunk: admin login answered ${login.status}`);
  const auth = { Authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`, 'Content-Type': 'application/json' };
  const list = (await (await fetch(`${api}/sip/outbound-trunks`, { headers: auth })).json()) as { items: unknown[] };
  if (list.items.length) {
    console.log(`==> seed: outbound trunks: ${list.items.length} present, unchanged`);
  } else {
    const res = await fetch(`${api}/sip/outbound-trunks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Local test phone (sipp)', address: `127.0.0.1:${stackPorts.phone}`, numbers: [STACK_TRUNK_NUMBER], default: true }),
    });
    if (res.status !== 201) throw new Error(`seeding the trunk: ${res.status} ${await res.text()}`);
    console.log(`==> seed: default trunk to the test phone 127.0.0.1:${stackPorts.phone} created`);
  }
  // The demo bot's tool requests are signed: the CRM gets the secret (created once, again if its file is gone).
  const demo = (await (await fetch(`${api}/bots/demo-bot`, { headers: auth })).json()) as { has_tool_secret?: boolean };
  if (demo.has_tool_secret && existsSync(crmSecretFile())) {
    console.log('==> seed: demo bot tool secret present, unchanged');
  } else {
    const res = await fetch(`${api}/bots/demo-bot/tool-secret`, { method: 'POST', headers: auth });
    if (res.status !== 200) throw new Error(`seeding the demo bot's tool secret: ${res.status} ${await res.text()}`);
    mkdirSync(crmDir(), { recursive: true });
    writeFileSync(crmSecretFile(), ((await res.json()) as { secret: string }).secret, { mode: 0o600 });
    console.log(`==> seed: demo bot tool secret created (the CRM on ${stackPorts.crm} checks its requests with it)`);
  }
  // A number of our own the demo bot answers (`make call-in` rings it).
  const inbound = (await (await fetch(`${api}/sip/inbound-numbers`, { headers: auth })).json()) as { items: Array<{ number: string }> };
  if (inbound.items.some((n) => n.number === STACK_INBOUND_NUMBER)) {
    console.log(`==> seed: inbound number ${STACK_INBOUND_NUMBER} present, unchanged`);
    return;
  }
  const res = await fetch(`${api}/sip/inbound-numbers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ number: STACK_INBOUND_NUMBER, bot_id: 'demo-bot', variables: { customer_name: 'caller', amount_due: '40 dollars' } }),
  });
  if (res.status !== 201) throw new Error(`seeding the inbound number: ${res.status} ${await res.text()}`);
  console.log(`==> seed: inbound number ${STACK_INBOUND_NUMBER} → demo-bot created`);
}

/**
 * `make call-in`: the local phone calls one of our numbers through livekit-sip (sipp as the caller), says
 * `phrase` four seconds after the answer, and stays on until the bot hangs up (or 30 s).
 */
export async function callIn(number = STACK_INBOUND_NUMBER, phrase = 'yes i will pay'): Promise<void> {
  const settings = stackSettings();
  console.log(`==> calling ${number} from ${CALL_IN_FROM} through livekit-sip 127.0.0.1:${stackPorts.sip}; saying "${phrase}" after the greeting`);
  const result = await callInbound({ dir: path.join(runDir, 'call-in'), sipAddress: `127.0.0.1:${stackPorts.sip}`, number, from: CALL_IN_FROM, phrase });
  const outcome = result.finalStatus === 200 ? (result.byeReceived ? 'answered; the bot hung up' : 'answered; the caller hung up') : `refused: SIP ${result.finalStatus ?? 'no answer'}`;
  console.log(`==> ${outcome}`);
  const api = `http://127.0.0.1:${stackPorts.backend}/api/v1`;
  const login = await fetch(`${api}/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: settings.ADMIN_EMAIL, password: settings.ADMIN_PASSWORD }) });
  if (login.status !== 200) return;
  const auth = { Authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` };
  const calls = (await (await fetch(`${api}/calls?direction=inbound&limit=1`, { headers: auth })).json()) as { items: Array<Record<string, unknown>> };
  const c = calls.items[0];
  if (!c) return;
  // The record is final once the recording is reported.
  let call = c;
  for (let i = 0; i < 50 && call.recording_key === null && call.recording_error === null; i++) {
    await delay(200);
    call = (await (await fetch(`${api}/calls/${c.call_id as string}`, { headers: auth })).json()) as Record<string, unknown>;
  }
  console.log(`==> call ${call.call_id as string}: ${call.status as string} / ${call.end_reason as string}, ${call.from_number as string} → ${call.to_number as string}`);
  for (const t of (call.transcript as Array<{ role: string; text: string }> | undefined) ?? []) console.log(`    ${t.role.padEnd(4)} ${t.text}`);
  for (const a of (call.actions as Array<{ name: string; status: string; duration_ms: number; result?: string | null; error?: string | null }> | undefined) ?? []) {
    console.log(`    action ${a.name} ${a.status} (${a.duration_ms} ms) → ${a.result ?? a.error ?? ''}`);
  }
  console.log(`    recording ${(call.recording_key as string | null) ?? (call.recording_error as string | null) ?? 'none'}  (GET ${api}/calls/${call.call_id as string})`);
}

/** The demo CRM (crm.ts) as a process of the stack. */
function crmApp(port: number): Startable {
  let proc: ManagedProcess | undefined;
  return {
    async start() {
      mkdirSync(crmDir(), { recursive: true });
      proc = startProcess('crm', process.execPath, [path.join(repoRoot, 'tests', 'dist', 'infra', 'src', 'crm.js')], {
        env: { ...process.env, CRM_PORT: String(port), CRM_SECRET_FILE: crmSecretFile(), CRM_PROMISES_FILE: path.join(crmDir(), 'promises.jsonl') },
        logFile: path.join(crmDir(), 'crm.log'),
        persistent: true,
      });
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, { what: 'crm', proc, timeoutMs: 30_000 });
    },
    processes: () => (proc?.isRunning() ? [proc] : []),
  };
}

/**
 * The console's production build served by console/serve.js (SPA fallback). VITE_API_URL is baked in
 * at build time: dist/ is rebuilt when it is missing or was built for another API URL.
 */
function consoleApp(settings: Record<string, string>, port: number, dir: string): Startable {
  const consoleDir = path.join(repoRoot, 'console');
  const dist = path.join(consoleDir, 'dist');
  const apiUrl = settings.VITE_API_URL || `http://127.0.0.1:${stackPorts.backend}`;
  let proc: ManagedProcess | undefined;
  return {
    async start() {
      mkdirSync(dir, { recursive: true });
      let builtFor: string | undefined;
      try {
        builtFor = (JSON.parse(readFileSync(path.join(dist, 'vp-build.json'), 'utf8')) as { api_url?: string }).api_url;
      } catch {
        builtFor = undefined;
      }
      if (builtFor !== apiUrl || !existsSync(path.join(dist, 'index.html'))) {
        console.log(`==> building the console for ${apiUrl}`);
        const vite = path.join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
        execFileSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: consoleDir, env: { ...process.env, VITE_API_URL: apiUrl }, stdio: 'inherit' });
      }
      proc = startProcess('console', process.execPath, [path.join(consoleDir, 'serve.js')], {
        // The Content-Security-Policy lets the test-call page reach the LiveKit the backend answers with.
        env: { ...process.env, PORT: String(port), DIST_DIR: dist, HOST: '127.0.0.1', LIVEKIT_PUBLIC_URL: settings.LIVEKIT_PUBLIC_URL || `ws://127.0.0.1:${stackPorts.livekit}` },
        cwd: consoleDir,
        logFile: path.join(dir, 'console.log'),
        persistent: true,
      });
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, { what: 'console', proc, timeoutMs: 30_000 });
    },
    processes: () => (proc?.isRunning() ? [proc] : []),
  };
}

function entries(settings: Record<string, string>): StackEntry[] {
  const dir = (name: string) => path.join(runDir, name);
  const p = stackPorts;
  const tracing: StackEntry[] = !tracingOn(settings)
    ? []
    : [
        {
          name: 'jaeger',
          port: p.jaegerQuery,
          url: `http://127.0.0.1:${p.jaegerQuery}  (traces, kept in memory: the query API, GET /api/traces?service=…; OTLP in on http://127.0.0.1:${p.jaegerOtlpHttp} and gRPC 127.0.0.1:${p.jaegerOtlpGrpc})`,
          create: () => Jaeger.create({ dir: dir('jaeger'), ports: [p.jaegerOtlpGrpc, p.jaegerOtlpHttp, p.jaegerQuery, p.jaegerQueryGrpc], persistent: true }),
          healthy: () => jaegerReady({ otlpGrpc: p.jaegerOtlpGrpc, otlpHttp: p.jaegerOtlpHttp, query: p.jaegerQuery, queryGrpc: p.jaegerQueryGrpc }),
        },
      ];
  return [
    // First: the parts started after it export their spans to it.
    ...tracing,
    {
      name: 'ferretdb',
      port: p.ferretdb,
      url: `mongodb://127.0.0.1:${p.ferretdb}/`,
      create: () => FerretDB.create({ dir: dir('ferretdb'), ports: [p.ferretdb, p.ferretdbDebug], persistent: true }),
      healthy: () => mongoPing(`mongodb://127.0.0.1:${p.ferretdb}/`),
    },
    {
      name: 'redis',
      port: p.redis,
      url: `redis://127.0.0.1:${p.redis}`,
      create: () => Redis.create({ dir: dir('redis'), ports: [p.redis], persistent: true }),
      healthy: () => redisPing(p.redis),
    },
    {
      name: 'minio',
      port: p.minio,
      url: `http://127.0.0.1:${p.minio}`,
      create: () =>
        MinIO.create({
          dir: dir('minio'),
          ports: [p.minio, p.minioConsole],
          persistent: true,
          accessKey: settings.STORAGE_ACCESS_KEY,
          secretKey: settings.STORAGE_SECRET_KEY,
        }),
      healthy: async () => (await fetch(`http://127.0.0.1:${p.minio}/minio/health/ready`)).status === 200,
    },
    {
      name: 'livekit',
      port: p.livekit,
      url: `ws://127.0.0.1:${p.livekit}  (SIP 127.0.0.1:${p.sip})`,
      create: () =>
        LiveKit.create({
          dir: dir('livekit'),
          ports: [p.livekit, p.livekitUdp, p.livekitRedis, p.sip, p.sipHealth, p.rtpStart],
          persistent: true,
          apiKey: settings.LIVEKIT_API_KEY,
          apiSecret: settings.LIVEKIT_API_SECRET,
          // Calls to inbound numbers reach the backend as LiveKit's signed webhooks.
          webhookUrl: `http://127.0.0.1:${p.backend}/livekit/webhook`,
        }),
      healthy: async () => (await fetch(`http://127.0.0.1:${p.livekit}/`)).status === 200 && (await fetch(`http://127.0.0.1:${p.sipHealth}/`)).status === 200,
    },
    {
      name: 'phone',
      port: p.phone,
      url: `sip:127.0.0.1:${p.phone}  (sipp: ${PHONE_NUMBERS.busy} busy, ${PHONE_NUMBERS.noAnswer} no answer, +15005558NNN answering machines and +15005556NNN people (docs/amd-answers.md), any other number answers)`,
      create: () => Phone.create({ dir: dir('phone'), ports: [p.phone, p.phoneMedia, p.phoneControl], persistent: true }),
      healthy: async () => true,
    },
    {
      name: 'crm',
      port: p.crm,
      url: `${crmUrl()}  (the demo bot's record_promise tool; GET lists the promises)`,
      create: async () => crmApp(p.crm),
      healthy: async () => (await fetch(`http://127.0.0.1:${p.crm}/healthz`)).status === 200,
    },
    {
      name: 'backend',
      port: p.backend,
      url: `http://127.0.0.1:${p.backend}`,
      create: async () => nodeApp('backend', backendEnv(settings), p.backend, dir('backend')),
      healthy: async () => (await fetch(`http://127.0.0.1:${p.backend}/health`)).status === 200,
      afterStart: () => seedBackend(settings),
    },
    {
      name: 'worker',
      port: p.worker,
      url: `http://127.0.0.1:${p.worker}`,
      create: async () => nodeApp('worker', workerEnv(settings), p.worker, dir('worker')),
      healthy: async () => (await fetch(`http://127.0.0.1:${p.worker}/health`)).status === 200,
    },
    {
      name: 'console',
      port: p.console,
      url: `http://127.0.0.1:${p.console}`,
      create: async () => consoleApp(settings, p.console, dir('console')),
      healthy: async () => (await fetch(`http://127.0.0.1:${p.console}/healthz`)).status === 200,
    },
  ];
}

function pidFile(name: string): string {
  return path.join(pidDir, `${name}.pids`);
}

function recordedPids(name: string): number[] {
  try {
    return readFileSync(pidFile(name), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function safe(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await check();
  } catch {
    return false;
  }
}

export async function up(): Promise<void> {
  const settings = stackSettings();
  mkdirSync(pidDir, { recursive: true });
  for (const entry of entries(settings)) {
    const pids = recordedPids(entry.name);
    if (pids.length && pids.every(alive) && (await safe(entry.healthy))) {
      console.log(`==> ${entry.name} already running on ${entry.port}`);
      await entry.afterStart?.();
      continue;
    }
    if (await tcpOpen(entry.port)) {
      throw new Error(`port ${entry.port} is in use by a process this stack did not start; free it and run \`make up\` again`);
    }
    console.log(`==> starting ${entry.name} on ${entry.port}`);
    const svc = await entry.create();
    await svc.start();
    writeFileSync(pidFile(entry.name), svc.processes().map((p) => p.pid).join('\n') + '\n');
    await entry.afterStart?.();
  }
}

export async function down(): Promise<void> {
  if (!existsSync(pidDir)) {
    console.log('==> nothing to stop');
    return;
  }
  // Reverse start order: the console and worker go before the backend, the stores last.
  const started = entries(stackSettings()).map((e) => e.name);
  const recorded = readdirSync(pidDir).map((f) => f.replace(/\.pids$/, ''));
  const order = [...started.filter((n) => recorded.includes(n)).reverse(), ...recorded.filter((n) => !started.includes(n))];
  for (const name of order) {
    const pids = recordedPids(name).filter(alive);
    for (const pid of [...pids].reverse()) killGroup(pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (pids.some(alive) && Date.now() < deadline) await delay(100);
    for (const pid of pids.filter(alive)) killGroup(pid, 'SIGKILL');
    while (pids.some(alive)) await delay(50);
    rmSync(pidFile(name), { force: true });
    console.log(`==> stopped ${name}`);
  }
}

function printSummary(): void {
  const settings = stackSettings();
  console.log('\nVoice platform local stack is up:');
  for (const entry of entries(settings)) console.log(`  ${entry.name.padEnd(10)} ${entry.url}`);
  console.log(`  minio keys ${settings.STORAGE_ACCESS_KEY} / ${settings.STORAGE_SECRET_KEY} (local defaults)`);
  if (settings.ADMIN_EMAIL) console.log(`  admin      ${settings.ADMIN_EMAIL} / ${settings.ADMIN_PASSWORD}`);
  console.log(`  demo bot   demo-bot  (API docs: http://127.0.0.1:${stackPorts.backend}/api/v1/openapi.json)`);
  console.log(`  test call  ws://127.0.0.1:${stackPorts.worker}/ws/demo-bot?token=…  (token: POST /api/v1/test-calls/token; 16 kHz PCM16LE mono)`);
  console.log(`  dial-out   POST http://127.0.0.1:${stackPorts.backend}/api/v1/sip/dialout  to_number ${PHONE_NUMBERS.answers} rings the test phone (README)`);
  console.log(`  call-in    make call-in  rings ${STACK_INBOUND_NUMBER} (the demo bot answers) from the local phone`);
  console.log(`  logs       ${path.relative(process.cwd(), runDir) || '.run'}/<service>/*.log  (make logs)`);
  console.log('  stop with  make down');
}

const command = process.argv[2];
if (command === 'call-in') {
  callIn(process.argv[3] || undefined, process.argv[4] || undefined).catch((err: unknown) => {
    console.error(`call-in: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
if (command === 'up' || command === 'down') {
  (command === 'up' ? up().then(printSummary) : down()).catch((err: unknown) => {
    console.error(`stack ${command}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
