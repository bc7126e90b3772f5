// What the worker benches share (bench.ts: WebSocket calls; bench-sip.ts: SIP calls beside them): the
// WebSocket caller script, the real backend on a test environment, percentiles and /proc CPU readings.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startProcess, waitUntil, type ManagedProcess, type TestEnv } from '@voice-platform/tests/infra';
import { loadSettings, type Settings } from './settings.js';
import { silence, speech } from './testing/audio.js';
import { TestCaller, withTestCallToken } from './testing/client.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The bench bots' end-of-turn silence. */
export const EOT_MS = 600;

export interface CallersResult {
  ok: number;
  failed: string[];
  /** Per call: `start` sent → first greeting audio frame received, ms (calls that got a greeting). */
  greetingMs?: number[];
  /** The caller process's CPU seconds with its children's (reaped by the bench, it lands in the bench's cutime). */
  cpuS?: number;
}

// ---- caller side (runs in a child process, so its CPU is not the worker's) ----
/** N concurrent WebSocket calls: greeting, "how much" → reply, "stop calling" → the bot hangs up. */
export async function runCallers(wsUrl: string, n: number): Promise<CallersResult> {
  const vars = { customer_name: 'Sam', amount_due: 'forty' };
  const how = speech('how much');
  const stop = speech('stop calling');
  const greetingMs: number[] = [];
  const one = async (i: number): Promise<string | null> => {
    // Stagger starts a little, as real traffic would be.
    await new Promise((r) => setTimeout(r, (i * 97) % 1000));
    const c = new TestCaller(withTestCallToken(wsUrl));
    await c.opened;
    const startedAt = performance.now();
    c.send({ type: 'start', variables: vars });
    await c.until(() => c.message('started'), 'started', 60_000);
    const quiet = async () => {
      await c.until(() => c.audio.length > 0, 'bot audio', 60_000);
      while (performance.now() - c.audio[c.audio.length - 1]!.atMs < 400) await c.stream(silence(100));
    };
    await c.until(() => c.audio.length > 0, 'greeting', 60_000);
    greetingMs.push(c.audio[0]!.atMs - startedAt);
    await quiet(); // greeting
    const before = c.audio.length;
    await c.stream(how);
    await c.stream(silence(EOT_MS + 200));
    await c.until(() => c.audio.length > before, 'reply', 60_000);
    await quiet();
    await c.stream(stop);
    await c.stream(silence(EOT_MS + 200));
    await c.until(() => c.closeCode !== null, 'end', 60_000);
    const ended = c.message('ended');
    return ended?.reason === 'bot_hangup' ? null : JSON.stringify(c.messages.slice(-3));
  };
  const results = await Promise.all(Array.from({ length: n }, (_, i) => one(i).catch((e: unknown) => String(e))));
  const cpu = procCpuSeconds('self'); // its own, and the espeak-ng/sox it ran for the phrases
  return {
    ok: results.filter((r) => r === null).length,
    failed: results.filter((r): r is string => r !== null),
    greetingMs,
    cpuS: cpu.own + cpu.children,
  };
}

/** The child process's entry: `node <bench>.js --callers <wsUrl> <n>`; sends the CallersResult and exits. */
export function callersMain(argv: string[]): void {
  const [wsUrl, n] = [argv[3]!, Number(argv[4])];
  runCallers(wsUrl, n).then(
    (r) => {
      process.send!(r);
      process.exit(0);
    },
    (err: unknown) => {
      process.send!({ ok: 0, failed: [String(err)] });
      process.exit(1);
    },
  );
}

// ---- measuring ----
export const pct = (xs: number[], p: number): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

let clkTck = 0;
/** utime, stime, cutime, cstime of a process in seconds (/proc/<pid>/stat); zeros if it is gone. */
export function procCpuSeconds(pid: number | 'self'): { own: number; children: number } {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return { own: 0, children: 0 };
  }
  const f = stat.split(') ')[1]!.split(' ');
  clkTck ||= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  return { own: (Number(f[11]) + Number(f[12])) / clkTck, children: (Number(f[13]) + Number(f[14])) / clkTck };
}

