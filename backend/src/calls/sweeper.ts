// Dialler role: the stale-call sweeper. No call may stay non-terminal for ever:
// - a dial-out whose job no worker ever claimed (every worker died after the reservation, or the job was
//   lost) stays `queued` while its reservation simply expires: failed with end_reason `not_claimed`; a
//   WebSocket or browser call its worker recorded but never started: failed with `not_started`. A queued
//   call a live worker holds the lease of is not swept: the worker took it and its report is on the way;
// - a call whose worker died mid-call (SIGKILL, OOM, node lost): its lease (CALL_LEASES_KEY, renewed by
//   the worker's heartbeat) expires; the call is closed and its LiveKit room deleted, which hangs up the
//   callee. Nothing waits for the worker to come back;
// - a `dialing`, `ringing` or `in_progress` call with no lease at all (its lease was lost with a Redis
//   outage, or its worker gave up reporting): closed the same way once it has had time to be leased.
// A lost call the worker had already ended is closed as it ended: the worker parks the final event in
// CALL_FINAL_EVENTS_KEY until the backend took it. Without one it fails `worker_lost`.
// All go through the same lifecycle path as a worker's terminal event. Several dialler replicas may
// sweep at once: the per-call lock and the `onlyFrom` moves make a double pass harmless, and a worker's
// own move that lands first wins.
import type { AppDeps } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { ApiError } from '../core/errors.js';
import { withDocLock } from '../core/locks.js';
import { applyCallMove } from './lifecycle.js';
import { callCollection, findCall, homeOf, liveCalls, rehomeCall } from './store.js';
import { CALL_FINAL_EVENTS_KEY, CALL_LEASE_TTL_MS, CALL_LEASES_KEY, CallEvent, TERMINAL_CALL_STATUSES, type CallStatus } from '@voice-platform/schemas';
import { check } from '../core/validate.js';
import { pollLoop } from '../core/pollLoop.js';

const NOT_CLAIMED = 'not_claimed';
/** A WebSocket or browser call recorded by a worker that never started it (the worker died at once). */
const NOT_STARTED = 'not_started';
const WORKER_LOST = 'worker_lost';
const RECORDING_LOST = 'the worker stopped before uploading the recording';
const DEFAULT_BATCH_SIZE = 100;
/** A live call's statuses after the claim: its worker holds a lease the whole time. */
const LIVE_STATUSES = ['dialing', 'ringing', 'in_progress'] as const satisfies readonly CallStatus[];
/** A live call without a lease is an orphan only once its last move is older than this (a lease is taken before
 *  the first move; this leaves room for a heartbeat that re-takes a lease a Redis outage lost). */
const ORPHAN_AFTER_MS = 2 * CALL_LEASE_TTL_MS;

interface SweeperDeps extends AppDeps {
  /** The process's metrics registry (the one its /metrics serves). */
  metrics: Metrics;
  /** Calls handled per pass at most; the rest wait for the next pass. */
  batchSize?: number;
}

export interface Sweeper {
  /** One pass; resolves to the number of calls this pass failed (unclaimed and lost together). */
  runOnce(): Promise<number>;
  start(): void;
  /** Stops the timer and waits for a pass in flight. */
  stop(): Promise<void>;
}

