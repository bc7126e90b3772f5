// RNNoise noise suppression (docs/design.md §15): the WebAssembly build of @jitsi/rnnoise-wasm, its model
// compiled in (no download). One module per process, one denoiser state per call.
//
// The package's JavaScript glue is an ES module in a package without "type": "module" (Node warns and
// re-parses it; jest cannot load it) and its async variant fetches the .wasm by URL, which Node cannot. So
// the .wasm is instantiated here directly: it imports two emscripten helpers and exports the functions
// under minified names, fixed for the pinned version (0.2.1); a build that does not match is refused by name.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Resampler } from '../audio/resample.js';

/** RNNoise's rate and frame: 10 ms at 48 kHz, float samples scaled like int16. */
export const RNNOISE_SAMPLE_RATE = 48_000;
export const RNNOISE_FRAME_SAMPLES = 480;

/** The little of the WebAssembly API used here (the worker's TypeScript libs carry no declarations of it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>;
  Memory: abstract new (...args: never[]) => WasmMemory;
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface RnnoiseExports {
  memory: WasmMemory;
  callCtors(): void;
  create(model: number): number;
  destroy(state: number): void;
  malloc(bytes: number): number;
  free(ptr: number): void;
  /** Denoises `input` into `output` (both RNNOISE_FRAME_SAMPLES floats); returns the frame's voice probability. */
  processFrame(state: number, output: number, input: number): number;
}

/** The wasm module could not be loaded or is not the build this code knows: noise suppression cannot run. */
export class RnnoiseLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`noise suppression unavailable: ${message}`, options);
    this.name = 'RnnoiseLoadError';
  }
}

/** Export names of @jitsi/rnnoise-wasm 0.2.1's rnnoise.wasm (from its glue, dist/rnnoise.js). */
const EXPORTS = { memory: 'c', callCtors: 'd', create: 'f', malloc: 'g', destroy: 'h', free: 'i', processFrame: 'j' } as const;

let loading: Promise<RnnoiseExports> | null = null;

/** The process's RNNoise module, loaded once; rejects with RnnoiseLoadError (and tries again on the next call). */
export function loadRnnoise(wasmPath?: string): Promise<RnnoiseExports> {
  if (wasmPath) return instantiate(wasmPath);
  loading ??= instantiate().catch((err: unknown) => {
    loading = null;
    throw err;
  });
  return loading;
}

async function instantiate(wasmPath?: string): Promise<RnnoiseExports> {
  let file = wasmPath;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    file ??= createRequire(import.meta.url).resolve('@jitsi/rnnoise-wasm/dist/rnnoise.wasm');
    bytes = new Uint8Array(await readFile(file));
  } catch (err) {
    throw new RnnoiseLoadError(`cannot read the RNNoise WebAssembly module${file ? ` at ${file}` : ' (@jitsi/rnnoise-wasm not installed)'}: ${(err as Error).message}`, { cause: err });
  }
  let memory: WasmMemory | null = null;
  const imports = {
    a: {
      // _emscripten_resize_heap: the heap grows in 64 KiB pages.
      a: (requested: number): number => {
        const m = memory!;
        try {
          m.grow(Math.ceil(((requested >>> 0) - m.buffer.byteLength) / 65536));
          return 1;
        } catch {
          return 0;
        }
      },
      // _emscripten_memcpy_big
      b: (dest: number, src: number, num: number): void => {
        new Uint8Array(memory!.buffer).copyWithin(dest, src, src + num);
      },
    },
  };
  let exports: Record<string, unknown>;
  try {
    exports = (await Wasm.instantiate(bytes, imports)).instance.exports;
  } catch (err) {
    throw new RnnoiseLoadError(`${file} is not a WebAssembly module this worker can run: ${(err as Error).message}`, { cause: err });
  }
  const missing = Object.entries(EXPORTS).filter(([key, name]) => (key === 'memory' ? !(exports[name] instanceof Wasm.Memory) : typeof exports[name] !== 'function'));
  if (missing.length) throw new RnnoiseLoadError(`${file} is not the @jitsi/rnnoise-wasm 0.2.1 build (no ${missing.map(([key]) => key).join(', ')})`);
  memory = exports[EXPORTS.memory] as WasmMemory;
  const fn = (key: keyof typeof EXPORTS) => exports[EXPORTS[key]] as (...args: number[]) => number;
  const m: RnnoiseExports = {
    memory,
    callCtors: fn('callCtors') as () => void,
    create: fn('create'),
    destroy: fn('destroy') as (s: number) => void,
    malloc: fn('malloc'),
    free: fn('free') as (p: number) => void,
    processFrame: fn('processFrame'),
  };
  m.callCtors();
  // The module's own check: a state denoises a frame of silence into silence.
  const probe = new RnnoiseState(m);
  const out = probe.process(new Float32Array(RNNOISE_FRAME_SAMPLES));
  probe.close();
  if (out.some((x) => x !== 0)) throw new RnnoiseLoadError(`${file} does not behave as RNNoise (silence in, sound out)`);
  return m;
}

/** One RNNoise state and its frame buffers in the module's heap. */
class RnnoiseState {
  private state: number;
  private readonly buf: number;
  private closed = false;

