// `npm run bench:latency -w worker` (DESIGN §11): voice-to-voice latency AT THE PHONE'S EAR, from the end of
// the caller's speech (the send time of the last voiced 20 ms packet the phone sent) to the arrival of the
// first voiced packet of the bot's reply. One run measures, for each setting:
//  - path: SIP (the test phone: sipp answers a listening number with its media at the ear's port; the ear
//    (tests/infra ear.ts) speaks PCMU RTP back and timestamps every packet it hears) and WebSocket
//    (TestCaller-style: 16 kHz PCM frames both ways);
//  - N concurrent calls (BENCH_CALLS, default "1,10"), BENCH_TURNS caller turns each (default 10, at least 10
//    to count; the last says "stop calling" and the bot hangs up);
//  - providers (BENCH_PROVIDERS, default "offline,cloud"): offline = scripted LLM with a policy, pocketsphinx,
//    espeak-ng; cloud = the stand-ins (testing/cloud.ts, in a child process): OpenAI chat + OpenAI speech +
//    Deepgram live, with FIXED delays (LLM first token 250 ms, TTS first byte 120 ms, STT final 150 ms after
//    Finalize), which are subtracted for "the platform's own part";
//  - turn_detection mode (BENCH_MODES, default "fixed,smart"): fixed 700 ms, or smart (min 250, max 700).
// The callers (phone side and WebSocket side) run in child processes, so their CPU and timers are not the
// worker's. Prints p50/p95 per setting, the worker's own per-turn breakdown (observer.onTurn), the voiced
// threshold and the line noise measured, the machine's load at start and end, and a markdown table.
// Nothing is asserted.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { dispose } from '@livekit/rtc-node';
import { listenNumber, PhoneEar, startTestEnv, type EarLine } from '@voice-platform/tests/infra';
import { createWorker, type Worker } from '#worker/app.js';
import {
  benchWorkerSettings,
  converse,
  failedLine,
  FALLBACK,
  forkChild,
  GREETING,
  INTENTS,
  machine,
  pct,
  rmsOf,
  script,
  startBenchBackend,
  utterance,
  VOICED_RMS,
  waitFor,
  type LineResult,
} from './bench-lib.js';
import { bytesToPcm, pcmToBytes } from '#worker/audio/pcm.js';
import { createLogger } from '#worker/core/logger.js';
import { liveKitDialerFromSettings } from '#worker/transports/livekit.js';
import type { TurnTiming } from '#worker/transports/output.js';
import { withTestCallToken } from '../testing/client.js';
import { startCloudStandIn } from '../testing/cloud.js';

const here = fileURLToPath(import.meta.url);

/** The stand-ins' declared delays, ms. */
const DELAYS = { llmFirstToken: 250, ttsFirstByte: 120, sttFinal: 150 };
const DECLARED_MS = DELAYS.llmFirstToken + DELAYS.ttsFirstByte + DELAYS.sttFinal;
const TRUNK_NUMBER = '+15550001111';
/** Said into the greeting of every call: a barge-in (not an acknowledgement; its intent answers "Of course."). */
const INTERJECTION = 'hold on';

type Path = 'SIP' | 'WS';
type Providers = 'offline' | 'cloud';
type Mode = 'fixed' | 'smart';
const TURN_DETECTION: Record<Mode, Record<string, unknown>> = {
  fixed: { mode: 'fixed', end_of_turn_silence_ms: 700 },
  smart: { mode: 'smart' },
};