export function createSweeper(deps: SweeperDeps): Sweeper {
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger.child({ role: 'dialler' });
  const lifecycle = { db: deps.db, redis: deps.redis, logger, clock };
  // Calls not ended (calls/store.ts): every queued or live call is there.
  const calls = liveCalls(deps.db);
  const timeoutMs = deps.settings.QUEUED_CALL_TIMEOUT_SECONDS * 1000;
  const intervalMs = deps.settings.SWEEP_INTERVAL_SECONDS * 1000;
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;

  /**
   * The final event the call's worker parked before it died (CALL_FINAL_EVENTS_KEY), if any and valid;
   * an unreadable one is ignored (the call then fails `worker_lost`).
   */
  async function parkedEnd(id: string): Promise<CallEvent | null> {
    const raw = await deps.redis.hget(CALL_FINAL_EVENTS_KEY, id);
    if (!raw) return null;
    try {
      const ev = check(CallEvent, JSON.parse(raw));
      return TERMINAL_CALL_STATUSES.includes(ev.status) ? ev : null;
    } catch {
      logger.warn({ call_id: id }, 'parked final event unreadable; the call fails worker_lost');
      return null;
    }
  }

  /** Closes a call no worker runs any more: as its worker ended it (parked event), else `worker_lost`. True if this moved it. */
  async function closeLost(id: string): Promise<boolean> {
    const parked = await parkedEnd(id);
    const now = new Date(clock());
    // An answered call whose worker died before its upload says so: its recording is gone with the worker.
    const noRecording = parked?.status === 'completed' && parked.recording_key === undefined && parked.recording_error === undefined ? { recording_error: RECORDING_LOST } : {};
    const move = parked
      ? { ...parked, ...noRecording, at: parked.at ? new Date(parked.at) : now, transcript: parked.transcript?.map((t) => ({ ...t, at: new Date(t.at) })) }
      : { status: 'failed' as const, end_reason: WORKER_LOST, at: now };
    let moved = false;
    try {
      const res = await applyCallMove(lifecycle, deps.metrics, id, move, {
        onlyFrom: ['queued', ...LIVE_STATUSES],
        logContext: { by: 'sweeper' },
        recordingFollows: false, // the worker is gone
      });
      moved = res.moved;
    } catch (err) {
      // 409: it ended (its worker reported the end but died before removing the lease); 404: gone.
      if (!(err instanceof ApiError && (err.status === 409 || err.status === 404))) throw err;
    }
    if (moved) {
      deps.metrics.callsLost.inc();
      logger.warn({ call_id: id, status: move.status, end_reason: move.end_reason, from_parked_event: parked !== null }, 'call lost with its worker: ended');
    }
    // Hang up whoever is still in the call's room (a SIP callee gets a BYE).
    if (deps.telephony) {
      // An inbound call's room is the one LiveKit made for the caller; every other call's is its id.
      const room = (await findCall(deps.db, id, { room_name: 1 }))?.room_name ?? id;
      await deps.telephony.deleteRoom(room);
    }
    await deps.redis.multi().zrem(CALL_LEASES_KEY, id).hdel(CALL_FINAL_EVENTS_KEY, id).exec();
    return moved;
  }

  /** Calls whose worker stopped renewing their lease: closed, room deleted, lease removed. */
  async function sweepLost(): Promise<number> {
    // Leases carry the workers' wall-clock expiry, so they are compared with real time, not the test clock.
    const expired = await deps.redis.zrangebyscore(CALL_LEASES_KEY, '-inf', Date.now(), 'LIMIT', 0, batchSize);
    let failed = 0;
    for (const id of expired) {
      try {
        if (await closeLost(id)) failed++;
      } catch (err) {
        logger.warn({ call_id: id, err }, 'could not close a lost call; retrying next pass'); // class + brief message (logger.ts)
      }
    }
    return failed;
  }

  /** Live calls (dialing, ringing, in progress) that hold no lease: nobody will ever report their end. */
  async function sweepOrphans(): Promise<number> {
    const cutoff = clock() - ORPHAN_AFTER_MS;
    const live = await calls
      .find({ status: { $in: [...LIVE_STATUSES] } }, { projection: { _id: 1, status: 1, status_times: 1, created_at: 1 } })
      .toArray();
    // Only calls whose last move is old enough (status_times holds every move's time).
    const old = live.filter((c) => Math.max(c.created_at.getTime(), ...Object.values(c.status_times ?? {}).map((d) => (d as Date).getTime())) < cutoff);
    if (!old.length) return 0;
    const scores = await deps.redis.zmscore(CALL_LEASES_KEY, ...old.map((c) => c._id));
    const orphans = old.filter((_, i) => scores[i] === null).slice(0, batchSize);
    let closed = 0;
    for (const { _id: id } of orphans) {
      try {
        if (await closeLost(id)) closed++;
      } catch (err) {
        logger.warn({ call_id: id, err }, 'could not close a call without a lease; retrying next pass');
      }
    }
    if (orphans.length) logger.warn({ found: orphans.length, closed }, 'live calls without a lease closed');
    return closed;
  }

  /** When the orphan scan last ran: it reads every live call (a scan on FerretDB), so it runs at most every half ORPHAN_AFTER_MS. */
  let orphansScannedAt = -Infinity;
  async function runOnce(): Promise<number> {
    const lost = await sweepLost();
    let orphaned = 0;
    if (clock() - orphansScannedAt >= ORPHAN_AFTER_MS / 2) {
      orphaned = await sweepOrphans();
      orphansScannedAt = clock();
    }
    const failed = lost + orphaned + (await sweepUnclaimed());
    await moveOn();
    return failed;
  }

  /** Ended calls still in calls_live and settled ones still in calls_ending (closed outside a move, e.g. a
   *  dial-out without a job, or a move cut short before the record moved): moved on (calls/store.ts), each
   *  under its lock. Returns how many moved. */
  async function moveOn(): Promise<number> {
    let moved = 0;
    for (const from of ['live', 'ending'] as const) {
      const col = callCollection(deps.db, from);
      const ended = await col.find({ status: { $in: [...TERMINAL_CALL_STATUSES] } }, { projection: { _id: 1, status: 1, webhook_due: 1, analysis: 1 } }).toArray();
      // A call with an event still due or an analysis pending stays in calls_ending: the outbox or the analysis runner moves it.
      for (const { _id: id } of ended.filter((c) => homeOf(c) !== from).slice(0, batchSize)) {
        try {
          await withDocLock(deps.redis, `call:${id}`, async () => {
            const doc = await col.findOne({ _id: id });
            if (doc && (await rehomeCall(deps.db, doc, from))) moved++;
          }, { waitMs: 500 });
        } catch (err) {
          logger.warn({ call_id: id, err }, 'ended call not moved on yet; next pass');
        }
      }
    }
    if (moved) logger.info({ moved }, 'ended calls moved on');
    return moved;
  }

  async function sweepUnclaimed(): Promise<number> {
    const started = clock();
    const cutoff = new Date(started - timeoutMs);
    // Served by the {status, created_at} index; oldest first so a backlog drains in order.
    const stale = await calls
      .find({ status: 'queued', created_at: { $lt: cutoff } }, { projection: { _id: 1, direction: 1 } })
      .sort({ created_at: 1 })
      .limit(batchSize)
      .toArray();
    let swept = 0;
    let lost = 0;
    const sweptIds: string[] = [];
    // A queued call with a live lease was claimed by a worker whose report has not landed yet (the backend
    // was slow): not ours to fail. Should that worker die, its lease expires and sweepLost closes the call.
    const leases = stale.length ? await deps.redis.zmscore(CALL_LEASES_KEY, ...stale.map((c) => c._id)) : [];
    const now = Date.now();
    for (const [i, { _id: id, direction }] of stale.entries()) {
      const lease = leases[i];
      if (lease != null && Number(lease) > now) continue;
      try {
        const res = await applyCallMove(lifecycle, deps.metrics, id, { status: 'failed', end_reason: direction === 'outbound' ? NOT_CLAIMED : NOT_STARTED, at: new Date(clock()) }, {
          onlyFrom: ['queued'],
          logContext: { by: 'sweeper' },
          recordingFollows: false,
        });
        if (res.moved) {
          swept++;
          sweptIds.push(id);
          deps.metrics.callsSwept.inc();
        } else lost++;
      } catch (err) {
        // 409: a worker moved it (or another dialler failed it) first; 404: gone. Either way not ours.
        if (err instanceof ApiError && (err.status === 409 || err.status === 404)) lost++;
        else throw err;
      }
    }
    const line = { found: stale.length, swept, lost_race: lost, call_ids: sweptIds, duration_ms: clock() - started };
    if (stale.length) logger.info(line, 'stale queued calls swept');
    else logger.debug(line, 'stale-call sweep');
    return swept;
  }

  // A failed pass (store outage) is logged and retried on the next tick; passes never overlap.
  const loop = pollLoop(runOnce, intervalMs, (err: unknown) => logger.warn({ err }, 'stale-call sweep failed')); // class + brief message, no driver paths or stack (logger.ts)
  let stopped = true;

  return {
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      logger.info({ interval_s: deps.settings.SWEEP_INTERVAL_SECONDS, timeout_s: deps.settings.QUEUED_CALL_TIMEOUT_SECONDS }, 'stale-call sweeper started');
      loop.start();
    },
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
