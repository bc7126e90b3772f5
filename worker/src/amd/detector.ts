// Answering machine detection (docs/design.md §10): from the answer of an outbound call, the caller's
// audio is listened to before the bot greets. What a person and a machine do differ in rhythm: a
// person says one short thing ("Hello?") and waits; a machine talks on for seconds, in phrases with
// short pauses, and often ends in a beep. Fax machines call with a 1100 Hz tone (CNG: 0.5 s on, 3 s off).
//
// Everything is measured in the audio's own time (samples since the answer), frame by frame: voice
// activity (the WebRTC VAD), and the purest tone between 350 and 2100 Hz (Goertzel), so a decision is
// the same however fast the audio comes. A greeting is read out in sentences, with short pauses (200–800
// ms) between them; a person's long answer ("Hello, this is John speaking, how can I help you today?")
// runs on in one breath. One phrase of 1.5–6 s, then a pause, is taken for a person, so nobody is hung
// up on; the detector listens on, and a beep in the next seconds revises any person's verdict. Words would help here, but pocketsphinx's open model does not
// catch a greeting's "leave a message" on a phone line (tried: it heard "are you you we to it a the").
import { Rechunker, samplesFor } from '../audio/pcm.js';
import { Resampler } from '../audio/resample.js';
import type { VadEngine } from '../vad/vad.js';

export type AnsweredBy = 'human' | 'machine' | 'fax' | 'unknown';

export interface AmdDecision {
  answeredBy: AnsweredBy;
  /** Audio time from the answer to the decision. */
  atMs: number;
  /** Which rule decided (for the log and the bench). */
  rule: 'short_answer' | 'silence' | 'long_greeting' | 'phrases' | 'beep' | 'fax_tone' | 'long_answer' | 'late_beep';
}

/** Where to speak after a machine's greeting: its beep ended, its greeting ended, or the wait ran out. */
export type MessageCue = 'beep' | 'quiet' | 'timeout';

export const AMD = {
  /** One answer shorter than this, then QUIET_MS of quiet: a person. */
  SHORT_ANSWER_MS: 1500,
  /** Quiet after speech that ends a phrase (a person waiting for an answer; a machine's pauses are shorter). */
  QUIET_MS: 800,
  /** This much speech without a pause of QUIET_MS: a machine's greeting (a person's longest answer is shorter). */
  LONG_GREETING_MS: 6000,
  /** After a person's verdict: a beep this soon after it revises it to a machine. */
  BEEP_WATCH_MS: 10_000,
  /** A pause this long (and shorter than QUIET_MS) between two stretches of speech parts two phrases. */
  PHRASE_PAUSE_MS: 200,
  /** This many phrases (and at least MIN_PHRASES_SPEECH_MS of speech) are a greeting read out, not an answer. */
  MACHINE_PHRASES: 3,
  MIN_PHRASES_SPEECH_MS: 2000,
  /** Nothing heard this long after the answer: nobody is talking; greet. */
  SILENCE_MS: 2500,
  /** A tone this long is a beep. */
  BEEP_MIN_MS: 150,
  /** Tone purity (the strongest frequency's share of the frame's energy) that counts as a tone. */
  TONE_PURITY: 0.6,
  /** A frame quieter than this (RMS) is never a tone. */
  TONE_MIN_RMS: 150,
  /** After the greeting (leave_message): quiet this long, without a beep, means it ended. */
  GREETING_END_QUIET_MS: 1200,
} as const;

const FRAME_MS = 20;
const TONE_LOW_HZ = 350;
const TONE_HIGH_HZ = 2100;
const TONE_STEP_HZ = 25;
const FAX_HZ = 1100;
/** A CNG burst: 0.5 s of 1100 Hz (350–800 ms allows for the line). */
const CNG_MIN_MS = 350;
const CNG_MAX_MS = 800;

/** One frame's tone: the purest frequency and how pure it is. */
export function toneOf(frame: Int16Array, sampleRate: number): { hz: number; purity: number; rms: number } {
  let energy = 0;
  for (const v of frame) energy += v * v;
  const n = frame.length;
  const rms = Math.sqrt(energy / n);
  if (energy === 0) return { hz: 0, purity: 0, rms };
  let best = { hz: 0, power: 0 };
  for (let hz = TONE_LOW_HZ; hz <= TONE_HIGH_HZ; hz += TONE_STEP_HZ) {
    // Goertzel at `hz` (not bound to the DFT's bins).
    const w = (2 * Math.PI * hz) / sampleRate;
    const coeff = 2 * Math.cos(w);
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const s0 = frame[i]! + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    if (power > best.power) best = { hz, power };
  }
  // A pure sine of amplitude A over n samples: power (nA/2)², energy nA²/2: purity 1.
  return { hz: best.hz, purity: (2 * best.power) / (n * energy), rms };
}