/** CPU seconds the whole machine has been busy (every core; /proc/stat, all but idle and iowait). */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  clkTck ||= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user! + nice! + system! + irq! + softirq! + steal!) / clkTck;
}

let pageSize = 0;
/** Resident set size of a process in bytes (/proc/<pid>/statm); 0 if it is gone. */
export function procRssBytes(pid: number): number {
  try {
    pageSize ||= Number(execFileSync('getconf', ['PAGESIZE']).toString().trim());
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * pageSize;
  } catch {
    return 0;
  }
}

/** CPU seconds of the spawner process and of the provider processes (espeak-ng, pocketsphinx) it reaped. */
export function providerCpuSeconds(spawnerPid: number | undefined): { spawner: number; providers: number } {
  const sp = spawnerPid ? procCpuSeconds(spawnerPid) : { own: 0, children: 0 };
  // Plus this process's reaped children: providers spawned here directly, and any spawner that exited.
  return { spawner: sp.own, providers: sp.children + procCpuSeconds('self').children };
}

// ---- the real backend ----
export interface BenchBackend {
  base: string;
  proc: ManagedProcess;
  /** The worker token the backend accepts. */
  token: string;
  /** `Bearer …` of the seeded admin. */
  auth: string;
  stop(): Promise<void>;
}

/** Seeds an admin and starts backend/dist/main.js on `env`'s services, on a free port. */
/**
 * The bench worker's settings: on the bench backend and the test environment's services, room for
 * `maxCalls`; `overrides` name the worker and what it takes besides WebSocket calls.
 */
export function benchWorkerSettings(backend: BenchBackend, env: TestEnv, maxCalls: number, overrides: Record<string, string>): Settings {
  return loadSettings({
    SERVICE_CONFIG_URL: `${backend.base}/api/v1/config`,
    WORKER_AUTH_TOKEN: backend.token,
    ...env.env,
    MAX_CONCURRENT_CALLS: String(maxCalls),
    // The WebSocket calls measure the whole worker: no share kept back for dial-outs.
    TEST_CALL_SHARE: '1',
    LOG_LEVEL: 'warn',
    WS_START_TIMEOUT_MS: '300',
    ...overrides,
  });
}

export async function startBenchBackend(env: TestEnv, db: string, extra: Record<string, string> = {}): Promise<BenchBackend> {
  const backendPort = await freePort();
  const token = 'bench-worker-token-0123456789abcdef';
  const admin = { email: 'bench@example.com', password: 'bench-admin-password' };
  const benv = {
    ...process.env,
    ...env.env,
    PORT: String(backendPort),
    MONGODB_DB: db,
    JWT_SECRET: 'bench-jwt-secret-0123456789abcdef-0123456789',
    WORKER_AUTH_TOKEN: token,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
    ...extra,
  };
  execFileSync(process.execPath, [path.join(root, 'backend/dist/seed.js'), 'admin'], { env: benv, stdio: 'pipe' });
  const proc = startProcess('backend', process.execPath, [path.join(root, 'backend/dist/main.js')], { env: benv, logFile: path.join(env.dir, 'backend.log') });
  // The test environment's guardian does not know this process: should the bench die, take it along.
  process.once('exit', () => {
    try {
      if (proc.isRunning()) process.kill(-proc.pid, 'SIGKILL'); // its own process group
    } catch {
      /* already gone */
    }
  });
  const base = `http://127.0.0.1:${backendPort}`;
  try {
    await waitUntil(async () => (await fetch(`${base}/health`)).status === 200, { what: 'backend', proc });
    const login = (await (await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(admin) })).json()) as { access_token: string };
    return { base, proc, token, auth: `Bearer ${login.access_token}`, stop: () => proc.stop() };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}
