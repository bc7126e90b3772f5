// Dialler role: the stale-call sweeper. Two kinds of call would otherwise never end:
// - a dial-out whose job no worker ever claimed (every worker died after the reservation, or the job was
//   lost) stays `queued` while its reservation simply expires: failed with end_reason `not_claimed`; a
//   WebSocket or browser call its worker recorded but never started: failed with `not_started`;
// - a call whose worker died mid-call (SIGKILL, OOM, node lost): its lease (CALL_LEASES_KEY, renewed by
//   the worker's heartbeat) expires; the call is failed with `worker_lost` and its LiveKit room deleted,
//   which hangs up the callee. Nothing waits for the worker to come back.
// Both go through the same lifecycle path as a worker's terminal event. Several dialler replicas may
// sweep at once: the per-call lock and the `onlyFrom` moves make a double pass harmless, and a worker's
// own move that lands first wins.
import type { AppDeps } from '../deps.js';
import type { Metrics } from '../metrics.js';
import { ApiError } from '../errors.js';
import { COLLECTIONS } from '../stores.js';
import { applyCallMove } from './lifecycle.js';
import type { CallDoc } from './store.js';
import { CALL_LEASES_KEY } from '@voice-platform/schemas';

const NOT_CLAIMED = 'not_claimed';
/** A WebSocket or browser call recorded by a worker that never started it (the worker died at once). */
const NOT_STARTED = 'not_started';
const WORKER_LOST = 'worker_lost';
const DEFAULT_BATCH_SIZE = 100;

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
  const calls = deps.db.collection<CallDoc>(COLLECTIONS.calls);
  const timeoutMs = deps.settings.QUEUED_CALL_TIMEOUT_SECONDS * 1000;
  const intervalMs = deps.settings.SWEEP_INTERVAL_SECONDS * 1000;
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;

  /** Calls whose worker stopped renewing their lease: failed `worker_lost`, room deleted, lease removed. */
  async function sweepLost(): Promise<number> {
    // Leases carry the workers' wall-clock expiry, so they are compared with real time, not the test clock.
    const expired = await deps.redis.zrangebyscore(CALL_LEASES_KEY, '-inf', Date.now(), 'LIMIT', 0, batchSize);
    let failed = 0;
    for (const id of expired) {
      let moved = false;
      try {
        const res = await applyCallMove(lifecycle, deps.metrics, id, { status: 'failed', end_reason: WORKER_LOST, at: new Date(clock()) }, {
          onlyFrom: ['queued', 'dialing', 'ringing', 'in_progress'],
          logContext: { by: 'sweeper' },
          recordingFollows: false, // the worker is gone
        });
        moved = res.moved;
      } catch (err) {
        // 409: it ended (its worker reported the end but died before removing the lease); 404: gone.
        if (!(err instanceof ApiError && (err.status === 409 || err.status === 404))) throw err;
      }
      if (moved) {
        failed++;
        deps.metrics.callsLost.inc();
        logger.warn({ call_id: id, end_reason: WORKER_LOST }, 'call lost with its worker: ended');
      }
      // Hang up whoever is still in the call's room (a SIP callee gets a BYE), then forget the lease.
      if (deps.telephony) {
        try {
          // An inbound call's room is the one LiveKit made for the caller; every other call's is its id.
          const room = (await calls.findOne({ _id: id }, { projection: { room_name: 1 } }))?.room_name ?? id;
          await deps.telephony.deleteRoom(room);
        } catch (err) {
          logger.warn({ call_id: id, err }, 'could not delete a lost call\'s room; retrying next pass'); // class + brief message (logger.ts)
          continue;
        }
      }
      await deps.redis.zrem(CALL_LEASES_KEY, id);
    }
    return failed;
  }

  async function runOnce(): Promise<number> {
    const lost = await sweepLost();
    return lost + (await sweepUnclaimed());
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
    for (const { _id: id, direction } of stale) {
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

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<unknown> | undefined;
  let stopped = true;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      // A failed pass (store outage) is logged and retried on the next tick; passes never overlap.
      inFlight = runOnce()
        .catch((err: unknown) => logger.warn({ err }, 'stale-call sweep failed')) // class + brief message, no driver paths or stack (logger.ts)
        .finally(() => {
          inFlight = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };

  return {
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      logger.info({ interval_s: deps.settings.SWEEP_INTERVAL_SECONDS, timeout_s: deps.settings.QUEUED_CALL_TIMEOUT_SECONDS }, 'stale-call sweeper started');
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
