// `npm run bench -w worker`: N concurrent WebSocket calls (default 1, 10, 30) with real speech in real
// time on the offline providers, against real FerretDB, Redis, MinIO and the real backend. The worker
// runs in this process (so its CPU, memory, event loop and pacing are measured directly); the callers
// run in a child process so they do not count. Prints, per N: CPU per call (worker process, its spawner
// process, and the espeak-ng/pocketsphinx processes the spawner runs), RSS per call (worker process only), event-loop delay p99, outbound frame gap p99, and the
// platform overhead per turn at p50/p95 (user end of speech → first bot audio frame, minus the bot's
// end-of-turn silence and the providers' own measured time).
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort, startProcess, startTestEnv, waitUntil } from '@voice-platform/tests/infra';
import { createWorker } from './app.js';
import { createLogger } from './logger.js';
import { loadSettings } from './settings.js';
import type { TurnTiming } from './transports/output.js';
import { silence, speech } from './testing/audio.js';
import { TestCaller } from './testing/client.js';

const here = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(here), '..', '..');
const EOT_MS = 600;

// ---- caller side (child process) ----
async function runCallers(wsUrl: string, n: number): Promise<{ ok: number; failed: string[] }> {
  const vars = { customer_name: 'Sam', amount_due: 'forty' };
  const how = speech('how much');
  const stop = speech('stop calling');
  const one = async (i: number): Promise<string | null> => {
    // Stagger starts a little, as real traffic would be.
    await new Promise((r) => setTimeout(r, (i * 97) % 1000));
    const c = new TestCaller(wsUrl);
    await c.opened;
    c.send({ type: 'start', variables: vars });
    await c.until(() => c.message('started'), 'started', 60_000);
    const quiet = async () => {
      await c.until(() => c.audio.length > 0, 'bot audio', 60_000);
      while (performance.now() - c.audio[c.audio.length - 1]!.atMs < 400) await c.stream(silence(100));
    };
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
  return { ok: results.filter((r) => r === null).length, failed: results.filter((r): r is string => r !== null) };
}

if (process.argv[2] === '--callers') {
  const [wsUrl, n] = [process.argv[3]!, Number(process.argv[4])];
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
} else {
  void bench();
}

// ---- worker side ----
const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
/** utime, stime, cutime, cstime of a process in seconds (/proc/<pid>/stat); zeros if it is gone. */
function procCpuSeconds(pid: number | 'self'): { own: number; children: number } {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return { own: 0, children: 0 };
  }
  const f = stat.split(') ')[1]!.split(' ');
  const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  return { own: (Number(f[11]) + Number(f[12])) / ticks, children: (Number(f[13]) + Number(f[14])) / ticks };
}
/** CPU seconds of the spawner process and of the provider processes (espeak-ng, pocketsphinx) it reaped. */
function providerCpuSeconds(spawnerPid: number | undefined): { spawner: number; providers: number } {
  const sp = spawnerPid ? procCpuSeconds(spawnerPid) : { own: 0, children: 0 };
  // Plus this process's reaped children: providers spawned here directly, and any spawner that exited.
  return { spawner: sp.own, providers: sp.children + procCpuSeconds('self').children };
}

