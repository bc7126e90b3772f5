// A call's post-call analysis as kept on its record (docs/design.md §10), and its public shape. The job's own
// state (attempts made, when the next is due) rides along in the same subdocument, never shown.
import type { AnalysisStatus, CallAnalysis } from '@voice-platform/schemas';

export type AnalysisData = Record<string, string | number | boolean | null>;

export interface StoredAnalysis {
  status: AnalysisStatus;
  summary: string | null;
  data: AnalysisData | null;
  success: boolean | null;
  error: string | null;
  completed_at: Date | null;
  /** The job (pending only): attempts begun so far, and when the next may begin. */
  attempts?: number;
  due_at?: Date | null;
}

/** A pending analysis, recorded with the call's end. */
export const pendingAnalysis = (at: Date): StoredAnalysis => ({ status: 'pending', summary: null, data: null, success: null, error: null, completed_at: null, attempts: 0, due_at: at });

export function publicAnalysis(a: StoredAnalysis | null | undefined): CallAnalysis | null {
  if (!a) return null;
  return { status: a.status, summary: a.summary, data: a.data, success: a.success, error: a.error, completed_at: a.completed_at ? a.completed_at.toISOString() : null };
}

/** Still to be worked out: the call is not settled until then (calls/store.ts isSettled). */
export const analysisPending = (a: StoredAnalysis | null | undefined): boolean => a?.status === 'pending';
