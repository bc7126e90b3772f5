// The call job's wire format: the fields of one `XADD vp:jobs:calls` entry (CallJob, fleet.ts), written by the
// backend (calls/place.ts, inbound calls, benches) and read by the worker's claim loop, both through this one
// pair of functions, so no side spells the fields by hand.
import { Value } from '@sinclair/typebox/value';
import { CallJob } from './fleet.js';

/** A call job as both sides use it: `variables` an object, `direction` always present. */
export interface CallJobData {
  call_id: string;
  bot_id: string;
  /** The bot's variables for this call (the worker fills the prompt's placeholders with them). */
  variables: Record<string, string>;
  /** `outbound`: a dial-out; `web`: a browser test call (the caller joins the call's room); `inbound`: a caller rings in `room_name`. */
  direction: 'outbound' | 'web' | 'inbound';
  /** Dial-outs: the number called and the LiveKit id of the outbound trunk that places the call. */
  to_number?: string;
  sip_trunk_id?: string;
  /** Dial-outs: the caller ID presented; inbound calls: the caller's number. */
  from_number?: string;
  /** Inbound calls: the caller's room (other calls' rooms are named by the call id). */
  room_name?: string;
  /** The W3C trace context of the request that queued the call: the worker's call span joins its trace. */
  traceparent?: string;
}

/** A stream entry that is not a call job; the message says which field and why. */
export class CallJobError extends Error {
  override name = 'CallJobError';
}

const OPTIONAL = ['to_number', 'sip_trunk_id', 'from_number', 'room_name', 'traceparent'] as const;

/** The flat field/value list of XADD (after the stream key, MAXLEN and id). A dial-out has no `direction` field. */
export function encodeCallJob(job: CallJobData): string[] {
  const out = ['call_id', job.call_id, 'bot_id', job.bot_id, 'variables', JSON.stringify(job.variables)];
  if (job.direction !== 'outbound') out.push('direction', job.direction);
  for (const k of OPTIONAL) if (job[k] !== undefined) out.push(k, job[k]);
  return out;
}

/** The job of one entry's flat field/value list, or a CallJobError. */
export function decodeCallJob(fields: readonly string[]): CallJobData {
  if (fields.length % 2 !== 0) throw new CallJobError(`a call job has field/value pairs; got ${fields.length} items`);
  const f: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  if (!Value.Check(CallJob, f)) {
    const e = Value.Errors(CallJob, f).First();
    throw new CallJobError(`not a call job: ${e ? `${e.path || '/'} ${e.message}` : 'unknown shape'}`);
  }
  if (!f.call_id || !f.bot_id) throw new CallJobError('a call job needs call_id and bot_id');
  let variables: unknown;
  try {
    variables = JSON.parse(f.variables!);
  } catch {
    throw new CallJobError('variables is not JSON');
  }
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables) || Object.values(variables).some((v) => typeof v !== 'string')) {
    throw new CallJobError('variables must be a JSON object of string → string');
  }
  const job: CallJobData = { call_id: f.call_id, bot_id: f.bot_id, variables: variables as Record<string, string>, direction: (f.direction as 'web' | 'inbound' | undefined) ?? 'outbound' };
  for (const k of OPTIONAL) if (f[k] !== undefined) job[k] = f[k];
  return job;
}
