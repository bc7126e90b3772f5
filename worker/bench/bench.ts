// `npm run bench -w worker`: N concurrent WebSocket calls (default 1, 10, 30) with real speech in real
// time on the offline providers, against real FerretDB, Redis, MinIO and the real backend. The worker
// runs in this process (so its CPU, memory, event loop and pacing are measured directly); the callers
// run in a child process so they do not count. Prints, per N: CPU per call (worker process, its spawner
// process, and the espeak-ng/pocketsphinx processes the spawner runs), RSS per call (worker process only), event-loop delay p99, outbound frame gap p99, and the
// platform overhead per turn at p50/p95 (user end of speech → first bot audio frame, minus the bot's
// end-of-turn silence and the providers' own measured time).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { startTestEnv, waitUntil } from '@voice-platform/tests/infra';
import { createWorker } from '#worker/app.js';
import { benchWorkerSettings, callersMain, EOT_MS, pct, providerCpuSeconds, startBenchBackend, type CallersResult } from './bench-lib.js';
import { createLogger } from '#worker/core/logger.js';
import type { TurnTiming } from '#worker/transports/output.js';

const here = fileURLToPath(import.meta.url);

// The callers run in a child process (`--callers`), so their CPU is not the worker's.
if (process.argv[2] === '--callers') callersMain(process.argv);
else void bench();

// ---- worker side ----
async function bench(): Promise<void> {
  const sizes = (process.env.BENCH_CALLS ?? '1,10,30').split(',').map(Number);
  console.log(`worker bench: concurrent WebSocket calls ${sizes.join(', ')} (offline providers, real-time speech)`);
  const env = await startTestEnv(['mongodb', 'redis', 'minio']);
  let backend: Awaited<ReturnType<typeof startBenchBackend>> | null = null;
  let redis: Redis | null = null;
  try {
    backend = await startBenchBackend(env, 'worker_bench');
    const { base, token } = backend;
    process.env.VP_WORKER_TOKEN = token; // the callers (a child process) sign their test-call tokens with it
    const botRes = await fetch(`${base}/api/v1/bots`, {
      method: 'POST',
      headers: { Authorization: backend.auth, 'Content-Type': 'application/json' },
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

    const settings = benchWorkerSettings(backend, env, Math.max(...sizes), { WORKER_ID: 'bench-worker', DIALOUT_ENABLED: 'false' });
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
      const result = await new Promise<CallersResult>((resolve, reject) => {
        const c = fork(here, ['--callers', `ws://127.0.0.1:${port}/ws/${botId}`, String(n)], { stdio: 'inherit' });
        c.once('message', (m) => resolve(m as CallersResult));
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
    await backend?.stop();
    await env.stop();
  }
  process.exit(0);
}
