// The composition root's subscriptions to the call lifecycle (calls/events.ts): what follows a call's moves,
// in this order. calls/ builds on none of these folders; they build on calls.
import { registerCallHandlers, type CallEventDeps } from './calls/events.js';
import type { CallDoc } from './calls/store.js';
import { emitCallEvent, emitCallMove, emitDueEvents, emitRecordingArrived, moveEvent } from './webhooks/outbox.js';
import { analysisOnEnd, scheduleAnalysis } from './analysis/jobs.js';
import { recordCallEnd } from './analytics/rollup.js';
import { settleContact } from './campaigns/store.js';

export function wireCallHandlers(): void {
  // Webhook events: each move's event is marked due in the move's write, sent under the call's lock.
  registerCallHandlers('webhooks', {
    queued: async (deps, call) => void (await emitCallEvent(deps, 'call.queued', call)), // one XADD; never throws
    beforeMove: (deps, call, recordingFollows) => emitDueEvents(deps, call, recordingFollows),
    dueMark: moveEvent,
    moved: (deps, after, recordingFollows) => emitCallMove(deps, after, recordingFollows),
    recordingArrived: emitRecordingArrived,
  });
  // Post-call analysis: recorded pending in the end's own write, then listed for the runners.
  registerCallHandlers('analysis', {
    ending: async (deps, call) => {
      const analysis = await analysisOnEnd(deps.db, call.bot_id, new Date((deps.clock ?? Date.now)()));
      return analysis ? { analysis } : {};
    },
    moved: async (deps, after, _recordingFollows, ending) => {
      if (ending.analysis) await scheduleAnalysis(deps.redis, after._id, (ending.analysis as { due_at: Date }).due_at.getTime());
    },
  });
  // An ended call is counted into the analytics rollups once (a repeat of the end finds it counted, or counts
  // one whose first try failed before its mark); a failure there does not fail the event.
  registerCallHandlers('analytics', {
    ended: async (deps, call) => {
      await recordCallEnd(deps.db, deps.redis, call).catch((err: unknown) => deps.logger.warn({ err, call_id: call._id }, 'call not counted in the analytics'));
    },
  });
  // A campaign call's end moves its contact on; if this fails, the dialler's reconcile settles the contact.
  registerCallHandlers('campaigns', {
    ended: async (deps: CallEventDeps, call: CallDoc) => {
      if (!call.campaign_contact_id) return;
      await settleContact({ ...deps, clock: deps.clock ?? Date.now, metrics: deps.metrics! }, call).catch((err: unknown) =>
        deps.logger.warn({ err, call_id: call._id }, 'campaign contact not settled; the dialler reconciles it'),
      );
    },
  });
}
