// Dialler role: the campaign dialler (docs/design.md §8). Each pass
// 1. reconciles: contacts `dialing` whose call record has ended are settled from it (the call lifecycle
//    settles them at once; this repairs a crash between the call's end and the contact's update);
// 2. drives each running campaign this replica holds the lease of: dials due contacts inside their calling
//    window (the contact's time zone, else the campaign's) while the campaign has fewer than max_concurrency
//    calls live, its calls_per_second allows, and the fleet has more than CAMPAIGN_FLEET_HEADROOM_SLOTS free;
//    every dial goes through placeCall (the dial-out's checks, capacity reservation, trunk, job);
// 3. completes a running campaign with no open contact left.
//
// At most one dial per attempt, with any number of replicas and crashes:
// - a campaign is driven by the holder of its Redis lease (SET NX PX, renewed before each dial);
// - attempt n of a contact is dialled only by the replica whose SET NX of its claim key succeeds;
// - the call id of attempt n is derived from (contact, n), so even a replica that lost both (a pause longer
//   than the lease) meets the unique _id of the call record and places nothing; the record it finds is
//   adopted onto the contact instead, which also repairs a crash between placing a call and recording it.
// A claim of a replica that died before dialling expires after CAMPAIGN_LEASE_MS: the attempt is then
// dialled by another replica, so none is lost.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Filter } from 'mongodb';
import { TERMINAL_CALL_STATUSES } from '@voice-platform/schemas';
import type { AppDeps, Services } from '../core/deps.js';
import { VERSION } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { ApiError } from '../core/errors.js';
import { tracingOff } from '../core/tracing.js';
import { StoreCache } from '../core/cache.js';
import { freeSlots } from '../core/redisScripts.js';
import { withDocLock } from '../core/locks.js';
import { findCall, findCalls } from '../calls/store.js';
import { CALL_EXISTS, joblessCloser, placeCall } from '../calls/place.js';
import { isDoNotCall } from './dnc.js';
import { inWindow } from './windows.js';
import {
  campaignLock,
  campaigns,
  closeUndialled,
  completeIfDone,
  contacts,
  DIALABLE_CONTACT_STATUSES,
  recordDial,
  settleContact,
  type CampaignDeps,
  type CampaignDoc,
  type ContactDoc,
} from './store.js';

/** Due contacts read per campaign per pass (only those whose time zone's window is open). */
const SCAN_LIMIT = 500;
const RECONCILE_LIMIT = 1000;

export type DiallerStep = 'claimed' | 'placed';

interface CampaignDiallerDeps extends AppDeps {
  metrics: Metrics;
  /** Tests: crash (stop dead, nothing released) right after this step for this contact. */
  crashAfter?: (step: DiallerStep, contactId: string) => boolean;
}

export interface CampaignDialler {
  runOnce(): Promise<void>;
  start(): void;
  /** Stops the timer and waits for a pass in flight. */
  stop(): Promise<void>;
  /** True once a crashAfter fault has stopped it. */
  readonly crashed: boolean;
}

class Crash extends Error {}

/** The call id of attempt `n` of a contact: 24 hex digits, the same on every replica. */
export const attemptCallId = (contactId: string, n: number) => createHash('sha256').update(`campaign-attempt:${contactId}:${n}`).digest('hex').slice(0, 24);
const attemptClaimKey = (contactId: string, n: number) => `vp:campaign:attempt:${contactId}:${n}`;
const leaseKey = (campaignId: string) => `vp:campaign:lease:${campaignId}`;
const rateKey = (campaignId: string) => `vp:campaign:rate:${campaignId}`;

/** Extends this replica's lease, or takes it again if it lapsed and nobody took it meanwhile (a slow pass):
 *  safe, since the lease only spreads the work; the attempt claims and call ids keep dials single. */
