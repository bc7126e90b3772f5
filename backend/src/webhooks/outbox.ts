// Emitting webhook events (docs/design.md §8). Emission is one XADD to the outbox stream: it never waits for
// a receiver, never looks at webhooks, and never fails the API call or call move it comes from (a Redis
// failure is logged and counted, `backend_webhook_events_lost_total`). The dialler role's deliverer
// (deliverer.ts) fans each entry out to the subscribed webhooks and delivers it.
//
// call.ended of an answered call waits for its recording: the worker reports the end first (so the
// capacity slot frees at once) and the recording key after the upload. The terminal move parks the call
// in ENDED_PENDING_KEY; the report that brings recording_key or recording_error emits call.ended, or the
// deliverer does after WEBHOOK_RECORDING_WAIT_SECONDS. Whoever removes the call from the set (ZREM → 1)
// emits, so call.ended is made once.
import { ObjectId } from 'mongodb';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { TERMINAL_CALL_STATUSES, type CallStatus, type WebhookCallData, type WebhookDeliveredType, type WebhookEventType } from '@voice-platform/schemas';
import type { Metrics } from '../metrics.js';
import { callIdentity, iso, statusTimes, type CallDoc } from '../calls/store.js';
import { ENDED_PENDING_KEY, OUTBOX_MAX_EVENTS, WEBHOOK_EVENTS_STREAM } from './keys.js';

interface EmitDeps {
  redis: Redis;
  logger: Logger;
  /** Epoch ms (the app's clock, injectable in tests). */
  clock?: () => number;
  metrics?: Pick<Metrics, 'webhookEmitFailures'>;
}

interface RecordedEvent {
  id: string;
  type: WebhookDeliveredType;
  created_at: string;
}

/** Writes one event to the outbox and returns it; throws when Redis fails (for callers that must say so). */
export async function recordWebhookEvent(deps: EmitDeps, type: WebhookDeliveredType, data: object, opts: { webhookId?: string } = {}): Promise<RecordedEvent> {
  const id = `evt_${new ObjectId().toHexString()}`;
  const created_at = new Date((deps.clock ?? Date.now)()).toISOString();
  const body = JSON.stringify({ id, type, created_at, data });
  const target = opts.webhookId ? ['webhook_id', opts.webhookId] : [];
  await deps.redis.xadd(WEBHOOK_EVENTS_STREAM, 'MAXLEN', '~', String(OUTBOX_MAX_EVENTS), '*', 'id', id, 'type', type, 'body', body, ...target);
  return { id, type, created_at };
}

/**
 * Emits an event to every active webhook subscribed to `type` (campaigns call this too). Never throws:
 * resolves to the event, or null when it could not be recorded (logged and counted).
 */
export async function emitWebhookEvent(deps: EmitDeps, type: WebhookEventType, data: object): Promise<RecordedEvent | null> {
  try {
    return await recordWebhookEvent(deps, type, data);
  } catch (err) {
    deps.metrics?.webhookEmitFailures.inc();
    deps.logger.warn({ err, event_type: type }, 'webhook event lost: the outbox is unavailable'); // class + brief message (logger.ts)
    return null;
  }
}

/** `data` of a call.* event: the call as it stands (no transcript: GET /api/v1/calls/{id} has it). */
export function callEventData(doc: CallDoc): WebhookCallData {
  const ended = TERMINAL_CALL_STATUSES.includes(doc.status) && doc.ended_at;
  return {
    ...callIdentity(doc),
    end_reason: doc.end_reason,
    sip_status_code: doc.sip_status_code ?? null,
    created_at: doc.created_at.toISOString(),
    started_at: iso(doc.started_at),
    ended_at: iso(doc.ended_at),
    duration_ms: ended ? (doc.started_at ? Math.max(0, doc.ended_at!.getTime() - doc.started_at.getTime()) : 0) : null,
    recording_key: doc.recording_key,
    recording_error: doc.recording_error,
    variables: doc.variables,
    campaign_id: (doc as CallDoc & { campaign_id?: string | null }).campaign_id ?? null,
    status_times: statusTimes(doc),
  };
}

export const emitCallEvent = (deps: EmitDeps, type: 'call.queued' | 'call.ringing' | 'call.in_progress' | 'call.ended', doc: CallDoc) =>
  emitWebhookEvent(deps, type, callEventData(doc));

const MOVE_EVENTS: Partial<Record<CallStatus, 'call.ringing' | 'call.in_progress'>> = { ringing: 'call.ringing', in_progress: 'call.in_progress' };

/**
 * The event of a status move (`doc` as of the move): ringing, in_progress, or the end. The end of an
 * answered call whose recording is still to come (`recordingFollows`: a worker's report) is held until
 * the recording is reported (emitRecordingArrived) or WEBHOOK_RECORDING_WAIT_SECONDS pass (the deliverer).
 */
export async function emitCallMove(deps: EmitDeps, doc: CallDoc, recordingFollows: boolean): Promise<void> {
  if (!TERMINAL_CALL_STATUSES.includes(doc.status)) {
    const type = MOVE_EVENTS[doc.status];
    if (type) await emitCallEvent(deps, type, doc);
    return;
  }
  if (recordingFollows && doc.started_at && doc.recording_key == null && doc.recording_error == null) {
    try {
      await deps.redis.zadd(ENDED_PENDING_KEY, (deps.clock ?? Date.now)(), doc._id);
      return;
    } catch {
      // Cannot hold it: send it now, without the recording.
    }
  }
  await emitCallEvent(deps, 'call.ended', doc);
}

/** The recording of an ended call was reported (`doc` has it): its held call.ended goes out now. */
export async function emitRecordingArrived(deps: EmitDeps, doc: CallDoc): Promise<void> {
  if (await releaseHeldEnd(deps, doc._id)) await emitCallEvent(deps, 'call.ended', doc);
}

/** True when this caller took the call's held call.ended (and must emit it). */
export async function releaseHeldEnd(deps: EmitDeps, callId: string): Promise<boolean> {
  try {
    return (await deps.redis.zrem(ENDED_PENDING_KEY, callId)) === 1;
  } catch (err) {
    deps.logger.warn({ err, call_id: callId }, 'held call.ended not released; the deliverer sends it after the wait');
    return false;
  }
}
