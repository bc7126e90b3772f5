import { parseWorkerMetrics, sampleSum } from './scrape.js';

const text = `# HELP voice_worker_active_calls Live calls
# TYPE voice_worker_active_calls gauge
voice_worker_active_calls 3
voice_worker_active_calls_peak 9
# TYPE voice_worker_max_calls gauge
voice_worker_max_calls{worker="a"} 30
`;

describe('worker metrics parsing', () => {
  it('reads active and max calls, ignoring longer names with the same prefix', () => {
    expect(parseWorkerMetrics(text)).toEqual({ activeCalls: 3, maxCalls: 30 });
  });
  it('sums labelled samples', () => {
    expect(sampleSum('m{a="1"} 2\nm{a="2"} 5 1700000000\n', 'm')).toBe(7);
  });
  it('reads load and admittable calls when the worker reports them', () => {
    const next = `${text}# TYPE voice_worker_load gauge\nvoice_worker_load 0.42\nvoice_worker_load_threshold 0.7\nvoice_worker_admittable_calls 5\n`;
    expect(parseWorkerMetrics(next)).toEqual({ activeCalls: 3, maxCalls: 30, load: 0.42, admittableCalls: 5 });
  });
  it('leaves load and admittable calls out for an older worker', () => {
    expect(parseWorkerMetrics(text)).not.toHaveProperty('load');
    expect(parseWorkerMetrics(text)).not.toHaveProperty('admittableCalls');
  });
  it('caps load at 1 and admittable calls at the free slots, and ignores negative values', () => {
    expect(parseWorkerMetrics(`${text}voice_worker_load 1.7\nvoice_worker_admittable_calls 40\n`)).toEqual({ activeCalls: 3, maxCalls: 30, load: 1, admittableCalls: 27 });
    expect(parseWorkerMetrics(`${text}voice_worker_load -1\nvoice_worker_admittable_calls -2\n`)).toEqual({ activeCalls: 3, maxCalls: 30 });
  });
  it('fails when a metric is missing', () => {
    expect(() => parseWorkerMetrics('voice_worker_active_calls 1\n')).toThrow('missing');
  });
});
