// `npm run bench:capacity -w worker` (DESIGN §15): how many calls this machine serves within the turn-latency
// SLO, and what admission on load does with twice that.
//  1. Steps the number of concurrent SIP calls (BENCH_STEPS, default "1,2,4,6,8,10,12,14,16,20") with
//     LOAD_ADMISSION off until the SLO breaks (BENCH_KEEP_STEPPING=1: through every step): each call a real dial-out through the backend's API
//     (POST /api/v1/sip/dialout) to the test phone, answered by the ear (tests/infra ear.ts), which speaks a
//     multi-turn script (BENCH_TURNS, default 6; the last "stop calling") as PCMU RTP through livekit-sip and
//     timestamps every packet it hears; starts staggered by BENCH_STAGGER_MS (default 700). Offline
//     providers: the scripted policy, pocketsphinx, espeak-ng. SLO: voice-to-voice at the phone's wire (the
//     caller's last voiced packet sent → the reply's first voiced packet heard) p95 ≤ 1200 ms, and no bot audio
//     gap > 100 ms once a reply started (at the ear: the longest silence inside a reply beyond the longest one
//     the voice leaves in that reply said alone), every turn answered. Per step: p50/p95, max gap, callers who
//     would have hung up on silence (no reply within BENCH_PATIENCE_MS, default 5000), CPU per concurrent call
//     (% of one core; CPU seconds ÷ call-seconds) of the worker (its process with rtc-node, the spawner and
//     every decoder/synthesiser under it), livekit-server and livekit-sip, the machine's busy share and loadavg.
//     Calls per core at the SLO = the largest step within it ÷ the machine's cores.
//  2. Offers twice that with LOAD_ADMISSION on (default LOAD_THRESHOLD; CALL_CPU_ESTIMATE_CORES = the worker's
//     measured CPU per call): dial-outs at a fixed rate (BENCH_OFFER_RATE per second, default 2 × capacity ÷
//     the mean call length) for BENCH_OFFER_SECONDS (default the mean call length, at least 30 s): admitted
//     (201), refused (503 with Retry-After), the admitted calls' p50/p95 and max gap, impatient callers, and
//     every admitted call's final status in the API (nothing lost: each one terminal).
//  3. The media path's own delay (part 6), from a probe on the worker's LiveKit transport (setMediaProbe): the
//     phone's first loud packet (RMS > ONSET_RMS) of an utterance sent → the first loud frame the worker's
//     pipeline gets, and the worker's first loud frame of a reply handed to rtc-node → its first loud packet at
//     the ear. Same machine clock (epoch ms) on both sides; each worker room is matched to its ear line by those
//     onsets. Frames are 20 ms on both sides: an onset may move by up to a frame.
// The phone runs in a child process (its CPU is not the worker's). Nothing is asserted.
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { dispose } from '@livekit/rtc-node';
import { TERMINAL_CALL_STATUSES, type CallStatus } from '@voice-platform/schemas';
import { listenNumber, PhoneEar, startTestEnv, type EarLine, type ManagedProcess } from '@voice-platform/tests/infra';
import { createWorker, type Worker } from '#worker/app.js';
import {
  benchWorkerSettings,
  converse,
  failedLine,
  FALLBACK,
  forkChild,
  GREETING,
  INTENTS,
  longestPauseMs,
  machine,
  machineBusySeconds,
  onsets,
  pct,
  procCpuSeconds,
  replyTo,
  rmsOf,
  script,
  startBenchBackend,
  utterance,
  VOICED_RMS,
  waitFor,
  type LineResult,
} from './bench-lib.js';
import { processTreeCpuSeconds } from '#worker/fleet/load.js';
import { createLogger } from '#worker/core/logger.js';
import { liveKitDialerFromSettings, setMediaProbe } from '#worker/transports/livekit.js';
import type { TurnTiming } from '#worker/transports/output.js';

