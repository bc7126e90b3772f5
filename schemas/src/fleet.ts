// The Redis fleet contract between the backend (capacity reservations, call jobs) and the workers
// (heartbeats, job claims). Key names live here only.
import { Type, type Static } from '@sinclair/typebox';

/** Heartbeat JSON of one worker: `SET vp:fleet:worker:{id} <json> PX 6000`, written every 2 s. */
export const fleetWorkerKey = (workerId: string): string => `vp:fleet:worker:${workerId}`;
export const FLEET_WORKER_KEY_PREFIX = 'vp:fleet:worker:';
/** Sorted set of live workers: member worker id, score = heartbeat expiry (epoch ms). */
export const FLEET_WORKERS_KEY = 'vp:fleet:workers';
/** Sorted set of capacity reservations: member call id, score = reservation expiry (epoch ms). */
export const FLEET_RESERVATIONS_KEY = 'vp:fleet:reservations';
/** The reservations of test calls (browser calls), also in FLEET_RESERVATIONS_KEY: they must fit the
 *  workers' test-call share (`max_test_calls − test_calls`). A worker that claims one removes it from both. */
export const FLEET_TEST_RESERVATIONS_KEY = 'vp:fleet:test-reservations';
/** Stream of call jobs (dial-outs, browser calls, inbound calls), read by the consumer group `workers`
 *  (created by the backend at boot). */
export const CALL_JOBS_STREAM_KEY = 'vp:jobs:calls';
export const CALL_JOBS_CONSUMER_GROUP = 'workers';
export const HEARTBEAT_INTERVAL_MS = 2000;
export const HEARTBEAT_TTL_MS = 6000;
/**
 * Live calls' leases: member call id, score = lease expiry (epoch ms). A worker renews its calls'
 * leases with every heartbeat and removes a call when it ends; a lease that expires belongs to a
 * worker that died mid-call, and the dialler ends that call `failed` / `worker_lost`.
 */
export const CALL_LEASES_KEY = 'vp:fleet:call-leases';
/** A call lease lasts this long past its last renewal: several missed heartbeats, so a slow beat is not a death. */
export const CALL_LEASE_TTL_MS = 15_000;
/**
 * Ended calls whose final event the backend has not taken yet: hash field call id, value the final
 * event's JSON (a CallEvent). The worker writes it when the call ends and removes it with the lease once
 * the backend took the event; should the worker die before that, the dialler closes the call from it
 * (the real status, end reason and transcript) rather than as `worker_lost`.
 */
export const CALL_FINAL_EVENTS_KEY = 'vp:fleet:call-final-events';

export const WorkerHeartbeat = Type.Object(
  {
    worker_id: Type.String({ minLength: 1 }),
    active_calls: Type.Integer({ minimum: 0 }),
    max_calls: Type.Integer({ minimum: 0 }),
    draining: Type.Boolean(),
    /** Test calls (WebSocket and browser) among active_calls, and how many the worker takes at most
     *  (its TEST_CALL_SHARE of max_calls). Absent from workers older than these fields. */
    test_calls: Type.Optional(Type.Integer({ minimum: 0 })),
    max_test_calls: Type.Optional(Type.Integer({ minimum: 0 })),
    /** How busy the worker is, 0–1 (CPU of the worker and its decoder children over its CPU allowance, event-loop
     *  lag, age of the oldest queued decode or synthesis: the highest). Absent from workers older than this field. */
    load: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** Calls the worker can still take within its LOAD_THRESHOLD, from the measured cost of its live calls; never
     *  more than max_calls − active_calls. Reservations and claims use it; absent: max_calls − active_calls. */
    admittable: Type.Optional(Type.Integer({ minimum: 0 })),
    version: Type.String(),
    /** Epoch ms of this heartbeat. */
    updated_at: Type.Integer(),
  },
  { additionalProperties: false },
);
export type WorkerHeartbeat = Static<typeof WorkerHeartbeat>;

/**
 * The calls a worker adds to the fleet's room, as the backend's reservation script counts them (RESERVE in
 * backend/src/redisScripts.ts): none while draining, else its free slots bounded by its `admittable` (a worker
 * that does not report it, older, counts its free slots).
 */
export function workerAdmittable(w: { draining: boolean; max_calls: number; active_calls: number; admittable?: number | null }): number {
  if (w.draining) return 0;
  const free = Math.max(0, w.max_calls - w.active_calls);
  return w.admittable === null || w.admittable === undefined ? free : Math.min(free, w.admittable);
}

type CountedWorker = { draining: boolean; max_calls: number; active_calls: number; admittable?: number | null };

/** The fleet's totals over its live workers, as the backend's GET /api/v1/fleet and a worker's /health/fleet show them. */
export function fleetTotals(workers: readonly CountedWorker[]): { workers: number; active_calls: number; max_calls: number; admittable: number; draining_workers: number } {
  const sum = (f: (w: CountedWorker) => number) => workers.reduce((n, w) => n + f(w), 0);
  return {
    workers: workers.length,
    active_calls: sum((w) => w.active_calls),
    max_calls: sum((w) => w.max_calls),
    admittable: sum(workerAdmittable),
    draining_workers: workers.filter((w) => w.draining).length,
  };
}

/**
 * Fields of one `XADD vp:jobs:calls` entry (all strings; `variables` is JSON of string → string).
 * A worker that claims the job must `ZREM vp:fleet:reservations <call_id>` once its active_calls
 * counts the call, and report lifecycle moves to `POST /api/v1/calls/{call_id}/events`.
 */
/** A W3C `traceparent` (version 00: trace id, parent span id, flags; all-zero ids are invalid). */
export const TRACEPARENT_PATTERN = '^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$';

export const CallJob = Type.Object(
  {
    call_id: Type.String(),
    bot_id: Type.String(),
    variables: Type.String({ description: 'JSON object of string → string' }),
    /** Absent: a dial-out; `web`: a browser test call (the caller joins the call's room); `inbound`: a caller rings in `room_name`. */
    direction: Type.Optional(Type.Union([Type.Literal('web'), Type.Literal('inbound')])),
    /** Dial-outs: the number called and the LiveKit id of the outbound trunk that places the call. */
    to_number: Type.Optional(Type.String()),
    sip_trunk_id: Type.Optional(Type.String()),
    /** Dial-outs: the caller ID presented; inbound calls: the caller's number. */
    from_number: Type.Optional(Type.String()),
    /** Inbound calls: the caller's room (other calls' rooms are named by the call id). */
    room_name: Type.Optional(Type.String()),
    /** The W3C trace context of the request that queued the call (docs/design.md §16): the worker's call span continues its trace. */
    traceparent: Type.Optional(Type.String({ pattern: TRACEPARENT_PATTERN })),
  },
  { additionalProperties: false },
);
export type CallJob = Static<typeof CallJob>;

/** One stream entry as Redis replies it: id and flat field/value list (null once the entry was deleted). */
export type StreamEntryReply = [id: string, fields: string[] | null];

/**
 * The entries of an XREADGROUP/XREAD reply for one stream. RESP2 replies `[[stream, entries]]`; RESP3 (the
 * default of ioredis 6) replies a map, which ioredis flattens to `[stream, entries]`. Null (nothing before
 * BLOCK ran out) is no entries.
 */
export function streamEntries(reply: unknown): StreamEntryReply[] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const pair: unknown = Array.isArray(reply[0]) ? reply[0] : reply;
  const entries = Array.isArray(pair) ? (pair[1] as unknown) : undefined;
  return Array.isArray(entries) ? (entries as StreamEntryReply[]) : [];
}
