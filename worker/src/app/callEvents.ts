// Call events on their way to the backend: the outbox, the final event parked in Redis for the dialler,
// and the lease that goes only once the backend has taken a call's events.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CALL_FINAL_EVENTS_KEY, TERMINAL_CALL_STATUSES, type CallEvent } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../core/metrics.js';
import type { BackendClient } from '../core/backend.js';
import { CallEventOutbox, type Delivery } from '../call/outbox.js';
import type { Heartbeat } from '../fleet/capacity.js';

export interface CallEvents {
  readonly outbox: CallEventOutbox;
  /**
   * Hands a call event to the outbox (never waits for the backend). A terminal event is also parked in
   * Redis (best effort): should this worker die before the backend took it, the dialler closes the call
   * from it instead of as `worker_lost`.
   */
  report(callId: string, event: CallEvent): Promise<Delivery>;
  /**
   * The call is over on this worker: its lease (and parked end) go once the backend has taken its events.
   * If one was given up instead, the lease is only no longer renewed: it expires, and the dialler closes
   * the call from the parked end.
   */
  releaseLease(callId: string): void;
}

export function createCallEvents(o: { backend: BackendClient; redis: Redis; heartbeat: Heartbeat; metrics: Metrics; logger: Logger; retryMaxMs: number }): CallEvents {
  const outbox = new CallEventOutbox((id, ev) => o.backend.sendEvent(id, ev), o.metrics, o.logger, {
    firstRetryDelayMs: 200,
    maxRetryDelayMs: 5000,
    retryMaxMs: o.retryMaxMs,
  });
  /** Each ended call's final event as parked (merged with its recording report), until its lease goes. */
  const parked = new Map<string, CallEvent>();
  return {
    outbox,
    report(callId, event) {
      const ev: CallEvent = { ...event, event_id: event.event_id ?? randomUUID(), at: event.at ?? new Date().toISOString() };
      if (TERMINAL_CALL_STATUSES.includes(ev.status)) {
        const before = parked.get(callId);
        const final = before && before.status === ev.status ? { ...before, ...(ev.recording_key ? { recording_key: ev.recording_key } : {}), ...(ev.recording_error ? { recording_error: ev.recording_error } : {}) } : ev;
        parked.set(callId, final);
        o.redis.hset(CALL_FINAL_EVENTS_KEY, callId, JSON.stringify(final)).catch(() => undefined);
      }
      return outbox.report(callId, ev);
    },
    releaseLease(callId) {
      void outbox.settled(callId).then(async () => {
        parked.delete(callId);
        if (outbox.takeUndelivered(callId)) o.heartbeat.forget(callId);
        else await o.heartbeat.release(callId);
      });
    },
  };
}
