// Emitting webhook events (docs/design.md §8). An event goes to the outbox stream (one XADD); it never
// waits for a receiver, never looks at webhooks, and never fails the API call or call move it comes from.
// The dialler role's deliverer (deliverer.ts) fans each event out to the subscribed webhooks and delivers it.
//
// Never lost while either store works: when the XADD fails (Redis down, or frozen past its command
// timeout) the event is written to MongoDB (`webhook_outbox`), which the deliverer drains; when that fails
// too, the process keeps it in memory and retries both with backoff (bounded, HELD_MAX_EVENTS). Only an
// event still held when the process exits (or refused by a full queue) is lost:
// `backend_webhook_events_lost_total`. An XADD that timed out may still be applied when Redis resumes, so
// an event can reach the outbox twice; the fan-out makes one delivery per event and webhook
// (`<event id>_<webhook id>`), so it is delivered once.
//
// Call events have ids fixed by the call and type (callEventId), and a move records its event on the call
// (`webhook_due`) in the move's own write, removed once the outbox has the event. A move whose write
// landed but whose emit did not (its process died, or a store failed after the write) is sent by the
// call's next move or repeat (the worker's retry), or else by the deliverer's scan for such marks:
// emitDueEvents. Same id, so delivered once.
//
// call.ended of an answered call waits for its recording: the worker reports the end first (so the
// capacity slot frees at once) and the recording key after the upload. The terminal move parks the call
// in ENDED_PENDING_KEY; the report that brings recording_key or recording_error emits call.ended, or the
// deliverer does after WEBHOOK_RECORDING_WAIT_SECONDS. Whoever removes the call from the set (ZREM → 1)
// emits; its `webhook_due` mark stays until then.
//
// call.analyzed (docs/design.md §10) is recorded due on the call in the same write as its analysis result
// (analysis/runner.ts) and sent like a status event (emitDueEvents; the deliverer's scan for stranded marks), with
// a fixed id too. call.ended and call.analyzed carry the call's transcript beside the event (`transcript`): the
// fan-out puts it into `data.transcript` of the deliveries to webhooks with include_transcript only.
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { MongoServerError, ObjectId, type Db } from 'mongodb';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { TERMINAL_CALL_STATUSES, type CallStatus, type TranscriptEntry, type WebhookCallAnalyzedData, type WebhookCallData, type WebhookDeliveredType, type WebhookEventType } from '@voice-platform/schemas';
import type { Metrics } from '../core/metrics.js';
import { COLLECTIONS } from '../core/collections.js';
import { callActions, callIdentity, clearDue, iso, statusTimes, type CallDoc } from '../calls/store.js';
import { publicAnalysis } from '../calls/analysis.js';
import { ENDED_PENDING_KEY, OUTBOX_MAX_EVENTS, WEBHOOK_EVENTS_STREAM } from './keys.js';

export type WebhookEmitMetrics = Pick<Metrics, 'webhookEmitFailures' | 'webhookFallbacks' | 'webhookHeldTotal' | 'webhookHeld'>;

export interface EmitDeps {
  redis: Redis;
  /** The fallback outbox (and the calls whose `webhook_due` marks are cleared). */
  db: Db;
  logger: Logger;
  /** Epoch ms (the app's clock, injectable in tests). */
  clock?: () => number;
  metrics?: WebhookEmitMetrics;
}

export interface RecordedEvent {
  id: string;
  type: WebhookDeliveredType;
  created_at: string;
}

/** Where an event went: the stream, the MongoDB fallback, or (neither took it) this process's memory. */
export type Handoff = 'stream' | 'fallback' | 'held';

/** One event of the fallback outbox (the stream entry's fields; `_id` is the event id). */
export interface OutboxDoc {
  _id: string;
  type: WebhookDeliveredType;
  /** The exact JSON to deliver. */
  body: string;
  /** A test event's one webhook; null: every subscribed webhook. */
  webhook_id: string | null;
  /** call.ended and call.analyzed: the call's transcript (JSON), for the webhooks with include_transcript (absent otherwise). */
  transcript?: string;
  created_at: Date;
}

export const fallbackOutbox = (db: Db) => db.collection<OutboxDoc>(COLLECTIONS.webhookOutbox);

