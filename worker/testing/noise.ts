// Noisy caller audio for the noise suppression test and bench: espeak-ng phrases mixed with white noise or
// babble (other espeak-ng voices talking at once) at a set signal-to-noise ratio, and what the real
// pocketsphinx grammar decoder hears in them, with or without RNNoise in front.
import { concatPcm } from '#worker/audio/pcm.js';
import { NoiseSuppressor } from '#worker/noise/rnnoise.js';
import { PocketsphinxStt } from '#worker/stt/pocketsphinx.js';
import { silence, speech } from './audio.js';

export const RATE = 16000;

/** The grammar: a bot's phrases (each one is said in turn, the others are what it could be heard as). */
export const NOISY_PHRASES = [
  'how much is it',
  'stop calling me',
  'call me back later',
  'talk to a person',
  'what are your hours',
  'yes please',
  'cancel my order',
  'where is my package',
];

/** Deterministic noise: the same run, the same figures. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** Gaussian white noise, RMS 1000. */
export function whiteNoise(samples: number, seed = 7): Float32Array {
  const rnd = prng(seed);
  const out = new Float32Array(samples);
  for (let i = 0; i < samples; i += 2) {
    // Box-Muller: two normal samples from two uniform ones.
    const r = Math.sqrt(-2 * Math.log(1 - rnd())) * 1000;
    const t = 2 * Math.PI * rnd();
    out[i] = r * Math.cos(t);
    if (i + 1 < samples) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

const BABBLE_LINES = [
  'the weather tomorrow will be cloudy with a chance of rain in the afternoon',
  'i went to the market on saturday and bought apples bread and some cheese',
  'please remember to send the report before the meeting starts at nine',
  'our train was delayed by twenty minutes because of a signal failure',
  'she said the new restaurant downtown serves excellent noodles',
  'they are planning a long trip across the country next summer',
];
const BABBLE_VOICES = ['en-us+m3', 'en-us+f2', 'en-gb+m1', 'en-us+f4', 'en-gb+f3', 'en-us+m7'];

/** Six espeak-ng talkers at once (different voices and lines, staggered), looped to `samples`. */
export function babbleNoise(samples: number): Float32Array {
  const out = new Float32Array(samples);
  BABBLE_LINES.forEach((line, k) => {
    const voice = speechIn(line, BABBLE_VOICES[k]!);
    const offset = Math.round((k * voice.length) / BABBLE_LINES.length);
    for (let i = 0; i < samples; i++) out[i]! += voice[(i + offset) % voice.length]!;
  });
  const scale = 1000 / Math.sqrt(power(out));
  for (let i = 0; i < samples; i++) out[i]! *= scale;
  return out;
}

function speechIn(text: string, voice: string): Int16Array {
  // testing/audio.ts speaks en-us only; babble wants several voices.
  return speech(text, RATE, { voice });
}

function power(x: ArrayLike<number>, from = 0, to = x.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i]! * x[i]!;
  return to > from ? s / (to - from) : 0;
}

/** Active speech level: the mean power of the 20 ms frames within 30 dB of the loudest (pauses left out). */
export function activePower(pcm: Int16Array): number {
  const frame = RATE / 50;
  const powers: number[] = [];
  for (let at = 0; at + frame <= pcm.length; at += frame) powers.push(power(pcm, at, at + frame));
  const loudest = Math.max(...powers);
  const active = powers.filter((p) => p >= loudest / 1000);
  return active.reduce((s, p) => s + p, 0) / active.length;
}

export interface NoisyPhrase {
  phrase: string;
  /** Noise alone, then the phrase in noise, then noise: LEAD_MS + phrase + tailMs (TAIL_MS). */
  pcm: Int16Array;
  /** Where the phrase starts in `pcm`. */
  speechAt: number;
}

/** Noise alone before the phrase: RNNoise (and a caller's line) has noise before anyone speaks. */
export const LEAD_MS = 1000;
const TAIL_MS = 500;

/** `phrase` spoken in `noise` (a long enough noise of RMS 1000) at `snrDb` (active speech level over noise power). */
export function noisyPhrase(phrase: string, noise: Float32Array, snrDb: number, noiseOffset = 0, tailMs = TAIL_MS): NoisyPhrase {
  const said = speech(phrase, RATE);
  const speechAt = (LEAD_MS * RATE) / 1000;
  const clean = concatPcm([silence(LEAD_MS, RATE), said, silence(tailMs, RATE)]);
  // Speech at peak ~8000 keeps the sum clear of clipping; the noise is scaled to the SNR.
  let peak = 0;
  for (const x of said) peak = Math.max(peak, Math.abs(x));
  const speechGain = 8000 / peak;
  const noiseRms = Math.sqrt(activePower(said) * speechGain ** 2 / 10 ** (snrDb / 10));
  const noiseGain = noiseRms / Math.sqrt(power(noise));
  const pcm = new Int16Array(clean.length);
  for (let i = 0; i < clean.length; i++) {
    const x = clean[i]! * speechGain + noise[(i + noiseOffset) % noise.length]! * noiseGain;
    pcm[i] = x < -32768 ? -32768 : x > 32767 ? 32767 : Math.round(x);
  }
  return { phrase, pcm, speechAt };
}

/** `pcm` through a fresh call's noise suppressor in 20 ms chunks (as a call's frames arrive), then freed. */
export async function denoise(pcm: Int16Array): Promise<Int16Array> {
  const ns = await NoiseSuppressor.create(RATE);
  const out = new Int16Array(pcm.length);
  const chunk = RATE / 50;
  for (let i = 0; i < pcm.length; i += chunk) out.set(ns.push(pcm.subarray(i, i + chunk)), i);
  ns.close();
  return out;
}

/**
 * What the bot's pocketsphinx decoder (a grammar of `phrases`) hears: the turn starts 300 ms before the
 * phrase (the VAD's start, give or take) and runs to the end of the audio.
 */
export async function hear(stt: PocketsphinxStt, pcm: Int16Array, speechAt: number): Promise<string> {
  const session = await stt.open();
  const start = Math.max(0, speechAt - (300 * RATE) / 1000);
  session.push(pcm.subarray(0, start));
  session.speechStarted();
  for (let i = start; i < pcm.length; i += 320) session.push(pcm.subarray(i, Math.min(pcm.length, i + 320)));
  const text = await session.endOfTurn(new AbortController().signal);
  session.close();
  return text;
}

export interface NoiseRun {
  noise: 'white' | 'babble';
  /** Phrase → what was heard without and with suppression. */
  heard: Array<{ phrase: string; off: string; on: string }>;
}

/** Every phrase of NOISY_PHRASES in `kind` noise at `snrDb`, heard without and with noise suppression. */
export async function recogniseInNoise(kind: 'white' | 'babble', snrDb: number): Promise<NoiseRun> {
  const stt = new PocketsphinxStt({ phrases: NOISY_PHRASES });
  const noise = kind === 'white' ? whiteNoise(RATE * 30) : babbleNoise(RATE * 30);
  const heard: NoiseRun['heard'] = [];
  for (const [k, phrase] of NOISY_PHRASES.entries()) {
    const { pcm, speechAt } = noisyPhrase(phrase, noise, snrDb, k * RATE * 3);
    const off = await hear(stt, pcm, speechAt);
    const on = await hear(stt, await denoise(pcm), speechAt);
    heard.push({ phrase, off, on });
  }
  return { noise: kind, heard };
}

export const rightCount = (run: NoiseRun, which: 'off' | 'on'): number => run.heard.filter((h) => h[which] === h.phrase).length;
