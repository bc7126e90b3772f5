import { decideScale, type ScaleInput, type ScalePolicy, type WorkerSample } from './scaling.js';

const policy: ScalePolicy = {
  minReplicas: 1,
  maxReplicas: 10,
  callsPerWorker: 10,
  targetLoad: 0.6,
  bufferCalls: 0,
  bufferPercent: 0,
  scaleDownDelayMs: 60_000,
};
const worker = (name: string, activeCalls: number | null, extra: Partial<WorkerSample> = {}): WorkerSample => ({
  name,
  activeCalls,
  maxCalls: activeCalls === null ? null : 10,
  load: null,
  admittableCalls: null,
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
    // Workers without the load gauges (older ones): the calls rule alone, as before.
    expect(d).toMatchObject({ rule: 'calls', load: null, admittableCalls: null, loadWorkers: 0, reason: '16 active + 5 buffer calls at 10/worker need 3 workers' });
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

describe('decideScale on load', () => {
  const loaded = (name: string, activeCalls: number, load: number, admittableCalls: number, extra: Partial<WorkerSample> = {}) =>
    worker(name, activeCalls, { load, admittableCalls, ...extra });

  it('scales up on ceil(Σ load / targetLoad) while the calls fit the slots', () => {
    // 4 calls of 20 slots: the calls rule says 1 worker; a load of 1.5 at 0.6 each needs 3.
    const d = decideScale(input({ currentReplicas: 2, workers: [loaded('a', 2, 0.8, 0), loaded('b', 2, 0.7, 1)] }));
    expect(d).toMatchObject({ action: 'up', replicas: 3, recommendedReplicas: 3, rule: 'load', load: 1.5, admittableCalls: 1, loadWorkers: 2, activeCalls: 4 });
    expect(d.reason).toBe('load 1.5 of 2 workers at targetLoad 0.6 need 3 workers');
  });

  it('takes the calls rule when it needs more workers than the load', () => {
    const d = decideScale(input({ currentReplicas: 2, workers: [loaded('a', 10, 0.3, 0), loaded('b', 9, 0.3, 1)], policy: { ...policy, bufferCalls: 5 } }));
    expect(d).toMatchObject({ action: 'up', replicas: 3, rule: 'calls', load: 0.6 });
    expect(d.reason).toBe('19 active + 5 buffer calls at 10/worker need 3 workers');
  });

  it('counts a load exactly at the target as fitting, floats notwithstanding', () => {
    // 0.2 + 0.4 = 0.6000000000000001 in binary floating point, and that over 0.6 is 1.0000000000000002.
    const d = decideScale(input({ currentReplicas: 1, workers: [loaded('a', 1, 0.2, 4), loaded('b', 1, 0.4, 3)] }));
    expect(d).toMatchObject({ action: 'steady', replicas: 1, recommendedReplicas: 1 });
    const over = decideScale(input({ currentReplicas: 1, workers: [loaded('a', 1, 0.2, 4), loaded('b', 1, 0.41, 3)] }));
    expect(over).toMatchObject({ action: 'up', replicas: 2, rule: 'load' });
  });

  it('with targetLoad 1 sizes for full workers', () => {
    const p = { ...policy, targetLoad: 1 };
    const full = decideScale(input({ policy: p, currentReplicas: 2, workers: [loaded('a', 3, 1, 0), loaded('b', 3, 1, 0)] }));
    // Σ load 2 fits 2 workers at 1 each, but no worker can take a call: one more.
    expect(full).toMatchObject({ action: 'up', replicas: 3, rule: 'admittable' });
    const d = decideScale(input({ policy: p, currentReplicas: 2, workers: [loaded('a', 3, 1, 1), loaded('b', 3, 0.95, 1)] }));
    expect(d).toMatchObject({ action: 'steady', replicas: 2, recommendedReplicas: 2, rule: 'load' });
    const up = decideScale(input({ policy: p, currentReplicas: 2, workers: [loaded('a', 3, 1, 1), loaded('b', 3, 1, 1), loaded('c', 0, 0.05, 5)] }));
    expect(up).toMatchObject({ action: 'up', recommendedReplicas: 3, rule: 'load' });
  });

  it('sums the load of the workers that report it; older workers count for the calls rule only', () => {
    // a and b report, c is an older worker: Σ load 1.9 → ceil(1.9 / 0.6) = 4; the calls (15) need 2.
    const workers = [loaded('a', 5, 0.9, 0), loaded('b', 5, 1, 0), worker('c', 5)];
    const d = decideScale(input({ currentReplicas: 3, workers }));
    expect(d).toMatchObject({ action: 'up', replicas: 4, rule: 'load', load: 1.9, admittableCalls: 0, loadWorkers: 2, activeCalls: 15 });
    // All older: no load, and the calls rule alone holds the fleet at 2.
    const old = decideScale(input({ currentReplicas: 2, workers: [worker('a', 9), worker('b', 9)] }));
    expect(old).toMatchObject({ action: 'steady', replicas: 2, rule: 'calls', load: null });
  });

  it('a worker whose metrics cannot be read adds no load', () => {
    const d = decideScale(input({ currentReplicas: 2, workers: [loaded('a', 1, 0.5, 3), worker('b', null)] }));
    expect(d).toMatchObject({ action: 'hold', replicas: 2, recommendedReplicas: 1, load: 0.5, loadWorkers: 1, scrapeFailures: 1 });
  });

  it('leaves terminating workers out of the load and admittable calls', () => {
    const workers = [loaded('a', 1, 0.3, 8), loaded('old', 9, 1, 0, { terminating: true })];
    const d = decideScale(input({ currentReplicas: 1, workers }));
    expect(d).toMatchObject({ action: 'steady', replicas: 1, load: 0.3, admittableCalls: 8, loadWorkers: 1, rule: 'calls' });
  });

  it('adds a worker when admittable calls ran out on every ready worker, though load and calls fit', () => {
    // Both workers at their load threshold with few calls: the calls rule says 1, the load 0.5 / 0.6 → 1.
    const d = decideScale(input({ currentReplicas: 2, workers: [loaded('a', 2, 0.25, 0), loaded('b', 2, 0.25, 0)] }));
    expect(d).toMatchObject({ action: 'up', replicas: 3, recommendedReplicas: 3, rule: 'admittable', admittableCalls: 0 });
    expect(d.reason).toBe('0 admittable calls on 2 ready workers need 3 workers');
    // One worker with room left: no rule fires beyond the calls one.
    const room = decideScale(input({ currentReplicas: 2, workers: [loaded('a', 2, 0.25, 0), loaded('b', 2, 0.25, 1)] }));
    expect(room).toMatchObject({ rule: 'calls', recommendedReplicas: 1, action: 'hold' });
  });

  it('does not take admittable 0 from a worker that is not ready, terminating, or an older one as ran out', () => {
    // An older worker (unknown admittable) among ready ones: the rule stays off.
    const mixed = decideScale(input({ currentReplicas: 2, workers: [loaded('a', 2, 0.25, 0), worker('b', 2)] }));
    expect(mixed).toMatchObject({ rule: 'calls', recommendedReplicas: 1 });
    // A terminating worker's 0 is not counted; the ready one still has room.
    const term = decideScale(input({ currentReplicas: 1, workers: [loaded('a', 2, 0.25, 3), loaded('old', 9, 0.9, 0, { terminating: true })] }));
    expect(term).toMatchObject({ action: 'steady', replicas: 1, rule: 'calls' });
    // No ready worker at all: nothing has run out yet.
    const none = decideScale(input({ currentReplicas: 1, workers: [loaded('a', 0, 0, 0, { ready: false })] }));
    expect(none).toMatchObject({ action: 'steady', replicas: 1 });
  });

  it('waits for a starting worker instead of adding another, and does not scale down meanwhile', () => {
    // A third replica was asked for and its pod is not ready yet: hold at 3.
    const starting = [loaded('a', 2, 0.25, 0), loaded('b', 2, 0.25, 0), worker('c', 0, { ready: false })];
    const d = decideScale(input({ currentReplicas: 3, workers: starting }));
    expect(d).toMatchObject({ action: 'steady', replicas: 3, recommendedReplicas: 3, rule: 'admittable', memory: null });
    // Its pod not even created yet: the same.
    const notCreated = decideScale(input({ currentReplicas: 3, workers: starting.slice(0, 2) }));
    expect(notCreated).toMatchObject({ action: 'steady', replicas: 3, rule: 'admittable' });
    expect(notCreated.reason).toBe('0 admittable calls on 2 ready workers (more starting) fit 3 workers');
  });

  it('stops at maxReplicas whichever rule asks for more', () => {
    const p = { ...policy, maxReplicas: 3 };
    const ranOut = decideScale(input({ policy: p, currentReplicas: 3, workers: [loaded('a', 2, 0.25, 0), loaded('b', 2, 0.25, 0), loaded('c', 2, 0.25, 0)] }));
    expect(ranOut).toMatchObject({ action: 'steady', replicas: 3, recommendedReplicas: 3 });
    const hot = decideScale(input({ policy: p, currentReplicas: 2, workers: [loaded('a', 2, 1, 0), loaded('b', 2, 1, 0)] }));
    expect(hot).toMatchObject({ action: 'up', replicas: 3, rule: 'load' });
  });

  it('scales down after the delay to the peak the load asked for', () => {
    const p = { ...policy, scaleDownDelayMs: 60_000 };
    const quiet = [loaded('a', 1, 0.2, 5), loaded('b', 0, 0.02, 6), loaded('c', 0, 0.02, 6), loaded('d', 0, 0.02, 6)];
    const t0 = decideScale(input({ policy: p, currentReplicas: 4, workers: quiet, nowMs: 0 }));
    expect(t0).toMatchObject({ action: 'hold', recommendedReplicas: 1, memory: { belowSinceMs: 0, peakReplicas: 1 } });
    // A load spike (still below 4 workers) during the delay raises the floor of the scale-down.
    const spike = [loaded('a', 1, 0.9, 1), loaded('b', 0, 0.5, 3), loaded('c', 0, 0.02, 6), loaded('d', 0, 0.02, 6)];
    const t1 = decideScale(input({ policy: p, currentReplicas: 4, workers: spike, nowMs: 10_000, memory: t0.memory }));
    expect(t1).toMatchObject({ action: 'hold', recommendedReplicas: 3, rule: 'load', memory: { belowSinceMs: 0, peakReplicas: 3 } });
    const t2 = decideScale(input({ policy: p, currentReplicas: 4, workers: quiet, nowMs: 60_000, memory: t1.memory }));
    expect(t2).toMatchObject({ action: 'down', replicas: 3, removable: ['b'] });
  });
});
