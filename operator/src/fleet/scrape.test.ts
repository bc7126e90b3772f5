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
  it('fails when a metric is missing', () => {
    expect(() => parseWorkerMetrics('voice_worker_active_calls 1\n')).toThrow('missing');
  });
});
