import { decideScale, type ScaleInput, type ScalePolicy, type WorkerSample } from './scaling.js';

const policy: ScalePolicy = {
  minReplicas: 1,
  maxReplicas: 10,
  callsPerWorker: 10,
  bufferCalls: 0,
  bufferPercent: 0,
  scaleDownDelayMs: 60_000,
};
const worker = (name: string, activeCalls: number | null, extra: Partial<WorkerSample> = {}): WorkerSample => ({
  name,
  activeCalls,
  maxCalls: activeCalls === null ? null : 10,
  ready: true,
  terminating: false,
  ...extra,
});
const input = (over: Partial<ScaleInput>): ScaleInput => ({
  policy,
  workers: [],
  currentReplicas: 1,
  nowMs: 1_000_000,
  memory: null,
  ...over,
});

describe('decideScale', () => {
  it('creates with min replicas when there is no Deployment yet', () => {
    const d = decideScale(input({ currentReplicas: undefined }));
    expect(d).toMatchObject({ action: 'create', replicas: 1, recommendedReplicas: 1, activeCalls: 0, capacity: 0 });
  });

  it('computes ceil((active + buffer calls) / callsPerWorker)', () => {
    const d = decideScale(input({ policy: { ...policy, bufferCalls: 5 }, workers: [worker('a', 10), worker('b', 6)], currentReplicas: 2 }));
    expect(d).toMatchObject({ action: 'up', replicas: 3, recommendedReplicas: 3, activeCalls: 16, capacity: 20, bufferCalls: 5 });
  });

  it('uses the larger of buffer calls and buffer percent', () => {
    const workers = [worker('a', 10), worker('b', 10)];
    const byPercent = decideScale(input({ policy: { ...policy, bufferCalls: 2, bufferPercent: 50 }, workers, currentReplicas: 2 }));
    expect(byPercent).toMatchObject({ bufferCalls: 10, recommendedReplicas: 3 });
    const byCalls = decideScale(input({ policy: { ...policy, bufferCalls: 11, bufferPercent: 50 }, workers, currentReplicas: 2 }));
    expect(byCalls).toMatchObject({ bufferCalls: 11, recommendedReplicas: 4 });
  });

  it('clamps to minReplicas and maxReplicas', () => {
    const low = decideScale(input({ policy: { ...policy, minReplicas: 3 }, currentReplicas: 3, workers: [worker('a', 0)] }));
    expect(low).toMatchObject({ action: 'steady', replicas: 3, recommendedReplicas: 3 });
    const busy = Array.from({ length: 4 }, (_, i) => worker(`w${i}`, 10));
    const high = decideScale(input({ policy: { ...policy, maxReplicas: 4, bufferCalls: 50 }, currentReplicas: 4, workers: busy }));
    expect(high).toMatchObject({ action: 'steady', replicas: 4, recommendedReplicas: 4 });
  });

  it('applies a lowered maxReplicas at once', () => {
    const d = decideScale(input({ policy: { ...policy, maxReplicas: 2 }, currentReplicas: 5, workers: [worker('a', 0)] }));
    expect(d).toMatchObject({ action: 'down', replicas: 2 });
  });

  it('scales up at once, whatever the delay', () => {
    const d = decideScale(input({ currentReplicas: 1, workers: [worker('a', 10)], policy: { ...policy, bufferCalls: 1 } }));
    expect(d).toMatchObject({ action: 'up', replicas: 2, memory: null });
  });

  it('scales down only after the recommendation stayed low for the whole delay', () => {
    const workers = [worker('a', 3), worker('b', 0), worker('c', 0)];
    const first = decideScale(input({ currentReplicas: 3, workers, nowMs: 0 }));
    expect(first).toMatchObject({ action: 'hold', replicas: 3, recommendedReplicas: 1, memory: { belowSinceMs: 0, peakReplicas: 1 } });
    const before = decideScale(input({ currentReplicas: 3, workers, nowMs: 59_999, memory: first.memory }));
    expect(before).toMatchObject({ action: 'hold', replicas: 3 });
    const after = decideScale(input({ currentReplicas: 3, workers, nowMs: 60_000, memory: before.memory }));
    expect(after).toMatchObject({ action: 'down', replicas: 1, memory: null, removable: ['b', 'c'] });
  });

  it('a rise back to the current replicas cancels a pending scale-down', () => {
    const pending = decideScale(input({ currentReplicas: 2, workers: [worker('a', 1), worker('b', 0)], nowMs: 0 }));
    expect(pending.memory).not.toBeNull();
    const back = decideScale(input({ currentReplicas: 2, workers: [worker('a', 10), worker('b', 5)], nowMs: 30_000, memory: pending.memory }));
    expect(back).toMatchObject({ action: 'steady', memory: null });
    const again = decideScale(input({ currentReplicas: 2, workers: [worker('a', 1), worker('b', 0)], nowMs: 61_000, memory: back.memory }));
    expect(again).toMatchObject({ action: 'hold', replicas: 2, memory: { belowSinceMs: 61_000 } });
  });

  it('scales down to the peak recommendation seen during the delay', () => {
    const workers4 = [worker('a', 5), worker('b', 0), worker('c', 0), worker('d', 0)];
    const t0 = decideScale(input({ currentReplicas: 4, workers: workers4, nowMs: 0 }));
    const busier = [worker('a', 15), worker('b', 10), worker('c', 0), worker('d', 0)];
    const t1 = decideScale(input({ currentReplicas: 4, workers: busier, nowMs: 10_000, memory: t0.memory }));
    expect(t1.memory).toEqual({ belowSinceMs: 0, peakReplicas: 3 });
    const t2 = decideScale(input({ currentReplicas: 4, workers: workers4, nowMs: 60_000, memory: t1.memory }));
    expect(t2).toMatchObject({ action: 'down', replicas: 3, recommendedReplicas: 1, removable: ['b'] });
  });

  it('never removes a worker that holds calls', () => {
    const workers = [worker('a', 1), worker('b', 1), worker('c', 1), worker('d', 0)];
    const t0 = decideScale(input({ currentReplicas: 4, workers, nowMs: 0 }));
    const t1 = decideScale(input({ currentReplicas: 4, workers, nowMs: 120_000, memory: t0.memory }));
    expect(t1).toMatchObject({ action: 'down', replicas: 3, recommendedReplicas: 1, busyWorkers: 3, removable: ['d'] });
    // Three busy workers on three replicas: nothing may go, however long the delay has run.
    const t2 = decideScale(input({ currentReplicas: 3, workers: workers.slice(0, 3), nowMs: 240_000, memory: t1.memory }));
    expect(t2).toMatchObject({ action: 'hold', replicas: 3, removable: [] });
  });

  it('deletion costs follow active calls so idle workers go first', () => {
    const d = decideScale(input({ currentReplicas: 3, workers: [worker('a', 7), worker('b', 0), worker('c', null)] }));
    expect([...d.deletionCosts.entries()]).toEqual([
      ['a', 7],
      ['b', 0],
    ]);
  });

  it('does not scale down while a worker cannot be read, and counts it as busy', () => {
    const workers = [worker('a', 0), worker('b', null), worker('c', 0)];
    const t0 = decideScale(input({ currentReplicas: 3, workers, nowMs: 0 }));
    const t1 = decideScale(input({ currentReplicas: 3, workers, nowMs: 120_000, memory: t0.memory }));
    expect(t1).toMatchObject({ action: 'hold', replicas: 3, scrapeFailures: 1, busyWorkers: 1 });
    expect(t1.reason).toContain('unreadable');
  });

  it('leaves terminating workers out of calls and capacity', () => {
    const d = decideScale(input({ currentReplicas: 1, workers: [worker('a', 4), worker('old', 9, { terminating: true })] }));
    expect(d).toMatchObject({ activeCalls: 4, capacity: 10, recommendedReplicas: 1, action: 'steady' });
    expect(d.deletionCosts.has('old')).toBe(false);
  });

  it('removes not-ready idle workers before ready ones', () => {
    const workers = [worker('a', 0), worker('b', 0, { ready: false }), worker('c', 0)];
    const t0 = decideScale(input({ currentReplicas: 3, workers, nowMs: 0, policy: { ...policy, scaleDownDelayMs: 0 } }));
    expect(t0).toMatchObject({ action: 'down', replicas: 1, removable: ['b', 'a'] });
  });
});