  constructor(private readonly m: RnnoiseExports) {
    this.state = m.create(0); // 0: the built-in model
    this.buf = m.malloc(RNNOISE_FRAME_SAMPLES * 4);
    if (!this.state || !this.buf) {
      this.close();
      throw new RnnoiseLoadError('the RNNoise module could not allocate a state');
    }
  }

  /** Denoises one frame in place (float, int16 scale); returns it. */
  process(frame: Float32Array): Float32Array {
    if (this.closed) throw new Error('RNNoise state used after close');
    // The heap may have grown (and its buffer changed) since the last call: view it afresh.
    const heap = new Float32Array(this.m.memory.buffer, this.buf, RNNOISE_FRAME_SAMPLES);
    heap.set(frame);
    this.m.processFrame(this.state, this.buf, this.buf);
    frame.set(new Float32Array(this.m.memory.buffer, this.buf, RNNOISE_FRAME_SAMPLES));
    return frame;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.state) this.m.destroy(this.state);
    if (this.buf) this.m.free(this.buf);
    this.state = 0;
  }
}

/**
 * A call's noise suppressor at the call's rate: `push` takes caller audio in chunks of any size and returns
 * exactly as many samples, the denoised audio `latencySamples` later (one 10 ms frame at the call's rate: the
 * first push's first frame is silence). Audio is resampled to 48 kHz around RNNoise and back.
 */
export class NoiseSuppressor {
  /** One 10 ms frame at the call's rate: what the framing holds back. */
  readonly latencySamples: number;
  /**
   * Where the caller's sound comes out, in samples at the call's rate: the framing's frame, RNNoise's own
   * (its overlap-add) and the resamplers' look-ahead (about 1 ms): 21 ms at 16 kHz.
   */
  readonly delaySamples: number;
  private readonly up: Resampler;
  private readonly down: Resampler;
  private readonly frame = new Float32Array(RNNOISE_FRAME_SAMPLES);
  private frameFill = 0;
  /** Denoised audio at the call's rate, not yet returned (starts with one frame of silence). */
  private out: Int16Array;
  private outLen: number;
  private readonly state: RnnoiseState;

  private constructor(m: RnnoiseExports, readonly sampleRate: number) {
    this.latencySamples = sampleRate / 100;
    this.up = new Resampler(sampleRate, RNNOISE_SAMPLE_RATE);
    this.down = new Resampler(RNNOISE_SAMPLE_RATE, sampleRate);
    // Primed with their look-ahead in silence, the resamplers turn every 10 ms in into exactly 10 ms out, so
    // the one frame of silence `out` starts with is all the latency the framing needs.
    this.up.push(new Int16Array(this.up.lookahead));
    this.down.push(new Int16Array(this.down.lookahead));
    this.delaySamples = 2 * this.latencySamples + this.up.lookahead + (this.down.lookahead * sampleRate) / RNNOISE_SAMPLE_RATE;
    this.out = new Int16Array(this.latencySamples * 4);
    this.outLen = this.latencySamples;
    this.state = new RnnoiseState(m);
  }

  /** A suppressor for a call at `sampleRate` (a multiple of 100 Hz, so 10 ms is whole samples). */
  static async create(sampleRate: number): Promise<NoiseSuppressor> {
    if (!Number.isInteger(sampleRate / 100) || sampleRate <= 0) throw new RangeError(`noise suppression needs a sample rate in whole 100 Hz (got ${sampleRate})`);
    return new NoiseSuppressor(await loadRnnoise(), sampleRate);
  }

  push(pcm: Int16Array): Int16Array {
    const at48k = this.up.push(pcm);
    for (let i = 0; i < at48k.length; ) {
      const n = Math.min(RNNOISE_FRAME_SAMPLES - this.frameFill, at48k.length - i);
      for (let j = 0; j < n; j++) this.frame[this.frameFill + j] = at48k[i + j]!;
      this.frameFill += n;
      i += n;
      if (this.frameFill === RNNOISE_FRAME_SAMPLES) {
        this.frameFill = 0;
        this.append(this.down.push(toInt16(this.state.process(this.frame))));
      }
    }
    // Never short by construction; should it be (a resampler changed), what is missing is silence, not a shorter chunk.
    const n = Math.min(pcm.length, this.outLen);
    const result = new Int16Array(pcm.length);
    result.set(this.out.subarray(0, n));
    this.out.copyWithin(0, n, this.outLen);
    this.outLen -= n;
    return result;
  }

  /** Frees the call's RNNoise state (the call ended). */
  close(): void {
    this.state.close();
  }

  private append(pcm: Int16Array): void {
    if (this.outLen + pcm.length > this.out.length) {
      const grown = new Int16Array(Math.max(this.out.length * 2, this.outLen + pcm.length));
      grown.set(this.out.subarray(0, this.outLen));
      this.out = grown;
    }
    this.out.set(pcm, this.outLen);
    this.outLen += pcm.length;
  }
}

function toInt16(frame: Float32Array): Int16Array {
  const out = new Int16Array(frame.length);
  for (let i = 0; i < frame.length; i++) {
    const x = frame[i]!;
    out[i] = x < -32768 ? -32768 : x > 32767 ? 32767 : Math.round(x);
  }
  return out;
}
