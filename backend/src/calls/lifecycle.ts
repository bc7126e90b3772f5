// The one code path that moves a call through its lifecycle: a worker's event (calls/routes.ts) and the
// dialler's stale-call sweeper (sweeper.ts) both go through applyCallMove. Status only moves
// forward, each move is timestamped (never before the call: checkTimes), the check and the write hold
// the call's lock (see locks.ts), and a terminal move releases the capacity reservation; ZREM's result
// makes that release count exactly once. What follows a move goes to the handlers registered at composition
// (events.ts: app.ts registers them). Each move that lands emits its webhook event (webhooks/outbox.ts),
// marked due on the call in the move's own write until the outbox has it, so a move whose emit never
// happened (a crash or a store failure after the write) is sent by the call's next move or repeat. A move
// that ends the call, or leaves it settled (ended, no event due, no analysis pending), moves its record on
// (calls_live → calls_ending → calls: calls/store.ts), under the same lock. A terminal move of a call whose
// bot asks for a post-call analysis records the analysis as pending in the same write (analysis/jobs.ts),
// so the job is never lost.
import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CALL_STATUSES, CALL_STATUS_RANK, MAX_CALL_ACTIONS, TERMINAL_CALL_STATUSES, redactAction, type AnsweredBy, type CallAction, type CallStatus, type CallTransfer, type CallTurn } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { FieldProblem } from '../core/validate.js';
import type { Metrics } from '../core/metrics.js';
import { releaseSlot } from '../core/redisScripts.js';
import { withDocLock } from '../core/locks.js';
import { callCollection, locateCall, rehomeCall, storedAction, type CallDoc } from './store.js';
import { callHandlers, type CallEventDeps } from './events.js';
import { botRedaction, hasCallText, redactTranscript, redactTurns } from './redaction.js';

interface LifecycleDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  /** Epoch ms for webhook event times (default Date.now). */
  clock?: () => number;
}

interface CallMove {
  status: CallStatus;
  actions?: CallAction[];
  transfer?: CallTransfer;
  answered_by?: AnsweredBy;
  amd_ms?: number;
  /** With the end: each turn's latency, ms (analytics). */
  turn_latencies_ms?: number[];
  /** With the end: each turn's stage times (GET /calls/{id} `turns`). */
  turns?: CallTurn[];
  /** The reporter's id for this event (a worker's retries repeat it): an event already applied changes nothing. */
  event_id?: string;
  at: Date;
  end_reason?: string;
  recording_key?: string;
  recording_error?: string;
  sip_status_code?: number;
  transcript?: Array<{ role: 'user' | 'bot'; text: string; at: Date; dtmf?: boolean }>;
}

interface MoveOptions {
  /** Move only from one of these statuses, else 409 `conflict` (the sweeper: `queued` only, so a worker's
   *  `dialing` that landed first wins). Without it any forward move is allowed. */
  onlyFrom?: readonly CallStatus[];
  /** Fields added to the release log line (request id, or who moved the call). */
  logContext?: Record<string, unknown>;
  /** A recording report may follow the end (a worker's report; default true): call.ended of an answered
   *  call waits for it (webhooks/outbox.ts). The sweeper's moves say false: no worker will report. */
  recordingFollows?: boolean;
}

interface MoveResult {
  doc: CallDoc;
  /** This call changed the status (false for a repeat of the current status). */
  moved: boolean;
  /** Terminal moves only: this call removed the reservation (null when the status is not terminal). */
  released: boolean | null;
}

const isTerminal = (s: CallStatus) => TERMINAL_CALL_STATUSES.includes(s);
/** Event ids kept per call for deduplication; a call has a few lifecycle events, so this is never reached in practice. */
const MAX_EVENT_IDS = 200;

/** How far the clocks of the machines that report a call (backend, dialler, workers) may disagree: an
 *  event time up to this much before the call's creation or its last status is skew, not an error. */
const CLOCK_SKEW_TOLERANCE_MS = 60_000;

/** A call's times never run backwards: `at` (and each transcript line) not before the call was created,
 *  a move not before the last status time, each allowing CLOCK_SKEW_TOLERANCE_MS. */
