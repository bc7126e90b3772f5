// What the worker benches share (bench.ts: WebSocket calls; bench-sip.ts: SIP calls beside them;
// bench-latency.ts and bench-capacity.ts: multi-turn conversations measured at the phone's ear): the
// WebSocket caller script, the multi-turn script and its bot, the caller's side of a conversation, the real
// backend on a test environment, percentiles and /proc CPU readings.
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { freePort, repoRoot, startProcess, waitUntil, type ManagedProcess, type TestEnv } from '@voice-platform/tests/infra';
import { loadSettings, type Settings } from '#worker/core/settings.js';
import { silence, speech } from '../testing/audio.js';
import { TestCaller, withTestCallToken } from '../testing/client.js';

/** The repository (benches run from worker/dist/dev/bench, the sources sit in worker/bench: no fixed depth). */
export const root = repoRoot;
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

// ---- multi-turn conversations heard at the phone's ear (bench-latency, bench-capacity) ----
/** A voiced 20 ms frame: RMS of its 16-bit samples above this (line noise while the bot is silent is printed). */
export const VOICED_RMS = Number(process.env.BENCH_VOICED_RMS ?? 300);
export const GREETING = 'Hello {{customer_name}}, this is your payment reminder.';
export const FALLBACK = 'Sorry, please say that again.';
export const GOODBYE = 'Understood. Goodbye.';
/** The caller's utterances and the bot's replies (the policy's intents; the cloud LLM stand-in answers the same). */
export const INTENTS: Array<{ name: string; examples: string[]; reply: string; end_call?: boolean }> = [
  { name: 'amount', examples: ['how much', 'what amount'], reply: 'It is forty dollars.' },
  { name: 'due', examples: ['when is it due'], reply: 'It is due on Friday.' },
  { name: 'yes', examples: ['yes'], reply: 'Good, thank you.' },
  { name: 'no', examples: ['no'], reply: 'All right then.' },
  { name: 'repeat', examples: ['repeat that'], reply: 'It is forty dollars.' },
  { name: 'who', examples: ['who is this'], reply: 'This is your payment reminder.' },
  { name: 'pay', examples: ['i will pay'], reply: 'Thank you, noted.' },
  { name: 'thanks', examples: ['thank you'], reply: 'You are welcome.' },
  { name: 'hold', examples: ['hold on'], reply: 'Of course.' },
  { name: 'stop', examples: ['stop calling'], reply: GOODBYE, end_call: true },
];
const UTTERANCES = ['how much', 'when is it due', 'yes', 'what amount', 'who is this', 'no', 'repeat that', 'i will pay', 'thank you'];
/** The caller's script: `turns` utterances, the last one "stop calling". */
export const script = (turns: number): string[] => [...Array.from({ length: turns - 1 }, (_, i) => UTTERANCES[i % UTTERANCES.length]!), 'stop calling'];
/** The bot's reply to `said` (the policy's intent), or the fallback. */
export const replyTo = (said: string): string => INTENTS.find((i) => i.examples.includes(said))?.reply ?? FALLBACK;

/** What one call's caller measured. */
export interface LineResult {
  /** Per answered turn: end of the caller's speech → first voiced reply frame, ms. */
  samples: number[];
  /** Turns without a voiced reply within 15 s. */
  missing: number;
  /** Turns whose reply came later than the caller's patience (ConverseOptions.patienceMs), or never: a real caller hangs up. */
  impatient: number;
  /** Turns during whose utterance the bot was heard (its previous reply or greeting still going). */
  overlapped: number;
  /** The call ended after the last turn (SIP: the line went quiet for good; WS: `ended` bot_hangup). */
  ended: boolean;
  /** RMS of the frames heard while the bot was silent (the 400 ms before each utterance), for the threshold. */
  noise: number[];
  /**
   * Per reply with a reference: its longest silence between voiced frames at the ear beyond the longest one the
   * voice itself leaves in that reply (ConverseOptions.replyPausesMs), ms; 0 when none is longer.
   */
  gapsMs: number[];
  /** WS: bot replies that were the fallback. */
  fallbacks?: number;
  /** Barge-in: the caller's first sent packet of "hold on" (said into the greeting) → the greeting's last voiced frame heard, ms. */
  bargeInMs?: number;
  error?: string;
}

