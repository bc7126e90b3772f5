// Calls as stored: the document, its public shape and the collections every part that records or moves a
// call uses (routes.ts, lifecycle.ts, dial-out, inbound calls, the worker config, the dialler).
//
// A call's record is kept in one of three collections, its home (homeOf), and moves on under the call's lock
// (rehomeCall: an insert, then the delete from the collection it leaves):
// - `calls_live` from its creation until it ends (queued, dialing, ringing, in progress);
// - `calls_ending` from its end until it is settled: no status event of it still due (call.ended held for the
//   recording, say) and no analysis pending;
// - `calls` once settled.
// Why: FerretDB v1 (SQLite) has no index it can use for a lookup; a find by `_id` parses the collection's
// documents in insertion order up to the one it looks for, and an update or delete by `_id` parses all of
// them, holding SQLite's one writer meanwhile (measured with 2000 ended calls stored: ~70 ms a write; a
// worker's call makes some 25 such reads and writes). So what a call in progress does (dial-out, the worker's
// config read, its events, the sweeper) reads and writes only the calls in progress, not the ended calls
// waiting for their recording or analysis (each of them costs every such operation some 40 µs of FerretDB's
// CPU), and `calls`, which grows for ever, gets one insert per call.
//
// Readers look in calls_live, then calls_ending, then calls (locateCall, findCall, findCalls): a move inserts
// before it deletes, so a reader never misses a call, and a call in two (a crash in between) is read from the
// earlier, where its writes go until it is moved again. A call stored in `calls` while not settled (before
// this split; moveUnsettledCalls in stores.ts moves those at boot) is written where it is.
import { MongoServerError, type Db, type Document, type Filter, type FindOptions } from 'mongodb';
import { TERMINAL_CALL_STATUSES, type AnsweredBy, type Call, type CallAction, type CallDirection, type CallStatus, type CallTransfer, type CallTurn, type callIdentityFields } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import { analysisPending, publicAnalysis, type StoredAnalysis } from './analysis.js';

export interface CallDoc {
  _id: string;
  bot_id: string;
  direction: CallDirection;
  to_number: string | null;
  /** Absent on calls stored before telephony (read as null). */
  from_number?: string | null;
  status: CallStatus;
  variables: Record<string, string>;
  api_key_id: string | null;
  /** The bot's version the call runs (bots/versions.ts); absent on calls stored before versions (read as null). */
  bot_version?: number;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  end_reason: string | null;
  recording_key: string | null;
  recording_error: string | null;
  sip_status_code?: number | null;
  transcript?: Array<{ role: 'user' | 'bot'; text: string; at: Date; dtmf?: boolean }>;
  status_times: Partial<Record<CallStatus, Date>>;
  /** Status events whose move landed but which the webhook outbox has not taken yet (set in the move's own
   *  write, removed after the emit: webhooks/outbox.ts); a later move or repeat of the call sends them. */
  webhook_due?: Array<'call.ringing' | 'call.in_progress' | 'call.ended' | 'call.analyzed'>;
  /** Ids of the reported events applied to this call (lifecycle.ts dedupes retries on them). */
  event_ids?: string[];
  /** What the bot did, appended from the worker's events (absent on calls stored before actions). */
  actions?: StoredAction[];
  transfer?: (Omit<CallTransfer, 'at'> & { at: Date }) | null;
  /** Answering machine detection's verdict and when it came (absent: not detected). */
  answered_by?: AnsweredBy | null;
  amd_ms?: number | null;
  /** Each turn's latency, ms, as the worker reported it with the end (analytics/; not in the public call). */
  turn_latencies_ms?: number[];
  /** Each turn's stage times as the worker reported them with the end (absent on calls ended before them). */
  turns?: CallTurn[];
  /** Post-call analysis (analysis/): pending from the end (a bot that asks for one) until the dialler has it. */
  analysis?: StoredAnalysis | null;
  /** A bot test's call (botTests/): its run and case; the runtime config answers the case's tool mocks. */
  test?: { run_id: string; case_id: string };
  /** Inbound calls only: the room LiveKit's dispatch rule put the caller in (other calls' rooms are named by the id). */
  room_name?: string;
  /** Campaign dials only (campaigns/): the campaign, its contact and which attempt of that contact this is. */
  campaign_id?: string | null;
  campaign_contact_id?: string | null;
  campaign_attempt?: number | null;
}

/** Settled calls (ended, every status event sent, no analysis pending), and calls stored before the split. */
export const calls = (db: Db) => db.collection<CallDoc>(COLLECTIONS.calls);
/** Calls not ended: queued, dialing, ringing, in progress. */
export const liveCalls = (db: Db) => db.collection<CallDoc>(COLLECTIONS.liveCalls);
/** Calls ended but not settled: an event still due (call.ended held for the recording, say) or an analysis pending. */
export const endingCalls = (db: Db) => db.collection<CallDoc>(COLLECTIONS.endingCalls);
/** The ids of calls whose id the caller chose (a campaign attempt's), kept for good: such an id is placed once,
 *  also after its call has left `calls_live` (insertCall). */
