// Placing a call (docs/design.md §7): the one service dial-out (dialout/routes.ts), the widget's browser test
// calls (widget/routes.ts), inbound callers (inbound/calls.ts) and the campaign dialler (campaigns/dialler.ts) go through. It checks the bot and,
// for a dial-out, the trunk; reserves fleet capacity; stores the call `queued`; queues its job (the wire
// format of schemas/src/job.ts); gives everything back when a step fails; and announces the queued call
// (events.ts: the webhook event).
import { setTimeout as delay } from 'node:timers/promises';
import { ObjectId } from 'mongodb';
import { trace } from '@opentelemetry/api';
import { CALL_JOBS_STREAM_KEY, encodeCallJob, type CallJobData, type ErrorCode } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { releaseSlot, reserveSlot } from '../core/redisScripts.js';
import type { CacheView } from '../core/cacheTable.js';
import { cachedBot } from '../bots/store.js';
import { botAtVersion } from '../bots/versions.js';
import { trunkForDialout } from '../trunks/store.js';
import { insertCall, liveCalls, queuedCall, type CallDoc } from './store.js';
import { checkVariables } from './variables.js';
import { announceQueued } from './events.js';

/** Schema step: structure first (validation_failed), then the number (invalid_phone_number), then the alias pair (conflicting_fields). */
export interface DialoutInput {
  bot_id: string;
  to_number: string;
  from_number?: string;
  variables: Record<string, string>;
}

/** A caller on one of our numbers, in the room livekit-sip put them in (inbound/calls.ts). */
export interface InboundInput {
  direction: 'inbound';
  bot_id: string;
  /** The inbound number's variables (set with the number, not checked against the bot here, as before). */
  variables: Record<string, string>;
  to_number: string;
  from_number: string | null;
  room_name: string;
}

/** A call to queue for the fleet: a dial-out to a phone, a browser test call (docs/design.md §7 widget), or an inbound caller. */
export type CallRequest = ({ direction: 'outbound' } & DialoutInput) | { direction: 'web'; bot_id: string; variables: Record<string, string> } | InboundInput;

/** Who asked for the call: an API key, or an admin (no key). */
export interface CallRequester {
  apiKeyId: string | null;
  /** For the log line: the key's prefix or the admin's id. */
  label: string;
}


/** placeCall refused a caller-chosen call id because a record with it exists (campaign dials, see campaigns/dialler.ts). */
export const CALL_EXISTS = 'call_exists' satisfies ErrorCode;

interface PlaceOptions {
  /** The call's id, chosen by the caller (a campaign attempt's id is derived from the contact and the
   *  attempt number, so a second dial of one attempt meets the unique _id and is refused with CALL_EXISTS). */
  callId?: string;
  campaign?: { campaignId: string; contactId: string; attempt: number };
  /** Run this version of the bot (the test runner's, drafts included); else its published version. */
  botVersion?: number;
  /** A bot test's call (the runner's `room` and `sip` cases): stored on the call, so the runtime config answers the case's tool mocks. */
  test?: { run_id: string; case_id: string };
  /** A dial-out through this LiveKit trunk instead of one of the team's (a `sip` case dials the simulated phone on its own trunk). */
  trunk?: { livekitTrunkId: string; fromNumber: string };
}

/**
 * Checks the bot (exists, active, variables) and, for a dial-out, the trunk; reserves a slot of the
 * fleet; stores the call `queued` and queues its job. Every refusal is an ApiError; nothing is left
 * behind by one (a slot is given back, a record without a job is closed).
 */