async function bench(): Promise<void> {
  const sizes = (process.env.BENCH_CALLS ?? '1,10,30').split(',').map(Number);
  console.log(`worker bench: concurrent WebSocket calls ${sizes.join(', ')} (offline providers, real-time speech)`);
  const env = await startTestEnv(['mongodb', 'redis', 'minio']);
  const backendPort = await freePort();
  const token = 'bench-worker-token-0123456789abcdef';
  const admin = { email: 'bench@example.com', password: 'bench-admin-password' };
  const benv = {
    ...process.env,
    ...env.env,
    PORT: String(backendPort),
    MONGODB_DB: 'worker_bench',
    JWT_SECRET: 'bench-jwt-secret-0123456789abcdef-0123456789',
    WORKER_AUTH_TOKEN: token,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
  };
  execFileSync(process.execPath, [path.join(root, 'backend/dist/seed.js'), 'admin'], { env: benv, stdio: 'pipe' });
  const backend = startProcess('backend', process.execPath, [path.join(root, 'backend/dist/main.js')], { env: benv, logFile: path.join(env.dir, 'backend.log') });
  const base = `http://127.0.0.1:${backendPort}`;
  let redis: Redis | null = null;
  try {
    await waitUntil(async () => (await fetch(`${base}/health`)).status === 200, { what: 'backend', proc: backend });
    const login = (await (await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(admin) })).json()) as { access_token: string };
    const botRes = await fetch(`${base}/api/v1/bots`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${login.access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'bench',
        greeting: 'Hello {{customer_name}}, this is your payment reminder.',
        variables: [
          { name: 'customer_name', required: true, description: '' },
          { name: 'amount_due', required: false, description: '' },
        ],
        policy: {
          intents: [
            { name: 'amount', examples: ['how much', 'what amount'], reply: 'The open amount is {{amount_due}} dollars.' },
            { name: 'stop', examples: ['stop calling', 'goodbye'], reply: 'Understood. Goodbye.', end_call: true },
          ],
          fallback: { reply: 'Sorry, I did not catch that.' },
        },
        turn_detection: { end_of_turn_silence_ms: EOT_MS },
      }),
    });
    const botId = ((await botRes.json()) as { id: string }).id;

    const settings = loadSettings({
      SERVICE_CONFIG_URL: `${base}/api/v1/config`,
      WORKER_AUTH_TOKEN: token,
      ...env.env,
      MAX_CONCURRENT_CALLS: String(Math.max(...sizes)),
      WORKER_ID: 'bench-worker',
      LOG_LEVEL: 'warn',
      DIALOUT_ENABLED: 'false',
      WS_START_TIMEOUT_MS: '300',
    });
    redis = new Redis(settings.REDIS_URL);
    let turns: TurnTiming[] = [];
    let gaps: number[] = [];
    const worker = createWorker({
      settings,
      logger: createLogger('warn'),
      redis,
      observer: { onTurn: (_id, t) => turns.push(t), onFrameGap: (ms) => gaps.push(ms) },
    });
    const port = await worker.listen(0, '127.0.0.1');
    const rows: string[] = [];
    for (const n of sizes) {
      turns = [];
      gaps = [];
      global.gc?.();
      const rss0 = process.memoryUsage().rss;
      let rssPeak = rss0;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 200);
      const eld = monitorEventLoopDelay({ resolution: 10 });
      eld.enable();
      const cpu0 = process.cpuUsage();
      const child0 = providerCpuSeconds(worker.spawner.pid);
      const t0 = performance.now();
      const result = await new Promise<{ ok: number; failed: string[] }>((resolve, reject) => {
        const c = fork(here, ['--callers', `ws://127.0.0.1:${port}/ws/${botId}`, String(n)], { stdio: 'inherit' });
        c.once('message', (m) => resolve(m as { ok: number; failed: string[] }));
        c.once('error', reject);
      });
      const wallS = (performance.now() - t0) / 1000;
      eld.disable();
      clearInterval(sampler);
      await waitUntil(() => worker.slots.active === 0, { what: 'calls to finish', timeoutMs: 30_000 });
      const cpu = process.cpuUsage(cpu0);
      const workerCpuS = (cpu.user + cpu.system) / 1e6;
      const child1 = providerCpuSeconds(worker.spawner.pid);
      const childCpuS = child1.providers - child0.providers;
      const spawnerCpuS = child1.spawner - child0.spawner;
      const overhead = turns.map((t) => t.overheadMs);
      const row = [
        `N=${String(n).padStart(2)}`,
        `ok ${result.ok}/${n}`,
        `wall ${wallS.toFixed(1)} s`,
        `CPU/call ${((workerCpuS / n / wallS) * 100).toFixed(1)}% worker + ${((spawnerCpuS / n / wallS) * 100).toFixed(2)}% spawner + ${((childCpuS / n / wallS) * 100).toFixed(1)}% providers`,
        `RSS/call ${((rssPeak - rss0) / n / 1048576).toFixed(1)} MiB (peak ${(rssPeak / 1048576).toFixed(0)} MiB)`,
        `event-loop p99 ${(eld.percentile(99) / 1e6).toFixed(1)} ms`,
        `frame gap p99 ${pct(gaps, 99).toFixed(1)} ms`,
        `overhead/turn p50 ${pct(overhead, 50).toFixed(1)} ms p95 ${pct(overhead, 95).toFixed(1)} ms (${turns.length} turns; latency p50 ${pct(turns.map((t) => t.latencyMs), 50).toFixed(0)} ms incl. ${EOT_MS} ms silence)`,
      ].join(' | ');
      rows.push(row);
      console.log(row);
      if (result.failed.length) console.log(`  failures: ${result.failed.slice(0, 3).join('\n  ')}`);
    }
    await worker.close();
    console.log('\nsummary');
    for (const r of rows) console.log(r);
  } finally {
    redis?.disconnect();
    await backend.stop();
    await env.stop();
  }
  process.exit(0);
}
