// The worker's outbox of call events: every lifecycle move, end and recording report is kept here until
// the backend has taken it. Each call's events go out one at a time in the order they happened; an event
// the backend could not take (unreachable, timed out, 5xx, 429) is sent again with backoff, with the same
// event id, so the backend applies it once (backend calls/lifecycle.ts) whatever answer was lost on the way.
// Only a refusal (another 4xx: the move is impossible, e.g. the call was already closed) or
// CALL_EVENT_RETRY_MAX_MS of trying ends an event without the backend taking it; both are counted and
// logged. Nothing here waits on the media: reporting never holds up a call, and a call's end frees its
// slot at once while its reports catch up behind (the call keeps its lease until they have: fleet/capacity).
import { randomUUID } from 'node:crypto';
import type { CallEvent } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../core/metrics.js';

/** What one attempt at posting an event got: taken, refused for good, or worth another try. */
export type SendResult = 'accepted' | 'refused' | 'retry';
export type SendEvent = (callId: string, event: CallEvent & { event_id: string }) => Promise<SendResult>;
/** How an event ended: taken by the backend, refused by it, or given up after CALL_EVENT_RETRY_MAX_MS. */
export type Delivery = 'accepted' | 'refused' | 'expired' | 'abandoned';

export interface OutboxOptions {
  /** First pause after a failed attempt; it doubles up to `maxRetryDelayMs`. */
  firstRetryDelayMs: number;
  maxRetryDelayMs: number;
  /** An event not taken this long after it was reported is given up. */
  retryMaxMs: number;
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxOptions = { firstRetryDelayMs: 200, maxRetryDelayMs: 5000, retryMaxMs: 15 * 60_000 };

type OutboxMetrics = Pick<Metrics, 'eventFailures' | 'eventRetries' | 'eventsPending'>;

interface CallQueue {
  tail: Promise<unknown>;
  pending: number;
}

export class CallEventOutbox {
  private readonly calls = new Map<string, CallQueue>();
  private readonly idleWaiters = new Map<string, Array<() => void>>();
  private closed = false;
  private readonly wake = new Set<() => void>();
  /** Calls with an event given up (expired or abandoned) that the backend may not have. */
  private readonly undelivered = new Set<string>();

  constructor(
    private readonly send: SendEvent,
    private readonly metrics: OutboxMetrics,
    private readonly log: Logger,
    private readonly opts: OutboxOptions = DEFAULT_OUTBOX_OPTIONS,
  ) {}

  /** Events reported and not settled yet, over all calls. */
  get pending(): number {
    let n = 0;
    for (const q of this.calls.values()) n += q.pending;
    return n;
  }

  /** Queues `event` after the call's earlier ones; resolves once it is settled (never rejects). */
  report(callId: string, event: CallEvent): Promise<Delivery> {
    const withId = { ...event, event_id: event.event_id ?? randomUUID(), at: event.at ?? new Date().toISOString() };
    const q = this.calls.get(callId) ?? { tail: Promise.resolve(), pending: 0 };
    this.calls.set(callId, q);
    q.pending++;
    this.metrics.eventsPending.inc();
    const reportedAt = Date.now();
    const next = q.tail.then(() => this.deliver(callId, withId, reportedAt));
    q.tail = next;
    void next.then(() => {
      q.pending--;
      this.metrics.eventsPending.dec();
      if (q.pending === 0 && this.calls.get(callId) === q) {
        this.calls.delete(callId);
        for (const fn of this.idleWaiters.get(callId) ?? []) fn();
        this.idleWaiters.delete(callId);
      }
    });
    return next;
  }

  /** Resolves once every event of the call reported so far is settled (at once if none is pending). */
  settled(callId: string): Promise<void> {
    if (!this.calls.has(callId)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.idleWaiters.get(callId) ?? [];
      list.push(resolve);
      this.idleWaiters.set(callId, list);
    });
  }

  /**
   * After settled(): true when one of the call's events was given up without the backend taking it (the
   * call's parked final event must then stay for the dialler). Forgets the call.
   */
  takeUndelivered(callId: string): boolean {
    return this.undelivered.delete(callId);
  }

  /** Waits up to `timeoutMs` for every pending event; true if none is left. */
  async flush(timeoutMs: number): Promise<boolean> {
    const all = Promise.all([...this.calls.keys()].map((id) => this.settled(id)));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const outcome = await Promise.race([all.then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    return outcome === 'done';
  }

  /** Stops retrying: events still pending settle `abandoned` (the dialler closes their calls from the parked end). */
  close(): void {
    this.closed = true;
    for (const fn of this.wake) fn();
  }

  private async deliver(callId: string, event: CallEvent & { event_id: string }, reportedAt: number): Promise<Delivery> {
    let delay = this.opts.firstRetryDelayMs;
    for (let attempt = 1; ; attempt++) {
      if (this.closed) return this.settle(callId, event, 'abandoned', attempt - 1);
      let result: SendResult;
      try {
        result = await this.send(callId, event);
      } catch {
        result = 'retry';
      }
      if (result === 'accepted') {
        if (attempt > 1) this.log.info({ call_id: callId, status: event.status, event_id: event.event_id, attempts: attempt }, 'call event taken after retries');
        return 'accepted';
      }
      if (result === 'refused') return this.settle(callId, event, 'refused', attempt);
      if (Date.now() + delay - reportedAt > this.opts.retryMaxMs) return this.settle(callId, event, 'expired', attempt);
      if (attempt === 1) this.log.warn({ call_id: callId, status: event.status, event_id: event.event_id }, 'call event not taken yet; retrying');
      this.metrics.eventRetries.inc();
      await this.pause(delay);
      delay = Math.min(delay * 2, this.opts.maxRetryDelayMs);
    }
  }

  private settle(callId: string, event: CallEvent & { event_id: string }, how: Exclude<Delivery, 'accepted'>, attempts: number): Delivery {
    if (how !== 'refused') this.undelivered.add(callId);
    this.metrics.eventFailures.inc({ outcome: how });
    this.log.warn({ call_id: callId, status: event.status, event_id: event.event_id, outcome: how, attempts }, 'call event not accepted by the backend');
    return how;
  }

  /** A pause that close() cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake.add(done);
    });
  }
}