const isDuplicate = (err: unknown) => err instanceof MongoServerError && err.code === 11000;

interface EventOptions {
  webhookId?: string;
  id?: string;
  /** The transcript offered to webhooks with include_transcript (see withTranscript). */
  transcript?: TranscriptEntry[];
}

function newEvent(deps: EmitDeps, type: WebhookDeliveredType, data: object, opts: EventOptions): OutboxDoc {
  const id = opts.id ?? `evt_${new ObjectId().toHexString()}`;
  const at = new Date((deps.clock ?? Date.now)());
  const doc: OutboxDoc = { _id: id, type, body: JSON.stringify({ id, type, created_at: at.toISOString(), data }), webhook_id: opts.webhookId ?? null, created_at: at };
  if (opts.transcript) doc.transcript = JSON.stringify(opts.transcript);
  return doc;
}

/** The body delivered to a webhook with include_transcript: the event's, with its transcript as `data.transcript`. */
export function withTranscript(body: string, transcript: string | undefined | null): string {
  if (!transcript) return body;
  const event = JSON.parse(body) as { data: Record<string, unknown> };
  return JSON.stringify({ ...event, data: { ...event.data, transcript: JSON.parse(transcript) as unknown } });
}

const recorded = (doc: OutboxDoc): RecordedEvent => ({ id: doc._id, type: doc.type, created_at: doc.created_at.toISOString() });

/** The stream, else the fallback collection; throws (Redis's error) when neither takes the event. */
async function store(deps: EmitDeps, doc: OutboxDoc): Promise<'stream' | 'fallback'> {
  const target = doc.webhook_id ? ['webhook_id', doc.webhook_id] : [];
  const transcript = doc.transcript !== undefined ? ['transcript', doc.transcript] : [];
  try {
    await deps.redis.xadd(WEBHOOK_EVENTS_STREAM, 'MAXLEN', '~', String(OUTBOX_MAX_EVENTS), '*', 'id', doc._id, 'type', doc.type, 'body', doc.body, ...target, ...transcript);
    return 'stream';
  } catch (redisErr) {
    try {
      await fallbackOutbox(deps.db).insertOne({ ...doc });
    } catch (err) {
      if (!isDuplicate(err)) throw redisErr; // a duplicate: this event (same id) is kept there already
    }
    deps.metrics?.webhookFallbacks.inc();
    deps.logger.warn({ err: redisErr, event_id: doc._id, event_type: doc.type }, 'webhook event kept in MongoDB: the Redis outbox is unavailable');
    return 'fallback';
  }
}

/** Writes one event to the outbox (Redis, else MongoDB) and returns it; throws when neither store takes it (for callers that must say so). */
export async function recordWebhookEvent(deps: EmitDeps, type: WebhookDeliveredType, data: object, opts: { webhookId?: string } = {}): Promise<RecordedEvent> {
  const doc = newEvent(deps, type, data, opts);
  await store(deps, doc);
  return recorded(doc);
}

/**
 * Emits an event to every active webhook subscribed to `type` (campaigns call this too). Never throws:
 * resolves to the event and where it went, or null when it was lost (the in-memory queue was full).
 */
export async function emitWebhookEvent(deps: EmitDeps, type: WebhookEventType, data: object, opts: Omit<EventOptions, 'webhookId'> = {}): Promise<(RecordedEvent & { handoff: Handoff }) | null> {
  const doc = newEvent(deps, type, data, opts);
  try {
    return { ...recorded(doc), handoff: await store(deps, doc) };
  } catch (err) {
    return hold(deps, doc, err) ? { ...recorded(doc), handoff: 'held' } : null;
  }
}

// --- events neither store took: kept in memory, retried -------------------------------------------

/** Held events beyond this are lost at once (a bound on memory while both stores are away). */
const HELD_MAX_EVENTS = 10_000;
const HELD_RETRY_FIRST_MS = 200;
const HELD_RETRY_MAX_MS = 10_000;

/** Oldest first, each with the stores it is for. */
const held: Array<{ deps: EmitDeps; doc: OutboxDoc }> = [];
let retryDelayMs = HELD_RETRY_FIRST_MS;
let retryTimer: NodeJS.Timeout | undefined;
let retrying: Promise<boolean> | undefined;

