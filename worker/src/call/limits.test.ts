// A call that never ends by itself (the caller stays on the line, silent) is ended by the bot's
// max_call_seconds, reported to the backend and closed for the caller.
import { callUntil, createBot, TEST_POLICY } from '../testing/backend.js';
import { TestCaller, withTestCallToken } from '../testing/client.js';
import { startWorker, type TestWorker } from '../testing/worker.js';

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
