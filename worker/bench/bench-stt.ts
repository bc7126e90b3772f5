// `npm run bench:stt -w worker`: offline recognition, the live decoder against the per-turn decode, in one run.
// N calls at once (BENCH_STT_CALLS, default 1,10) each speak TURNS phrases of a bot's policy (espeak-ng speech,
// fed in 20 ms frames in real time from a little silence before each phrase to EOT_MS of silence after it, as
// the worker's VAD would); all calls' turns end within ~100 ms of each other, as when many calls talk at once.
// Prints per mode and N: end of turn → final words p50/p95 (the endOfTurn call → its text), words right, and CPU
// per call (this process, the spawner, the pocketsphinx runs it reaped, the live decoder process), then the
// live decoder's figures as ratios of the per-turn decode's; then the open language model (a bot without
// phrases) both ways for one call, and what loading a decoder costs (first, and again for the same grammar).
import { setTimeout as sleep } from 'node:timers/promises';
import { procCpuSeconds, pct, procRssBytes } from './bench-lib.js';
import { Spawner } from '#worker/proc/spawner.js';
import { LiveDecoder } from '#worker/stt/live-decoder.js';
import { PocketsphinxStt } from '#worker/stt/pocketsphinx.js';
import type { SttSession } from '#worker/stt/stt.js';
import { silence, speech } from '../testing/audio.js';

const PHRASES = ['how much', 'what amount', 'stop calling', 'goodbye', 'can you call me tomorrow', 'i already paid'];
const TURNS = Number(process.env.BENCH_STT_TURNS ?? 4);
const FRAME = 320; // 20 ms at 16 kHz
const LEAD_MS = 300;
const EOT_MS = 600;
const MODEL = '/usr/share/pocketsphinx/model/en-us';

interface Row {
  latencies: number[];
  right: number;
  turns: number;
  cpuPerCallS: number;
  /** Per call: worker side, spawner, pocketsphinx runs, decoder process. */
  parts: number[];
  /** How long the calls talked (wall clock). */
  callS: number;
}

const audioOf = new Map(PHRASES.map((p) => [p, speech(p)]));

/** One call: TURNS turns in real time, each ended after EOT_MS of silence; end of turn → words timed. */
async function call(session: SttSession, startDelayMs: number, offset: number, row: Row): Promise<void> {
  await sleep(startDelayMs);
  for (let t = 0; t < TURNS; t++) {
    const phrase = PHRASES[(offset + t) % PHRASES.length]!;
    const frames = [silence(LEAD_MS), audioOf.get(phrase)!, silence(EOT_MS)];
    let started = false;
    const next = performance.now();
    let at = next;
    for (const [i, part] of frames.entries()) {
      for (let s = 0; s < part.length; s += FRAME) {
        if (i === 1 && !started) {
          session.speechStarted();
          started = true;
        }
        session.push(part.subarray(s, s + FRAME));
        at += 20;
        const wait = at - performance.now();
        if (wait > 0) await sleep(wait);
      }
    }
    const t0 = performance.now();
    const text = await session.endOfTurn(new AbortController().signal);
    row.latencies.push(performance.now() - t0);
    row.turns++;
    if (text === phrase) row.right++;
  }
}

/** CPU seconds so far: this process (the worker's side), the spawner, the pocketsphinx runs it reaped, the decoder process. */
function cpuNow(spawner: Spawner, live: LiveDecoder | null): number[] {
  const self = process.cpuUsage();
  const sp = spawner.pid ? procCpuSeconds(spawner.pid) : { own: 0, children: 0 };
  const dec = live?.pid ? procCpuSeconds(live.pid).own : 0;
  return [(self.user + self.system) / 1e6, sp.own, sp.children, dec];
}

async function runMode(n: number, live: boolean, phrases: string[]): Promise<Row & { decoderRssMb: number }> {
  const openModel = phrases.length === 0;
  const spawner = new Spawner();
  spawner.start();
  const decoder = live ? new LiveDecoder({ spawner, onUnavailable: (why) => console.log(`  live decoding unavailable: ${why}`) }) : null;
  if (decoder) {
    decoder.start();
    // The process is up (Python started) before the clock starts, as at a worker's boot.
    const warm = await new PocketsphinxStt({ phrases: ['warm up'], spawner, live: decoder }).open();
    warm.close();
  }
  const stt = new PocketsphinxStt({ phrases, spawner, live: decoder, liveOpenModel: openModel });
  const row: Row = { latencies: [], right: 0, turns: 0, cpuPerCallS: 0, parts: [], callS: 0 };
  const cpu0 = cpuNow(spawner, decoder);
  const sessions = await Promise.all(Array.from({ length: n }, () => stt.open()));
  const t0 = performance.now();
  await Promise.all(sessions.map((s, i) => call(s, Math.random() * 100, i, row)));
  row.callS = (performance.now() - t0) / 1000;
  const decoderRssMb = decoder?.pid ? procRssBytes(decoder.pid) / 2 ** 20 : 0;
  const cpu1 = cpuNow(spawner, decoder);
  for (const s of sessions) s.close();
  row.parts = cpu1.map((c, i) => (c - cpu0[i]!) / n);
  row.cpuPerCallS = row.parts.reduce((a, b) => a + b, 0);
  await decoder?.close();
  await spawner.close();
  return { ...row, decoderRssMb };
}