function lose(deps: EmitDeps, docs: OutboxDoc[], reason: string): void {
  if (!docs.length) return;
  deps.metrics?.webhookEmitFailures.inc(docs.length);
  deps.logger.error({ events: docs.map((d) => ({ event_id: d._id, event_type: d.type })), reason }, 'webhook events lost: stored nowhere');
}

function hold(deps: EmitDeps, doc: OutboxDoc, err: unknown): boolean {
  if (held.length >= HELD_MAX_EVENTS) {
    lose(deps, [doc], 'the in-memory queue of held events is full');
    return false;
  }
  held.push({ deps, doc });
  deps.metrics?.webhookHeldTotal.inc();
  deps.metrics?.webhookHeld.inc();
  deps.logger.warn({ err, event_id: doc._id, event_type: doc.type, held: held.length }, 'webhook event held in memory: neither Redis nor MongoDB took it; retrying');
  scheduleRetry();
  return true;
}

function scheduleRetry(): void {
  if (retryTimer || retrying || !held.length) return;
  retryTimer = setTimeout(() => {
    retryTimer = undefined;
    void retryHeld();
  }, retryDelayMs);
  retryTimer.unref(); // never keeps a process alive: shutdown flushes (flushHeldWebhookEvents)
}

/** Stores held events oldest first; stops at one neither store takes (they are still away). True when none is left. */
function retryHeld(): Promise<boolean> {
  if (retrying) return retrying;
  retrying = (async () => {
    while (held.length) {
      const next = held[0]!;
      try {
        await store(next.deps, next.doc);
      } catch {
        retryDelayMs = Math.min(retryDelayMs * 2, HELD_RETRY_MAX_MS);
        return false;
      }
      if (held[0] === next) held.shift();
      next.deps.metrics?.webhookHeld.dec();
      next.deps.logger.info({ event_id: next.doc._id, event_type: next.doc.type }, 'held webhook event stored');
      retryDelayMs = HELD_RETRY_FIRST_MS;
    }
    return true;
  })().finally(() => {
    retrying = undefined;
    scheduleRetry();
  });
  return retrying;
}

/**
 * At shutdown (before the store clients close): stores the held events, retrying until `timeoutMs`
 * passes; those still held then are lost (counted and logged) and dropped. `redis`: only the events of
 * the app on that client (a test's). Resolves to the number lost.
 */
export async function flushHeldWebhookEvents(opts: { timeoutMs: number; redis?: Redis }): Promise<number> {
  const mine = (h: (typeof held)[number]) => !opts.redis || h.deps.redis === opts.redis;
  const deadline = Date.now() + opts.timeoutMs;
  while (held.some(mine) && Date.now() < deadline) {
    if (await retryHeld()) break;
    await delay(Math.max(0, Math.min(retryDelayMs, deadline - Date.now())));
  }
  await retrying;
  const left = held.filter(mine);
  for (const h of left) held.splice(held.indexOf(h), 1);
  for (const h of left) h.deps.metrics?.webhookHeld.dec();
  for (const h of left) lose(h.deps, [h.doc], 'the process stopped while neither Redis nor MongoDB took it');
  return left.length;
}

// --- call events -----------------------------------------------------------------------------------

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
    ...callActions(doc),
  };
}

/** The call's transcript in its public shape (the call record's). */
export const callTranscript = (doc: CallDoc): TranscriptEntry[] =>
  (doc.transcript ?? []).map((t) => ({ role: t.role, text: t.text, at: t.at.toISOString(), ...(t.dtmf ? { dtmf: true } : {}) }));

/** `data` of call.analyzed: the call as it stands and its analysis (done, failed or skipped). */
export function analyzedEventData(doc: CallDoc): WebhookCallAnalyzedData {
  return { ...callEventData(doc), analysis: publicAnalysis(doc.analysis)! };
}

type CallEventType = 'call.queued' | 'call.ringing' | 'call.in_progress' | 'call.ended' | 'call.analyzed';
/** The status event a move records on the call until the outbox has it (CallDoc.webhook_due). */
export type CallMoveEvent = NonNullable<CallDoc['webhook_due']>[number];

