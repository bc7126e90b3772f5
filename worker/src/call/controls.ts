// Supervisors' controls for the calls this worker runs (docs/design.md §16): one subscriber connection, a
// channel per live call (callControlChannel). The backend's PUBLISH counts the subscribers, so a call that
// nobody runs is told apart (409 call_not_active) without any registry of which worker holds which call.
import type { Redis } from 'ioredis';
import { CALL_CONTROL_TYPES, callControlChannel, type CallControlMessage, type CallListenRequest } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';

export interface Controllable {
  readonly callId: string;
  readonly done: Promise<unknown>;
  control(c: CallControlMessage): void;
  listen(untilMs: number): void;
}

export class CallControls {
  private sub: Redis | null = null;
  private readonly calls = new Map<string, Controllable>();

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  /** Listens for `call`'s controls until it is done; resolves once subscribed (before the call is answered). */
  async watch(call: Controllable): Promise<void> {
    const channel = callControlChannel(call.callId);
    this.calls.set(channel, call);
    void call.done.finally(() => {
      this.calls.delete(channel);
      void this.sub?.unsubscribe(channel).catch(() => undefined);
    });
    try {
      await this.subscriber().subscribe(channel);
    } catch (err) {
      // The call goes on without supervision (the backend answers 409 call_not_active): said once per call.
      this.logger.warn({ call_id: call.callId, err: err instanceof Error ? err.message : String(err) }, 'cannot listen for supervisor controls');
    }
  }

  close(): void {
    this.sub?.disconnect();
    this.sub = null;
  }

  private subscriber(): Redis {
    if (this.sub) return this.sub;
    // Its own connection in subscriber mode, which queues a SUBSCRIBE until it is connected.
    const sub = this.redis.duplicate({ lazyConnect: false, enableOfflineQueue: true });
    sub.on('error', () => undefined); // reconnects by itself; a control sent meanwhile is 409 at the backend
    sub.on('message', (channel: string, text: string) => {
      const call = this.calls.get(channel);
      if (!call) return;
      let c: CallControlMessage | CallListenRequest;
      try {
        c = JSON.parse(text) as CallControlMessage | CallListenRequest;
      } catch {
        return;
      }
      if (c.type === 'listen') return typeof c.until === 'number' ? call.listen(c.until) : undefined;
      if (!CALL_CONTROL_TYPES.includes(c.type)) return;
      call.control(c);
    });
    this.sub = sub;
    return sub;
  }
}
