// A call's events reach the backend in the order they happened, one at a time, and a post the backend
// refuses (or that throws) is counted and logged without stopping the events after it.
import { Writable } from 'node:stream';
import type { CallEvent } from '@voice-platform/schemas';
import { createLogger } from '../logger.js';
import { createMetrics } from '../metrics.js';
import { CallReporter } from './reporter.js';

function setup(answer: (e: CallEvent) => Promise<boolean>) {
  const lines: string[] = [];
  const sink = new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) });
  const metrics = createMetrics(false);
  const log: string[] = [];
  /** The post function, recording each call as `start:<status>` and `end:<status>`. */
  const post = async (e: CallEvent) => {
    log.push(`start:${e.status}`);
    try {
      return await answer(e);
    } finally {
      log.push(`end:${e.status}`);
    }
  };
  const reporter = new CallReporter(post, metrics, createLogger('warn', sink));
  const failures = async () => (await metrics.eventFailures.get()).values[0]?.value ?? 0;
  return { reporter, log, lines, failures };
}

it('posts events one after another in the order reported, however long each takes', async () => {
  const slow = (ms: number) => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms));
  const { reporter, log, failures } = setup((e) => slow(e.status === 'in_progress' ? 30 : 1));
  void reporter.report({ status: 'in_progress' });
  await reporter.report({ status: 'completed', end_reason: 'bot_hangup' });
  expect(log).toEqual(['start:in_progress', 'end:in_progress', 'start:completed', 'end:completed']);
  expect(await failures()).toBe(0);
});

it('never throws: a refused or failing post is counted and logged, and the next event still goes out', async () => {
  const { reporter, log, lines, failures } = setup(async (e) => {
    if (e.status === 'in_progress') throw new Error('socket hang up');
    return e.status !== 'failed';
  });
  await expect(reporter.report({ status: 'in_progress' })).resolves.toBeUndefined();
  await expect(reporter.report({ status: 'failed', end_reason: 'error:llm_unavailable' })).resolves.toBeUndefined();
  await reporter.report({ status: 'completed', recording_key: 'recordings/x.wav' });
  expect(log).toEqual(['start:in_progress', 'end:in_progress', 'start:failed', 'end:failed', 'start:completed', 'end:completed']);
  expect(await failures()).toBe(2);
  const warned = lines.map((l) => JSON.parse(l) as { msg: string; status: string });
  expect(warned.map((l) => [l.msg, l.status])).toEqual([
    ['call event not accepted by the backend', 'in_progress'],
    ['call event not accepted by the backend', 'failed'],
  ]);
});
