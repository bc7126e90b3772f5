// `npm run bench:sip -w worker`: N concurrent SIP calls (default 1, 10, 30) to a real phone (sipp)
// through livekit-sip and livekit-server, beside N WebSocket calls on the same worker in the same run
// (the baseline; bench.ts's caller script). Real FerretDB, Redis, MinIO, LiveKit, the real backend and
// its dial-out API; the worker runs in this process; offline providers; real-time speech.
//
// A SIP call: POST /api/v1/sip/dialout → the worker claims it, joins the call's room and dials the phone;
// the phone answers, hears the greeting, says its phrase (VP_PHONE_PHRASE, default here "stop calling")
// 5 s after it answered, and the bot says goodbye and hangs up. A WebSocket call: greeting, "how much" →
// reply, "stop calling" → the bot hangs up.
//
// With BENCH_TOOL (default on; BENCH_TOOL=0 leaves it out) each N also runs SIP calls whose bot acts on the
// phrase with one HTTP tool (a receiver in this process that answers at once, as a CRM would), then speaks a
// value from its answer: the added latency of a tool round is that turn's latency minus the tool's own time
// (the call record's action duration), beside the plain SIP turn of the same N.
//
// Prints, per N and path: completed calls (and what happened to the others), CPU per call (as % of one
// core per concurrent call: CPU seconds over the run ÷ call-seconds the worker's slots were busy; worker process incl. rtc-node, its spawner, the espeak-ng/pocketsphinx processes,
// and for SIP livekit-server and livekit-sip separately), RSS per call ((peak − idle) / N, per process),
// event-loop delay p99, outbound frame gap p99, answer → first greeting frame p50/p95, and the platform
// overhead per turn p50/p95 (user end of speech → first bot audio frame, minus the end-of-turn silence
// and the providers' own measured time); then SIP as a ratio of WS. Nothing is asserted.
//
// "Answer → greeting" for SIP: the phone's 200 OK (its timestamp in sipp's message trace) → the first
// greeting frame the worker hands to LiveKit, split at the moment the worker learns of the answer (the
// dial resolves: LiveKit reports the callee answered and its audio track is subscribed). For WS: the
// caller's `start` message → the first greeting frame at the caller (this includes the call creation and
// config round trips to the backend, which a dial-out makes before it dials).
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { dispose } from '@livekit/rtc-node';
import { startTestEnv, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { createWorker, type Worker } from '#worker/app.js';
import { BackendClient } from '#worker/core/backend.js';
import { benchWorkerSettings, callersMain, EOT_MS, machineBusySeconds, pct, procCpuSeconds, procRssBytes, providerCpuSeconds, startBenchBackend, type CallersResult } from './bench-lib.js';
import { createLogger } from '#worker/core/logger.js';
import { liveKitDialerFromSettings, type LiveKitDialer } from '#worker/transports/livekit.js';
import type { TurnTiming } from '#worker/transports/output.js';
import type { CallTransport, TelephonyDialer } from '#worker/transports/transport.js';

const here = fileURLToPath(import.meta.url);

const GREETING = 'Hello {{customer_name}}, this is your payment reminder.';
const TRUNK_NUMBER = '+15550001111';
const MiB = 1048576;
/** Wall-clock ms with sub-ms precision, comparable with sipp's trace timestamps. */
const epochNow = () => performance.timeOrigin + performance.now();

interface DialRecord {
  to: string;
  /** Epoch ms: the dial resolved (answered, callee track subscribed). */
  answeredAt?: number;
  /** Epoch ms: the first bot frame handed to LiveKit. */
  firstAudioAt?: number;
  error?: string;
}

/** A LiveKitDialer whose transports note when the call was answered and when its first bot frame left. */
function timedDialer(inner: LiveKitDialer, dials: Map<string, DialRecord>): TelephonyDialer {
  const wrap = (t: CallTransport, rec: DialRecord): CallTransport => ({
    kind: t.kind,
    sendAudio(pcm) {
      rec.firstAudioAt ??= epochNow();
      t.sendAudio(pcm);
    },
    sendMessage: (msg) => t.sendMessage(msg),
    attach: (h) => t.attach(h),
    close: (code, reason) => t.close(code, reason),
    interrupt: () => t.interrupt?.(),
  });
  return {
    name: inner.name,
    async dial(req) {
      const rec: DialRecord = { to: req.toNumber };
      dials.set(req.callId, rec);
      try {
        const t = await inner.dial(req);
        rec.answeredAt = epochNow();
        return wrap(t, rec);
      } catch (err) {
        rec.error = err instanceof Error ? err.message : String(err);
        throw err;
      }
    },
  };
}

/** The phone's 200 OK to each INVITE, by dialled number: epoch ms (sipp -trace_msg, local time). */
function phoneAnswers(messageLog: string): Map<string, number> {
  const out = new Map<string, number>();
  let log: string;
  try {
    log = readFileSync(messageLog, 'utf8');
  } catch {
    return out;
  }
  const parts = log.split(/^-{20,} (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)\s*$/m);
  // split with 3 groups: [pre, date, time, frac, body, date, time, frac, body, …]
  for (let i = 1; i + 3 < parts.length; i += 4) {
    const body = parts[i + 3] ?? '';
    if (!/message sent/.test(body) || !/^\s*SIP\/2\.0 200 OK/m.test(body) || !/^\s*CSeq:\s*\d+ INVITE/im.test(body)) continue;
    const to = body.match(/^\s*To:[^<]*<sip:(\+?\d+)@/im)?.[1];
    if (!to) continue;
    const at = new Date(`${parts[i]}T${parts[i + 1]}`).getTime() + Number(parts[i + 2]) * 1000;
    if (!out.has(to)) out.set(to, at);
  }
  return out;
}

/** CPU seconds per process (and the whole machine's busy seconds). */
interface CpuSeconds {
  worker: number;
  spawner: number;
  providers: number;
  server: number;
  sip: number;
  phone: number;
  backend: number;
  machine: number;
}
type CpuReading = CpuSeconds & { at: number };
const cpuBetween = (from: CpuReading, to: CpuReading): CpuSeconds => {
  const d = {} as CpuSeconds;
  for (const k of Object.keys(from) as Array<keyof CpuReading>) if (k !== 'at') d[k] = to[k] - from[k];
  return d;
};

interface Run {
  path: 'WS' | 'SIP' | 'SIP+tool';
  n: number;
  ok: number;
  outcomes: string[];
  wallS: number;
  /** Call-seconds: the worker's busy slots integrated over the run (what CPU per call is per). */
  callS: number;
  /** CPU seconds per process over the run. */
  cpu: CpuSeconds;
  /** The same while all N calls were live (first moment all N slots were busy → first moment one was free), if they ever were. */
  steady: { seconds: number; cpu: CpuSeconds } | null;
  /** Peak − idle RSS, bytes, per process. */
  rss: { worker: number; server: number; sip: number };
  workerPeak: number;
  eldP99: number;
  gapP99: number;
  turns: TurnTiming[];
  greeting: number[];
  /** SIP: 200 OK → dial resolved, and dial resolved → first frame. */
  answerToDial: number[];
  dialToFrame: number[];
  /** SIP+tool: per call whose action ran, its turn's latency and the tool's own time, ms. */
  toolTurns: Array<{ latencyMs: number; toolMs: number }>;
}

async function bench(): Promise<void> {
  const sizes = (process.env.BENCH_CALLS ?? '1,10,30').split(',').map(Number);
  const dialRate = Number(process.env.BENCH_DIAL_RATE ?? 0);
  const withTool = process.env.BENCH_TOOL !== '0';
  // The phone's phrase: one pocketsphinx hears reliably over G.711 (the worker suite's too).
  process.env.VP_PHONE_PHRASE ??= 'stop calling';
  const phrase = process.env.VP_PHONE_PHRASE;
  console.log(`worker SIP bench: concurrent SIP calls (sipp via livekit-sip) beside WebSocket calls, N = ${sizes.join(', ')} (offline providers, real-time speech)`);
  const env = await startTestEnv(['mongodb', 'redis', 'minio', 'livekit', 'phone']);
  let backend: Awaited<ReturnType<typeof startBenchBackend>> | null = null;
  const redises: Redis[] = [];
  let worker: Worker | null = null;
  // The tool run's CRM: answers every request at once with a reference.
  const crm = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"reference":"B-1042"}'));
  });
  await new Promise<void>((resolve) => crm.listen(0, '127.0.0.1', resolve));
  const crmUrl = `http://127.0.0.1:${(crm.address() as AddressInfo).port}/notes`;
  try {
    // WEBHOOK_ALLOW_PRIVATE: the tool's URL is the local receiver.
    backend = await startBenchBackend(env, 'worker_bench_sip', { DIALOUT_RATE_PER_SECOND: '1000', DIALOUT_BURST: '1000', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const { base, token, auth } = backend;
    process.env.VP_WORKER_TOKEN = token; // the WebSocket callers (a child process) sign their test-call tokens with it
    const admin = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${base}${p}`, { method, headers: { Authorization: auth, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
      return json!;
    };
    const variables = [
      { name: 'customer_name', required: true, description: '' },
      { name: 'amount_due', required: false, description: '' },
    ];
    const amount = { name: 'amount', examples: ['how much', 'what amount'], reply: 'The open amount is {{amount_due}} dollars.' };
    // The WebSocket bot is bench.ts's.
    const wsBot = (await admin('POST', '/api/v1/bots', {
      name: 'bench ws',
      greeting: GREETING,
      variables,
      policy: { intents: [amount, { name: 'stop', examples: ['stop calling', 'goodbye'], reply: 'Understood. Goodbye.', end_call: true }], fallback: { reply: 'Sorry, I did not catch that.' } },
      turn_detection: { end_of_turn_silence_ms: EOT_MS },
    })).id as string;
    // The SIP bot ends the call on the phone's phrase; anything else heard ends it too (counted as misheard).
    const sipBot = (await admin('POST', '/api/v1/bots', {
      name: 'bench sip',
      greeting: GREETING,
      variables,
      policy: {
        intents: [amount, { name: 'stop', examples: [...new Set(['stop calling', 'goodbye', phrase])], reply: 'Understood. Goodbye.', end_call: true }],
        fallback: { reply: 'Sorry, I did not catch that. Goodbye.', end_call: true },
      },
      turn_detection: { end_of_turn_silence_ms: EOT_MS },
      max_call_seconds: 45,
    })).id as string;
    // The same, but the phrase first notes the call through an HTTP tool and the goodbye speaks its answer.
    const toolBot = (await admin('POST', '/api/v1/bots', {
      name: 'bench sip tool',
      greeting: GREETING,
      variables,
      tools: [{ name: 'note', description: 'Notes the call in the CRM', type: 'http', url: crmUrl, timeout_ms: 5000 }],
      policy: {
        intents: [
          amount,
          { name: 'stop', examples: [...new Set(['stop calling', 'goodbye', phrase])], action: { tool: 'note', arguments: { customer: '{{customer_name}}' } }, reply: 'Noted under {{result.reference}}. Goodbye.', end_call: true },
        ],
        fallback: { reply: 'Sorry, I did not catch that. Goodbye.', end_call: true },
      },
      turn_detection: { end_of_turn_silence_ms: EOT_MS },
      max_call_seconds: 45,
    })).id as string;
    const apiKey = (await admin('POST', '/api/v1/api-keys', { name: 'bench' })).key as string;
    await admin('POST', '/api/v1/sip/outbound-trunks', { name: 'bench phone', address: env.env.SIP_PHONE_ADDRESS, numbers: [TRUNK_NUMBER] });

    const settings = benchWorkerSettings(backend, env, Math.max(...sizes), { WORKER_ID: 'bench-sip-worker', DIALOUT_ENABLED: 'true', RINGING_TIMEOUT_SECONDS: '20', TOOLS_ALLOW_PRIVATE_ADDRESSES: 'true' });
    const logger = createLogger('warn');
    const [redis, blockingRedis] = [new Redis(settings.REDIS_URL), new Redis(settings.REDIS_URL)];
    redises.push(redis, blockingRedis);
    const dials = new Map<string, DialRecord>();
    // The worker's backend client, noting each call's terminal event (however the call ended, or failed to start).
    const terminal = new Set<string>();
    const backendClient = new BackendClient({ configUrl: settings.SERVICE_CONFIG_URL, token: settings.WORKER_AUTH_TOKEN, timeoutMs: settings.BACKEND_TIMEOUT_MS });
    const sendEvent = backendClient.sendEvent.bind(backendClient);
    backendClient.sendEvent = (id, event) => {
      if (['completed', 'failed', 'busy', 'no_answer'].includes(event.status)) terminal.add(id);
      return sendEvent(id, event);
    };
    // An uncaught exception would end the bench (and a worker process: main.ts does not catch them). It is
    // counted and shown with the batch it happened in, and the bench goes on to measure the rest.
    let uncaught: string[] = [];
    process.on('uncaughtException', (err) => {
      uncaught.push(err instanceof Error ? `${err.message}${'code' in err ? ` (${String(err.code)})` : ''}` : String(err));
      console.error('uncaught exception in the bench/worker process:', err);
    });
    const dialer = timedDialer(
      liveKitDialerFromSettings(settings, logger)!,
      dials,
    );
    let turns: TurnTiming[] = [];
    let gaps: number[] = [];
    /** Each call's turns, by call id (the tool run pairs a call's turn with its action). */
    const turnsOf = new Map<string, TurnTiming[]>();
    const w = createWorker({
      settings,
      logger,
      redis,
      blockingRedis,
      backend: backendClient,
      dialer,
      observer: {
        onTurn: (id, t) => {
          turns.push(t);
          turnsOf.set(id, [...(turnsOf.get(id) ?? []), t]);
        },
        onFrameGap: (ms) => gaps.push(ms),
      },
    });
    worker = w;
    const port = await w.listen(0, '127.0.0.1');
    const lk = env.services.livekit!.processes();
    const proc = (name: string): ManagedProcess => {
      const p = lk.find((x) => x.name === name);
      if (!p) throw new Error(`no ${name} process in the test environment`);
      return p;
    };
    const [server, sip] = [proc('livekit-server').pid, proc('livekit-sip').pid];
    // The rest of the machine, for the steady window: the phone (the callees' side), the backend.
    const phone = env.services.phone!.processes()[0]!.pid;
    const backendPid = backend.proc.pid;

    /** Measures one batch of N calls run by `drive` (which resolves once every call is over). */
    const measure = async (pathName: Run['path'], n: number, drive: () => Promise<{ ok: number; outcomes: string[]; greeting: number[]; callerCpuS?: number; answerToDial?: number[]; dialToFrame?: number[] }>): Promise<Run> => {
      turns = [];
      gaps = [];
      uncaught = [];
      global.gc?.();
      await sleep(2000); // let the previous batch's rooms, sockets and timers settle
      const idle = { worker: process.memoryUsage().rss, server: procRssBytes(server), sip: procRssBytes(sip) };
      const peak = { ...idle };
      let callS = 0;
      let sampledAt = performance.now();
      const cpuNow = (): CpuReading => {
        const prov = providerCpuSeconds(w.spawner.pid);
        const own = process.cpuUsage();
        return {
          at: performance.now(),
          worker: (own.user + own.system) / 1e6,
          spawner: prov.spawner,
          providers: prov.providers,
          server: procCpuSeconds(server).own,
          sip: procCpuSeconds(sip).own,
          phone: procCpuSeconds(phone).own,
          backend: procCpuSeconds(backendPid).own,
          machine: machineBusySeconds(),
        };
      };
      let steadyFrom: CpuReading | null = null;
      let steadyTo: CpuReading | null = null;
      const sampler = setInterval(() => {
        const now = performance.now();
        callS += (w.slots.active * (now - sampledAt)) / 1000;
        sampledAt = now;
        if (!steadyFrom && w.slots.active >= n) steadyFrom = cpuNow();
        else if (steadyFrom && !steadyTo && w.slots.active < n) steadyTo = cpuNow();
        peak.worker = Math.max(peak.worker, process.memoryUsage().rss);
        peak.server = Math.max(peak.server, procRssBytes(server));
        peak.sip = Math.max(peak.sip, procRssBytes(sip));
      }, 200);
      const eld = monitorEventLoopDelay({ resolution: 10 });
      eld.enable();
      const start = cpuNow();
      const t0 = performance.now();
      const r = await drive();
      // All N live until the batch ended (N = 1: the call is the batch), between two of the sampler's ticks.
      if (steadyFrom && !steadyTo) steadyTo = cpuNow();
      const wallS = (performance.now() - t0) / 1000;
      eld.disable();
      clearInterval(sampler);
      const cpu = cpuBetween(start, cpuNow());
      // The WS callers' process is a child of this one: reaped, its CPU lands in the providers' reading.
      cpu.providers = Math.max(0, cpu.providers - (r.callerCpuS ?? 0));
      const [from, to] = [steadyFrom as CpuReading | null, steadyTo as CpuReading | null];
      return {
        path: pathName,
        n,
        ok: r.ok,
        outcomes: [...r.outcomes, ...(uncaught.length ? [`${uncaught.length} uncaught exception(s) in the worker process: ${[...new Set(uncaught)].join('; ')}`] : [])],
        wallS,
        callS,
        steady: from && to && to.at - from.at >= 2000 ? { seconds: (to.at - from.at) / 1000, cpu: cpuBetween(from, to) } : null,
        cpu,
        rss: { worker: peak.worker - idle.worker, server: peak.server - idle.server, sip: peak.sip - idle.sip },
        workerPeak: peak.worker,
        eldP99: eld.percentile(99) / 1e6,
        gapP99: pct(gaps, 99),
        turns,
        greeting: r.greeting,
        answerToDial: r.answerToDial ?? [],
        dialToFrame: r.dialToFrame ?? [],
        toolTurns: [],
      };
    };

    const wsRun = (n: number) =>
      measure('WS', n, async () => {
        const child = fork(here, ['--callers', `ws://127.0.0.1:${port}/ws/${wsBot}`, String(n)], { stdio: 'inherit' });
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const result = await new Promise<CallersResult>((resolve, reject) => {
          child.once('message', (m) => resolve(m as CallersResult));
          child.once('error', reject);
        });
        await exited; // reaped before the CPU reading, so its share can be taken out
        await waitUntil(() => w.slots.active === 0, { what: 'WS calls to finish', timeoutMs: 30_000 });
        return { ok: result.ok, outcomes: result.failed, greeting: result.greetingMs ?? [], callerCpuS: result.cpuS };
      });

    let seq = 0;
    const sipRun = async (n: number, tool = false): Promise<Run> => {
      let ids: string[] = [];
      const refused: string[] = [];
      let gaveUp = false;
      const run = await measure(tool ? 'SIP+tool' : 'SIP', n, async () => {
        const posted = await Promise.all(
          Array.from({ length: n }, async (_, i) => {
            // The same stagger as the WebSocket callers, or BENCH_DIAL_RATE dial-outs a second (a dialler's pace).
            await sleep(dialRate ? (i * 1000) / dialRate : (i * 97) % 1000);
            const to = `+15005551${String(seq++ % 1000).padStart(3, '0')}`;
            const res = await fetch(`${base}/api/v1/sip/dialout`, {
              method: 'POST',
              headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
              body: JSON.stringify({ bot_id: tool ? toolBot : sipBot, to_number: to, variables: { customer_name: 'Sam' } }),
            });
            const body = (await res.json().catch(() => null)) as { call_id?: string; error?: { code?: string } } | null;
            if (res.status === 201 && body?.call_id) return body.call_id;
            refused.push(`dial-out refused: ${res.status} ${body?.error?.code ?? ''}`);
            return null;
          }),
        );
        ids = posted.filter((id): id is string => id !== null);
        // Over when every call's terminal event went out and every slot is back; a call that never gets
        // one (e.g. never claimed) ends the wait after 15 s without any call in the worker.
        const done = (id: string) => terminal.has(id);
        const deadline = Date.now() + 180_000;
        let lastBusy = Date.now();
        for (;;) {
          if (ids.every(done) && w.slots.active === 0) break;
          if (w.slots.active > 0) lastBusy = Date.now();
          if (Date.now() > deadline || Date.now() - lastBusy > 15_000) {
            gaveUp = true;
            break;
          }
          await sleep(250);
        }
        const answers = phoneAnswers(env.env.SIP_PHONE_MESSAGES!);
        const greeting: number[] = [];
        const answerToDial: number[] = [];
        const dialToFrame: number[] = [];
        for (const id of ids) {
          const d = dials.get(id);
          if (!d?.answeredAt || !d.firstAudioAt) continue;
          dialToFrame.push(d.firstAudioAt - d.answeredAt);
          const ok200 = answers.get(d.to);
          if (ok200 !== undefined) {
            answerToDial.push(d.answeredAt - ok200);
            greeting.push(d.firstAudioAt - ok200);
          }
        }
        return { ok: 0, outcomes: [], greeting, answerToDial, dialToFrame };
      });
      // Outcomes from the call records, read after the measurement (so the polling does not count).
      if (gaveUp) await sleep(5000);
      const counts = new Map<string, number>();
      let ok = 0;
      let recordingErrors = 0;
      const toolTurns: Run['toolTurns'] = [];
      for (const id of ids) {
        const c = (await admin('GET', `/api/v1/calls/${id}`)) as {
          status: string;
          end_reason: string | null;
          recording_error?: string | null;
          transcript?: Array<{ role: string; text: string }>;
          actions?: Array<{ type: string; status: string; duration_ms: number }>;
        };
        if (c.recording_error) recordingErrors++;
        const heard = c.transcript?.filter((e) => e.role === 'user').map((e) => e.text) ?? [];
        const action = c.actions?.find((a) => a.type === 'tool');
        const acted = !tool || action?.status === 'ok';
        // The tool run's one turn: the phrase, answered after the tool round.
        const turn = turnsOf.get(id)?.[0];
        if (tool && action?.status === 'ok' && turn) toolTurns.push({ latencyMs: turn.latencyMs, toolMs: action.duration_ms });
        if (c.status === 'completed' && c.end_reason === 'bot_hangup' && heard.includes(phrase) && acted) {
          ok++;
          continue;
        }
        const k = `${c.status}/${c.end_reason ?? '-'}${c.status === 'completed' ? ` heard ${JSON.stringify(heard)}` : ''}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      const outcomes = [
        ...refused,
        ...[...counts].map(([k, v]) => `${v}× ${k}`),
        ...(recordingErrors ? [`${recordingErrors} recording(s) not stored (the call itself counted)`] : []),
        ...(gaveUp ? ['(the bench stopped waiting for the calls to end)'] : []),
        ...run.outcomes,
      ];
      return { ...run, ok, outcomes, toolTurns };
    };

    const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
    const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
    // Per concurrent call: CPU seconds over call-seconds, so a batch's set-up, stragglers and tail
    // (a call that runs to its limit while the others are over) weigh what they cost, no more.
    const pctCore = (s: number, r: Run) => (s / r.callS) * 100;
    const platformCpu = (r: Run) => pctCore(r.cpu.worker + r.cpu.spawner + r.cpu.providers + r.cpu.server + r.cpu.sip, r);
    /** CPU per call while all N were live: the cost of a call in progress, without set-up and tail. */
    const steadyPct = (r: Run, s: number) => (r.steady ? (s / r.n / r.steady.seconds) * 100 : NaN);
    const steadyWorker = (r: Run) => (r.steady ? steadyPct(r, r.steady.cpu.worker + r.steady.cpu.spawner + r.steady.cpu.providers) : NaN);
    const steadyLine = (r: Run): string => {
      if (!r.steady) return 'steady: all N were never live at once';
      const c = r.steady.cpu;
      const parts = [`${f1(steadyWorker(r))}% worker (incl. providers)`];
      if (r.path !== 'WS') parts.push(`${f1(steadyPct(r, c.server))}% livekit-server`, `${f1(steadyPct(r, c.sip))}% livekit-sip`, `${f1(steadyPct(r, c.phone))}% phone (sipp)`);
      // Where the machine's 2 cores went meanwhile (% of one core): the worker, LiveKit, the phone, everything.
      const cores = (x: number) => f0((x / r.steady!.seconds) * 100);
      const used = `machine ${cores(c.machine)}% of 200%: worker ${cores(c.worker + c.spawner + c.providers)}%${r.path !== 'WS' ? `, LiveKit ${cores(c.server + c.sip)}%, phone ${cores(c.phone)}%` : ''}, backend ${cores(c.backend)}%`;
      return `steady (all ${r.n} live for ${f1(r.steady.seconds)} s) CPU/call ${parts.join(' + ')} (${used})`;
    };
    const line = (r: Run): string => {
      const overhead = r.turns.map((t) => t.overheadMs);
      const cpu = [`${f1(pctCore(r.cpu.worker, r))}% worker`, `${pctCore(r.cpu.spawner, r).toFixed(2)}% spawner`, `${f1(pctCore(r.cpu.providers, r))}% providers`];
      if (r.path !== 'WS') cpu.push(`${f1(pctCore(r.cpu.server, r))}% livekit-server`, `${f1(pctCore(r.cpu.sip, r))}% livekit-sip`);
      const rss = [`${f1(r.rss.worker / r.n / MiB)} worker`];
      if (r.path !== 'WS') rss.push(`${f1(r.rss.server / r.n / MiB)} livekit-server`, `${f1(r.rss.sip / r.n / MiB)} livekit-sip`);
      const greet =
        r.path !== 'WS'
          ? `answer→greeting p50 ${f0(pct(r.greeting, 50))} ms p95 ${f0(pct(r.greeting, 95))} ms (200 OK→dial resolved p50 ${f0(pct(r.answerToDial, 50))}/p95 ${f0(pct(r.answerToDial, 95))}, dial resolved→first frame p50 ${f0(pct(r.dialToFrame, 50))}/p95 ${f0(pct(r.dialToFrame, 95))})`
          : `start→greeting p50 ${f0(pct(r.greeting, 50))} ms p95 ${f0(pct(r.greeting, 95))} ms`;
      return [
        `N=${String(r.n).padStart(2)} ${r.path.padEnd(8)}`,
        `ok ${r.ok}/${r.n}`,
        `wall ${f1(r.wallS)} s (${f0(r.callS)} call-s)`,
        `CPU/call ${cpu.join(' + ')} = ${f1(platformCpu(r))}%`,
        steadyLine(r),
        `RSS/call MiB ${rss.join(' + ')} (worker peak ${f0(r.workerPeak / MiB)} MiB)`,
        `event-loop p99 ${f1(r.eldP99)} ms`,
        `frame gap p99 ${f1(r.gapP99)} ms`,
        greet,
        `overhead/turn p50 ${f1(pct(overhead, 50))} ms p95 ${f1(pct(overhead, 95))} ms (${r.turns.length} turns; latency p50 ${f0(pct(r.turns.map((t) => t.latencyMs), 50))} ms incl. ${EOT_MS} ms silence)`,
      ].join(' | ');
    };
    const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `×${(a / b).toFixed(2)}` : '–');
    const compare = (s: Run, ws: Run): string => {
      const o = (r: Run, p: number) => pct(r.turns.map((t) => t.overheadMs), p);
      const wsPlat = pctCore(ws.cpu.worker + ws.cpu.spawner + ws.cpu.providers, ws);
      return [
        `N=${String(s.n).padStart(2)} SIP/WS`,
        `worker CPU/call ${ratio(pctCore(s.cpu.worker, s), pctCore(ws.cpu.worker, ws))}`,
        `platform CPU/call ${ratio(platformCpu(s), wsPlat)} (incl. LiveKit)`,
        `worker RSS/call ${ratio(s.rss.worker / s.n, ws.rss.worker / ws.n)}`,
        `overhead p50 ${ratio(o(s, 50), o(ws, 50))} p95 ${ratio(o(s, 95), o(ws, 95))}`,
        `greeting p95 ${ratio(pct(s.greeting, 95), pct(ws.greeting, 95))}`,
      ].join(' | ');
    };

    /** The tool round's own cost: the turn's latency without the tool's time, beside the plain SIP turn of the same N. */
    const toolRound = (t: Run, plain: Run): string => {
      const base = plain.turns.map((x) => x.latencyMs);
      const net = t.toolTurns.map((x) => x.latencyMs - x.toolMs);
      const tools = t.toolTurns.map((x) => x.toolMs);
      const added = (p: number) => pct(net, p) - pct(base, p);
      return [
        `N=${String(t.n).padStart(2)} tool round`,
        `turn with a tool p50 ${f0(pct(t.toolTurns.map((x) => x.latencyMs), 50))} ms (tool p50 ${f0(pct(tools, 50))} ms) → without the tool's time p50 ${f0(pct(net, 50))} / p95 ${f0(pct(net, 95))} ms`,
        `plain turn p50 ${f0(pct(base, 50))} / p95 ${f0(pct(base, 95))} ms`,
        `added by the round p50 ${f0(added(50))} ms p95 ${f0(added(95))} ms (${ratio(pct(net, 50), pct(base, 50))} of the plain turn at p50; ${t.toolTurns.length} tool turns)`,
      ].join(' | ');
    };

    const out: string[] = [];
    const sipRuns: Run[] = [];
    for (const n of sizes) {
      const ws = await wsRun(n);
      console.log(line(ws));
      if (ws.outcomes.length) console.log(`  WS failures: ${ws.outcomes.slice(0, 3).join('\n  ')}`);
      const s = await sipRun(n);
      sipRuns.push(s);
      console.log(line(s));
      if (s.outcomes.length) console.log(`  SIP not ok: ${s.outcomes.join('; ')}`);
      console.log(compare(s, ws));
      out.push(line(ws), line(s), ...(s.outcomes.length ? [`  SIP not ok: ${s.outcomes.join('; ')}`] : []), compare(s, ws));
      if (withTool) {
        const t = await sipRun(n, true);
        console.log(line(t));
        if (t.outcomes.length) console.log(`  SIP+tool not ok: ${t.outcomes.join('; ')}`);
        console.log(toolRound(t, s));
        out.push(line(t), ...(t.outcomes.length ? [`  SIP+tool not ok: ${t.outcomes.join('; ')}`] : []), toolRound(t, s));
      }
    }
    await w.close();
    worker = null;

    console.log('\nsummary');
    for (const l of out) console.log(l);
    const big = sipRuns[sipRuns.length - 1];
    if (big) {
      // A CPU-per-call figure only means capacity where every call went through (failed calls cost little).
      const clean = [...sipRuns].reverse().find((r) => r.ok === r.n);
      const capacity = clean
        ? `platform CPU ${f1(platformCpu(clean))}% of a core per call at N=${clean.n} (the largest N with every call ok) → ~${Math.floor(200 / platformCpu(clean))} calls would fill this machine's 2 cores with LiveKit on them; the worker alone ${f1(pctCore(clean.cpu.worker + clean.cpu.spawner + clean.cpu.providers, clean))}% → ~${Math.floor(200 / pctCore(clean.cpu.worker + clean.cpu.spawner + clean.cpu.providers, clean))} calls per worker on 2 cores of its own${
            clean.steady ? `; a call in progress (all ${clean.n} live) costs the worker ${f1(steadyWorker(clean))}% → ~${Math.floor(200 / steadyWorker(clean))} live calls per worker on 2 cores of its own` : ''
          }`
        : 'no SIP batch had every call ok: no capacity estimate';
      console.log(
        `\ntargets (printed, not asserted): ${big.n} SIP calls: ${big.ok}/${big.n} ok` +
          ` | overhead p95 ${f1(pct(big.turns.map((t) => t.overheadMs), 95))} ms (target ≤ 50)` +
          ` | answer→greeting p95 ${f0(pct(big.greeting, 95))} ms (target ≤ 300)` +
          ` | ${capacity}`,
      );
    }
  } finally {
    crm.closeAllConnections();
    crm.close();
    await worker?.close().catch(() => undefined);
    for (const r of redises) r.disconnect();
    await dispose().catch(() => undefined);
    await backend?.stop();
    await env.stop();
  }
  process.exit(0);
}

// The WebSocket callers run in a child process (`--callers`), so their CPU is not the worker's.
if (process.argv[2] === '--callers') callersMain(process.argv);
else void bench();
