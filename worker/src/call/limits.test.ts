// A call's limits: the CallLimits unit on fake time (max duration, the test calls' idle timeout), then a
// call that never ends by itself (the caller stays on the line, silent) ended by the bot's
// max_call_seconds, reported to the backend and closed for the caller.
import { jest } from '@jest/globals';
import { callUntil, createBot, TEST_POLICY } from '../../testing/backend.js';
import { TestCaller, withTestCallToken } from '../../testing/client.js';
import { startWorker, type TestWorker } from '../../testing/worker.js';
import { CallLimits, type LimitReason } from './limits.js';

describe('CallLimits', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A started CallLimits; `after(ms)` lets `ms` of fake time pass and says which ends were called so far. */
  const limits = (idleTimeoutMs?: number) => {
    const ended: LimitReason[] = [];
    const l = new CallLimits({ maxCallMs: 60_000, idleTimeoutMs }, (reason) => ended.push(reason));
    l.start();
    const after = (ms: number) => (jest.advanceTimersByTime(ms), [...ended]);
    return { l, after };
  };

  it('ends once at the max duration, however long the call then lasts', () => {
    const { after } = limits();
    expect([after(59_999), after(1), after(120_000)]).toEqual([[], ['max_duration'], ['max_duration']]);
  });

  it('ends an idle call once no audio came for the idle timeout (checked every fifth of it), and only then', () => {
    const { l, after } = limits(5_000);
    for (let i = 0; i < 10; i++) {
      expect(after(4_000)).toEqual([]);
      l.heard(performance.now()); // audio (silence included) keeps the call alive
    }
    expect([after(4_999), after(1_000), after(60_000)]).toEqual([[], ['caller_idle'], ['caller_idle']]);
  });

  it('has no idle limit without an idle timeout, and nothing fires once stopped', () => {
    const quiet = limits();
    expect(quiet.after(59_000)).toEqual([]);
    quiet.l.stop();
    const idle = limits(5_000);
    idle.l.stop();
    expect([quiet.after(120_000), idle.after(0)]).toEqual([[], []]);
  });
});

describe('a call at its max_call_seconds', () => {
  let w: TestWorker;
  beforeAll(async () => {
    w = await startWorker();
  });
  afterAll(async () => {
    await w?.stop();
  });

  it('ends a call at max_call_seconds with that reason', async () => {
    const botId = await createBot({
      name: 'short-calls',
      greeting: 'Hi.',
      variables: [
        { name: 'customer_name', required: false, description: '' },
        { name: 'amount_due', required: false, description: '' },
      ],
      policy: TEST_POLICY,
      max_call_seconds: 10,
    });
    const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${botId}`));
    await caller.opened;
    caller.send({ type: 'start' });
    const started = await caller.until(() => caller.message('started'), 'started');
    // Nothing is said: only the limit can end this call.
    const ended = await caller.until(() => caller.message('ended'), 'ended', 20_000);
    expect(ended).toEqual({ type: 'ended', reason: 'max_duration' });
    expect(await caller.closed).toBe(1000);
    const call = await callUntil(started.call_id as string, (c) => c.status === 'completed', 'completed');
    expect(call.end_reason).toBe('max_duration');
    const seconds = (Date.parse(call.ended_at!) - Date.parse(call.started_at!)) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(10);
  });
});
