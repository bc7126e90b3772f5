// A call's status timeline: the statuses it reached, in lifecycle order, then (while it is live) the
// steps still ahead of it.
import { CALL_STATUS_RANK, TERMINAL_CALL_STATUSES, type Call, type CallStatus } from '@voice-platform/schemas/calls.js';

const PATH: CallStatus[] = ['queued', 'dialing', 'ringing', 'in_progress'];

export function timeline(call: Pick<Call, 'status' | 'status_times'>): Array<{ status: CallStatus; at: string | null }> {
  const reached = (Object.entries(call.status_times) as Array<[CallStatus, string]>)
    .sort(([a, ta], [b, tb]) => CALL_STATUS_RANK[a] - CALL_STATUS_RANK[b] || ta.localeCompare(tb))
    .map(([status, at]) => ({ status, at }));
  if (TERMINAL_CALL_STATUSES.includes(call.status)) return reached;
  const ahead = PATH.filter((s) => CALL_STATUS_RANK[s] > CALL_STATUS_RANK[call.status]).map((status) => ({ status, at: null }));
  return [...reached, ...ahead, { status: 'completed' as const, at: null }];
}
