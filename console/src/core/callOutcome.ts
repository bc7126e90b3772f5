// How a call's outcome reads: who answered it (answering machine detection, docs/design.md §10), how long
// the detection took, and the end reasons that need words. Other end reasons show as the API names them.
import type { AnsweredBy } from '@voice-platform/schemas/calls.js';

export const ANSWERED_BY_LABELS: Record<AnsweredBy, string> = {
  human: 'Human',
  machine: 'Machine',
  fax: 'Fax',
  unknown: 'Unknown',
};

/** The verdict in words; '—' for a call nothing listened on (no detection, inbound, web). */
export function answeredByLabel(a: AnsweredBy | null | undefined): string {
  return a ? (ANSWERED_BY_LABELS[a] ?? a) : '—';
}

/** From the answer to the verdict: "850 ms" below a second, "2.4 s" from it; '—' when not detected. */
export function amdDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** End reasons of answering machine detection, in words. */
export const END_REASON_LABELS: Readonly<Record<string, string>> = {
  voicemail: 'Voicemail (hung up)',
  voicemail_left: 'Message left on voicemail',
  fax: 'Fax machine',
};

/** An end reason in words where it has them, else as the API names it; '—' for none. */
export function endReasonLabel(reason: string | null | undefined): string {
  if (!reason) return '—';
  return Object.hasOwn(END_REASON_LABELS, reason) ? END_REASON_LABELS[reason]! : reason;
}
