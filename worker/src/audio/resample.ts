// Streaming sample-rate conversion by windowed-sinc interpolation. Providers speak their own rates
// (espeak-ng 22050 Hz, OpenAI TTS 24000 Hz, pocketsphinx 16000 Hz); the call runs at AUDIO_SAMPLE_RATE.
// The cutoff follows the lower rate, so downsampling does not alias.

/** Taps each side at full bandwidth; widened by the rate ratio when downsampling. */
const BASE_HALF_TAPS = 8;

export class Resampler {
  private readonly step: number;
  private readonly cutoff: number;
  private readonly half: number;
  /** Input not yet consumed, with `half` samples of history before `pos`. */
  private buf: Float32Array;
  private pos: number;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    this.step = fromRate / toRate;
    this.cutoff = Math.min(1, toRate / fromRate) * 0.95;
    this.half = Math.ceil(BASE_HALF_TAPS / this.cutoff);
    this.buf = new Float32Array(this.half);
    this.pos = this.half;
  }

  get passthrough(): boolean {
    return this.fromRate === this.toRate;
  }

  push(input: Int16Array): Int16Array {
    if (this.passthrough) return input;
    const merged = new Float32Array(this.buf.length + input.length);
    merged.set(this.buf);
    for (let i = 0; i < input.length; i++) merged[this.buf.length + i] = input[i]!;
    this.buf = merged;
    return this.run();
  }

  /** Drains what is left (the tail needs `half` samples of look-ahead, so pad with silence). */
  flush(): Int16Array {
    if (this.passthrough) return new Int16Array(0);
    const out = this.push(new Int16Array(this.half + Math.ceil(this.step)));
    this.buf = new Float32Array(this.half);
    this.pos = this.half;
    return out;
  }

  private run(): Int16Array {
    const out: number[] = [];
    const buf = this.buf;
    const c = this.cutoff;
    const half = this.half;
    while (Math.floor(this.pos) + half < buf.length) {
      const base = Math.floor(this.pos);
      const frac = this.pos - base;
      let acc = 0;
      for (let k = -half + 1; k <= half; k++) {
        const x = k - frac;
        const w = 0.5 + 0.5 * Math.cos((Math.PI * x) / half); // Hann window
        const s = x === 0 ? c : Math.sin(Math.PI * c * x) / (Math.PI * x);
        acc += buf[base + k]! * s * w;
      }
      out.push(acc < -32768 ? -32768 : acc > 32767 ? 32767 : Math.round(acc));
      this.pos += this.step;
    }
    // Keep `half` samples of history before the next position.
    const keepFrom = Math.max(0, Math.floor(this.pos) - half);
    this.buf = buf.slice(keepFrom);
    this.pos -= keepFrom;
    return Int16Array.from(out);
  }
}

/** One-shot conversion of a whole buffer. */
export function resample(pcm: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate) return pcm;
  const r = new Resampler(fromRate, toRate);
  const a = r.push(pcm);
  const b = r.flush();
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  // The flush may overshoot by a few samples; trim to the exact expected length.
  return out.slice(0, Math.round((pcm.length * toRate) / fromRate));
}
