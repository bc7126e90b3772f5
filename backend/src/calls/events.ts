// What the call lifecycle announces, to handlers the composition root registers (app.ts wireCallHandlers):
// the webhook events (webhooks/), the post-call analysis (analysis/), the analytics rollups (analytics/) and
// the campaign contacts (campaigns/) all build on calls; calls names none of them (docs/design.md, "Layers").
// Handlers run in the order registered; each hook is optional. They are plain functions of the deps passed
// in, so registering them again (each app registers on creation) replaces them by name.
import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CallStatus } from '@voice-platform/schemas';
import type { Metrics } from '../core/metrics.js';
import type { CallDoc } from './store.js';

export interface CallEventDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  /** Epoch ms (default Date.now). */
  clock?: () => number;
  /** Absent where the caller counts nothing (a placed call's event, as before). */
  metrics?: Metrics;
}

/** The status event a move marks due on the call until it is sent (CallDoc.webhook_due). */
export type DueMark = NonNullable<CallDoc['webhook_due']>[number];

export interface CallHandlers {
  /** A call was stored `queued` (its job queued, or a worker created it). */
  queued?(deps: CallEventDeps, call: CallDoc): Promise<void>;
  /** Under the call's lock, before a move or repeat: what earlier moves left due (`call.webhook_due`). */
  beforeMove?(deps: CallEventDeps, call: CallDoc, recordingFollows: boolean): Promise<void>;
  /** The mark a move to `status` writes on the call with the move, until the move's event is sent. */
  dueMark?(status: CallStatus): DueMark | null;
  /** Fields written with a call's end, in the end's own write (the call as it was before the end). */
  ending?(deps: CallEventDeps, call: CallDoc): Promise<Partial<CallDoc>>;
  /** Under the lock, after a move landed: `after` is the call as the move left it, `ending` what the
   *  handlers' `ending` added to an end's write (not in `after`). */
  moved?(deps: CallEventDeps, after: CallDoc, recordingFollows: boolean, ending: Partial<CallDoc>): Promise<void>;
  /** Under the lock: the recording of an ended call was reported (`call` as it stands). */
  recordingArrived?(deps: CallEventDeps, call: CallDoc): Promise<void>;
  /** After the lock: the call is ended (also on a repeat of the end; handlers must be idempotent, never throw). */
  ended?(deps: CallEventDeps, call: CallDoc): Promise<void>;
}

const registered = new Map<string, CallHandlers>();

/** Registers (or replaces) the handlers named `name`. */
export function registerCallHandlers(name: string, handlers: CallHandlers): void {
  registered.set(name, handlers);
}

/** The registered handlers, in registration order. */
export const callHandlers = (): CallHandlers[] => [...registered.values()];

/** Announces a queued call to every handler. */
export async function announceQueued(deps: CallEventDeps, call: CallDoc): Promise<void> {
  for (const h of callHandlers()) await h.queued?.(deps, call);
}
