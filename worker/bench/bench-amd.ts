// `npm run bench:amd -w worker`: answering machine detection on the test phone's labelled answers
// (tests/infra amdAnswers.ts: machines +15005558NNN, people +15005556NNN), each dialled for real through
// livekit-sip and livekit-server by a bot that detects and hangs up on machines. Beside it, in the same run,
// the baseline: the same answers' audio fed straight to the detector (no phone line, no LiveKit).
//
// Prints the confusion matrix (truth × verdict), the share right, people hung up on, and the decision time
// p50/p95 per class: for machines from the answer, for people from the end of their first words (the
// target: ≤ 1.2 s at p50); then the SIP figures as ratios of the baseline's. Nothing is asserted.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { dispose } from '@livekit/rtc-node';
import { AMD_ANSWERS, amdAudio, amdTimeline, startTestEnv, type AmdAnswer } from '@voice-platform/tests/infra';
import { createWorker, type Worker } from '#worker/app.js';
import { AmdDetector, type AmdDecision } from '#worker/amd/detector.js';
import { resample } from '#worker/audio/resample.js';
import { benchWorkerSettings, pct, startBenchBackend } from './bench-lib.js';
import { createLogger } from '#worker/core/logger.js';
import { createWebRtcVad } from '#worker/vad/webrtc.js';

const TRUNK_NUMBER = '+15550001111';
const CONCURRENCY = Number(process.env.BENCH_AMD_CONCURRENCY ?? 4);
const VERDICTS = ['human', 'machine', 'fax', 'unknown', 'none'] as const;
type Verdict = (typeof VERDICTS)[number];

interface Result {
  answer: AmdAnswer;
  verdict: Verdict;
  /** Answer → verdict, ms (null: none). */
  amdMs: number | null;
  endReason: string | null;
}

/** The detector's verdict on an answer's own audio, fed as fast as it goes (the baseline). */
async function offline(answer: AmdAnswer, tmp: string): Promise<Result> {
  const audio = amdAudio(answer, tmp, amdTimeline(answer).endMs + 12_000);
  const pcm = resample(audio.pcm, 8000, 16000);
  const d = new AmdDetector(await createWebRtcVad(), 16000);
  let revised: AmdDecision | null = null;
  void d.revised.then((r) => (revised = r));
  for (let i = 0; i < pcm.length; i += 320) {
    d.push(pcm.subarray(i, i + 320));
    await Promise.resolve();
  }
  d.stop();
  const decision: AmdDecision = revised ?? (await d.decided);
  return { answer, verdict: decision.answeredBy, amdMs: decision.atMs, endReason: null };
}

function report(name: string, results: Result[]): { accuracy: number; humanP50: number; humanP95: number; machineP50: number; machineP95: number } {
  const truth = ['machine', 'human'] as const;
  const cell = (t: string, v: Verdict) => results.filter((r) => r.answer.label === t && r.verdict === v).length;
  console.log(`\n${name}: ${results.length} answers`);
  console.log(`${'truth \\ verdict'.padEnd(16)}${VERDICTS.map((v) => v.padStart(9)).join('')}`);
  for (const t of truth) console.log(`${t.padEnd(16)}${VERDICTS.map((v) => String(cell(t, v)).padStart(9)).join('')}`);
  // A machine is right as machine (or fax); a person as human or unknown (both are greeted).
  const right = results.filter((r) => (r.answer.label === 'machine' ? r.verdict === 'machine' || r.verdict === 'fax' : r.verdict === 'human' || r.verdict === 'unknown'));
  const hungUpOn = results.filter((r) => r.answer.label === 'human' && (r.verdict === 'machine' || r.verdict === 'fax'));
  const humanMs = results.filter((r) => r.answer.label === 'human' && r.amdMs !== null).map((r) => r.amdMs! - amdTimeline(r.answer).speechEndMs);
  const machineMs = results.filter((r) => r.answer.label === 'machine' && r.amdMs !== null).map((r) => r.amdMs!);
  const accuracy = right.length / results.length;
  console.log(`right ${right.length}/${results.length} (${(accuracy * 100).toFixed(1)} %, target ≥ 95 %) | people hung up on: ${hungUpOn.length}${hungUpOn.length ? ` (${hungUpOn.map((r) => r.answer.number).join(', ')})` : ''} (target 0)`);
  console.log(
    `decision time: people after their words end p50 ${pct(humanMs, 50).toFixed(0)} ms p95 ${pct(humanMs, 95).toFixed(0)} ms (target p50 ≤ 1200) | machines from the answer p50 ${pct(machineMs, 50).toFixed(0)} ms p95 ${pct(machineMs, 95).toFixed(0)} ms`,
  );
  for (const r of results.filter((x) => !right.includes(x))) console.log(`  wrong: ${r.answer.number} ${r.answer.label} → ${r.verdict}${r.endReason ? ` (${r.endReason})` : ''}: ${JSON.stringify(r.answer.text.slice(0, 70))}`);
  return { accuracy, humanP50: pct(humanMs, 50), humanP95: pct(humanMs, 95), machineP50: pct(machineMs, 50), machineP95: pct(machineMs, 95) };
}