// ---- the caller's side (child processes; the conversation itself is bench-lib's) ----
/** The phone's side of N SIP calls: the ear, one conversation per line. Sends 'ready', then the results. */
async function phoneMain(earPort: number, n: number, turns: number): Promise<void> {
  const utterances = script(turns).map((t) => utterance(t, 8000));
  const interjection = utterance(INTERJECTION, 8000);
  const ear = await PhoneEar.open(earPort);
  const results: Array<Promise<LineResult>> = [];
  ear.onLine((line: EarLine) => {
    if (results.length >= n) return;
    results.push(
      converse(
        {
          arrivals: line.arrivals,
          speak: (pcm) => line.speak(pcm),
          over: () => performance.now() - line.lastPacketAt > 1500,
        },
        utterances,
        { interjection },
      ).catch((e: unknown) => failedLine(turns, String(e))),
    );
  });
  process.send!({ ready: true });
  // Every line's conversation, once all N lines came (or 60 s without a new one).
  await waitFor(() => results.length >= n, 60_000);
  const lines = await Promise.all(results);
  await ear.close();
  process.send!({ lines });
  process.exit(0);
}

/** N WebSocket calls; each a continuous 20 ms stream of 16 kHz frames (silence between utterances). */
async function wsMain(url: string, n: number, turns: number): Promise<void> {
  const utterances = script(turns).map((t) => utterance(t, 16000));
  const interjection = utterance(INTERJECTION, 16000);
  const one = async (i: number): Promise<LineResult> => {
    await sleep((i * 97) % 1000);
    const ws = new WebSocket(withTestCallToken(url));
    const arrivals: Array<{ at: number; rms: number }> = [];
    const messages: Array<{ type: string; [k: string]: unknown }> = [];
    let closed = false;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const at = performance.now();
      if (isBinary) {
        const pcm = bytesToPcm(data);
        arrivals.push({ at, rms: rmsOf(pcm) });
      } else messages.push(JSON.parse(data.toString()));
    });
    ws.on('close', () => (closed = true));
    ws.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'start', variables: { customer_name: 'Sam' } }));
    // The paced sender: queued speech, else silence, every 20 ms.
    const queue: Array<{ pcm: Int16Array; sent: (at: number) => void }> = [];
    let offset = 0;
    const silent = new Int16Array(320);
    const t0 = performance.now();
    let tick = 0;
    let timer: NodeJS.Timeout | null = null;
    const send = () => {
      if (closed || ws.readyState !== WebSocket.OPEN) return;
      const head = queue[0];
      let frame = silent;
      let done: (() => void) | null = null;
      if (head) {
        frame = new Int16Array(320);
        frame.set(head.pcm.subarray(offset, offset + 320));
        offset += 320;
        if (offset >= head.pcm.length) {
          queue.shift();
          offset = 0;
          done = () => head.sent(performance.now());
        }
      }
      ws.send(pcmToBytes(frame), () => done?.());
      tick++;
      timer = setTimeout(send, Math.max(0, t0 + tick * 20 - performance.now()));
    };
    send();
    try {
      const r = await converse(
        {
          arrivals,
          speak: (pcm) => new Promise<number>((resolve) => (closed ? resolve(performance.now()) : queue.push({ pcm, sent: resolve }))),
          over: () => closed,
        },
        utterances,
        { interjection },
      );
      r.ended = r.ended && messages.some((m) => m.type === 'ended' && m.reason === 'bot_hangup');
      r.fallbacks = messages.filter((m) => m.type === 'transcript' && m.role === 'bot' && m.text === FALLBACK).length;
      return r;
    } finally {
      if (timer) clearTimeout(timer);
      if (!closed) ws.close();
    }
  };
  const lines = await Promise.all(Array.from({ length: n }, (_, i) => one(i).catch((e: unknown) => failedLine(turns, String(e)))));
  process.send!({ lines });
  process.exit(0);
}

