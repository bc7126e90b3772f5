import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { concatPcm } from '../audio/pcm.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { silence, speech } from '../../testing/audio.js';
import { babbleNoise, LEAD_MS, noisyPhrase, RATE, whiteNoise } from '../../testing/noise.js';
import { NoiseSuppressionProcessor } from './processor.js';
import { loadRnnoise, NoiseSuppressor, RnnoiseLoadError } from './rnnoise.js';

/** Deterministic chunk sizes from 0 to 700 samples. */
function* chunkSizes(): Generator<number> {
  let s = 12345;
  for (;;) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    yield s % 701;
  }
}

function feed(ns: NoiseSuppressor, pcm: Int16Array, sizes: Iterator<number> | number): { out: Int16Array; mismatched: number } {
  const parts: Int16Array[] = [];
  let mismatched = 0;
  for (let i = 0; i < pcm.length; ) {
    const n = typeof sizes === 'number' ? sizes : sizes.next().value!;
    const chunk = pcm.subarray(i, Math.min(pcm.length, i + n));
    const out = ns.push(chunk);
    if (out.length !== chunk.length) mismatched++;
    parts.push(out);
    i += chunk.length;
  }
  return { out: concatPcm(parts), mismatched };
}

/** The lag (samples) at which `out` best matches `input` (normalised cross-correlation). */
function bestLag(input: Int16Array, out: Int16Array, maxLag: number): number {
  let best = { r: -2, lag: 0 };
  for (let lag = 0; lag <= maxLag; lag++) {
    let [sab, saa, sbb] = [0, 0, 0];
    for (let i = 0; i + lag < out.length; i++) {
      sab += input[i]! * out[i + lag]!;
      saa += input[i]! ** 2;
      sbb += out[i + lag]! ** 2;
    }
    const r = sab / Math.sqrt(saa * sbb || 1);
    if (r > best.r) best = { r, lag };
  }
  return best.lag;
}

const db = (after: number, before: number) => 10 * Math.log10(after / before);
function power(x: Int16Array, from: number, to: number): number {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i]! ** 2;
  return s / (to - from);
}

describe('RNNoise framing', () => {
  it.each([8000, 16000, 24000, 44100, 48000])('at %i Hz: any chunk size in, as many samples out, one 10 ms frame of latency', async (rate) => {
    const said = concatPcm([speech('call me back later', rate), silence(200, rate)]);
    const ns = await NoiseSuppressor.create(rate);
    expect(ns.latencySamples).toBe(rate / 100);
    const { out, mismatched } = feed(ns, said, chunkSizes());
    expect(mismatched).toBe(0);
    expect(out.length).toBe(said.length);
    // The framing's frame comes first, as silence.
    expect(out.subarray(0, ns.latencySamples).every((x) => x === 0)).toBe(true);
    expect(out.subarray(ns.latencySamples).some((x) => x !== 0)).toBe(true);
    // How it was chunked changes nothing: whole 10 ms frames in, the same audio out.
    const whole = await NoiseSuppressor.create(rate);
    expect(feed(whole, said, rate / 100).out).toEqual(out);
    // The speech comes out delayed by the framing's frame and RNNoise's own (its overlap-add), plus the
    // resamplers' look-ahead (about 1 ms).
    expect(ns.delaySamples).toBeGreaterThanOrEqual(2 * ns.latencySamples);
    expect(ns.delaySamples).toBeLessThanOrEqual(2 * ns.latencySamples + (2.5 * rate) / 1000);
    expect(Math.abs(bestLag(said, out, rate / 20) - ns.delaySamples)).toBeLessThanOrEqual(1);
    ns.close();
    whole.close();
  });

  it('refuses a rate that has no whole 10 ms frame', async () => {
    await expect(NoiseSuppressor.create(22050)).rejects.toThrow('noise suppression needs a sample rate in whole 100 Hz (got 22050)');
  });

  it('frees its state at close: using it afterwards is an error, not a silent pass-through', async () => {
    const ns = await NoiseSuppressor.create(16000);
    ns.push(new Int16Array(320));
    ns.close();
    expect(() => ns.push(new Int16Array(320))).toThrow('RNNoise state used after close');
  });
});

describe('RNNoise loading', () => {
  it('names what is wrong when the WebAssembly module is missing or is something else', async () => {
    await expect(loadRnnoise('/nonexistent/rnnoise.wasm')).rejects.toThrow(RnnoiseLoadError);
    await expect(loadRnnoise('/nonexistent/rnnoise.wasm')).rejects.toThrow(/^noise suppression unavailable: cannot read the RNNoise WebAssembly module at \/nonexistent\/rnnoise.wasm/);
    const junk = path.join(mkdtempSync(path.join(tmpdir(), 'vp-rnnoise-')), 'rnnoise.wasm');
    writeFileSync(junk, 'not wasm');
    await expect(loadRnnoise(junk)).rejects.toThrow(`noise suppression unavailable: ${junk} is not a WebAssembly module this worker can run`);
  });

  it("loads the package's own module (the model inside it)", async () => {
    await expect(loadRnnoise()).resolves.toBeDefined();
  });
});

describe('RNNoise on noise alone', () => {
  // The noise before the phrase (LEAD_MS), once RNNoise has had half a second of it to adapt.
  const from = RATE / 2;
  const to = (LEAD_MS * RATE) / 1000;

  it('lowers white noise by more than 20 dB', async () => {
    const { pcm } = noisyPhrase('yes please', whiteNoise(RATE * 5), 5);
    const ns = await NoiseSuppressor.create(RATE);
    const out = feed(ns, pcm, 320).out;
    ns.close();
    expect(db(power(out, from, to), power(pcm, from, to))).toBeLessThan(-20);
  });

  it('lowers babble, less (it is speech-like)', async () => {
    const { pcm } = noisyPhrase('yes please', babbleNoise(RATE * 5), 5);
    const ns = await NoiseSuppressor.create(RATE);
    const out = feed(ns, pcm, 320).out;
    ns.close();
    expect(db(power(out, from, to), power(pcm, from, to))).toBeLessThan(-1);
  });
});

describe('NoiseSuppressionProcessor', () => {
  it("denoises the caller's audio frames and passes everything else on; the call's end frees its state", async () => {
    const ns = await NoiseSuppressor.create(RATE);
    const seen: Frame[] = [];
    const p = new Pipeline([new NoiseSuppressionProcessor(ns)], { downstream: (f) => seen.push(f) });
    const { pcm } = noisyPhrase('yes please', whiteNoise(RATE * 5), 5);
    for (let i = 0; i < pcm.length; i += 320) p.push({ kind: 'audio_in', pcm: pcm.subarray(i, i + 320), sampleRate: RATE, atMs: (i / RATE) * 1000 });
    p.push({ kind: 'say', text: 'hello' });
    await p.idle();
    const audio = seen.filter((f): f is Extract<Frame, { kind: 'audio_in' }> => f.kind === 'audio_in');
    expect(audio.map((f) => f.atMs)).toEqual(Array.from({ length: Math.ceil(pcm.length / 320) }, (_, k) => (k * 320 * 1000) / RATE));
    const out = concatPcm(audio.map((f) => f.pcm));
    expect(out.length).toBe(pcm.length);
    expect(db(power(out, from(), to()), power(pcm, from(), to()))).toBeLessThan(-20);
    expect(seen.at(-1)).toEqual({ kind: 'say', text: 'hello' });
    p.cancel('hangup');
    await p.idle();
    expect(() => ns.push(new Int16Array(320))).toThrow('RNNoise state used after close');
  });
});

const from = () => RATE / 2;
const to = () => (LEAD_MS * RATE) / 1000;