async function bench(): Promise<void> {
  const answers = process.env.BENCH_AMD_ONLY ? AMD_ANSWERS.filter((a) => process.env.BENCH_AMD_ONLY!.split(',').includes(a.number)) : AMD_ANSWERS;
  console.log(`answering machine detection bench: ${answers.length} labelled answers (${answers.filter((a) => a.label === 'machine').length} machines, ${answers.filter((a) => a.label === 'human').length} people), dialled ${CONCURRENCY} at a time through livekit-sip, beside the same audio fed to the detector directly`);
  const tmp = mkdtempSync(path.join(tmpdir(), 'vp-bench-amd-'));
  const baseline: Result[] = [];
  for (const a of answers) baseline.push(await offline(a, tmp));

  const env = await startTestEnv(['mongodb', 'redis', 'minio', 'livekit', 'phone']);
  let backend: Awaited<ReturnType<typeof startBenchBackend>> | null = null;
  let worker: Worker | null = null;
  const redises: Redis[] = [];
  try {
    backend = await startBenchBackend(env, 'worker_bench_amd', { DIALOUT_RATE_PER_SECOND: '1000', DIALOUT_BURST: '1000' });
    const { base, auth } = backend;
    const api = async (method: string, p: string, body?: unknown, headers: Record<string, string> = { Authorization: auth }) => {
      const res = await fetch(`${base}${p}`, { method, headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
      return json!;
    };
    const botId = (await api('POST', '/api/v1/bots', {
      name: 'bench amd',
      greeting: 'Hello, this is a reminder from Example Company.',
      policy: { intents: [], fallback: { reply: 'Thank you, goodbye.', end_call: true } },
      answering_machine: { detect: true, on_machine: 'hangup' },
      // A person gets the greeting, then the call ends at the limit (they say nothing more).
      max_call_seconds: 10,
    })).id as string;
    const apiKey = (await api('POST', '/api/v1/api-keys', { name: 'bench' })).key as string;
    await api('POST', '/api/v1/sip/outbound-trunks', { name: 'bench phone', address: env.env.SIP_PHONE_ADDRESS, numbers: [TRUNK_NUMBER] });
    const settings = benchWorkerSettings(backend, env, CONCURRENCY, { WORKER_ID: 'bench-amd-worker', DIALOUT_ENABLED: 'true', RINGING_TIMEOUT_SECONDS: '20' });
    const [redis, blockingRedis] = [new Redis(settings.REDIS_URL), new Redis(settings.REDIS_URL)];
    redises.push(redis, blockingRedis);
    worker = createWorker({ settings, logger: createLogger('warn'), redis, blockingRedis });
    await worker.listen(0, '127.0.0.1');

    const dialled: Result[] = [];
    const queue = [...answers];
    const one = async (a: AmdAnswer): Promise<void> => {
      const placed = await api('POST', '/api/v1/sip/dialout', { bot_id: botId, to_number: a.number }, { 'X-API-Key': apiKey });
      const id = placed.call_id as string;
      const deadline = Date.now() + 120_000;
      for (;;) {
        const c = (await api('GET', `/api/v1/calls/${id}`)) as { status: string; end_reason: string | null; answered_by: Verdict | null; amd_ms: number | null; recording_key: string | null; recording_error: string | null };
        const over = ['completed', 'failed', 'busy', 'no_answer', 'canceled'].includes(c.status) && (c.status !== 'completed' || c.recording_key !== null || c.recording_error !== null);
        if (over || Date.now() > deadline) {
          dialled.push({ answer: a, verdict: c.answered_by ?? 'none', amdMs: c.amd_ms, endReason: `${c.status}/${c.end_reason ?? '-'}` });
          return;
        }
        await sleep(500);
      }
    };
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let a = queue.shift(); a; a = queue.shift()) await one(a);
      }),
    );

    const off = report('baseline: the answers\' audio fed to the detector directly', baseline);
    const sip = report('dialled through livekit-sip (the real path)', dialled.sort((x, y) => answers.indexOf(x.answer) - answers.indexOf(y.answer)));
    const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `×${(a / b).toFixed(2)}` : '–');
    console.log(
      `\nSIP / baseline: right ${ratio(sip.accuracy, off.accuracy)} | people's decision p50 ${ratio(sip.humanP50, off.humanP50)} p95 ${ratio(sip.humanP95, off.humanP95)} | machines' p50 ${ratio(sip.machineP50, off.machineP50)} p95 ${ratio(sip.machineP95, off.machineP95)}`,
    );
  } finally {
    await worker?.close().catch(() => undefined);
    for (const r of redises) r.disconnect();
    await dispose().catch(() => undefined);
    await backend?.stop();
    await env.stop();
  }
  process.exit(0);
}

void bench();
