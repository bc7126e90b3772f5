// What the suite's test phone (sipp, tests/infra Phone) received, from its message trace.
import { readFileSync } from 'node:fs';

function receivedBlocks(): string[] {
  const log = readFileSync(process.env.SIP_PHONE_MESSAGES!, 'utf8');
  return log.split(/-{20,}[^\n]*\n/).filter((b) => /message received/.test(b));
}

/** The INVITEs the phone received for `to`, all calls together. */
export function invitesTo(to: string): number {
  return receivedBlocks().filter((b) => new RegExp(`^INVITE sip:\\${to}@`, 'm').test(b)).length;
}

/** The calls (distinct SIP Call-IDs; retransmitted INVITEs count once) the phone received for `to`. */
export function callsTo(to: string): number {
  const ids = receivedBlocks()
    .filter((b) => new RegExp(`^INVITE sip:\\${to}@`, 'm').test(b))
    .map((b) => b.match(/^Call-ID:\s*(\S+)/im)?.[1]);
  return new Set(ids.filter(Boolean)).size;
}

/**
 * The requests and responses the phone received in the latest call to `to`, in order: INVITE, ACK, BYE… (a number
 * several test files dial, like the no-answer one, has earlier calls in the trace).
 */
export function phoneReceived(to: string): string[] {
  const blocks = receivedBlocks();
  const invite = [...blocks].reverse().find((b) => new RegExp(`INVITE sip:\\${to}@`).test(b));
  const callId = invite?.match(/^Call-ID:\s*(\S+)/im)?.[1];
  if (!callId) return [];
  return blocks.filter((b) => b.includes(callId)).map((b) => b.split('\n').find((l) => /^[A-Z]+ sip:|^SIP\/2\.0/.test(l.trim()))?.trim().split(' ')[0] ?? '?');
}