const here = fileURLToPath(import.meta.url);
const TRUNK_NUMBER = '+15550001111';
const SLO_P95_MS = 1200;
const SLO_GAP_MS = 100;
/** The bench bot's end_of_turn_silence_ms (the default): a turn that waited it ended on no look's words. */
const LONGEST_SILENCE_MS = 700;
/** The worker's espeak-ng words per minute at speed 1 (tts/espeak.ts): the reference replies are said the same way. */
const BOT_WPM = 160;
/** Epoch ms with sub-ms precision: comparable across the bench's processes (one machine clock). */
const epochNow = () => performance.timeOrigin + performance.now();
/**
 * Where a stretch of speech begins, for the media path's delay: the first frame this loud, on both sides. Well above
 * the voiced threshold, so the same instant of a word's rise crosses it at the ear and in the worker (a frame near
 * the threshold may fall just under it after Opus and resampling, and the onset would move a frame).
 */
const ONSET_RMS = 1000;

// ---- the phone (a child process) ----
/** One line's conversation and its onsets (epoch ms) for the media path's delay. */
interface PhoneLine extends LineResult {
  /** Where each utterance's first voiced packet was sent. */
  sentOnsets: number[];
  /** Where each stretch of the bot's voice was first heard. */
  heardOnsets: number[];
}

/**
 * The ear answering every line with the script; sends 'ready', then, once told how many lines to expect
 * ({expect}) and those conversations are over (or no new line came for 60 s), the results.
 */
async function phoneMain(earPort: number, turns: number, patienceMs: number): Promise<void> {
  const said = script(turns);
  const utterances = said.map((t) => utterance(t, 8000));
  // The longest pause each reply has said alone (the goodbye ends the call: not measured).
  const pauses = said.map((t, k) => (k === said.length - 1 ? undefined : longestPauseMs(utterance(replyTo(t), 8000, BOT_WPM), 8000)));
  const ear = await PhoneEar.open(earPort);
  let expected = Infinity;
  process.on('message', (m: { expect?: number }) => {
    if (typeof m.expect === 'number') expected = m.expect;
  });
  const results: Array<Promise<PhoneLine>> = [];
  let lastLineAt = performance.now();
  ear.onLine((line: EarLine) => {
    lastLineAt = performance.now();
    const toEpoch = (xs: number[]) => xs.map((x) => performance.timeOrigin + x);
    results.push(
      converse({ arrivals: line.arrivals, speak: (pcm) => line.speak(pcm), over: () => performance.now() - line.lastPacketAt > 1500 }, utterances, { patienceMs, replyPausesMs: pauses })
        .catch((e: unknown) => failedLine(turns, String(e)))
        .then((r) => ({ ...r, noise: [], sentOnsets: toEpoch(onsets(line.sent, 300, ONSET_RMS)), heardOnsets: toEpoch(onsets(line.arrivals, 300, ONSET_RMS)) })),
    );
  });
  process.send!({ ready: true });
  await waitFor(() => results.length >= expected || (expected !== Infinity && performance.now() - lastLineAt > 60_000), 3_600_000);
  const lines = await Promise.all(results);
  await ear.close();
  process.send!({ lines });
  process.exit(0);
}

// ---- the bench ----
interface CpuReading {
  at: number;
  worker: number;
  server: number;
  sip: number;
  machine: number;
}

/** The worker's onsets per room (epoch ms): its caller's speech arriving, its own voice leaving. */
interface RoomOnsets {
  in: number[];
  out: number[];
  lastIn: number;
  lastOut: number;
}

interface Batch {
  label: string;
  n: number;
  lines: PhoneLine[];
  /** Calls the API created (201) and what the others got. */
  admitted: number;
  refused: number;
  refusedWithRetryAfter: number;
  otherErrors: string[];
  /** Final status of each admitted call in the API, by status. */
  statuses: Record<string, number>;
  /** Admitted calls not in a terminal status once the worker was idle. */
  lost: number;
  /** Calls that ended bot_hangup after every turn. */
  ok: number;
  fallbacks: number;
  /** CPU over the batch, seconds; call-seconds the worker's slots were busy. */
  cpu: CpuReading;
  callSeconds: number;
  seconds: number;
  /** Mean call length (slot busy), s. */
  meanCallS: number;
  /** Media path, ms: phone → worker, worker → phone. */
  inMs: number[];
  outMs: number[];
  /** Output frame gaps the worker itself saw (its pacing), ms. */
  workerGapMs: number;
  /** The worker's own turns (speech end → first frame sent, its stages). */
  turns: TurnTiming[];
  load: [number, number];
}

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const samplesOf = (b: Batch) => b.lines.flatMap((l) => l.samples);
const maxGap = (b: Batch) => Math.max(0, ...b.lines.flatMap((l) => l.gapsMs));
const impatient = (b: Batch) => b.lines.reduce((s, l) => s + l.impatient, 0);
const missing = (b: Batch) => b.lines.reduce((s, l) => s + l.missing, 0);
/** % of one core per concurrent call. */
const perCall = (cpuS: number, b: Batch) => (b.callSeconds > 0 ? (100 * cpuS) / b.callSeconds : NaN);
const withinSlo = (b: Batch) => pct(samplesOf(b), 95) <= SLO_P95_MS && maxGap(b) <= SLO_GAP_MS && missing(b) === 0 && b.lines.length >= b.admitted && b.ok === b.admitted;