async function loadCost(): Promise<{ firstMs: number; againMs: number }> {
  const spawner = new Spawner();
  const decoder = new LiveDecoder({ spawner });
  const stt = new PocketsphinxStt({ phrases: PHRASES, spawner, live: decoder });
  (await new PocketsphinxStt({ phrases: ['warm up'], spawner, live: decoder }).open()).close();
  // As the decoder process measured it (finer than /proc's 10 ms ticks); the first includes the call's overlap decoder.
  const times: number[] = [];
  for (let i = 0; i < 2; i++) {
    const s = await stt.open();
    times.push(decoder.lastLoad!.loadCpuMs);
    s.close();
  }
  await decoder.close();
  await spawner.close();
  return { firstMs: times[0]!, againMs: times[1]! };
}

const f0 = (x: number) => x.toFixed(0);
const f1 = (x: number) => x.toFixed(1);

async function main(): Promise<void> {
  // The spawners and the decoder process do not hold the event loop while idle (closing one waits for its exit).
  setInterval(() => undefined, 1000);
  const sizes = (process.env.BENCH_STT_CALLS ?? '1,10').split(',').map(Number);
  console.log(`stt bench: ${TURNS} turns per call, ${sizes.join(', ')} calls at once, end-of-turn silence ${EOT_MS} ms, grammar of ${PHRASES.length} phrases`);
  console.log('mode       calls  end→words p50 / p95 ms  right   CPU/call s  % of a core per call  (worker / spawner / runs / decoder s)');
  for (const n of sizes) {
    const base = await runMode(n, false, PHRASES);
    const live = await runMode(n, true, PHRASES);
    for (const [name, r] of [['per-turn', base], ['live', live]] as const) {
      console.log(
        `${name.padEnd(10)} ${String(n).padStart(5)}  ${f0(pct(r.latencies, 50)).padStart(9)} / ${f0(pct(r.latencies, 95)).padEnd(9)}  ${r.right}/${r.turns}`.padEnd(56) +
          `${r.cpuPerCallS.toFixed(3).padStart(8)}   ${f1((100 * r.cpuPerCallS) / r.callS).padStart(6)}                (${r.parts.map((x) => x.toFixed(3)).join(' / ')})`,
      );
    }
    console.log(
      `  live ÷ per-turn (${n} calls): p50 ${(pct(live.latencies, 50) / pct(base.latencies, 50)).toFixed(3)}, p95 ${(pct(live.latencies, 95) / pct(base.latencies, 95)).toFixed(3)}, CPU per call ${(live.cpuPerCallS / base.cpuPerCallS).toFixed(2)}; live decoder process RSS ${f0(live.decoderRssMb)} MB`,
    );
  }
  const lmBase = await runMode(1, false, []);
  const lmLive = await runMode(1, true, []);
  for (const [name, r] of [['per-turn', lmBase], ['live', lmLive]] as const) {
    console.log(
      `open model ${name.padEnd(8)} 1 call: end→words p50 ${f0(pct(r.latencies, 50))} / p95 ${f0(pct(r.latencies, 95))} ms, right ${r.right}/${r.turns}, CPU/call ${r.cpuPerCallS.toFixed(3)} s` +
        (name === 'live' ? `, decoder process RSS ${f0(r.decoderRssMb)} MB` : ''),
    );
  }
  console.log(`  open model live ÷ per-turn: p50 ${(pct(lmLive.latencies, 50) / pct(lmBase.latencies, 50)).toFixed(3)}, CPU per call ${(lmLive.cpuPerCallS / lmBase.cpuPerCallS).toFixed(2)}`);
  const load = await loadCost();
  console.log(`decoder load (grammar, CPU in the decoder process): first ${f0(load.firstMs)} ms, same grammar again ${f1(load.againMs)} ms (an idle decoder reused)`);
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
