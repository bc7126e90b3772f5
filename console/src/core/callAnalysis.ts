// How a call's post-call analysis (docs/design.md §10) reads on the call page: its state in words, each field's
// value, the success verdict, and whether the page should keep looking for it.
import type { AnalysisStatus, Call, CallAnalysis } from '@voice-platform/schemas/calls.js';

export const ANALYSIS_STATUS_LABELS: Record<AnalysisStatus, string> = {
  pending: 'Being worked out…',
  done: 'Done',
  failed: 'Failed',
  skipped: 'Skipped: the caller said and pressed nothing',
};

/** A field's value in words: yes/no for a boolean, '—' where the call did not tell. */
export function analysisValue(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  return String(v);
}

/** The success verdict in words: met, not met, or not judged (no criterion, or nothing to judge it by). */
export function successLabel(s: boolean | null): string {
  return s === true ? 'Met' : s === false ? 'Not met' : 'Not judged';
}

/** The fields of a finished analysis as [name, value] in the order the API gives them. */
export const analysisRows = (a: CallAnalysis): Array<[string, string]> => Object.entries(a.data ?? {}).map(([k, v]) => [k, analysisValue(v)]);

/** The call page keeps refreshing while the call moves, and after it ended while its analysis is pending. */
export const stillMoving = (c: Pick<Call, 'status' | 'analysis'>, terminal: readonly string[]): boolean => !terminal.includes(c.status) || c.analysis?.status === 'pending';