/** The cloud stand-ins with the declared delays, answering from the utterance heard; sends its URL. */
async function cloudMain(turns: number): Promise<void> {
  const cloud = await startCloudStandIn();
  cloud.chatFirstTokenDelayMs = DELAYS.llmFirstToken;
  cloud.ttsFirstByteDelayMs = DELAYS.ttsFirstByte;
  cloud.sttFinalDelayMs = DELAYS.sttFinal;
  cloud.cacheSpeech = true;
  // Each Deepgram stream (one per call) hears the caller's script in order.
  cloud.deepgramTranscripts = [INTERJECTION, ...script(turns)];
  cloud.chatReplyFor = (req) => {
    const said = [...req.messages].reverse().find((m) => m?.role === 'user')?.content;
    const intent = INTENTS.find((i) => typeof said === 'string' && i.examples.includes(said.trim().toLowerCase()));
    return intent ? { text: intent.reply, endCall: intent.end_call ?? false } : { text: FALLBACK };
  };
  // Every reply synthesised once before the bench (so TTS first byte is the declared delay, not espeak's time).
  for (const text of [FALLBACK, ...INTENTS.map((i) => i.reply), GREETING.replace('{{customer_name}}', 'Sam')]) {
    await fetch(`${cloud.url}/v1/audio/speech`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'tts-1', input: text, voice: 'alloy', response_format: 'pcm' }) }).then((r) => r.arrayBuffer());
  }
  cloud.requests.length = 0;
  process.send!({ url: cloud.url });
}

// ---- the bench ----
interface Setting {
  path: Path;
  n: number;
  providers: Providers;
  mode: Mode;
  lines: LineResult[];
  /** Calls that ended as planned (bot_hangup after the last turn, every turn answered). */
  ok: number;
  fallbacks: number;
  worker: TurnTiming[];
  notes: string[];
}

