// GET /api/v1/fleet (docs/design.md §15): the live workers as their heartbeats say (calls, load, what each can still
// admit, draining) and the fleet's totals, read from Redis (the fleet contract of @voice-platform/schemas). A read
// only: expired members of the worker index and expired reservations are left to the reservation script to prune.
// An admin token (viewers and up) or an API key with `calls:read` (auth/permissions.ts).
import type { Redis } from 'ioredis';
import type { Router } from '@koa/router';
import { Type } from '@sinclair/typebox';
import {
  FLEET_RESERVATIONS_KEY,
  FLEET_WORKER_KEY_PREFIX,
  FLEET_WORKERS_KEY,
  WorkerHeartbeat,
  fleetTotals,
  type FleetStatus,
  type FleetWorkerStatus,
} from '@voice-platform/schemas';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { authenticateAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { compiled } from '../core/validate.js';

// A newer worker may add fields: what this backend knows of a heartbeat is checked, the rest ignored.
const KnownHeartbeat = Type.Object(WorkerHeartbeat.properties);

/** A worker's heartbeat as the API shows it, or null when it is not one (malformed JSON or fields). */
export function workerStatus(raw: string): FleetWorkerStatus | null {
  let hb: unknown;
  try {
    hb = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!compiled(KnownHeartbeat)(hb)) return null;
  const w = hb as WorkerHeartbeat;
  return {
    worker_id: w.worker_id,
    version: w.version,
    active_calls: w.active_calls,
    max_calls: w.max_calls,
    load: w.load ?? null,
    admittable: w.admittable ?? null,
    draining: w.draining,
    updated_at: new Date(w.updated_at).toISOString(),
  };
}

/** The workers whose heartbeat has not expired at `nowMs`, and the reservations still held then. */
export async function readFleetStatus(redis: Redis, nowMs: number): Promise<FleetStatus> {
  const live = `(${nowMs}`;
  const [ids, reservations] = await Promise.all([redis.zrangebyscore(FLEET_WORKERS_KEY, live, '+inf'), redis.zcount(FLEET_RESERVATIONS_KEY, live, '+inf')]);
  const raw = ids.length ? await redis.mget(ids.map((id) => `${FLEET_WORKER_KEY_PREFIX}${id}`)) : [];
  const workers = raw
    .map((r) => (r === null ? null : workerStatus(r)))
    .filter((w): w is FleetWorkerStatus => w !== null)
    .sort((a, b) => (a.worker_id < b.worker_id ? -1 : a.worker_id > b.worker_id ? 1 : 0));
  return { workers, totals: { ...fleetTotals(workers), reservations } };
}

export function fleetRoutes(router: Router, svc: Services, metrics: Metrics): void {
  router.get('/api/v1/fleet', async (ctx) => {
    // As GET /api/v1/analytics/calls: every credential sent must be valid.
    const admin = ctx.headers.authorization !== undefined ? await authenticateAdmin(svc, ctx) : null;
    if (!admin || ctx.headers['x-api-key'] !== undefined) await authenticateKey(svc, metrics, ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await readFleetStatus(svc.redis, svc.clock());
  });
}