export const failedLine = (turns: number, error: string): LineResult => ({ samples: [], missing: turns, impatient: turns, overlapped: 0, ended: false, noise: [], gapsMs: [], error });

export interface CallerSide {
  /** Frames heard: arrival (performance.now()) and RMS; over RTP, the packet's timestamp (8 kHz media clock). */
  arrivals: Array<{ at: number; rms: number; rtpTs?: number }>;
  /** Queues speech; resolves with the send time of its last frame. */
  speak(pcm: Int16Array): Promise<number>;
  /** The call is over (SIP: no packet for 1.5 s; WS: socket closed). */
  over(): boolean;
}

export interface ConverseOptions {
  /** Said into the greeting (a barge-in), its effect measured. */
  interjection?: Int16Array;
  /** A reply later than this (ms after the caller's speech) counts as a caller who would have hung up; the caller still waits, so the turn is measured. */
  patienceMs?: number;
  /** Per utterance: the longest silence inside the bot's reply as its voice says it alone, ms (undefined: no gap measured). */
  replyPausesMs?: Array<number | undefined>;
}

export const rmsOf = (pcm: Int16Array, from = 0, to = pcm.length): number => {
  let s = 0;
  for (let i = from; i < to; i++) s += pcm[i]! * pcm[i]!;
  return to > from ? Math.sqrt(s / (to - from)) : 0;
};

/** Speech of `text` at `rate` with leading and trailing silence cut at 20 ms frames (the last frame is voiced). */
export function utterance(text: string, rate: number, wpm?: number): Int16Array {
  const pcm = speech(text, rate, wpm ? { wpm } : undefined);
  const f = (rate * 20) / 1000;
  const frames = Math.floor(pcm.length / f);
  let first = 0;
  let last = frames - 1;
  while (first < frames && rmsOf(pcm, first * f, (first + 1) * f) <= VOICED_RMS) first++;
  while (last > first && rmsOf(pcm, last * f, (last + 1) * f) <= VOICED_RMS) last--;
  return pcm.slice(first * f, (last + 1) * f);
}

/** The longest run of unvoiced 20 ms frames between voiced ones in `pcm`, ms. */
export function longestPauseMs(pcm: Int16Array, rate: number): number {
  const f = (rate * 20) / 1000;
  let longest = 0;
  let lastVoiced = -1;
  for (let k = 0; (k + 1) * f <= pcm.length; k++) {
    if (rmsOf(pcm, k * f, (k + 1) * f) <= VOICED_RMS) continue;
    if (lastVoiced >= 0) longest = Math.max(longest, (k - lastVoiced - 1) * 20);
    lastVoiced = k;
  }
  return longest;
}

/** Times (as given) of the frames louder than `rms` that follow at least `quietMs` without one: where each stretch of speech began. */
export function onsets(frames: ReadonlyArray<{ at: number; rms: number }>, quietMs = 300, rms = VOICED_RMS): number[] {
  const out: number[] = [];
  let last = -Infinity;
  for (const fr of frames) {
    if (fr.rms <= rms) continue;
    if (fr.at - last >= quietMs) out.push(fr.at);
    last = fr.at;
  }
  return out;
}

export async function waitFor<T>(check: () => T | null | undefined | false, timeoutMs: number): Promise<T | null> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (performance.now() > deadline) return null;
    await sleep(5);
  }
}