export async function placeCall(
  svc: Services,
  jobless: ReturnType<typeof joblessCloser>,
  by: CallRequester,
  req: CallRequest,
  requestId: string,
  view: CacheView,
  opts: PlaceOptions = {},
): Promise<CallDoc> {
  // The bot and the trunk come through the replica's cache, under the view the key check read (cache.ts).
  const head = await cachedBot(svc, view, req.bot_id);
  if (!head) throw apiError('bot_not_found');
  if (!head.active) throw apiError('bot_inactive');
  // The version the call runs (shared/DESIGN.md §17): its variables are the ones checked, and the worker is served its config.
  const botVersion = opts.botVersion ?? head.published_version;
  const bot = await botAtVersion(svc.db, head, botVersion);
  if (!bot) throw apiError('not_found', `the bot has no version ${botVersion}`);
  if (req.direction !== 'inbound') checkVariables(bot.variables, req.variables);
  const dial =
    req.direction !== 'outbound'
      ? null
      : opts.trunk
        ? { to: req.to_number, trunk: { _id: null, livekit_trunk_id: opts.trunk.livekitTrunkId }, fromNumber: opts.trunk.fromNumber }
        : { to: req.to_number, ...(await trunkForDialout(svc.db, req.from_number, { table: svc.cache.trunks, view })) };

  const callId = opts.callId ?? new ObjectId().toHexString();
  const now = svc.clock();
  // Browser test calls must fit the workers' test-call share (TEST_CALL_SHARE): refused here, not failed later.
  const slot = await reserveSlot(svc.redis, callId, now, svc.settings.RESERVATION_TTL_SECONDS * 1000, req.direction === 'web' ? 'test' : 'call');
  if (!slot.reserved) {
    throw apiError('fleet_at_capacity', {
      message: slot.liveWorkers === 0 ? 'no voice worker is available' : slot.testShareFull ? 'test calls hold their share of every voice worker; the rest is kept for dial-outs' : 'every voice worker is busy',
      details: { live_workers: slot.liveWorkers },
      headers: { 'Retry-After': '5' },
    });
  }
  const call = queuedCall(
    {
      _id: callId,
      bot_id: bot._id,
      direction: req.direction,
      to_number: req.direction === 'inbound' ? req.to_number : (dial?.to ?? null),
      from_number: req.direction === 'inbound' ? req.from_number : (dial?.fromNumber ?? null),
      variables: req.variables,
      api_key_id: by.apiKeyId,
      bot_version: botVersion,
      ...(req.direction === 'inbound' ? { room_name: req.room_name } : {}),
      ...(opts.test ? { test: opts.test } : {}),
      ...(opts.campaign ? { campaign_id: opts.campaign.campaignId, campaign_contact_id: opts.campaign.contactId, campaign_attempt: opts.campaign.attempt } : {}),
    },
    new Date(now),
  );
  trace.getActiveSpan()?.setAttributes({ 'call.id': callId, 'bot.id': bot._id });
  try {
    await insertCall(svc.db, call, { chosenId: opts.callId !== undefined });
  } catch (err) {
    await releaseSlot(svc.redis, callId).catch(() => undefined);
    // A caller-chosen id that is taken: that record (and its job) belong to whoever inserted it first.
    if (opts.callId && (err as { code?: unknown }).code === 11000) throw apiError(CALL_EXISTS);
    // The insert may have landed although its reply was lost with the connection: close that record later.
    jobless.later(callId);
    throw err;
  }
  try {
    const job: CallJobData =
      req.direction === 'inbound'
        ? { call_id: callId, bot_id: bot._id, variables: req.variables, direction: 'inbound', room_name: req.room_name, from_number: req.from_number ?? '' } // the worker joins the caller's room: that answers
        : dial
          ? { call_id: callId, bot_id: bot._id, variables: req.variables, direction: 'outbound', to_number: dial.to, sip_trunk_id: dial.trunk.livekit_trunk_id, from_number: dial.fromNumber }
          : { call_id: callId, bot_id: bot._id, variables: req.variables, direction: 'web' }; // the worker joins the call's room and waits for the browser
    // The worker's call span continues this request's trace (docs/design.md §16); none when tracing is off.
    const traceparent = svc.tracing.traceparent();
    if (traceparent) job.traceparent = traceparent;
    await svc.redis.xadd(CALL_JOBS_STREAM_KEY, 'MAXLEN', '~', '100000', '*', ...encodeCallJob(job));
  } catch (err) {
    // No job means no worker will ever take the call: free the slot and close the record.
    await releaseSlot(svc.redis, callId).catch(() => undefined);
    await jobless.now(callId);
    throw err;
  }
  svc.logger.info({ req_id: requestId, call_id: callId, bot_id: bot._id, by: by.label, direction: req.direction, trunk_id: dial?.trunk._id, free_slots: slot.free }, 'call queued');
  await announceQueued(svc, call); // the webhook event: one XADD; never throws, never waits for a receiver
  return call;
}

/**
 * Closes the records of dial-outs that have no job (status `failed`, end_reason `enqueue_failed`), so no
 * `queued` call is left that no worker will ever take. `now()` tries one record at once (MongoDB is
 * likely up); `later()` hands it to one background loop per app that closes everything pending in one
 * update per attempt, backing off while MongoDB does not answer (one loop, not one per call: a store
 * that has just come back must not meet a retry storm), and gives a record up after
 * QUEUED_CALL_TIMEOUT_SECONDS (by then the dialler's sweeper fails such a call anyway).
 */
export function joblessCloser(svc: Services) {
  const pending = new Map<string, number>(); // call id → give up at (epoch ms)
  let running = false;
  const close = (ids: string[]) => {
    const ended = new Date(svc.clock());
    // A queued call is in calls_live; failed so, it is settled, and the sweeper moves it to `calls`.
    return liveCalls(svc.db).updateMany(
      { _id: { $in: ids }, status: 'queued' },
      { $set: { status: 'failed', end_reason: 'enqueue_failed', ended_at: ended, 'status_times.failed': ended } },
    );
  };
  const drain = async () => {
    for (let pauseMs = 200; pending.size; pauseMs = Math.min(pauseMs * 2, 2000)) {
      await delay(pauseMs, undefined, { ref: false });
      for (const [id, giveUpAt] of pending) {
        if (giveUpAt > Date.now()) continue;
        pending.delete(id);
        svc.logger.warn({ call_id: id }, 'dial-out record without a job left queued; the sweeper will fail it');
      }
      const ids = [...pending.keys()];
      if (ids.length && (await close(ids).then(() => true, () => false))) {
        for (const id of ids) pending.delete(id);
        pauseMs = 100; // doubled to 200 for the next round
      }
    }
    running = false; // in the same step that found nothing pending: a record added later starts a new loop
  };
  const later = (callId: string) => {
    pending.set(callId, Date.now() + svc.settings.QUEUED_CALL_TIMEOUT_SECONDS * 1000);
    if (running) return;
    running = true;
    void drain();
  };
  return {
    later,
    now: async (callId: string) => {
      if (!(await close([callId]).then(() => true, () => false))) later(callId);
    },
  };
}
