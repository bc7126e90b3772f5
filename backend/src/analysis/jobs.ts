// Post-call analysis jobs (docs/design.md §10): how one is recorded when a call ends, and the Redis keys the
// dialler's runner (runner.ts) takes them by.
//
// Durable like the webhook outbox's call events (webhooks/outbox.ts): the job is the call's own `analysis`
// subdocument, `pending`, set in the terminal move's own write (calls/lifecycle.ts), so a move that landed
// has its job whatever happens next. ANALYSIS_DUE_KEY (a sorted set: call id → when due, epoch ms) only
// says when to look; the runner rebuilds it from the pending calls (in calls_ending, where an ended call
// stays while its analysis is pending: calls/store.ts isSettled) after a Redis loss, and whoever works on a
// job holds its lease (analysisLeaseKey, SET NX PX) so two runners rarely do the same work, and write its
// result under the call's lock only if it is still pending, so there is one result however they race.
import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import { analysisWanted, type AnalysisSettings } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import { pendingAnalysis, type StoredAnalysis } from '../calls/analysis.js';

/** Calls whose analysis is pending: member the call id, score when its next attempt is due (epoch ms). */
export const ANALYSIS_DUE_KEY = 'vp:analysis:due';
/** The lease of one call's analysis attempt (SET NX PX): only its holder works on it. */
export const analysisLeaseKey = (callId: string) => `vp:analysis:lease:${callId}`;

/**
 * The analysis a call ending now gets: pending when its bot asks for any (a summary, a field, a success
 * verdict), else none. A small read by `_id` of the bots collection.
 */
export async function analysisOnEnd(db: Db, botId: string, now: Date): Promise<StoredAnalysis | null> {
  const bot = await db.collection<{ _id: string; analysis?: AnalysisSettings }>(COLLECTIONS.bots).findOne({ _id: botId }, { projection: { analysis: 1 } });
  return analysisWanted(bot?.analysis) ? pendingAnalysis(now) : null;
}

/** Tells the runners a call's analysis is due at `dueMs` (NX: a job already listed keeps its time). Never throws:
 *  the runners find a job Redis did not take by their scan of pending calls. */
export async function scheduleAnalysis(redis: Redis, callId: string, dueMs: number): Promise<boolean> {
  try {
    await redis.zadd(ANALYSIS_DUE_KEY, 'NX', dueMs, callId);
    return true;
  } catch {
    return false;
  }
}
