// Streaming sample-rate conversion by windowed-sinc interpolation. Providers speak their own rates
// (espeak-ng 22050 Hz, OpenAI TTS 24000 Hz, pocketsphinx 16000 Hz); the call runs at AUDIO_SAMPLE_RATE.
// The cutoff follows the lower rate, so downsampling does not alias.
//
// Polyphase: with integer rates, output n sits at input position n·M/L (M/L = from/to in lowest
// terms), so only L fractional offsets ever occur. Their filter taps are computed once per rate pair
// and shared by every call; converting is then a multiply-add per tap. (Evaluating sin and cos per tap
// and sample blocked the event loop for ~70 ms per 3 s espeak-ng sentence.)

/** Taps each side at full bandwidth; widened by the rate ratio when downsampling. */
const BASE_HALF_TAPS = 8;

interface Filter {
  /** Output phases (L) and input step per output in 1/L units (M). */
  readonly phases: number;
  readonly step: number;
  readonly half: number;
  /** `phases` rows of 2·half taps, for offsets k = -half+1 … half around the base sample. */
  readonly taps: Float32Array;
}

const filters = new Map<string, Filter>();

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

function filterFor(fromRate: number, toRate: number): Filter {
  const key = `${fromRate}>${toRate}`;
  let f = filters.get(key);
  if (f) return f;
  const g = gcd(fromRate, toRate);
  const phases = toRate / g;
  const step = fromRate / g;
  const cutoff = Math.min(1, toRate / fromRate) * 0.95;
  const half = Math.ceil(BASE_HALF_TAPS / cutoff);
  const width = 2 * half;
  const taps = new Float32Array(phases * width);
  for (let p = 0; p < phases; p++) {
    const frac = p / phases;
    for (let j = 0; j < width; j++) {
      const x = j - half + 1 - frac;
      const w = 0.5 + 0.5 * Math.cos((Math.PI * x) / half); // Hann window
      const s = x === 0 ? cutoff : Math.sin(Math.PI * cutoff * x) / (Math.PI * x);
      taps[p * width + j] = s * w;
    }
  }
  f = { phases, step, half, taps };
  filters.set(key, f);
  return f;
}

export class Resampler {
  private readonly filter: Filter | null;
  /** Input not yet consumed, with `half` samples of history before `base`. */
  private buf: Float32Array;
  /** Index in `buf` of the sample at or before the next output, and the offset from it in 1/L. */
  private base: number;
  private phase = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) {
      throw new RangeError(`sample rates must be positive integers (got ${fromRate} → ${toRate})`);
    }
    this.filter = fromRate === toRate ? null : filterFor(fromRate, toRate);
    const half = this.filter?.half ?? 0;
    this.buf = new Float32Array(half);
    this.base = half;
  }

  get passthrough(): boolean {
    return this.filter === null;
  }

  /** Input samples held back for the filter's look-ahead (0 passing through): the output trails the input by this many. */
  get lookahead(): number {
    return this.filter?.half ?? 0;
  }

  push(input: Int16Array): Int16Array {
    if (!this.filter) return input;
    const merged = new Float32Array(this.buf.length + input.length);
    merged.set(this.buf);
    merged.set(input, this.buf.length);
    this.buf = merged;
    return this.run(this.filter);
  }

  /** Drains what is left (the tail needs `half` samples of look-ahead, so pad with silence). */
  flush(): Int16Array {
    if (!this.filter) return new Int16Array(0);
    const { half, step, phases } = this.filter;
    const out = this.push(new Int16Array(half + Math.ceil(step / phases)));
    this.buf = new Float32Array(half);
    this.base = half;
    this.phase = 0;
    return out;
  }

  private run(f: Filter): Int16Array {
    const { half, phases, step, taps } = f;
    const width = 2 * half;
    const buf = this.buf;
    const available = buf.length - half - this.base;
    const out = new Int16Array(available > 0 ? Math.ceil(((available + 1) * phases) / step) + 1 : 0);
    let n = 0;
    let base = this.base;
    let phase = this.phase;
    while (base + half < buf.length) {
      const row = phase * width;
      const first = base - half + 1;
      let acc = 0;
      for (let j = 0; j < width; j++) acc += buf[first + j]! * taps[row + j]!;
      out[n++] = acc < -32768 ? -32768 : acc > 32767 ? 32767 : Math.round(acc);
      phase += step;
      base += Math.floor(phase / phases);
      phase %= phases;
    }
    // Keep `half` samples of history before the next position.
    const keepFrom = Math.max(0, base - half);
    this.buf = buf.slice(keepFrom);
    this.base = base - keepFrom;
    this.phase = phase;
    return out.subarray(0, n);
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
