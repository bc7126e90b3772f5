import { Poller, type PollerEnv } from './poller.js';

/** A fake clock, timers and page visibility. */
function fakeEnv() {
  let t = 0;
  let visible = true;
  let timers: Array<{ at: number; fn: () => void; id: number }> = [];
  let seq = 0;
  const listeners = new Set<() => void>();
  const env: PollerEnv = {
    now: () => t,
    setTimeout: (fn, ms) => {
      const id = ++seq;
      timers.push({ at: t + ms, fn, id });
      return id;
    },
    clearTimeout: (id) => {
      timers = timers.filter((x) => x.id !== id);
    },
    isVisible: () => visible,
    onVisibilityChange: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  return {
    env,
    listeners,
    pending: () => timers.length,
    /** Moves the clock, firing due timers and letting their promises settle. */
    async advance(ms: number) {
      const end = t + ms;
      for (;;) {
        const next = timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!next) break;
        timers = timers.filter((x) => x !== next);
        t = next.at;
        next.fn();
        for (let i = 0; i < 5; i++) await Promise.resolve();
      }
      t = end;
    },
    async setVisible(v: boolean) {
      visible = v;
      for (const fn of listeners) fn();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

describe('Poller', () => {
  it('refreshes every interval while visible, the first one interval after start', async () => {
    const f = fakeEnv();
    let runs = 0;
    const p = new Poller(async () => void runs++, 5000, f.env);
    p.start();
    await f.advance(4999);
    expect(runs).toBe(0);
    await f.advance(1);
    expect(runs).toBe(1);
    await f.advance(10_000);
    expect(runs).toBe(3);
    p.stop();
  });

  it('pauses while the tab is hidden and catches up at once when it shows again, if due', async () => {
    const f = fakeEnv();
    let runs = 0;
    const p = new Poller(async () => void runs++, 5000, f.env);
    p.start();
    await f.advance(2000);
    await f.setVisible(false);
    expect(f.pending()).toBe(0);
    await f.advance(60_000);
    expect(runs).toBe(0);
    await f.setVisible(true);
    expect(runs).toBe(1); // overdue: right away
    await f.advance(5000);
    expect(runs).toBe(2);

    // Hidden and shown again before the next one is due: it runs when due, not early.
    await f.advance(1000);
    await f.setVisible(false);
    await f.setVisible(true);
    expect(runs).toBe(2);
    await f.advance(3999);
    expect(runs).toBe(2);
    await f.advance(1);
    expect(runs).toBe(3);
    p.stop();
  });

  it('never overlaps a slow refresh, and waits a full interval after it', async () => {
    const f = fakeEnv();
    let runs = 0;
    let finish: () => void = () => undefined;
    const p = new Poller(() => new Promise<void>((r) => ((finish = r), runs++)), 5000, f.env);
    p.start();
    await f.advance(5000);
    expect(runs).toBe(1);
    await f.setVisible(false);
    await f.setVisible(true); // visible again while running: no second run
    await f.advance(20_000);
    expect(runs).toBe(1);
    finish();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await f.advance(4999);
    expect(runs).toBe(1);
    await f.advance(1);
    expect(runs).toBe(2);
    p.stop();
  });

  it('goes on after a failed refresh', async () => {
    const f = fakeEnv();
    let runs = 0;
    const p = new Poller(async () => {
      runs++;
      throw new Error('offline');
    }, 1000, f.env);
    p.start();
    await f.advance(3000);
    expect(runs).toBe(3);
    p.stop();
  });

  it('restarts the wait after a load by other means', async () => {
    const f = fakeEnv();
    let runs = 0;
    const p = new Poller(async () => void runs++, 5000, f.env);
    p.start();
    await f.advance(4000);
    p.loaded();
    await f.advance(4000);
    expect(runs).toBe(0);
    await f.advance(1000);
    expect(runs).toBe(1);
    p.stop();
  });

  it('stops for good: no timer, no visibility listener, nothing after an in-flight refresh', async () => {
    const f = fakeEnv();
    let runs = 0;
    let finish: () => void = () => undefined;
    const p = new Poller(() => new Promise<void>((r) => ((finish = r), runs++)), 5000, f.env);
    p.start();
    expect(f.listeners.size).toBe(1);
    await f.advance(5000);
    p.stop();
    finish();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(f.pending()).toBe(0);
    expect(f.listeners.size).toBe(0);
    expect(p.active).toBe(false);
    await f.setVisible(true);
    await f.advance(60_000);
    expect(runs).toBe(1);
  });
});
