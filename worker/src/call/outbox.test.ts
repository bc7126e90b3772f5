// The worker's outbox of call events: in order per call, each kept (same event id) until the backend takes
// it, refusals and give-ups counted, and nothing ever thrown into the call. The backend end of it (dedupe by
// event id, a stalled or frozen backend) is shown end to end in faults.test.ts and the backend's tests.
import { Writable } from 'node:stream';
import type { CallEvent } from '@voice-platform/schemas';
import { createLogger } from '../core/logger.js';
import { createMetrics } from '../core/metrics.js';
import { CallEventOutbox, type SendResult } from './outbox.js';

type Sent = { callId: string; status: string; event_id: string };

function setup(answer: (e: CallEvent & { event_id: string }, attempt: number) => Promise<SendResult> | SendResult, retryMaxMs = 60_000) {
  const lines: string[] = [];
  const sink = new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) });
  const metrics = createMetrics(false);
  const sent: Sent[] = [];
  const attempts = new Map<string, number>();
  const outbox = new CallEventOutbox(
    async (callId, e) => {
      const n = (attempts.get(e.event_id) ?? 0) + 1;
      attempts.set(e.event_id, n);
      sent.push({ callId, status: e.status, event_id: e.event_id });
      return answer(e, n);
    },
    metrics,
    createLogger('info', sink),
    { firstRetryDelayMs: 5, maxRetryDelayMs: 20, retryMaxMs },
  );
  const failures = async (outcome: string) => (await metrics.eventFailures.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  const retries = async () => (await metrics.eventRetries.get()).values[0]?.value ?? 0;
  const pendingGauge = async () => (await metrics.eventsPending.get()).values[0]?.value ?? 0;
  return { outbox, sent, lines, failures, retries, pendingGauge };
}

it('sends each call\'s events one after another in the order reported, however long each takes', async () => {
  const slow = (ms: number) => new Promise<SendResult>((resolve) => setTimeout(() => resolve('accepted'), ms));
  const { outbox, sent } = setup((e) => slow(e.status === 'in_progress' ? 30 : 1));
  void outbox.report('a', { status: 'in_progress' });
  void outbox.report('b', { status: 'dialing' });
  await expect(outbox.report('a', { status: 'completed', end_reason: 'bot_hangup' })).resolves.toBe('accepted');
  expect(sent.filter((s) => s.callId === 'a').map((s) => s.status)).toEqual(['in_progress', 'completed']);
  // Another call's event did not wait behind call a's slow one.
  expect(sent.findIndex((s) => s.callId === 'b')).toBeLessThan(sent.findIndex((s) => s.status === 'completed'));
});

it('keeps an event the backend could not take and sends it again with the same id until it is taken; the next waits behind it', async () => {
  const { outbox, sent, retries, pendingGauge, lines } = setup((e, attempt) => {
    if (e.status === 'dialing' && attempt < 4) {
      if (attempt === 2) throw new Error('socket hang up');
      return 'retry';
    }
    return 'accepted';
  });
  const dialing = outbox.report('c', { status: 'dialing' });
  const ringing = outbox.report('c', { status: 'ringing' });
  expect(outbox.pending).toBe(2);
  expect(await pendingGauge()).toBe(2);
  await expect(dialing).resolves.toBe('accepted');
  await expect(ringing).resolves.toBe('accepted');
  expect(sent.map((s) => s.status)).toEqual(['dialing', 'dialing', 'dialing', 'dialing', 'ringing']);
  expect(new Set(sent.slice(0, 4).map((s) => s.event_id)).size).toBe(1);
  expect(sent[4]!.event_id).not.toBe(sent[0]!.event_id);
  expect(await retries()).toBe(3);
  expect(outbox.pending).toBe(0);
  expect(await pendingGauge()).toBe(0);
  await outbox.settled('c');
  expect(lines.some((l) => l.includes('call event taken after retries') && l.includes('"attempts":4'))).toBe(true);
});

it('never throws: a refused event is counted and logged and the next one still goes out; one not taken in time is given up', async () => {
  const { outbox, sent, failures, lines } = setup((e) => (e.status === 'failed' ? 'refused' : e.status === 'ringing' ? 'retry' : 'accepted'), 40);
  await expect(outbox.report('d', { status: 'failed', end_reason: 'dial_failed' })).resolves.toBe('refused');
  await expect(outbox.report('d', { status: 'ringing' })).resolves.toBe('expired');
  await expect(outbox.report('d', { status: 'completed', recording_key: 'recordings/x.wav' })).resolves.toBe('accepted');
  expect(sent.filter((s) => s.status === 'failed')).toHaveLength(1);
  expect(sent.filter((s) => s.status === 'ringing').length).toBeGreaterThan(1);
  expect(await failures('refused')).toBe(1);
  expect(await failures('expired')).toBe(1);
  const warned = lines.map((l) => JSON.parse(l) as { msg: string; status: string; outcome?: string }).filter((l) => l.msg === 'call event not accepted by the backend');
  expect(warned.map((l) => [l.status, l.outcome])).toEqual([
    ['failed', 'refused'],
    ['ringing', 'expired'],
  ]);
});

it('flush waits for pending events; close() gives up the ones still retrying (abandoned)', async () => {
  let up = false;
  const { outbox, failures } = setup(() => (up ? 'accepted' : 'retry'));
  const first = outbox.report('e', { status: 'in_progress' });
  expect(await outbox.flush(30)).toBe(false);
  up = true;
  expect(await outbox.flush(5000)).toBe(true);
  await expect(first).resolves.toBe('accepted');
  up = false;
  const second = outbox.report('e', { status: 'completed', end_reason: 'caller_hangup' });
  outbox.close();
  await expect(second).resolves.toBe('abandoned');
  expect(await failures('abandoned')).toBe(1);
  expect(outbox.pending).toBe(0);
});