/** One call's conversation: greeting, then each utterance, its reply's first voiced frame, the reply's end. */
export async function converse(side: CallerSide, utterances: Int16Array[], opts: ConverseOptions = {}): Promise<LineResult> {
  const r: LineResult = { samples: [], missing: 0, impatient: 0, overlapped: 0, ended: false, noise: [], gapsMs: [] };
  const firstVoicedAfter = (t: number) => side.arrivals.find((a) => a.at > t && a.rms > VOICED_RMS)?.at;
  const lastVoiced = () => {
    for (let i = side.arrivals.length - 1; i >= 0; i--) if (side.arrivals[i]!.rms > VOICED_RMS) return side.arrivals[i]!.at;
    return 0;
  };
  /** Until nothing voiced was heard for `ms` (or the call is over). */
  const quiet = (ms: number, timeoutMs: number) => waitFor(() => side.over() || performance.now() - lastVoiced() >= ms, timeoutMs);
  const greetingAt = await waitFor(() => firstVoicedAfter(0), 30_000);
  if (!greetingAt) return { ...r, error: 'no greeting within 30 s' };
  if (opts.interjection) {
    // Real speech into the greeting: how soon the bot's sound stops at the ear (the end of the greeting's last
    // stretch of voiced frames, a gap of 300 ms or more after it).
    await waitFor(() => performance.now() - greetingAt >= 800 || null, 5000);
    const saidAt = performance.now();
    await side.speak(opts.interjection);
    await quiet(300, 10_000);
    const voiced = side.arrivals.filter((a) => a.at > saidAt && a.rms > VOICED_RMS).map((a) => a.at);
    let last = saidAt;
    for (const at of voiced) {
      if (at - last >= 300) break;
      last = at;
    }
    r.bargeInMs = last - saidAt;
    // The bot answers it ("Of course."): the script starts once that reply is over. Without this wait the first
    // line followed the interjection within 100 ms, the two were one turn, and every later reply answered the
    // line before (the call never heard "stop calling").
    if (!(await waitFor(() => firstVoicedAfter(last), 10_000))) r.error = 'no reply to the interjection within 10 s';
  }
  await quiet(400, 20_000);
  for (const [k, u] of utterances.entries()) {
    if (side.over()) {
      r.missing += utterances.length - k;
      r.impatient += utterances.length - k;
      break;
    }
    const startedAt = performance.now();
    r.noise.push(...side.arrivals.filter((a) => a.at > startedAt - 400).map((a) => a.rms));
    const endAt = await side.speak(u);
    if (side.arrivals.some((a) => a.at > startedAt && a.at <= endAt && a.rms > VOICED_RMS)) r.overlapped++;
    const heard = await waitFor(() => firstVoicedAfter(endAt), 15_000);
    if (heard) r.samples.push(heard - endAt);
    else r.missing++;
    if (!heard || (opts.patienceMs !== undefined && heard - endAt > opts.patienceMs)) r.impatient++;
    if (k === utterances.length - 1) r.ended = (await waitFor(() => side.over(), 15_000)) !== null;
    else await quiet(500, 30_000);
    const pause = opts.replyPausesMs?.[k];
    if (heard && pause !== undefined) {
      // The reply as heard: its voiced frames up to the 500 ms of quiet that ended it. Over RTP a gap is read on the
      // packets' media clock (what the phone's jitter buffer plays), not by arrival: a stall of this process's own
      // event loop would show as a gap no caller hears. (Measured both ways at 4 calls they agree within a frame or
      // two: livekit-sip's gaps are silent packets in the stream.)
      const voiced = side.arrivals.filter((a) => a.at >= heard && a.rms > VOICED_RMS);
      let longest = 0;
      for (let i = 1; i < voiced.length; i++) {
        const [a, b] = [voiced[i - 1]!, voiced[i]!];
        const apartMs = a.rtpTs !== undefined && b.rtpTs !== undefined ? ((b.rtpTs - a.rtpTs) >>> 0) / 8 : b.at - a.at;
        longest = Math.max(longest, apartMs - 20);
      }
      r.gapsMs.push(Math.max(0, longest - pause));
    }
  }
  return r;
}

/** Runs `file` as a child (`args`), returns its last message; `onMessage` sees every message ('ready' ones too). */
export function forkChild<T>(file: string, args: string[], onMessage?: (m: any, child: ReturnType<typeof fork>) => void): Promise<T> {
  const c = fork(file, args, { stdio: 'inherit' });
  return new Promise<T>((resolve, reject) => {
    let last: T | null = null;
    c.on('message', (m: any) => {
      onMessage?.(m, c);
      if (!m.ready) last = m as T;
    });
    c.once('error', reject);
    c.once('exit', (code) => (last ? resolve(last) : reject(new Error(`${args[0]} child exited ${code} without a result`))));
  });
}

/** The machine's load average and CPUs, for what else was running. */
export const machine = (when: string): string => `${when}: load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} | ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`;

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