const RENEW = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** Sliding window on Redis's own clock (one clock for every replica): at most ARGV[2] dials in any ARGV[1] ms. */
const RATE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + 1000)
return 1
`;

/** calls_per_second as a window: at most `limit` dials in any `windowMs` (below 1/s: one per 1/cps seconds). */
export function rateWindow(callsPerSecond: number): { windowMs: number; limit: number } {
  const windowMs = Math.max(1000, Math.ceil(1000 / callsPerSecond));
  return { windowMs, limit: Math.max(1, Math.floor((callsPerSecond * windowMs) / 1000)) };
}

export function createCampaignDialler(deps: CampaignDiallerDeps): CampaignDialler {
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger.child({ role: 'dialler', part: 'campaigns' });
  const pendingMs = 2 * (deps.settings.MONGODB_SERVER_SELECTION_TIMEOUT_MS + deps.settings.MONGODB_SOCKET_TIMEOUT_MS);
  const svc: Services = { ...deps, logger, clock, version: deps.version ?? VERSION, now: () => new Date(clock()), cache: new StoreCache(deps.redis, pendingMs), tracing: deps.tracing ?? tracingOff };
  const jobless = joblessCloser(svc);
  const cdeps: CampaignDeps = { db: deps.db, redis: deps.redis, logger, clock, metrics: deps.metrics };
  const redis: Redis = deps.redis;
  const token = randomBytes(12).toString('hex'); // this replica, in leases and claims
  const leaseMs = deps.settings.CAMPAIGN_LEASE_MS;
  let crashed = false;
  let rotation = 0;

  const fault = (step: DiallerStep, contactId: string) => {
    if (deps.crashAfter?.(step, contactId)) {
      crashed = true;
      throw new Crash(`crash after ${step}`);
    }
  };

  /** Settles contacts whose call ended while nobody moved them on (see the header). */
  async function reconcile(): Promise<void> {
    const dialing = await contacts(deps.db).find({ status: 'dialing' }, { projection: { current_call_id: 1 } }).limit(RECONCILE_LIMIT).toArray();
    const ids = dialing.map((c) => c.current_call_id).filter((id): id is string => !!id);
    if (!ids.length) return;
    const ended = await findCalls(deps.db, { _id: { $in: ids }, status: { $in: [...TERMINAL_CALL_STATUSES] } });
    for (const call of ended) await settleContact(cdeps, call);
    if (ended.length) logger.debug({ settled: ended.length }, 'campaign contacts reconciled');
  }

  async function pauseFor(campaignId: string, reason: string): Promise<void> {
    await withDocLock(redis, campaignLock(campaignId), async () => {
      const now = new Date(clock());
      await campaigns(deps.db).updateOne({ _id: campaignId, status: 'running' }, { $set: { status: 'paused', paused_reason: reason, updated_at: now } });
    });
    logger.warn({ campaign_id: campaignId, reason }, 'campaign paused: its calls cannot be placed');
  }

  const release = (key: string) => redis.eval(RELEASE, 1, key, token).catch(() => undefined);

  /** Dials what the campaign may dial now. Returns false when the fleet has no room (no campaign can dial). */
  async function drive(c: CampaignDoc): Promise<boolean> {
    const now = clock();
    const live = await contacts(deps.db).countDocuments({ campaign_id: c._id, status: 'dialing' });
    let budget = c.max_concurrency - live;
    if (budget <= 0) return true;
    const dueFilter: Filter<ContactDoc> = { campaign_id: c._id, status: { $in: DIALABLE_CONTACT_STATUSES }, due_at: { $lte: new Date(now) } };
    if (c.windows.length) {
      // Only the time zones whose window is open now: contacts waiting for another zone's morning must not
      // fill the scan and starve those that may be dialled (null: the campaign's zone).
      const zones = (await contacts(deps.db).distinct('timezone', dueFilter)) as Array<string | null>;
      const open = zones.filter((z) => inWindow(c.windows, z ?? c.timezone, now));
      if (!open.length) return true;
      dueFilter.timezone = { $in: open };
    }
    const due = await contacts(deps.db)
      .find(dueFilter)
      .sort({ due_at: 1, _id: 1 })
      .limit(SCAN_LIMIT)
      .toArray();
    const view = await svc.cache.view();
    const { windowMs, limit } = rateWindow(c.calls_per_second);
    for (const contact of due) {
      if (budget <= 0) break;
      if (!inWindow(c.windows, contact.timezone ?? c.timezone, now)) continue;
      if ((await redis.eval(RENEW, 1, leaseKey(c._id), token, leaseMs)) !== 1) return true; // another replica has it now
      if ((await freeSlots(redis, now)) <= deps.settings.CAMPAIGN_FLEET_HEADROOM_SLOTS) return false;
      const n = (contact.attempts?.length ?? 0) + 1;
      const claim = attemptClaimKey(contact._id, n);
      if ((await redis.set(claim, token, 'PX', leaseMs, 'NX')) !== 'OK') continue; // another replica dials it
      fault('claimed', contact._id);
      const outcome = await dialClaimed(c, contact, n, view, windowMs, limit);
      if (outcome === 'dialled') budget--;
      else await release(claim); // nothing was dialled: the attempt stays open
      if (outcome === 'fleet_full') return false;
      if (outcome === 'stop') return true;
    }
    return true;
  }

  async function dialClaimed(
    c: CampaignDoc,
    contact: ContactDoc,
    n: number,
    view: Awaited<ReturnType<StoreCache['view']>>,
    windowMs: number,
    limit: number,
  ): Promise<'dialled' | 'skipped' | 'fleet_full' | 'stop'> {
    // Right before the dial: a pause or cancel stops new dials at once; the do-not-call list as it is now.
    const fresh = await campaigns(deps.db).findOne({ _id: c._id }, { projection: { status: 1 } });
    if (fresh?.status !== 'running') return 'stop';
    if (await isDoNotCall(deps.db, contact.to_number)) {
      await closeUndialled(cdeps, contact._id, 'skipped_dnc', null);
      logger.info({ campaign_id: c._id, contact_id: contact._id }, 'campaign contact on the do-not-call list: skipped');
      return 'skipped';
    }
    if ((await redis.eval(RATE, 1, rateKey(c._id), windowMs, limit, `${token}:${contact._id}:${n}`)) !== 1) return 'stop';
    const callId = attemptCallId(contact._id, n);
    const at = new Date(clock());
    try {
      // The dial is its call's root span (no request to continue): the worker's call span joins it through the job.
      await svc.tracing.tracer.startActiveSpan('campaign dial', { kind: SpanKind.PRODUCER, attributes: { 'campaign.id': String(c._id), 'call.id': callId } }, async (span) => {
        try {
          await placeCall(
            svc,
            jobless,
            { apiKeyId: null, label: `campaign:${c._id}` },
            { direction: 'outbound', bot_id: c.bot_id, to_number: contact.to_number, ...(c.from_number ? { from_number: c.from_number } : {}), variables: contact.variables ?? {} },
            `campaign:${c._id}`,
            view,
            { callId, campaign: { campaignId: c._id, contactId: contact._id, attempt: n } },
          );
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof ApiError ? err.code : 'error' });
          throw err;
        } finally {
          span.end();
        }
      });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'fleet_at_capacity') return 'fleet_full'; // not an attempt: the contact stays due
      if (err.code === CALL_EXISTS) {
        // Placed by a replica (or an earlier life of this one) that did not get to record it.
        const existing = await findCall(deps.db, callId);
        await recordDial(cdeps, contact._id, callId, n, existing?.created_at ?? at);
        if (existing && TERMINAL_CALL_STATUSES.includes(existing.status)) await settleContact(cdeps, existing);
        logger.info({ campaign_id: c._id, contact_id: contact._id, call_id: callId }, 'campaign call placed earlier adopted');
        return 'dialled';
      }
      if (err.code === 'variables_mismatch') {
        // The bot's variables changed after the upload: this row can never be dialled.
        await closeUndialled(cdeps, contact._id, 'failed', 'variables_mismatch');
        return 'skipped';
      }
      await pauseFor(c._id, err.code); // bot gone or inactive, no trunk, from_number no longer a trunk's
      return 'stop';
    }
    fault('placed', contact._id);
    await recordDial(cdeps, contact._id, callId, n, at);
    return 'dialled';
  }

  async function runOnce(): Promise<void> {
    if (crashed) return;
    await reconcile();
    const running = await campaigns(deps.db).find({ status: 'running' }).sort({ _id: 1 }).limit(1000).toArray();
    // A different campaign goes first each pass, so one cannot take every free slot pass after pass.
    const start = running.length ? rotation++ % running.length : 0;
    let fleetRoom = true;
    for (const c of [...running.slice(start), ...running.slice(0, start)]) {
      const key = leaseKey(c._id);
      const held = (await redis.eval(RENEW, 1, key, token, leaseMs)) === 1;
      if (!held) continue; // another replica drives it
      try {
        if (fleetRoom) fleetRoom = await drive(c);
        await completeIfDone(cdeps, c._id);
      } finally {
        if (!crashed) await release(key);
      }
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<unknown> | undefined;
  let stopped = true;
  const schedule = () => {
    if (stopped || crashed) return;
    timer = setTimeout(() => {
      inFlight = runOnce()
        .catch((err: unknown) => {
          if (err instanceof Crash) logger.warn('campaign dialler crashed (test fault)');
          else logger.warn({ err }, 'campaign dialler pass failed'); // class + brief message (logger.ts)
        })
        .finally(() => {
          inFlight = undefined;
          schedule();
        });
    }, deps.settings.CAMPAIGN_TICK_MS);
    timer.unref();
  };

  return {
    runOnce,
    get crashed() {
      return crashed;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      logger.info({ tick_ms: deps.settings.CAMPAIGN_TICK_MS }, 'campaign dialler started');
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
