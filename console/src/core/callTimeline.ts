// A call's status timeline: the statuses it reached, in lifecycle order, then (while it is live) the
// steps still ahead of it. And its whole story in time order: statuses, turns, actions, the transfer.
import { CALL_STATUS_RANK, TERMINAL_CALL_STATUSES, type Call, type CallAction, type CallStatus, type CallTransfer, type TranscriptEntry } from '@voice-platform/schemas/calls.js';

const PATH: CallStatus[] = ['queued', 'dialing', 'ringing', 'in_progress'];

export function timeline(call: Pick<Call, 'status' | 'status_times'>): Array<{ status: CallStatus; at: string | null }> {
  const reached = (Object.entries(call.status_times) as Array<[CallStatus, string]>)
    .sort(([a, ta], [b, tb]) => CALL_STATUS_RANK[a] - CALL_STATUS_RANK[b] || ta.localeCompare(tb))
    .map(([status, at]) => ({ status, at }));
  if (TERMINAL_CALL_STATUSES.includes(call.status)) return reached;
  const ahead = PATH.filter((s) => CALL_STATUS_RANK[s] > CALL_STATUS_RANK[call.status]).map((status) => ({ status, at: null }));
  return [...reached, ...ahead, { status: 'completed' as const, at: null }];
}

/** One row of a call's story: a status reached, a turn of the transcript, an action, the transfer. */
export type CallEvent =
  | { kind: 'status'; at: string; status: CallStatus }
  | { kind: 'turn'; at: string; turn: TranscriptEntry }
  | { kind: 'action'; at: string; action: CallAction }
  | { kind: 'transfer'; at: string; transfer: CallTransfer };

/** At the same instant: the call's start before what happened in it, its end after. */
const tieRank = (e: CallEvent): number => (e.kind === 'status' ? (TERMINAL_CALL_STATUSES.includes(e.status) ? 9 : 0) : { turn: 1, action: 2, transfer: 3 }[e.kind]);

/** Everything the call record holds that happened at a time, oldest first (stable for equal times). */
export function callEvents(call: Pick<Call, 'status_times' | 'transcript'> & Partial<Pick<Call, 'actions' | 'transfer'>>): CallEvent[] {
  const events: CallEvent[] = [
    ...(Object.entries(call.status_times) as Array<[CallStatus, string]>).map(([status, at]) => ({ kind: 'status' as const, at, status })),
    ...(call.transcript ?? []).map((turn) => ({ kind: 'turn' as const, at: turn.at, turn })),
    // Older records (before actions existed) have none.
    ...(call.actions ?? []).map((action) => ({ kind: 'action' as const, at: action.at, action })),
    ...(call.transfer ? [{ kind: 'transfer' as const, at: call.transfer.at, transfer: call.transfer }] : []),
  ];
  const time = (e: CallEvent) => new Date(e.at).getTime();
  return events
    .map((e, i) => ({ e, i }))
    .sort((a, b) => time(a.e) - time(b.e) || tieRank(a.e) - tieRank(b.e) || a.i - b.i)
    .map(({ e }) => e);
}

/** An action's arguments or result as one short line (the record caps results at 1000 characters). */
export function actionDetail(value: unknown, max = 200): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