async function bench(): Promise<void> {
  const sizes = (process.env.BENCH_CALLS ?? '1,10').split(',').map(Number);
  const modes = (process.env.BENCH_MODES ?? 'fixed,smart').split(',') as Mode[];
  const providerSets = (process.env.BENCH_PROVIDERS ?? 'offline,cloud').split(',') as Providers[];
  const paths = (process.env.BENCH_PATHS ?? 'sip,ws').split(',').map((p) => p.toUpperCase()) as Path[];
  const turns = Math.max(2, Number(process.env.BENCH_TURNS ?? 10));
  const startedAt = Date.now();
  console.log(`worker latency bench (DESIGN §11): voice-to-voice at the phone's ear, ${new Date().toISOString()}`);
  console.log(machine('start'));
  console.log(
    `settings: paths ${paths.join(',')} | N = ${sizes.join(',')} | providers ${providerSets.join(',')} | modes ${modes.map((m) => `${m} ${JSON.stringify(TURN_DETECTION[m])}`).join(', ')} | ${turns} caller turns per call (${script(turns).join(' / ')})`,
  );
  console.log(
    `cloud stand-ins (OpenAI chat + OpenAI speech + Deepgram live, in a child process) declared delays: LLM first token ${DELAYS.llmFirstToken} ms, TTS first byte ${DELAYS.ttsFirstByte} ms, STT final ${DELAYS.sttFinal} ms after Finalize = ${DECLARED_MS} ms subtracted for the platform's part`,
  );
  console.log(`voiced frame: RMS > ${VOICED_RMS} (16-bit; SIP: decoded µ-law 8 kHz, WS: 16 kHz)`);

  const env = await startTestEnv(['mongodb', 'redis', 'minio', 'livekit', 'phone']);
  let backend: Awaited<ReturnType<typeof startBenchBackend>> | null = null;
  let worker: Worker | null = null;
  const redises: Redis[] = [];
  let cloudChild: ReturnType<typeof fork> | null = null;
  try {
    backend = await startBenchBackend(env, 'worker_bench_latency', { DIALOUT_RATE_PER_SECOND: '1000', DIALOUT_BURST: '1000' });
    const { base, token, auth } = backend;
    process.env.VP_WORKER_TOKEN = token;
    const admin = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${base}${p}`, { method, headers: { Authorization: auth, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const json = (await res.json().catch(() => null)) as Record<string, any> | null;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
      return json!;
    };
    // The cloud stand-ins' child.
    const cloudUrl = providerSets.includes('cloud')
      ? await new Promise<string>((resolve, reject) => {
          cloudChild = fork(here, ['--cloud', String(turns)], { stdio: 'inherit' });
          cloudChild.once('message', (m: any) => resolve(m.url));
          cloudChild.once('exit', (code) => reject(new Error(`cloud stand-in exited ${code}`)));
        })
      : 'http://127.0.0.1:9';

    const variables = [
      { name: 'customer_name', required: true, description: '' },
      { name: 'amount_due', required: false, description: '' },
    ];
    const bots = new Map<string, string>();
    for (const providers of providerSets)
      for (const mode of modes) {
        const common = { name: `latency ${providers} ${mode}`, greeting: GREETING, variables, turn_detection: TURN_DETECTION[mode], max_call_seconds: 150 };
        const body =
          providers === 'offline'
            ? { ...common, policy: { intents: INTENTS, fallback: { reply: FALLBACK } } }
            : {
                ...common,
                prompt: 'You are a payment reminder. Answer in one short sentence.',
                llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0, base_url: `${cloudUrl}/v1` },
                stt: { provider: 'deepgram', model: 'nova-2', language: 'en-US' },
                voice: { provider: 'openai', voice_id: 'alloy', speed: 1 },
              };
        bots.set(`${providers} ${mode}`, (await admin('POST', '/api/v1/bots', body)).id as string);
      }
    const apiKey = (await admin('POST', '/api/v1/api-keys', { name: 'bench latency' })).key as string;
    await admin('POST', '/api/v1/sip/outbound-trunks', { name: 'bench phone', address: env.env.SIP_PHONE_ADDRESS, numbers: [TRUNK_NUMBER] });

    const settings = benchWorkerSettings(backend, env, Math.max(...sizes) * 2, {
      WORKER_ID: 'bench-latency-worker',
      DIALOUT_ENABLED: 'true',
      RINGING_TIMEOUT_SECONDS: '20',
      // The callers send `start` at once; on a busy machine it may take longer than the bench default's 300 ms.
      WS_START_TIMEOUT_MS: '5000',
      OPENAI_API_KEY: 'sk-local',
      OPENAI_BASE_URL: `${cloudUrl}/v1`,
      DEEPGRAM_API_KEY: 'dg-local',
      DEEPGRAM_URL: `${cloudUrl.replace('http', 'ws')}/v1/listen`,
    });
    const logger = createLogger('warn');
    const [redis, blockingRedis] = [new Redis(settings.REDIS_URL), new Redis(settings.REDIS_URL)];
    redises.push(redis, blockingRedis);
    let turnsSeen: TurnTiming[] = [];
    process.on('uncaughtException', (err) => console.error('uncaught exception in the bench/worker process:', err));
    const w = createWorker({
      settings,
      logger,
      redis,
      blockingRedis,
      dialer: liveKitDialerFromSettings(settings, logger)!,
      observer: { onTurn: (_id, t) => turnsSeen.push(t) },
    });
    worker = w;
    const port = await w.listen(0, '127.0.0.1');
    const earPort = Number(env.env.SIP_PHONE_EAR_PORT);

    const run = async (path: Path, n: number, providers: Providers, mode: Mode): Promise<Setting> => {
      await sleep(2000); // the previous batch's rooms and sockets settle
      turnsSeen = [];
      const botId = bots.get(`${providers} ${mode}`)!;
      const notes: string[] = [];
      let lines: LineResult[];
      let ok = 0;
      let fallbacks = 0;
      if (path === 'WS') {
        ({ lines } = await forkChild<{ lines: LineResult[] }>(here, ['--ws', `ws://127.0.0.1:${port}/ws/${botId}`, String(n), String(turns)]));
        fallbacks = lines.reduce((s, l) => s + (l.fallbacks ?? 0), 0);
        ok = lines.filter((l) => l.ended && l.missing === 0 && !l.error).length;
        await waitFor(() => w.slots.active === 0, 30_000);
      } else {
        const ids: string[] = [];
        ({ lines } = await forkChild<{ lines: LineResult[] }>(here, ['--phone', String(earPort), String(n), String(turns)], (m) => {
          if (!m.ready) return;
          // The phone's ear is listening: dial the N calls (a little staggered, as a dialler would).
          void Promise.all(
            Array.from({ length: n }, async (_, i) => {
              await sleep((i * 97) % 1000);
              const res = await fetch(`${base}/api/v1/sip/dialout`, {
                method: 'POST',
                headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
                body: JSON.stringify({ bot_id: botId, to_number: listenNumber(99), variables: { customer_name: 'Sam' } }),
              });
              const body = (await res.json().catch(() => null)) as { call_id?: string } | null;
              if (res.status === 201 && body?.call_id) ids.push(body.call_id);
              else notes.push(`dial-out refused: ${res.status} ${JSON.stringify(body)}`);
            }),
          );
        }));
        await waitFor(() => w.slots.active === 0, 30_000);
        for (const id of ids) {
          const c = await admin('GET', `/api/v1/calls/${id}`);
          const said = (c.transcript ?? []).filter((e: any) => e.role === 'bot' || e.role === 'assistant').map((e: any) => e.text as string);
          fallbacks += said.filter((t: string) => t === FALLBACK).length;
          if (c.status === 'completed' && c.end_reason === 'bot_hangup') ok++;
          else notes.push(`call ${c.status}/${c.end_reason ?? '-'}, the bot heard: ${(c.transcript ?? []).filter((e: any) => e.role === 'user').map((e: any) => e.text as string).join(' | ')}`);
        }
        ok = Math.min(ok, lines.filter((l) => l.missing === 0 && !l.error).length);
      }
      for (const l of lines) if (l.error) notes.push(l.error);
      return { path, n, providers, mode, lines, ok, fallbacks, worker: turnsSeen, notes };
    };

    const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
    const samplesOf = (s: Setting) => s.lines.flatMap((l) => l.samples);
    const bargeIns = (s: Setting) => s.lines.flatMap((l) => (l.bargeInMs === undefined ? [] : [l.bargeInMs]));
    const platform = (s: Setting) => (s.providers === 'cloud' ? samplesOf(s).map((x) => x - DECLARED_MS) : []);
    const results: Setting[] = [];
    for (const providers of providerSets)
      for (const mode of modes)
        for (const n of sizes)
          for (const path of paths) {
            const s = await run(path, n, providers, mode);
            results.push(s);
            const xs = samplesOf(s);
            const wk = (k: 'latencyMs' | 'silenceMs' | 'providerMs' | 'overheadMs', p: number) => f0(pct(s.worker.map((t) => t[k]), p));
            const noise = s.lines.flatMap((l) => l.noise);
            console.log(
              [
                `${path.padEnd(3)} N=${String(n).padStart(2)} ${providers.padEnd(7)} ${mode.padEnd(5)}`,
                `latency p50 ${f0(pct(xs, 50))} ms p95 ${f0(pct(xs, 95))} ms (${xs.length} turns, ${s.lines.reduce((a, l) => a + l.missing, 0)} unanswered, ${s.lines.reduce((a, l) => a + l.overlapped, 0)} overlapped)`,
                providers === 'cloud' ? `platform part p50 ${f0(pct(platform(s), 50))} p95 ${f0(pct(platform(s), 95))} ms` : 'platform part: – (offline: see worker)',
                `worker (onTurn, ${s.worker.length} turns) latency p50 ${wk('latencyMs', 50)} / silence ${wk('silenceMs', 50)} / providers ${wk('providerMs', 50)} / overhead ${wk('overheadMs', 50)} ms, overhead p95 ${wk('overheadMs', 95)} ms`,
                `calls ok ${s.ok}/${n}, fallback replies ${s.fallbacks}`,
                `barge-in ("${INTERJECTION}" into the greeting): the bot silent at the ear after p50 ${f0(pct(bargeIns(s), 50))} p95 ${f0(pct(bargeIns(s), 95))} ms (${bargeIns(s).length} calls)`,
                `line noise while the bot is silent RMS p99 ${f0(pct(noise, 99))} max ${f0(Math.max(0, ...noise))}`,
              ].join(' | '),
            );
            if (s.notes.length) console.log(`  notes: ${[...new Set(s.notes)].slice(0, 5).join('; ')}`);
            const slow = slowTurn(s.worker);
            if (slow) console.log(`  one slow turn (the worker's p95, ${s.worker.length} turns): ${breakdown(slow)}; the ear's p95 − the worker's p95: ${f0(pct(xs, 95) - slow.latencyMs)} ms (the line and the caller's side)`);
          }
    await w.close();
    worker = null;

    console.log(`\n${machine('end')} | run took ${((Date.now() - startedAt) / 60000).toFixed(1)} min`);
    console.log(`\nVoice-to-voice latency at the phone's ear (end of the caller's last voiced 20 ms → first voiced reply frame; RMS > ${VOICED_RMS}); platform part = latency − ${DECLARED_MS} ms declared stand-in delays (LLM first token ${DELAYS.llmFirstToken}, TTS first byte ${DELAYS.ttsFirstByte}, STT final ${DELAYS.sttFinal}); it includes the end-of-turn silence.\n`);
    console.log('| path | N | providers | turn_detection | p50 ms | p95 ms | platform part p95 ms | worker overhead p95 ms | turns measured | fallback replies | calls ok | barge-in: bot silent after p50 / p95 ms |');
    console.log('|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const s of results) {
      const xs = samplesOf(s);
      console.log(
        `| ${s.path} | ${s.n} | ${s.providers} | ${s.mode} | ${f0(pct(xs, 50))} | ${f0(pct(xs, 95))} | ${s.providers === 'cloud' ? f0(pct(platform(s), 95)) : '–'} | ${f0(pct(s.worker.map((t) => t.overheadMs), 95))} | ${xs.length} | ${s.fallbacks} | ${s.ok}/${s.n} | ${f0(pct(bargeIns(s), 50))} / ${f0(pct(bargeIns(s), 95))} |`,
      );
    }
  } finally {
    await worker?.close().catch(() => undefined);
    (cloudChild as ReturnType<typeof fork> | null)?.kill();
    for (const r of redises) r.disconnect();
    await dispose().catch(() => undefined);
    await backend?.stop();
    await env.stop();
  }
  process.exit(0);
}