/**
 * Pairs each worker room with the ear line whose onsets it follows best, and returns the delays: phone's
 * utterance sent → worker got it; worker's reply handed over → phone heard it (each within 0–1000 ms).
 */
function mediaDelays(rooms: Map<string, RoomOnsets>, lines: PhoneLine[]): { inMs: number[]; outMs: number[] } {
  const follow = (later: number[], earlier: number[]) => {
    const ds: number[] = [];
    for (const t of later) {
      let best = -1;
      for (const e of earlier) if (e <= t && e > best) best = e;
      if (best >= 0 && t - best <= 1000) ds.push(t - best);
    }
    return ds;
  };
  const inMs: number[] = [];
  const outMs: number[] = [];
  const free = new Set(lines.map((_, i) => i));
  for (const r of rooms.values()) {
    let pick = -1;
    let score = -Infinity;
    for (const i of free) {
      const ds = follow(r.in, lines[i]!.sentOnsets);
      // Most utterances matched, then the tightest.
      const s = ds.length * 10_000 - pct(ds, 50);
      if (ds.length && s > score) [pick, score] = [i, s];
    }
    if (pick < 0) continue;
    free.delete(pick);
    inMs.push(...follow(r.in, lines[pick]!.sentOnsets));
    outMs.push(...follow(lines[pick]!.heardOnsets, r.out));
  }
  return { inMs, outMs };
}