const chosenCallIds = (db: Db) => db.collection<{ _id: string }>(COLLECTIONS.chosenCallIds);

const isDuplicate = (err: unknown) => err instanceof MongoServerError && err.code === 11000;

/** Ended, no status event of it still due and no analysis pending: the call's record is final (but for a late recording report). */
export const isSettled = (doc: Pick<CallDoc, 'status' | 'webhook_due' | 'analysis'>) => TERMINAL_CALL_STATUSES.includes(doc.status) && !doc.webhook_due?.length && !analysisPending(doc.analysis);

/** Where a call's record belongs: `live` (calls_live), `ending` (calls_ending) or `ended` (calls). */
export type CallHome = 'live' | 'ending' | 'ended';
/** The homes in the order a record passes through them (and readers look in them). */
const HOMES: readonly CallHome[] = ['live', 'ending', 'ended'];
export const homeOf = (doc: Pick<CallDoc, 'status' | 'webhook_due' | 'analysis'>): CallHome =>
  !TERMINAL_CALL_STATUSES.includes(doc.status) ? 'live' : isSettled(doc) ? 'ended' : 'ending';
/** The collection of a home. */
export const callCollection = (db: Db, home: CallHome) => (home === 'live' ? liveCalls(db) : home === 'ending' ? endingCalls(db) : calls(db));

/**
 * Stores a new call (queued; or ended at once: an inbound call refused on arrival) in its home. `chosenId`: the
 * caller chose the id and relies on it being placed once (campaign attempts); a taken id throws MongoDB's
 * duplicate key error (code 11000), as one collection's unique `_id` would, also when the call with that id
 * has left calls_live (its id is in `call_ids_chosen` by then: this insert's, or the move's after a crash in
 * between).
 */
export async function insertCall(db: Db, doc: CallDoc, opts: { chosenId?: boolean } = {}): Promise<void> {
  const home = homeOf(doc);
  await callCollection(db, home).insertOne(doc);
  if (!opts.chosenId || home !== 'live') return;
  try {
    await chosenCallIds(db).insertOne({ _id: doc._id });
  } catch (err) {
    if (!isDuplicate(err)) throw err; // the record stays: the caller's retry meets it (or closes it as jobless)
    // Taken by a call that has left calls_live since: this record must not be.
    await liveCalls(db).deleteOne({ _id: doc._id });
    throw err;
  }
}

/** One call by id, with where it is kept, or null. */
export async function locateCall(db: Db, id: string, projection?: Document): Promise<{ doc: CallDoc; home: CallHome } | null> {
  const opts = projection ? { projection } : {};
  for (const home of HOMES) {
    const doc = await callCollection(db, home).findOne({ _id: id }, opts);
    if (doc) return { doc, home };
  }
  return null;
}

/** One call by id, or null (`projection`: only those fields). */
export async function findCall(db: Db, id: string, projection?: Document): Promise<CallDoc | null> {
  return (await locateCall(db, id, projection))?.doc ?? null;
}

/**
 * Calls matching `filter` from every home, in `sort` order (created_at and _id only), at most `limit` (a call in
 * two homes once: as in the earlier one, where its moves go).
 */
export async function findCalls(
  db: Db,
  filter: Filter<CallDoc>,
  opts: { sort?: { created_at: 1 | -1; _id: 1 | -1 }; limit?: number; projection?: FindOptions['projection'] } = {},
): Promise<CallDoc[]> {
  const read = (home: CallHome) => {
    let cursor = callCollection(db, home).find(filter, opts.projection ? { projection: opts.projection } : {});
    if (opts.sort) cursor = cursor.sort(opts.sort);
    if (opts.limit) cursor = cursor.limit(opts.limit);
    return cursor.toArray();
  };
  const seen = new Set<string>();
  const all: CallDoc[] = [];
  for (const docs of await Promise.all(HOMES.map(read))) {
    for (const d of docs) if (!seen.has(d._id)) all.push(d), seen.add(d._id);
  }
  if (opts.sort) {
    const { created_at: t, _id: i } = opts.sort;
    all.sort((a, b) => (a.created_at.getTime() - b.created_at.getTime()) * t || (a._id < b._id ? -i : a._id > b._id ? i : 0));
  }
  return opts.limit ? all.slice(0, opts.limit) : all;
}

/**
 * Moves a call's record (`doc`: as it stands in `from`, read under the call's lock) on to the home it belongs
 * in now, if that is a later one: insert there (or, when an earlier move was cut short after its insert,
 * replace), then delete from `from`. True if moved. Call under the call's lock (locks.ts), so no move of the
 * call lands in between.
 */
