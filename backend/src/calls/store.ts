// Calls as stored: the document, its public shape and the collection every part that records or moves a
// call uses (routes.ts, lifecycle.ts, dial-out, inbound calls, the worker config, the dialler).
import type { Db } from 'mongodb';
import type { Call, CallAction, CallDirection, CallStatus, CallTransfer, callIdentityFields } from '@voice-platform/schemas';
import { COLLECTIONS } from '../stores.js';

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
  webhook_due?: Array<'call.ringing' | 'call.in_progress' | 'call.ended'>;
  /** Ids of the reported events applied to this call (lifecycle.ts dedupes retries on them). */
  event_ids?: string[];
  /** What the bot did, appended from the worker's events (absent on calls stored before actions). */
  actions?: StoredAction[];
  transfer?: (Omit<CallTransfer, 'at'> & { at: Date }) | null;
  /** Inbound calls only: the room LiveKit's dispatch rule put the caller in (other calls' rooms are named by the id). */
  room_name?: string;
  /** Campaign dials only (campaigns/): the campaign, its contact and which attempt of that contact this is. */
  campaign_id?: string | null;
  campaign_contact_id?: string | null;
  campaign_attempt?: number | null;
}

export const calls = (db: Db) => db.collection<CallDoc>(COLLECTIONS.calls);

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

/** One call by id, or null. */
export function findCall(db: Db, id: string): Promise<CallDoc | null> {
  return calls(db).findOne({ _id: id });
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