export class AmdDetector {
  private readonly rate: number;
  private readonly resampler: Resampler | null;
  private readonly chunker: Rechunker;
  private ms = 0;
  private speechMs = 0;
  /** Stretches of speech parted by PHRASE_PAUSE_MS or more. */
  private phrases = 0;
  private firstVoiceAt: number | null = null;
  private lastVoiceAt: number | null = null;
  /** The current tone: since when, at what frequency. */
  private tone: { fromMs: number; hz: number } | null = null;
  /** Tones heard, once they ended (or while they last, with endMs null). */
  private readonly tones: Array<{ fromMs: number; endMs: number | null; hz: number }> = [];
  private decision: AmdDecision | null = null;
  private resolveDecision!: (d: AmdDecision) => void;
  /** Resolves once: the decision. */
  readonly decided: Promise<AmdDecision>;
  private resolveRevised!: (d: AmdDecision) => void;
  /** Resolves if a person's ambiguous answer turns out a machine's (its beep came): the revised decision. */
  readonly revised: Promise<AmdDecision>;
  private cueWaiter: { resolve: (c: MessageCue) => void; deadlineMs: number } | null = null;

  constructor(
    private readonly vad: VadEngine,
    callSampleRate: number,
  ) {
    this.rate = vad.sampleRate;
    this.resampler = callSampleRate === vad.sampleRate ? null : new Resampler(callSampleRate, vad.sampleRate);
    this.chunker = new Rechunker(samplesFor(FRAME_MS, this.rate));
    this.decided = new Promise((resolve) => (this.resolveDecision = resolve));
    this.revised = new Promise((resolve) => (this.resolveRevised = resolve));
  }

  /** Still worth hearing: undecided, a machine (its beep or greeting end awaited), or a person's ambiguous answer within the beep watch. */
  get listening(): boolean {
    if (!this.decision || this.decision.answeredBy === 'machine' || this.cueWaiter) return true;
    return this.decision.answeredBy !== 'fax' && this.ms - this.decision.atMs <= AMD.BEEP_WATCH_MS;
  }

  /** Audio time since the answer. */
  get elapsedMs(): number {
    return this.ms;
  }

  /** The caller's audio, in order, at the call's rate. */
  push(pcm: Int16Array): void {
    const at = this.resampler ? this.resampler.push(pcm) : pcm;
    for (const frame of this.chunker.push(at)) this.frame(frame);
  }

  /** Nothing more will be heard (the call ended): undecided is unknown. */
  stop(): void {
    this.decide('unknown', 'silence');
  }

  /** No voice has come (whatever the audio's clock says: a line that delivers no audio at all): unknown. */
  silent(): void {
    if (this.firstVoiceAt === null) this.decide('unknown', 'silence');
  }

  /**
   * leave_message: resolves when the message may be spoken: the machine's beep ended, or its greeting
   * did (GREETING_END_QUIET_MS of quiet after speech), or `maxWaitMs` of audio passed.
   */
  messageCue(maxWaitMs: number): Promise<MessageCue> {
    const ended = this.cueNow();
    if (ended) return Promise.resolve(ended);
    return new Promise((resolve) => (this.cueWaiter = { resolve, deadlineMs: this.ms + maxWaitMs }));
  }

  private frame(frame: Int16Array): void {
    this.ms += FRAME_MS;
    const t = this.ms;
    const tone = toneOf(frame, this.rate);
    const isTone = tone.rms >= AMD.TONE_MIN_RMS && tone.purity >= AMD.TONE_PURITY;
    if (isTone && this.tone && Math.abs(tone.hz - this.tone.hz) <= 60) {
      // the same tone goes on
    } else {
      if (this.tone) this.endTone(t - FRAME_MS);
      if (isTone) this.tone = { fromMs: t - FRAME_MS, hz: tone.hz };
    }
    const toneMs = this.tone ? t - this.tone.fromMs : 0;
    // A tone is not speech (the VAD takes a beep for a voice).
    const voiced = !isTone && this.vad.isSpeech(frame);
    if (voiced) {
      if (this.lastVoiceAt === null || t - this.lastVoiceAt > AMD.PHRASE_PAUSE_MS) this.phrases++;
      this.firstVoiceAt ??= t;
      this.lastVoiceAt = t;
      this.speechMs += FRAME_MS;
    }
    if (!this.decision) this.rules(t, toneMs);
    else if (this.decision.answeredBy !== 'machine' && this.decision.answeredBy !== 'fax' && toneMs >= AMD.BEEP_MIN_MS && t - this.decision.atMs <= AMD.BEEP_WATCH_MS) this.revise(t);
    const cue = this.cueWaiter && (this.cueNow() ?? (t >= this.cueWaiter.deadlineMs ? 'timeout' : null));
    if (cue && this.cueWaiter) {
      const { resolve } = this.cueWaiter;
      this.cueWaiter = null;
      resolve(cue);
    }
  }