/**
 * A call makes each call.* event once, so its id is fixed by the call and type (`evt_` + 24 hex, as any
 * event id): an event sent again (a retried move, an emit made again after a crash, an XADD that timed out
 * yet landed) has the same id and is delivered once.
 */
export const callEventId = (callId: string, type: CallEventType) => `evt_${createHash('sha256').update(`${callId}\n${type}`).digest('hex').slice(0, 24)}`;

export const emitCallEvent = (deps: EmitDeps, type: CallEventType, doc: CallDoc) =>
  type === 'call.analyzed'
    ? emitWebhookEvent(deps, type, analyzedEventData(doc), { id: callEventId(doc._id, type), transcript: callTranscript(doc) })
    : emitWebhookEvent(deps, type, callEventData(doc), { id: callEventId(doc._id, type), ...(type === 'call.ended' ? { transcript: callTranscript(doc) } : {}) });

const MOVE_EVENTS: Partial<Record<CallStatus, 'call.ringing' | 'call.in_progress'>> = { ringing: 'call.ringing', in_progress: 'call.in_progress' };
const EVENT_STATUS: Record<Exclude<CallMoveEvent, 'call.ended' | 'call.analyzed'>, CallStatus> = { 'call.ringing': 'ringing', 'call.in_progress': 'in_progress' };

/** The event of a move to `status` (none for dialing). */
export const moveEvent = (status: CallStatus): Exclude<CallMoveEvent, 'call.analyzed'> | null => (TERMINAL_CALL_STATUSES.includes(status) ? 'call.ended' : (MOVE_EVENTS[status] ?? null));

/** Sends a call event and, once the outbox has it (not only this process's memory), removes its `webhook_due` mark. */
export async function sendMoveEvent(deps: EmitDeps, type: CallMoveEvent, doc: CallDoc): Promise<void> {
  const sent = await emitCallEvent(deps, type, doc);
  if (!sent || sent.handoff === 'held') return; // the mark stays: the call's next move or repeat sends it again
  await clearDue(deps.db, doc._id, type).catch((err: unknown) => deps.logger.warn({ err, call_id: doc._id, event_type: type }, 'webhook event sent but not marked on the call; its next move sends it again (same id)'));
}

/**
 * The event of a status move (`doc` as of the move, its event marked due): ringing, in_progress, or the
 * end. The end of an answered call whose recording is still to come (`recordingFollows`: a worker's
 * report) is held until the recording is reported (emitRecordingArrived) or WEBHOOK_RECORDING_WAIT_SECONDS
 * pass (the deliverer). Call under the call's lock (locks.ts).
 */
export async function emitCallMove(deps: EmitDeps, doc: CallDoc, recordingFollows: boolean): Promise<void> {
  const type = moveEvent(doc.status);
  if (!type) return;
  if (type === 'call.ended' && recordingFollows && doc.started_at && doc.recording_key == null && doc.recording_error == null) {
    try {
      // NX: holding it again (a repeat) keeps the first hold's time.
      await deps.redis.zadd(ENDED_PENDING_KEY, 'NX', (deps.clock ?? Date.now)(), doc._id);
      return;
    } catch {
      // Cannot hold it: send it now, without the recording.
    }
  }
  await sendMoveEvent(deps, type, doc);
}

/**
 * The events of moves of this call that landed without reaching the outbox (`doc.webhook_due`): sent now,
 * each as of its own status. Call under the call's lock, before the request's own move or repeat.
 */
export async function emitDueEvents(deps: EmitDeps, doc: CallDoc, recordingFollows: boolean): Promise<void> {
  for (const type of doc.webhook_due ?? []) {
    if (type === 'call.analyzed') await sendMoveEvent(deps, type, doc);
    else await emitCallMove(deps, type === 'call.ended' ? doc : { ...doc, status: EVENT_STATUS[type] }, recordingFollows);
  }
}

/** The recording of an ended call was reported, or its wait is over (`doc` as it stands): its held call.ended goes out now. Under the call's lock. */
export async function emitRecordingArrived(deps: EmitDeps, doc: CallDoc): Promise<void> {
  if (await releaseHeldEnd(deps, doc._id)) await sendMoveEvent(deps, 'call.ended', doc);
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
