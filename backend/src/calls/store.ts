// Calls as stored: the document, its public shape and the collections every part that records or moves a
// call uses (routes.ts, lifecycle.ts, dial-out, inbound calls, the worker config, the dialler).
//
// A call's record lives in `calls_live` from its creation until it is settled (ended, and no status event
// of it still due: webhook_due empty), then in `calls`, moved there by archiveIfSettled under the call's lock
// (an insert, then the delete from `calls_live`). Why two: FerretDB v1 (SQLite) has no index it can use for
// a lookup; a find by `_id` reads the collection in insertion order up to the document and an update or
// delete by `_id` reads all of it, parsing every stored document's JSON, each time (measured, 2000 ended
// calls with transcripts: ~70 ms a write, holding SQLite's one writer meanwhile; a worker's call makes
// some 25 such reads and writes). Every read and write of a call in progress (dial-out, the worker's config
// read, its events, the sweeper, the outbox) goes to the small collection of calls not settled; an
// ended call is written to `calls` once, by an insert, which stays cheap however many calls it holds.
//
// Readers look in `calls_live` first, then `calls` (findCall, findCalls): the archive inserts before it
// deletes, so a reader never misses a call, and a call in both (a crash in between) is read from
// `calls_live`, where its moves go until it is archived again. A call stored in `calls` while not settled
// (before this split; moveUnsettledCalls in stores.ts moves those at boot) is moved where it is.
import { MongoServerError, type Db, type Document, type Filter, type FindOptions } from 'mongodb';
import { TERMINAL_CALL_STATUSES, type AnsweredBy, type Call, type CallAction, type CallDirection, type CallStatus, type CallTransfer, type callIdentityFields } from '@voice-platform/schemas';
import { COLLECTIONS } from '../stores.js';
import { analysisPending, publicAnalysis, type StoredAnalysis } from '../analysis/record.js';

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
  /** Post-call analysis (analysis/): pending from the end (a bot that asks for one) until the dialler has it. */
  analysis?: StoredAnalysis | null;
  /** Inbound calls only: the room LiveKit's dispatch rule put the caller in (other calls' rooms are named by the id). */
  room_name?: string;
  /** Campaign dials only (campaigns/): the campaign, its contact and which attempt of that contact this is. */
  campaign_id?: string | null;
  campaign_contact_id?: string | null;
  campaign_attempt?: number | null;
}

/** Settled calls (ended, every status event sent), and calls stored before the split. */
export const calls = (db: Db) => db.collection<CallDoc>(COLLECTIONS.calls);
/** Calls not settled yet: every call in progress. */
export const liveCalls = (db: Db) => db.collection<CallDoc>(COLLECTIONS.liveCalls);
/** The ids of calls whose id the caller chose (a campaign attempt's), kept for good: such an id is placed once,
 *  also after its call has moved from `calls_live` to `calls` (insertCall). */
const chosenCallIds = (db: Db) => db.collection<{ _id: string }>(COLLECTIONS.chosenCallIds);

const isDuplicate = (err: unknown) => err instanceof MongoServerError && err.code === 11000;

/** Ended, no status event of it still due and no analysis pending: the call's record is final (but for a late recording report). */
export const isSettled = (doc: Pick<CallDoc, 'status' | 'webhook_due' | 'analysis'>) => TERMINAL_CALL_STATUSES.includes(doc.status) && !doc.webhook_due?.length && !analysisPending(doc.analysis);

/**
 * Stores a new call (queued, or settled at once: an inbound call refused on arrival). `chosenId`: the caller
 * chose the id and relies on it being placed once (campaign attempts); a taken id throws MongoDB's duplicate
 * key error (code 11000), as one collection's unique `_id` would, also when the call with that id has ended
 * and moved to `calls` (its id is in `call_ids_chosen` by then: this insert's, or the archive's after a crash
 * in between).
 */
export async function insertCall(db: Db, doc: CallDoc, opts: { chosenId?: boolean } = {}): Promise<void> {
  if (isSettled(doc)) {
    await calls(db).insertOne(doc);
    return;
  }
  await liveCalls(db).insertOne(doc);
  if (!opts.chosenId) return;
  try {
    await chosenCallIds(db).insertOne({ _id: doc._id });
  } catch (err) {
    if (!isDuplicate(err)) throw err; // the record stays: the caller's retry meets it (or closes it as jobless)
    // Taken by a call that has left calls_live since: this record must not be.
    await liveCalls(db).deleteOne({ _id: doc._id });
    throw err;
  }
}