function checkTimes(current: CallDoc, ev: CallMove): void {
  const problems: FieldProblem[] = [];
  const skew = `allowing ${CLOCK_SKEW_TOLERANCE_MS / 1000} s of clock skew`;
  const created = current.created_at.getTime();
  const floor = (t: number) => new Date(t - CLOCK_SKEW_TOLERANCE_MS).toISOString();
  const last = Math.max(created, ...Object.values(current.status_times ?? {}).map((d) => (d as Date).getTime()));
  const at = ev.at.getTime();
  if (Number.isNaN(at)) problems.push({ field: 'at', message: 'must be a real date-time' });
  else if (at < created - CLOCK_SKEW_TOLERANCE_MS) problems.push({ field: 'at', message: `must not be before the call was created (${skew}: not before ${floor(created)})` });
  else if (current.status !== ev.status && at < last - CLOCK_SKEW_TOLERANCE_MS) {
    problems.push({ field: 'at', message: `must not be before the call's last status time (${skew}: not before ${floor(last)})` });
  }
  ev.transcript?.forEach((line, i) => {
    const t = line.at.getTime();
    if (Number.isNaN(t)) problems.push({ field: `transcript.${i}.at`, message: 'must be a real date-time' });
    else if (t < created - CLOCK_SKEW_TOLERANCE_MS) problems.push({ field: `transcript.${i}.at`, message: `must not be before the call was created (${skew})` });
  });
  if (problems.length) throw apiError('validation_failed', { details: problems });
}

const conflict = (from: CallStatus | undefined, to: CallStatus) =>
  apiError('conflict', { message: `a call cannot move from ${from} to ${to}`, details: { from, to } });