async function bench(): Promise<void> {
  const steps = (process.env.BENCH_STEPS ?? '1,2,4,6,8,10,12,14,16,20').split(',').map(Number);
  const turns = Math.max(2, Number(process.env.BENCH_TURNS ?? 6));
  const staggerMs = Number(process.env.BENCH_STAGGER_MS ?? 700);
  const patienceMs = Number(process.env.BENCH_PATIENCE_MS ?? 5000);
  const offer = process.env.BENCH_OFFER !== '0';
  const cores = cpus().length;
  const startedAt = Date.now();
  console.log(`worker capacity bench (DESIGN §15): SIP calls at the phone's wire, ${new Date().toISOString()}`);
  console.log(machine('start'));
  console.log(
    `settings: steps N = ${steps.join(',')} (LOAD_ADMISSION off) | ${turns} caller turns per call (${script(turns).join(' / ')}) | starts ${staggerMs} ms apart | patience ${patienceMs} ms | SLO p95 ≤ ${SLO_P95_MS} ms at the wire, no reply gap > ${SLO_GAP_MS} ms | voiced frame RMS > ${VOICED_RMS}`,
  );

  console.log(
    "media path: phone→worker = livekit-sip (PCMU decode, Opus encode; its jitter buffer is off: enable_jitter_buffer defaults to false) → livekit-server → rtc-node's receiver (libwebrtc's jitter buffer, Opus decode) → the worker's 20 ms AudioStream frames; worker→phone = our output queue (1 frame ahead) → rtc-node (Opus, 20 ms packets) → livekit-server → livekit-sip (Opus decode; its mixer starts a track once 3 of its 5 frames are buffered, media-sdk's default, no setting) → PCMU RTP",
  );
  const env = await startTestEnv(['mongodb', 'redis', 'minio', 'livekit', 'phone']);
  let backend: Awaited<ReturnType<typeof startBenchBackend>> | null = null;
  let worker: Worker | null = null;
  const redises: Redis[] = [];
  try {
    backend = await startBenchBackend(env, 'worker_bench_capacity', { DIALOUT_RATE_PER_SECOND: '1000', DIALOUT_BURST: '1000' });
    const { base, token, auth } = backend;
    process.env.VP_WORKER_TOKEN = token;
    const admin = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${base}${p}`, { method, headers: { Authorization: auth, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const json = (await res.json().catch(() => null)) as Record<string, any> | null;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
      return json!;
    };
    const botId = (
      await admin('POST', '/api/v1/bots', {
        name: 'capacity offline',
        greeting: GREETING,
        variables: [{ name: 'customer_name', required: true, description: '' }],
        turn_detection: { mode: 'smart' },
        max_call_seconds: 150,
        policy: { intents: INTENTS, fallback: { reply: FALLBACK } },
      })
    ).id as string;
    const apiKey = (await admin('POST', '/api/v1/api-keys', { name: 'bench capacity' })).key as string;
    await admin('POST', '/api/v1/sip/outbound-trunks', { name: 'bench phone', address: env.env.SIP_PHONE_ADDRESS, numbers: [TRUNK_NUMBER] });
    const earPort = Number(env.env.SIP_PHONE_EAR_PORT);
    const lk = env.services.livekit!.processes();
    const pidOf = (name: string): number => {
      const p = lk.find((x: ManagedProcess) => x.name === name);
      if (!p) throw new Error(`no ${name} process in the test environment`);
      return p.pid;
    };
    const [serverPid, sipPid] = [pidOf('livekit-server'), pidOf('livekit-sip')];
    const logger = createLogger('warn');
    process.on('uncaughtException', (err) => console.error('uncaught exception in the bench/worker process:', err));

    // The worker's side of the media path: voiced onsets per room.
    const rooms = new Map<string, RoomOnsets>();
    setMediaProbe({
      onFrame(room, direction, pcm) {
        if (rmsOf(pcm) <= ONSET_RMS) return;
        const at = epochNow();
        let r = rooms.get(room);
        if (!r) rooms.set(room, (r = { in: [], out: [], lastIn: -Infinity, lastOut: -Infinity }));
        if (direction === 'in') {
          if (at - r.lastIn >= 300) r.in.push(at);
          r.lastIn = at;
        } else {
          if (at - r.lastOut >= 300) r.out.push(at);
          r.lastOut = at;
        }
      },
    });

    let frameGaps: number[] = [];
    let turnsSeen: TurnTiming[] = [];
    const startWorker = async (id: string, maxCalls: number, extra: Record<string, string>): Promise<Worker> => {
      const settings = benchWorkerSettings(backend!, env, maxCalls, { WORKER_ID: id, DIALOUT_ENABLED: 'true', RINGING_TIMEOUT_SECONDS: '20', ...extra });
      const [redis, blockingRedis] = [new Redis(settings.REDIS_URL), new Redis(settings.REDIS_URL)];
      redises.push(redis, blockingRedis);
      const w = createWorker({ settings, logger, redis, blockingRedis, dialer: liveKitDialerFromSettings(settings, logger)!, observer: { onFrameGap: (ms) => frameGaps.push(ms), onTurn: (_id, t) => turnsSeen.push(t) } });
      await w.listen(0, '127.0.0.1');
      return w;
    };
    const cpuNow = async (w: Worker): Promise<CpuReading> => {
      const own = process.cpuUsage();
      return {
        at: performance.now(),
        // The bench's process is the worker's (rtc-node included); the phone is a child of its own, outside the spawner's tree.
        worker: (own.user + own.system) / 1e6 + (await processTreeCpuSeconds(w.spawner.pid === undefined ? [] : [w.spawner.pid])),
        server: procCpuSeconds(serverPid).own,
        sip: procCpuSeconds(sipPid).own,
        machine: machineBusySeconds(),
      };
    };

    /** Dials `count` calls (one every `everyMs`), has the phone talk on each, and measures the batch. */
    const batch = async (w: Worker, label: string, count: number, everyMs: number): Promise<Batch> => {
      await waitFor(() => w.slots.active === 0, 60_000);
      await sleep(2000); // the previous batch's rooms and sockets settle
      rooms.clear();
      frameGaps = [];
      turnsSeen = [];
      const load0 = loadavg()[0]!;
      const ids: string[] = [];
      let refused = 0;
      let refusedWithRetryAfter = 0;
      const otherErrors: string[] = [];
      let callSeconds = 0;
      let sampledAt = performance.now();
      const sampler = setInterval(() => {
        const now = performance.now();
        callSeconds += (w.slots.active * (now - sampledAt)) / 1000;
        sampledAt = now;
      }, 200);
      const start = await cpuNow(w);
      const { lines } = await forkChild<{ lines: PhoneLine[] }>(here, ['--phone', String(earPort), String(turns), String(patienceMs)], (m, child) => {
        if (!m.ready) return;
        // The ear is listening: dial, paced as a dialler would.
        void (async () => {
          const t0 = performance.now();
          await Promise.all(
            Array.from({ length: count }, async (_, i) => {
              await sleep(Math.max(0, t0 + i * everyMs - performance.now()));
              const res = await fetch(`${base}/api/v1/sip/dialout`, {
                method: 'POST',
                headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
                body: JSON.stringify({ bot_id: botId, to_number: listenNumber(99), variables: { customer_name: 'Sam' } }),
              }).catch((e: unknown) => e as Error);
              if (res instanceof Error) return void otherErrors.push(res.message);
              const body = (await res.json().catch(() => null)) as { call_id?: string; error?: { code?: string } } | null;
              if (res.status === 201 && body?.call_id) ids.push(body.call_id);
              else if (res.status === 503) {
                refused++;
                if (res.headers.get('retry-after')) refusedWithRetryAfter++;
              } else otherErrors.push(`${res.status} ${JSON.stringify(body)}`);
            }),
          );
          child.send({ expect: ids.length });
        })();
      });
      await waitFor(() => w.slots.active === 0, 120_000);
      clearInterval(sampler);
      const end = await cpuNow(w);
      const statuses: Record<string, number> = {};
      let ok = 0;
      let fallbacks = 0;
      let lost = 0;
      for (const id of ids) {
        // The worker's last events reach the backend through its outbox: a call just freed may be final a moment later.
        let c = await admin('GET', `/api/v1/calls/${id}`);
        for (const until = performance.now() + 30_000; !TERMINAL_CALL_STATUSES.includes(c.status as CallStatus) && performance.now() < until; ) {
          await sleep(250);
          c = await admin('GET', `/api/v1/calls/${id}`);
        }
        statuses[c.status] = (statuses[c.status] ?? 0) + 1;
        if (!TERMINAL_CALL_STATUSES.includes(c.status as CallStatus)) lost++;
        if (c.status === 'completed' && c.end_reason === 'bot_hangup') ok++;
        fallbacks += (c.transcript ?? []).filter((e: any) => (e.role === 'bot' || e.role === 'assistant') && e.text === FALLBACK).length;
      }
      const cpu: CpuReading = { at: end.at - start.at, worker: end.worker - start.worker, server: end.server - start.server, sip: end.sip - start.sip, machine: end.machine - start.machine };
      const { inMs, outMs } = mediaDelays(rooms, lines);
      return {
        label,
        n: count,
        lines,
        admitted: ids.length,
        refused,
        refusedWithRetryAfter,
        otherErrors,
        statuses,
        lost,
        ok,
        fallbacks,
        cpu,
        callSeconds,
        seconds: cpu.at / 1000,
        meanCallS: ids.length ? callSeconds / ids.length : NaN,
        inMs,
        outMs,
        workerGapMs: Math.max(0, ...frameGaps),
        turns: turnsSeen,
        load: [load0, loadavg()[0]!],
      };
    };

    const describe = (b: Batch) =>
      [
        `${b.label.padEnd(14)} wire p50 ${f0(pct(samplesOf(b), 50))} p95 ${f0(pct(samplesOf(b), 95))} ms (${samplesOf(b).length} turns, ${missing(b)} unanswered)`,
        `max reply gap ${f0(maxGap(b))} ms (worker's own output gap max ${f0(b.workerGapMs)})`,
        `impatient callers ${impatient(b)} turns (no reply within ${patienceMs / 1000} s) on ${b.lines.filter((l) => l.impatient > 0).length} calls`,
        `calls ok ${b.ok}/${b.admitted}, fallback replies ${b.fallbacks}`,
        `CPU % of a core per call: worker ${f1(perCall(b.cpu.worker, b))}, livekit-server ${f1(perCall(b.cpu.server, b))}, livekit-sip ${f1(perCall(b.cpu.sip, b))} (${f1(b.callSeconds)} call-s over ${f1(b.seconds)} s; worker ${f1((60 * b.cpu.worker) / Math.max(1e-9, b.callSeconds))} CPU-s per call-minute)`,
        `machine busy ${f0((100 * b.cpu.machine) / b.seconds)}% of ${cores * 100}%, of it others ${f0((100 * (b.cpu.machine - b.cpu.worker - b.cpu.server - b.cpu.sip)) / b.seconds)}% | loadavg ${b.load[0].toFixed(2)} → ${b.load[1].toFixed(2)}`,
        `worker's own turns (speech end → first frame handed over) p50 ${f0(pct(b.turns.map((t) => t.latencyMs), 50))} p95 ${f0(pct(b.turns.map((t) => t.latencyMs), 95))} ms: end-of-turn silence p95 ${f0(pct(b.turns.map((t) => t.silenceMs), 95))}, providers p95 ${f0(pct(b.turns.map((t) => t.providerMs), 95))}, queues/loop p95 ${f0(pct(b.turns.map((t) => t.overheadMs), 95))}`,
        `media path phone→worker p50 ${f0(pct(b.inMs, 50))} p95 ${f0(pct(b.inMs, 95))} ms (${b.inMs.length}), worker→phone p50 ${f0(pct(b.outMs, 50))} p95 ${f0(pct(b.outMs, 95))} ms (${b.outMs.length})`,
        `turns ended by the longest silence ${slowTurns(b)}`,
      ].join(' | ');
    // The turns whose words were not a whole phrase at any look (what the p95's end-of-turn silence is made of).
    const slowTurns = (b: Batch) => {
      const slow = b.turns.filter((t) => t.silenceMs >= LONGEST_SILENCE_MS);
      const by = new Map<string, number>();
      for (const t of slow) by.set(t.userText, (by.get(t.userText) ?? 0) + 1);
      return `${slow.length} of ${b.turns.length}${slow.length ? ` (${[...by].map(([text, n]) => `"${text}" ×${n}`).join(', ')})` : ''}`;
    };
    const notes = (b: Batch) => {
      const xs = [...b.otherErrors, ...b.lines.flatMap((l) => (l.error ? [l.error] : []))];
      if (b.lines.length < b.admitted) xs.push(`${b.admitted - b.lines.length} admitted calls never reached the ear`);
      if (xs.length) console.log(`  notes: ${[...new Set(xs)].slice(0, 5).join('; ')}`);
    };

    // 1. Steps, admission off.
    let w = await startWorker('bench-capacity-steps', Math.max(...steps) * 2, { LOAD_ADMISSION: 'false' });
    worker = w;
    const results: Batch[] = [];
    let best: Batch | null = null;
    for (const n of steps) {
      const b = await batch(w, `N=${n}`, n, staggerMs);
      results.push(b);
      console.log(describe(b));
      notes(b);
      if (!withinSlo(b)) {
        // BENCH_KEEP_STEPPING=1: the rest of the steps too, to see how the latency grows past the SLO.
        if (process.env.BENCH_KEEP_STEPPING === '1') {
          console.log(`  SLO broken at N=${n}: stepping on (BENCH_KEEP_STEPPING)`);
          continue;
        }
        console.log(`  SLO broken at N=${n}: stepping stops`);
        break;
      }
      best = b;
    }
    await w.close();
    worker = null;
    const capacity = best?.n ?? 0;
    const callCostCores = best ? perCall(best.cpu.worker, best) / 100 : NaN;
    console.log(
      `\ncapacity within the SLO: ${capacity} concurrent calls on ${cores} cores = ${(capacity / cores).toFixed(1)} calls per core (everything on this machine); worker CPU per call ${f1(100 * callCostCores)}% of a core → CALL_CPU_ESTIMATE_CORES=${Number.isFinite(callCostCores) ? callCostCores.toFixed(3) : '–'}`,
    );

    // 2. Twice that, admission on.
    let offered: Batch | null = null;
    let offerLine = '';
    if (offer && capacity > 0) {
      const estimate = Math.min(16, Math.max(0.005, callCostCores));
      const meanCallS = best!.meanCallS;
      const seconds = Number(process.env.BENCH_OFFER_SECONDS ?? Math.max(30, Math.round(meanCallS)));
      const rate = Number(process.env.BENCH_OFFER_RATE ?? (2 * capacity) / meanCallS);
      const count = Math.max(1, Math.round(rate * seconds));
      offerLine = `${count} dial-outs at ${rate.toFixed(2)}/s for ${seconds} s (2 × ${capacity} calls ÷ ${f1(meanCallS)} s mean call), LOAD_ADMISSION on, LOAD_THRESHOLD ${process.env.LOAD_THRESHOLD ?? 'default (0.7)'}, CPU_ALLOWANCE_CORES ${process.env.CPU_ALLOWANCE_CORES ?? 'default (cgroup, else the cores)'}, CALL_CPU_ESTIMATE_CORES=${estimate.toFixed(3)}, LOAD_CPU_PRESSURE ${process.env.LOAD_CPU_PRESSURE ?? 'true'} (the whole stack shares these cores)`;
      console.log(`\noffered load: ${offerLine}`);
      // LOAD_THRESHOLD and CPU_ALLOWANCE_CORES from the bench's environment when set (else the defaults).
      const passed = Object.fromEntries(['LOAD_THRESHOLD', 'CPU_ALLOWANCE_CORES'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
      // The slot count far above it: load alone admits.
      w = await startWorker('bench-capacity-admission', Math.max(4 * capacity, 20), { LOAD_ADMISSION: 'true', CALL_CPU_ESTIMATE_CORES: estimate.toFixed(3), LOAD_CPU_PRESSURE: process.env.LOAD_CPU_PRESSURE ?? 'true', ...passed });
      worker = w;
      await sleep(5000); // its load monitor learns the idle baseline
      offered = await batch(w, '2× admission', count, 1000 / rate);
      console.log(describe(offered));
      notes(offered);
      console.log(
        `  dial-outs ${offered.n}: admitted ${offered.admitted} (201), refused ${offered.refused} (503, ${offered.refusedWithRetryAfter} with Retry-After), other ${offered.otherErrors.length} | final statuses ${JSON.stringify(offered.statuses)}, not terminal ${offered.lost}`,
      );
      await w.close();
      worker = null;
    }

    console.log(`\n${machine('end')} | run took ${((Date.now() - startedAt) / 60000).toFixed(1)} min`);
    console.log(
      `\nCapacity at the phone's wire (SIP through livekit-sip, offline providers, ${turns}-turn calls, everything on this ${cores}-core machine): SLO p95 ≤ ${SLO_P95_MS} ms voice-to-voice, no reply gap > ${SLO_GAP_MS} ms. CPU in % of one core per concurrent call.\n`,
    );
    console.log('| run | calls | p50 ms | p95 ms | max gap ms | impatient turns | calls ok | worker CPU % | livekit-server % | livekit-sip % | phone→worker p50/p95 ms | worker→phone p50/p95 ms | within SLO |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
    for (const b of [...results, ...(offered ? [offered] : [])]) {
      const calls = b === offered ? `${b.admitted} admitted / ${b.refused} refused of ${b.n}` : String(b.n);
      console.log(
        `| ${b.label} | ${calls} | ${f0(pct(samplesOf(b), 50))} | ${f0(pct(samplesOf(b), 95))} | ${f0(maxGap(b))} | ${impatient(b)} | ${b.ok}/${b.admitted} | ${f1(perCall(b.cpu.worker, b))} | ${f1(perCall(b.cpu.server, b))} | ${f1(perCall(b.cpu.sip, b))} | ${f0(pct(b.inMs, 50))} / ${f0(pct(b.inMs, 95))} | ${f0(pct(b.outMs, 50))} / ${f0(pct(b.outMs, 95))} | ${withinSlo(b) ? 'yes' : 'no'} |`,
      );
    }
    console.log(`\nCalls per core at the SLO: ${(capacity / cores).toFixed(1)} (${capacity} calls ÷ ${cores} cores); a worker's CALL_CPU_ESTIMATE_CORES: ${Number.isFinite(callCostCores) ? callCostCores.toFixed(3) : '–'}.${offerLine ? ` Offered: ${offerLine}.` : ''}`);
  } finally {
    setMediaProbe(null);
    await worker?.close().catch(() => undefined);
    for (const r of redises) r.disconnect();
    await dispose().catch(() => undefined);
    await backend?.stop();
    await env.stop();
  }
  process.exit(0);
}

const [, , role, a, b, c] = process.argv;
if (role === '--phone') void phoneMain(Number(a), Number(b), Number(c));
else void bench();