/** One call by id, with where it is kept (`live`: calls_live), or null. */
export async function locateCall(db: Db, id: string, projection?: Document): Promise<{ doc: CallDoc; live: boolean } | null> {
  const opts = projection ? { projection } : {};
  const live = await liveCalls(db).findOne({ _id: id }, opts);
  if (live) return { doc: live, live: true };
  const ended = await calls(db).findOne({ _id: id }, opts);
  return ended ? { doc: ended, live: false } : null;
}

/** One call by id, or null (`projection`: only those fields). */
export async function findCall(db: Db, id: string, projection?: Document): Promise<CallDoc | null> {
  return (await locateCall(db, id, projection))?.doc ?? null;
}

/** The collection a call located by locateCall is kept in. */
export const callCollection = (db: Db, live: boolean) => (live ? liveCalls(db) : calls(db));

/**
 * Calls matching `filter` from both collections, in `sort` order (created_at and _id only), at most `limit`
 * (a call in both once: as in calls_live).
 */
export async function findCalls(
  db: Db,
  filter: Filter<CallDoc>,
  opts: { sort?: { created_at: 1 | -1; _id: 1 | -1 }; limit?: number; projection?: FindOptions['projection'] } = {},
): Promise<CallDoc[]> {
  const read = (col: ReturnType<typeof calls>) => {
    let cursor = col.find(filter, opts.projection ? { projection: opts.projection } : {});
    if (opts.sort) cursor = cursor.sort(opts.sort);
    if (opts.limit) cursor = cursor.limit(opts.limit);
    return cursor.toArray();
  };
  const [live, ended] = await Promise.all([read(liveCalls(db)), read(calls(db))]);
  const seen = new Set(live.map((d) => d._id));
  const all = [...live, ...ended.filter((d) => !seen.has(d._id))];
  if (opts.sort) {
    const { created_at: t, _id: i } = opts.sort;
    all.sort((a, b) => (a.created_at.getTime() - b.created_at.getTime()) * t || (a._id < b._id ? -i : a._id > b._id ? i : 0));
  }
  return opts.limit ? all.slice(0, opts.limit) : all;
}

/**
 * Moves a settled call (`doc`: as it stands in calls_live, read under the call's lock) to `calls`: insert
 * (or, when an earlier move was cut short after its insert, replace), then delete from calls_live. True if
 * moved. Call under the call's lock (locks.ts), so no move of the call lands in between.
 */
export async function archiveIfSettled(db: Db, doc: CallDoc): Promise<boolean> {
  if (!isSettled(doc)) return false;
  if (doc.campaign_contact_id) {
    // Its id was the caller's choice: recorded for good before the record leaves calls_live (insertCall).
    await chosenCallIds(db).insertOne({ _id: doc._id }).catch((err: unknown) => {
      if (!isDuplicate(err)) throw err;
    });
  }
  try {
    await calls(db).insertOne(doc);
  } catch (err) {
    if (!isDuplicate(err)) throw err;
    await calls(db).replaceOne({ _id: doc._id }, doc);
  }
  await liveCalls(db).deleteOne({ _id: doc._id });
  return true;
}

/** Removes a status event's `webhook_due` mark from the call, where it is kept. */
export async function clearDue(db: Db, id: string, type: NonNullable<CallDoc['webhook_due']>[number]): Promise<void> {
  const res = await liveCalls(db).updateOne({ _id: id }, { $pull: { webhook_due: type } });
  if (res.matchedCount === 0) await calls(db).updateOne({ _id: id }, { $pull: { webhook_due: type } });
}

/** What a new call record is given; the rest is the same for every new call. */
type NewCall = Pick<CallDoc, '_id' | 'bot_id' | 'direction' | 'to_number' | 'from_number' | 'variables' | 'api_key_id'> &
  Pick<CallDoc, 'room_name' | 'campaign_id' | 'campaign_contact_id' | 'campaign_attempt'>;

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