  private endTone(endMs: number): void {
    const tone = this.tone!;
    this.tone = null;
    if (endMs - tone.fromMs >= AMD.BEEP_MIN_MS) this.tones.push({ fromMs: tone.fromMs, endMs, hz: tone.hz });
  }

  /** The message may go now: a beep ended (after the decision), or the greeting ended in quiet. */
  private cueNow(): MessageCue | null {
    const decidedAt = this.decision?.atMs ?? Infinity;
    if (this.tones.some((b) => b.endMs !== null && b.endMs >= decidedAt - 1000 && !this.tone)) return 'beep';
    if (this.tone) return null;
    if (this.lastVoiceAt !== null && this.ms - this.lastVoiceAt >= AMD.GREETING_END_QUIET_MS && this.ms >= decidedAt) return 'quiet';
    return null;
  }

  private rules(t: number, toneMs: number): void {
    const cng = (b: { hz: number; fromMs: number; endMs: number | null }) => Math.abs(b.hz - FAX_HZ) <= 50 && b.endMs !== null && b.endMs - b.fromMs >= CNG_MIN_MS && b.endMs - b.fromMs <= CNG_MAX_MS;
    // A fax calls with bursts of 1100 Hz before anyone speaks: two of them is a fax.
    const bursts = this.tones.filter((b) => cng(b) && (this.firstVoiceAt === null || b.fromMs < this.firstVoiceAt));
    if (bursts.length >= 2) return this.decide('fax', 'fax_tone');
    // A beep: a steady tone. Before any speech at 1100 Hz it may be the first of a fax's bursts: wait for the second (or speech).
    if (toneMs >= AMD.BEEP_MIN_MS) {
      const maybeFax = this.firstVoiceAt === null && Math.abs((this.tone?.hz ?? 0) - FAX_HZ) <= 50;
      if (!maybeFax) return this.decide('machine', 'beep');
    }
    const lastBurst = bursts[bursts.length - 1];
    if (lastBurst && this.firstVoiceAt === null && t - lastBurst.endMs! > 4000) return this.decide('machine', 'beep');
    if (this.firstVoiceAt === null) {
      if (t >= AMD.SILENCE_MS && !lastBurst && !this.tone) this.decide('unknown', 'silence');
      return;
    }
    if (this.speechMs >= AMD.LONG_GREETING_MS) return this.decide('machine', 'long_greeting');
    // Sentences read out one after the other: a greeting (a person answers in one breath, then waits).
    if (this.phrases >= AMD.MACHINE_PHRASES && this.speechMs >= AMD.MIN_PHRASES_SPEECH_MS) return this.decide('machine', 'phrases');
    const quietMs = t - this.lastVoiceAt!;
    if (quietMs < AMD.QUIET_MS) return;
    // A pause: the caller waits for an answer (a person), or a short greeting ended (a machine, recording,
    // or about to beep: see revise). Two sentences with a pause between are a greeting too.
    if (this.speechMs < AMD.SHORT_ANSWER_MS) return this.decide('human', 'short_answer');
    if (this.phrases >= 2) return this.decide('machine', 'phrases');
    this.decide('human', 'long_answer');
  }

  /** A beep after a person's verdict: it was a machine's greeting after all. */
  private revise(t: number): void {
    if (!this.decision || (this.decision.answeredBy !== 'human' && this.decision.answeredBy !== 'unknown')) return;
    this.decision = { answeredBy: 'machine', atMs: t, rule: 'late_beep' };
    this.resolveRevised(this.decision);
  }

  private decide(answeredBy: AnsweredBy, rule: AmdDecision['rule'], atMs = this.ms): void {
    if (this.decision) return;
    this.decision = { answeredBy, atMs, rule };
    this.resolveDecision(this.decision);
  }
}
