import { WorkQueue, runWorkers } from './queue.js';

describe('WorkQueue', () => {
  it('queues a key once however often it is added', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('never hands a key being processed to a second worker, and re-queues it when done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0);
    q.done(key!);
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('doubles the retry delay per consecutive failure up to the cap, and forget resets it', () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 500 });
    expect([q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a')]).toEqual([100, 200, 400, 500]);
    expect(q.retries('a')).toBe(4);
    q.forget('a');
    expect(q.addRateLimited('a')).toBe(100);
    q.shutDown();
  });

  it('delivers a delayed key once, at the earliest requested time', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 10_000);
    q.addAfter('a', 5);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.length).toBe(0);
    q.shutDown();
  });

  it('processes every key with bounded concurrency and stops on shutdown', async () => {
    const q = new WorkQueue();
    const seen: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const all = runWorkers(q, 2, async (key) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setImmediate(r));
      seen.push(key);
      running--;
      if (seen.length === 4) q.shutDown();
    });
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    await all;
    expect(seen.sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(maxRunning).toBe(2);
  });
});