/** The worker's turn at its p95 latency: the slow turn whose stages the bench prints. */
function slowTurn(turns: TurnTiming[]): TurnTiming | undefined {
  if (turns.length === 0) return undefined;
  const sorted = [...turns].sort((x, y) => x.latencyMs - y.latencyMs);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
}

/** Where one turn's time went, in the worker: speech end → the turn's end → each stage after it → the first frame sent. */
function breakdown(t: TurnTiming): string {
  const ms = (x: number) => `${Math.round(x)}`;
  const early = t.stages.filter((x) => x.beforeTurnEnd);
  const after = t.stages.filter((x) => !x.beforeTurnEnd);
  const rest = t.latencyMs - t.turnEndMs - after.reduce((a, x) => a + x.ms, 0);
  return [
    `${ms(t.latencyMs)} ms from the caller's speech end to the first frame sent`,
    `turn end decided at ${ms(t.turnEndMs)} (silence ${ms(t.silenceMs)})`,
    `after it: ${after.length ? after.map((x) => `${x.stage} ${x.provider} ${ms(x.ms)}`).join(', ') : 'no provider work (a prepared reply)'}`,
    `queues, pacing and event loop ${ms(rest)}`,
    early.length ? `before the turn end: ${early.map((x) => `${x.stage} ${x.provider} ${ms(x.ms)}`).join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

const [, , role, a, b, c] = process.argv;
if (role === '--phone') void phoneMain(Number(a), Number(b), Number(c));
else if (role === '--ws') void wsMain(a!, Number(b), Number(c));
else if (role === '--cloud') void cloudMain(Number(a));
else void bench();
