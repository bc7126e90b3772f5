// The fair scheduler on the real spawner and real processes: one process per call at a time, no more at
// once than the allowance, the oldest turn first (a reply under way is not held behind a burst of new calls),
// and jobs killed or aborted while waiting never start.
import { Spawner, type RunHandle } from './spawner.js';
import { FairScheduler } from './scheduler.js';

async function output(run: RunHandle): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of run.stdout) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

let spawner: Spawner;
beforeAll(() => {
  spawner = new Spawner();
});
afterAll(async () => {
  await spawner.close();
});

/** A scheduler whose runs are recorded as they start and end. */
function recorded(limit: number) {
  const scheduler = new FairScheduler(spawner, () => limit);
  const events: string[] = [];
  let running = 0;
  let peak = 0;
  const runAs = (call: string, label: string, seconds = 0.15): Promise<string> => {
    const run = scheduler.forCall(call).run('/bin/sh', ['-c', `sleep ${seconds}; echo ${label}`]);
    void run.started.then(() => {
      events.push(`start ${label}`);
      peak = Math.max(peak, ++running);
    });
    return run.exited.then(async () => {
      running--;
      return output(run);
    });
  };
  return { scheduler, events, runAs, peak: () => peak };
}

describe('FairScheduler', () => {
  it('runs one process per call at a time and no more at once than the allowance', async () => {
    const { events, runAs, peak } = recorded(2);
    const outs = await Promise.all([runAs('a', 'a1'), runAs('a', 'a2'), runAs('a', 'a3'), runAs('b', 'b1'), runAs('c', 'c1'), runAs('d', 'd1')]);
    expect(outs).toEqual(['a1\n', 'a2\n', 'a3\n', 'b1\n', 'c1\n', 'd1\n']);
    expect(peak()).toBe(2);
    // a's jobs in order, one after the other.
    const order = events.map((e) => e.slice(6));
    expect(order.filter((l) => l.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(order.slice(0, 2)).toEqual(['a1', 'b1']);
  });

  it("puts a reply's next sentence before a burst of new calls queued after its turn began", async () => {
    const { scheduler, events, runAs } = recorded(1);
    // The talking call's first sentence runs; meanwhile five new calls' greetings queue up.
    const first = runAs('talking', 'sentence1', 0.3);
    await new Promise<void>((resolve) => {
      const check = () => (events.includes('start sentence1') ? resolve() : setTimeout(check, 5));
      check();
    });
    const burst = ['n1', 'n2', 'n3', 'n4', 'n5'].map((c) => runAs(c, `greeting-${c}`, 0.05));
    expect(scheduler.waiting).toBe(5);
    await first;
    // Its next sentence is asked for once the first is done: the same turn, so it goes first.
    const second = runAs('talking', 'sentence2', 0.05);
    await Promise.all([second, ...burst]);
    expect(events.slice(0, 3)).toEqual(['start sentence1', 'start greeting-n1', 'start sentence2']);
    expect(events).toHaveLength(7);
  });

  it('counts the wait of the oldest job held for the CPU, not one waiting behind its own call', async () => {
    let now = 1000;
    const scheduler = new FairScheduler(spawner, () => 1, () => now);
    const a1 = scheduler.forCall('a').run('/bin/sh', ['-c', 'sleep 0.2']);
    const a2 = scheduler.forCall('a').run('/bin/true', []);
    now += 150;
    // a2 waits for a1, its own call: in order, not load.
    expect(scheduler.oldestQueuedMs()).toBe(0);
    const b1 = scheduler.forCall('b').run('/bin/true', []);
    now += 400;
    expect(scheduler.oldestQueuedMs()).toBe(400);
    await Promise.all([a1.exited, a2.exited, b1.exited]);
    expect(scheduler.oldestQueuedMs()).toBe(0);
    expect(scheduler.waiting).toBe(0);
  });

  it('never starts a job killed or aborted while it waited, and the queue moves on', async () => {
    const scheduler = new FairScheduler(spawner, () => 1);
    const running = scheduler.forCall('a').run('/bin/sh', ['-c', 'sleep 0.2; echo ran']);
    const killed = scheduler.forCall('b').run('/bin/sh', ['-c', 'echo never']);
    const ac = new AbortController();
    const aborted = scheduler.forCall('c').run('/bin/sh', ['-c', 'echo never'], { signal: ac.signal });
    const after = scheduler.forCall('d').run('/bin/sh', ['-c', 'echo after']);
    killed.kill();
    ac.abort();
    await expect(killed.started).rejects.toMatchObject({ code: 'spawn_failed' });
    await expect(aborted.started).rejects.toMatchObject({ code: 'spawn_failed' });
    expect(await killed.exited).toEqual({ code: null, signal: 'SIGKILL', timedOut: false, stderr: '' });
    expect(await output(killed)).toBe('');
    expect(await output(running)).toBe('ran\n');
    expect(await output(after)).toBe('after\n');
    expect((await after.exited).code).toBe(0);
    const pre = new AbortController();
    pre.abort();
    expect(await scheduler.forCall('e').run('/bin/true', [], { signal: pre.signal }).exited).toMatchObject({ signal: 'SIGKILL' });
  });
});