export async function rehomeCall(db: Db, doc: CallDoc, from: CallHome): Promise<boolean> {
  const to = homeOf(doc);
  if (HOMES.indexOf(to) <= HOMES.indexOf(from)) return false;
  if (from === 'live' && doc.campaign_contact_id) {
    // Its id was the caller's choice: recorded for good before the record leaves calls_live (insertCall).
    await chosenCallIds(db).insertOne({ _id: doc._id }).catch((err: unknown) => {
      if (!isDuplicate(err)) throw err;
    });
  }
  try {
    await callCollection(db, to).insertOne(doc);
  } catch (err) {
    if (!isDuplicate(err)) throw err;
    await callCollection(db, to).replaceOne({ _id: doc._id }, doc);
  }
  await callCollection(db, from).deleteOne({ _id: doc._id });
  return true;
}

/** Removes a status event's `webhook_due` mark from the call, where it is kept. */
export async function clearDue(db: Db, id: string, type: NonNullable<CallDoc['webhook_due']>[number]): Promise<void> {
  for (const home of HOMES) {
    if ((await callCollection(db, home).updateOne({ _id: id }, { $pull: { webhook_due: type } })).matchedCount) return;
  }
}

/** What a new call record is given; the rest is the same for every new call. */
type NewCall = Pick<CallDoc, '_id' | 'bot_id' | 'direction' | 'to_number' | 'from_number' | 'variables' | 'api_key_id'> &
  Pick<CallDoc, 'bot_version' | 'room_name' | 'campaign_id' | 'campaign_contact_id' | 'campaign_attempt' | 'test'>;

/** A new call record (dial-out, worker-created and inbound calls): queued at `now`, nothing recorded yet. */
export function queuedCall(call: NewCall, now: Date): CallDoc {
  const { _id, bot_id, direction, to_number, from_number, variables, api_key_id, ...extra } = call;
  return {
    _id,
    bot_id,
    direction,
    to_number,
    from_number,
    status: 'queued',
    variables,
    api_key_id,
    created_at: now,
    started_at: null,
    ended_at: null,
    end_reason: null,
    recording_key: null,
    recording_error: null,
    sip_status_code: null,
    transcript: [],
    status_times: { queued: now },
    ...extra,
  };
}

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** The fields that name a call, first in the call record and in every call.* webhook's `data` (webhooks/outbox.ts). */
export function callIdentity(doc: CallDoc): Pick<Call, keyof typeof callIdentityFields> {
  return {
    call_id: doc._id,
    bot_id: doc.bot_id,
    direction: doc.direction,
    to_number: doc.to_number,
    from_number: doc.from_number ?? null,
    status: doc.status,
  };
}

/** When each status was reached, as RFC 3339 times. */
export const statusTimes = (doc: CallDoc): Record<string, string> =>
  Object.fromEntries(Object.entries(doc.status_times ?? {}).map(([k, v]) => [k, (v as Date).toISOString()]));

export function publicCall(doc: CallDoc): Call {
  return {
    ...callIdentity(doc),
    variables: doc.variables,
    bot_version: doc.bot_version ?? null,
    created_at: doc.created_at.toISOString(),
    started_at: iso(doc.started_at),
    ended_at: iso(doc.ended_at),
    end_reason: doc.end_reason,
    recording_key: doc.recording_key,
    recording_error: doc.recording_error,
    sip_status_code: doc.sip_status_code ?? null,
    transcript: (doc.transcript ?? []).map((t) => ({ role: t.role, text: t.text, at: t.at.toISOString(), ...(t.dtmf ? { dtmf: true } : {}) })),
    status_times: statusTimes(doc),
    ...callActions(doc),
    answered_by: doc.answered_by ?? null,
    amd_ms: doc.amd_ms ?? null,
    analysis: publicAnalysis(doc.analysis),
    ...(doc.turns?.length ? { turns: doc.turns } : {}),
  };
}

/** An action as kept: its arguments as JSON text, so any keys and nesting survive (FerretDB v1 refuses
 *  nested arrays and some keys a tool's arguments may well hold). */
export type StoredAction = Omit<CallAction, 'at' | 'arguments'> & { at: Date; arguments_json?: string };

export function storedAction(a: CallAction): StoredAction {
  const { arguments: args, ...rest } = a;
  return { ...rest, at: new Date(a.at), ...(args === undefined ? {} : { arguments_json: JSON.stringify(args) }) };
}

/** The call's actions and transfer in their public shape (the call record and every call.* webhook). */
export function callActions(doc: CallDoc): Pick<Call, 'actions' | 'transfer'> {
  return {
    actions: (doc.actions ?? []).map(({ arguments_json, ...a }) => ({
      ...a,
      at: a.at.toISOString(),
      ...(arguments_json === undefined ? {} : { arguments: JSON.parse(arguments_json) as Record<string, unknown> }),
    })),
    transfer: doc.transfer ? { ...doc.transfer, at: doc.transfer.at.toISOString() } : null,
  };
}
