// Test audio made by the real tools: espeak-ng speaks, sox converts (independent of the worker's own
// resampler), pocketsphinx recognises.
import { recogniseBytes, speechBytes } from '@voice-platform/schemas/node';
import { bytesToPcm, pcmToBytes } from '#worker/audio/pcm.js';

/** PCM16 mono speech of `text` at `rate` (the shared offline voice, schemas/node). */
export function speech(text: string, rate = 16000, opts: { wpm?: number; padMs?: number; voice?: string } = {}): Int16Array {
  const pcm = bytesToPcm(speechBytes(text, rate, opts));
  const pad = new Int16Array(Math.round(((opts.padMs ?? 0) * rate) / 1000));
  const out = new Int16Array(pcm.length + pad.length);
  out.set(pcm);
  return out;
}

export const silence = (ms: number, rate = 16000): Int16Array => new Int16Array(Math.round((ms * rate) / 1000));

/** What pocketsphinx hears in `pcm`, constrained to `phrases` (a JSGF grammar of them). */
export const recognise = (pcm: Int16Array, rate: number, phrases: string[]): string => recogniseBytes(pcmToBytes(pcm), rate, phrases);

/** Loudness per 20 ms frame (RMS), the shape of speech whatever the codec did to its waveform. */
function envelope(pcm: Int16Array, rate: number): number[] {
  const frame = (rate * 20) / 1000;
  const out: number[] = [];
  for (let at = 0; at + frame <= pcm.length; at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += pcm[i]! * pcm[i]!;
    out.push(Math.sqrt(sum / frame));
  }
  return out;
}

/**
 * How well `heard` (e.g. what a phone line carried) follows `said` (what the bot spoke): the best Pearson
 * correlation of their loudness envelopes with `heard` shifted by up to ±`maxLagMs`, and that shift.
 */
export function envelopeMatch(heard: Int16Array, heardRate: number, said: Int16Array, saidRate: number, maxLagMs = 1500): { correlation: number; lagMs: number } {
  const a = envelope(heard, heardRate);
  const b = envelope(said, saidRate);
  const maxLag = maxLagMs / 20;
  let best = { correlation: -1, lagMs: 0 };
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const pairs: Array<[number, number]> = [];
    for (let i = 0; i < b.length; i++) if (i + lag >= 0 && i + lag < a.length) pairs.push([a[i + lag]!, b[i]!]);
    if (pairs.length < 50) continue; // under a second in common: no evidence either way
    const mean = (k: 0 | 1) => pairs.reduce((s, p) => s + p[k], 0) / pairs.length;
    const [ma, mb] = [mean(0), mean(1)];
    let [sab, saa, sbb] = [0, 0, 0];
    for (const [x, y] of pairs) {
      sab += (x - ma) * (y - mb);
      saa += (x - ma) ** 2;
      sbb += (y - mb) ** 2;
    }
    const r = saa && sbb ? sab / Math.sqrt(saa * sbb) : 0;
    if (r > best.correlation) best = { correlation: r, lagMs: lag * 20 };
  }
  return best;
}

/** RMS of 16-bit samples [from, to). */
export function rms(pcm: Int16Array, from = 0, to = pcm.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += pcm[i]! * pcm[i]!;
  return to > from ? Math.sqrt(s / (to - from)) : 0;
}

/** `speech` with its leading and trailing silence cut at 20 ms frames (first and last frames voiced: RMS above `voicedRms`). */
export function trimmedSpeech(text: string, rate = 16000, voicedRms = 300): Int16Array {
  const pcm = speech(text, rate);
  const f = (rate * 20) / 1000;
  const frames = Math.floor(pcm.length / f);
  let first = 0;
  let last = frames - 1;
  while (first < frames && rms(pcm, first * f, (first + 1) * f) <= voicedRms) first++;
  while (last > first && rms(pcm, last * f, (last + 1) * f) <= voicedRms) last--;
  return pcm.slice(first * f, (last + 1) * f);
}