export async function applyCallMove(deps: LifecycleDeps, metrics: Metrics, id: string, ev: CallMove, opts: MoveOptions = {}): Promise<MoveResult> {
  const extra: Partial<CallDoc> = {};
  if (ev.end_reason !== undefined) extra.end_reason = ev.end_reason;
  if (ev.recording_key !== undefined) extra.recording_key = ev.recording_key;
  if (ev.recording_error !== undefined) extra.recording_error = ev.recording_error;
  if (ev.sip_status_code !== undefined) extra.sip_status_code = ev.sip_status_code;
  if (ev.transcript !== undefined && ev.transcript.length) extra.transcript = ev.transcript;
  if (ev.answered_by !== undefined) extra.answered_by = ev.answered_by;
  if (ev.amd_ms !== undefined) extra.amd_ms = ev.amd_ms;
  if (ev.turn_latencies_ms !== undefined && ev.turn_latencies_ms.length) extra.turn_latencies_ms = ev.turn_latencies_ms;
  if (ev.turns !== undefined && ev.turns.length) extra.turns = ev.turns;
  const allowedFrom = (s: CallStatus) => !opts.onlyFrom || opts.onlyFrom.includes(s);

  let moved = false;
  const emit: CallEventDeps = { redis: deps.redis, db: deps.db, logger: deps.logger, clock: deps.clock, metrics };
  const handlers = callHandlers();
  // One move at a time per call: the status check and the write must not interleave (see locks.ts).
  const doc = await withDocLock(deps.redis, `call:${id}`, async () => {
    const found = await locateCall(deps.db, id);
    if (!found) throw apiError('call_not_found');
    const { doc: current, home } = found;
    const callDocs = callCollection(deps.db, home);
    await move(current, callDocs);
    // The call as this request leaves it, read under the lock; ended or settled, its record moves on (a retry
    // of the event that ended or settled it completes a move cut short).
    const after = await callDocs.findOne({ _id: id });
    if (!after) throw apiError('call_not_found');
    await rehomeCall(deps.db, after, home);
    return after;
  });

  async function move(current: CallDoc, callDocs: ReturnType<typeof callCollection>): Promise<void> {
    // Events of moves that landed without reaching the outbox go first, whatever this request turns out to
    // be (a retry of that very move, even one answered as already applied, included).
    if (current.webhook_due?.length) for (const h of handlers) await h.beforeMove?.(emit, current, opts.recordingFollows ?? true);
    // Applied before (its answer was lost, so the reporter sent it again): the same answer, nothing changes.
    if (ev.event_id !== undefined && current.event_ids?.includes(ev.event_id)) return;
    checkTimes(current, ev);
    if (!allowedFrom(current.status)) throw conflict(current.status, ev.status);
    // The bot's redaction over what the event brings, before it is stored (redaction.ts).
    const entities = hasCallText(ev) ? await botRedaction(deps.db, current.bot_id) : [];
    if (entities.length && extra.transcript) extra.transcript = redactTranscript(extra.transcript, entities);
    if (entities.length && extra.turns) extra.turns = redactTurns(extra.turns, entities);
    const seen = ev.event_id !== undefined && (current.event_ids?.length ?? 0) < MAX_EVENT_IDS ? { $addToSet: { event_ids: ev.event_id } } : {};
    // The event's actions join the call's (at most MAX_CALL_ACTIONS); its transfer is set once.
    const acts = (ev.actions ?? []).slice(0, Math.max(0, MAX_CALL_ACTIONS - (current.actions?.length ?? 0))).map((a) => storedAction(redactAction(a, entities)));
    const transfer = ev.transfer && !current.transfer ? { ...ev.transfer, at: new Date(ev.transfer.at) } : null;
    const withActions = (doc: CallDoc): CallDoc => ({ ...doc, actions: [...(doc.actions ?? []), ...acts], ...(transfer ? { transfer } : {}) });
    if (current.status !== ev.status) {
      if (isTerminal(current.status) || CALL_STATUS_RANK[ev.status] <= CALL_STATUS_RANK[current.status]) throw conflict(current.status, ev.status);
      const set: Record<string, unknown> = { status: ev.status, [`status_times.${ev.status}`]: ev.at, ...extra, ...(transfer ? { transfer } : {}) };
      if (ev.status === 'in_progress') set.started_at = ev.at;
      // What the end brings along in its own write (a pending analysis: analysis/jobs.ts).
      const ending: Partial<CallDoc> = {};
      if (isTerminal(ev.status)) {
        set.ended_at = ev.at;
        for (const h of handlers) Object.assign(ending, await h.ending?.(emit, current));
        Object.assign(set, ending);
      }
      // The move's event is due until the outbox has it (webhooks/outbox.ts emitCallMove removes the mark).
      const due = handlers.map((h) => h.dueMark?.(ev.status) ?? null).find((m) => m !== null) ?? null;
      const push = { ...(due ? { webhook_due: due } : {}), ...(acts.length ? { actions: { $each: acts } } : {}) };
      // By _id alone: FerretDB (v1, SQLite) hands SQLite a filter of `_id` and nothing else, and decodes every
      // document of the collection for any other. The status guard is the lock's: the read above and this
      // write happen under it, so no other move can land in between.
      const res = await callDocs.updateOne({ _id: id }, { $set: set, ...(Object.keys(push).length ? { $push: push } : {}), ...seen });
      if (res.matchedCount === 0) {
        const now = await callDocs.findOne({ _id: id });
        if (now?.status !== ev.status) throw conflict(now?.status, ev.status);
      } else {
        moved = true;
        // The call as this move left it (a later move may land before a re-read); emitted under the lock,
        // so the stream holds a call's events in the order of its moves (not so via the MongoDB fallback:
        // delivery is unordered).
        const after: CallDoc = withActions({ ...current, ...extra, status: ev.status, status_times: { ...current.status_times, [ev.status]: ev.at } });
        if (ev.status === 'in_progress') after.started_at = ev.at;
        if (isTerminal(ev.status)) after.ended_at = ev.at;
        for (const h of handlers) await h.moved?.(emit, after, opts.recordingFollows ?? true, ending);
      }
    } else if (Object.keys(extra).length || acts.length || transfer) {
      // A repeat of the current status may add what was not known yet (e.g. the recording after the end,
      // the actions of a call in progress).
      const fill: Record<string, unknown> = transfer ? { transfer } : {};
      for (const [k, v] of Object.entries(extra)) {
        const had = current[k as keyof CallDoc];
        if (had == null || (Array.isArray(had) && had.length === 0)) fill[k] = v;
      }
      if (Object.keys(fill).length || acts.length) {
        await callDocs.updateOne({ _id: id }, { ...(Object.keys(fill).length ? { $set: fill } : {}), ...(acts.length ? { $push: { actions: { $each: acts } } } : {}), ...seen });
        if (isTerminal(current.status) && ('recording_key' in fill || 'recording_error' in fill)) {
          for (const h of handlers) await h.recordingArrived?.(emit, withActions({ ...current, ...fill }));
        }
      }
    }
  }
  let released: boolean | null = null;
  if (isTerminal(ev.status)) {
    // Also on a repeat: if a crash came between the status write and this ZREM, the retry frees it.
    released = await releaseSlot(deps.redis, id);
    metrics.slotReleases.inc({ outcome: released ? 'released' : 'already_gone' });
    if (released) deps.logger.info({ ...opts.logContext, call_id: id, status: ev.status }, 'capacity slot released');
  }
  // An ended call goes to the handlers (analytics rollups, campaign contacts) also on a repeat of the end: a
  // retried report repairs a crash in between. Each catches its own failure; none fails the event.
  if (isTerminal(doc.status)) for (const h of handlers) await h.ended?.(emit, doc);
  return { doc, moved, released };
}
