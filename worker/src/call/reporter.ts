// A call's lifecycle events to the backend, posted one after another so the backend sees them in the
// order they happened. A report never throws: an event the backend did not take is counted and logged,
// and the call goes on (or ends) regardless.
import type { CallEvent } from '@voice-platform/schemas';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

/** Posts one event; true if the backend took it (the backend client retries on its own). */
export type PostEvent = (event: CallEvent) => Promise<boolean>;

export class CallReporter {
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly post: PostEvent,
    private readonly metrics: Pick<Metrics, 'eventFailures'>,
    private readonly log: Logger,
  ) {}

  /** Queues `event` after those reported before it; resolves once it has been posted (taken or not). */
  report(event: CallEvent): Promise<void> {
    const next = this.last.then(() => this.send(event));
    this.last = next;
    return next;
  }

  private async send(event: CallEvent): Promise<void> {
    let ok = false;
    let error: unknown;
    try {
      ok = await this.post(event);
    } catch (err) {
      error = err; // not rethrown: a rejected link would skip every event queued after it
    }
    if (!ok) {
      this.metrics.eventFailures.inc();
      this.log.warn({ status: event.status, ...(error === undefined ? {} : { err: error }) }, 'call event not accepted by the backend');
    }
  }
}
