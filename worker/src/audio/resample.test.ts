import { Resampler, resample } from './resample.js';

const sine = (hz: number, rate: number, seconds: number) =>
  Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(10000 * Math.sin((2 * Math.PI * hz * i) / rate)));

/** Frequency estimate from rising zero crossings. */
function frequency(pcm: Int16Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if (pcm[i - 1]! < 0 && pcm[i]! >= 0) crossings++;
  return (crossings * rate) / pcm.length;
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((s, x) => s + x * x, 0) / pcm.length);

describe('Resampler', () => {
  it.each([
    [22050, 16000],
    [24000, 16000],
    [16000, 48000],
    [16000, 8000],
  ])('converts %i Hz to %i Hz keeping pitch, length and level', (from, to) => {
    const out = resample(sine(440, from, 1), from, to);
    expect(out.length).toBe(to);
    expect(frequency(out, to)).toBeCloseTo(440, -1);
    expect(rms(out.subarray(100, -100))).toBeGreaterThan(6500);
    expect(rms(out.subarray(100, -100))).toBeLessThan(7600);
  });

  it('removes content above the new Nyquist frequency instead of aliasing it', () => {
    // 10 kHz cannot exist at 16 kHz: it must be filtered out, not folded to 6 kHz.
    const out = resample(sine(10_000, 48000, 0.5), 48000, 16000);
    expect(rms(out.subarray(100, -100))).toBeLessThan(700);
  });

  it('gives the same audio streamed in odd-sized chunks as in one piece', () => {
    const input = sine(300, 22050, 0.5);
    const whole = resample(input, 22050, 16000);
    const r = new Resampler(22050, 16000);
    const parts: number[] = [];
    for (let i = 0; i < input.length; i += 337) parts.push(...r.push(input.subarray(i, i + 337)));
    parts.push(...r.flush());
    const streamed = Int16Array.from(parts).subarray(0, whole.length);
    let maxDiff = 0;
    for (let i = 0; i < whole.length; i++) maxDiff = Math.max(maxDiff, Math.abs(whole[i]! - streamed[i]!));
    expect(maxDiff).toBeLessThanOrEqual(1);
  });

  it('passes audio through untouched at equal rates', () => {
    const input = sine(100, 16000, 0.1);
    expect(new Resampler(16000, 16000).push(input)).toBe(input);
  });
});
