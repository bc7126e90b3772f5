// `npm run bench:noise -w worker`: what a bot's `audio.noise_suppression` (RNNoise) buys and costs.
// - Phrases recognised right at each of BENCH_NOISE_SNR_DB (default "5,0" dB) in white noise and in babble,
//   by the real pocketsphinx grammar decoder of the bot's phrases, without suppression (the baseline) and with it.
// - RNNoise's CPU per call: ms of CPU per second of caller audio (resampling to 48 kHz and back included)
//   and the share of one core, measured on a minute of noisy speech fed in 20 ms chunks as a call feeds it;
//   beside it, the call's WebRTC VAD on the same audio (the baseline every call pays already).
// Nothing is asserted.
import { cpus } from 'node:os';
import { NoiseSuppressor } from '#worker/noise/rnnoise.js';
import { createWebRtcVad } from '#worker/vad/webrtc.js';
import { NOISY_PHRASES, RATE, noisyPhrase, recogniseInNoise, rightCount, whiteNoise } from '../testing/noise.js';

const SNRS_DB = (process.env.BENCH_NOISE_SNR_DB ?? '5,0').split(',').map(Number);
const SNR_DB = SNRS_DB[0]!;
const CPU_AUDIO_S = 60;

/** CPU ms per second of audio of `run` over `parts` fed in 20 ms chunks. */
function cpuMsPerS(parts: Int16Array[], run: (chunk: Int16Array) => void): number {
  const chunk = RATE / 50;
  const before = process.cpuUsage();
  let fed = 0;
  for (const pcm of parts) {
    for (let i = 0; i + chunk <= pcm.length; i += chunk) run(pcm.subarray(i, i + chunk));
    fed += pcm.length;
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (fed / RATE);
}

async function cpuPerCall(): Promise<{ msPerS: number; vadMsPerS: number }> {
  // A minute of speech in noise, as one call's caller audio.
  const noise = whiteNoise(RATE * 10);
  const parts: Int16Array[] = [];
  let total = 0;
  for (let k = 0; total < RATE * CPU_AUDIO_S; k++) {
    const { pcm } = noisyPhrase(NOISY_PHRASES[k % NOISY_PHRASES.length]!, noise, SNR_DB, k * 1000);
    parts.push(pcm);
    total += pcm.length;
  }
  const ns = await NoiseSuppressor.create(RATE);
  const vad = await createWebRtcVad(3, RATE);
  // A warm-up second each (the modules' first calls compile and grow their heaps).
  ns.push(new Int16Array(RATE));
  cpuMsPerS([new Int16Array(RATE)], (c) => vad.isSpeech(c));
  const vadMsPerS = cpuMsPerS(parts, (c) => vad.isSpeech(c));
  const msPerS = cpuMsPerS(parts, (c) => ns.push(c));
  ns.close();
  vad.close();
  return { msPerS, vadMsPerS };
}

async function main(): Promise<void> {
  console.log(`noise suppression bench: ${NOISY_PHRASES.length} phrases (espeak-ng, a grammar of them), ${RATE} Hz calls, ${cpus().length} cores`);
  console.log(`${'noise'.padEnd(8)}${'SNR'.padStart(6)}${'right without'.padStart(15)}${'right with RNNoise'.padStart(20)}`);
  const runs: Array<{ snr: number; run: Awaited<ReturnType<typeof recogniseInNoise>> }> = [];
  for (const snr of SNRS_DB) {
    for (const kind of ['white', 'babble'] as const) {
      const run = await recogniseInNoise(kind, snr);
      runs.push({ snr, run });
      const n = run.heard.length;
      console.log(`${kind.padEnd(8)}${`${snr} dB`.padStart(6)}${`${rightCount(run, 'off')}/${n}`.padStart(15)}${`${rightCount(run, 'on')}/${n}`.padStart(20)}`);
    }
  }
  console.log('what was heard (without → with):');
  for (const { snr, run } of runs) {
    console.log(`  ${run.noise} ${snr} dB: ${run.heard.map((h) => `${JSON.stringify(h.phrase)}: ${JSON.stringify(h.off)} → ${JSON.stringify(h.on)}`).join('; ')}`);
  }
  const cpu = await cpuPerCall();
  console.log(`RNNoise CPU per call: ${cpu.msPerS.toFixed(1)} ms per second of audio = ${(cpu.msPerS / 10).toFixed(2)} % of a core (≈ ${Math.floor(1000 / cpu.msPerS)} calls per core for the suppression alone)`);
  console.log(`baseline, the call's WebRTC VAD on the same audio: ${cpu.vadMsPerS.toFixed(2)} ms per second (RNNoise = ${(cpu.msPerS / cpu.vadMsPerS).toFixed(1)} × the VAD)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
