// Call slots and the fleet heartbeat. A slot is taken before anything else happens for a call (so the
// 31st caller is refused at once) and given back when the call is fully done. The heartbeat tells the
// backend and the operator what this worker carries (contract in @voice-platform/schemas fleet.ts).
import type { Redis } from 'ioredis';
import {
  CALL_FINAL_EVENTS_KEY,
  CALL_LEASES_KEY,
  CALL_LEASE_TTL_MS,
  FLEET_RESERVATIONS_KEY,
  FLEET_TEST_RESERVATIONS_KEY,
  FLEET_WORKERS_KEY,
  FLEET_WORKER_KEY_PREFIX,
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_TTL_MS,
  fleetWorkerKey,
  fleetTotals,
  type WorkerHeartbeat,
} from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';

export class Slots {
  private readonly held = new Set<string>();
  /** Calls that still fit the worker's load with `active` running (LoadMonitor.admittable); null: slots only. */
  private admission: ((active: number) => number) | null = null;
  /** The held slots that are test calls (WebSocket and browser): at most `testMax` of them. */
  private readonly tests = new Set<string>();
  private waiters: Array<() => void> = [];
  draining = false;
  /** Test calls may hold at most this many slots, so they can never starve dial-outs (TEST_CALL_SHARE). */
  readonly testMax: number;
  constructor(
    readonly max: number,
    private readonly onChange: () => void = () => undefined,
    testShare = 1,
  ) {
    this.testMax = testShare > 0 ? Math.max(1, Math.floor(max * testShare)) : 0;
  }

  get active(): number {
    return this.held.size;
  }
  get testActive(): number {
    return this.tests.size;
  }
  /** Calls this worker can take now: free slots, and with load admission on, no more than fit its load. */
  get free(): number {
    if (this.draining) return 0;
    const slots = Math.max(0, this.max - this.held.size);
    return this.admission ? Math.min(slots, Math.max(0, this.admission(this.held.size))) : slots;
  }

  /** The calls that still fit the worker's load (after this, claims and test calls need it, not only a slot). */
  admitBy(admission: (active: number) => number): void {
    this.admission = admission;
  }

  /** The load was measured again: whoever waits for room (the claim loop) looks again if there is some. */
  remeasured(): void {
    if (this.free > 0) this.wakeWaiters();
  }

  /** Takes a slot, or says why not; a test call also needs room in the test calls' share. */
  tryAcquire(id: string, kind: 'dialout' | 'test' = 'dialout', opts: { admitted?: boolean } = {}): 'ok' | 'worker_at_capacity' | 'worker_overloaded' | 'worker_draining' | 'test_share_full' {
    if (this.draining) return 'worker_draining';
    if (this.held.size >= this.max) return 'worker_at_capacity';
    // `admitted`: the fleet already admitted the call on this worker's reported room (a claimed job).
    if (!opts.admitted && this.admission && this.admission(this.held.size) <= 0) return 'worker_overloaded';
    if (kind === 'test' && this.tests.size >= this.testMax) return 'test_share_full';
    this.held.add(id);
    if (kind === 'test') this.tests.add(id);
    this.onChange();
    return 'ok';
  }

  /** A held slot turns out to carry a test call (a browser call's job): false, and nothing changes, when their share is full. */
  markTest(id: string): boolean {
    if (!this.held.has(id)) return false;
    if (this.tests.has(id)) return true;
    if (this.tests.size >= this.testMax) return false;
    this.tests.add(id);
    return true;
  }

  release(id: string): void {
    this.tests.delete(id);
    if (!this.held.delete(id)) return;
    this.onChange();
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Resolves on the next release, or a new load sample with room (the claim loop waits here while full). */
  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private pending = false;
  private failures = 0;
  private written = false;
  /** Calls this worker runs; each beat renews their leases (CALL_LEASES_KEY, see @voice-platform/schemas). */
  private readonly leases = new Set<string>();
  /** Leases whose first write failed (Redis away): the next beats write them until one succeeds. */
  private readonly unwritten = new Set<string>();
  constructor(
    private readonly redis: Redis,
    private readonly state: () => WorkerHeartbeat,
    private readonly logger: Logger,
  ) {}

  /** Takes a call's lease now (before it dials): if this worker dies, the dialler ends the call. */
  async lease(callId: string): Promise<void> {
    this.leases.add(callId);
    try {
      await this.redis.zadd(CALL_LEASES_KEY, Date.now() + CALL_LEASE_TTL_MS, callId);
    } catch {
      this.unwritten.add(callId);
    }
  }

  /**
   * A claimed dial-out: its reservation (taken by the dial-out API) becomes this worker's active call in
   * one transaction, the heartbeat that counts it being the one that drops the reservation. Called in the
   * tick the slot is taken, before the beat that slot change nudges.
   */
  async claim(callId: string): Promise<void> {
    // A browser call's reservation is in the test-call set too (the backend's RESERVE script).
    const multi = this.redis.multi().zrem(FLEET_RESERVATIONS_KEY, callId).zrem(FLEET_TEST_RESERVATIONS_KEY, callId);
    if (this.timer) {
      const hb = this.state();
      multi.set(fleetWorkerKey(hb.worker_id), JSON.stringify(hb), 'PX', HEARTBEAT_TTL_MS).zadd(FLEET_WORKERS_KEY, hb.updated_at + HEARTBEAT_TTL_MS, hb.worker_id);
    }
    await multi.exec();
  }

  /** Stops renewing a call's lease and leaves it to expire (the dialler then closes the call). */
  forget(callId: string): void {
    this.leases.delete(callId);
    this.unwritten.delete(callId);
  }

  /** The call has ended and the backend took its events: its lease and its parked final event go. */
  async release(callId: string): Promise<void> {
    this.leases.delete(callId);
    this.unwritten.delete(callId);
    await this.redis.multi().zrem(CALL_LEASES_KEY, callId).hdel(CALL_FINAL_EVENTS_KEY, callId).exec().catch(() => undefined);
  }

  /** A heartbeat has been written since start: the fleet (and the dial-out API) can see this worker. */
  get visible(): boolean {
    return this.written && this.timer !== null;
  }

  /** Starts beating; resolves once the first heartbeat is written (the worker is visible). */
  start(): Promise<void> {
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_INTERVAL_MS);
    this.timer.unref();
    return this.beat();
  }

  /** An extra beat soon after a change (coalesced), so capacity shows up without waiting 2 s. */
  nudge(): void {
    if (this.pending || !this.timer) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      void this.beat();
    });
  }

  async beat(): Promise<void> {
    const hb = this.state();
    try {
      const multi = this.redis
        .multi()
        .set(fleetWorkerKey(hb.worker_id), JSON.stringify(hb), 'PX', HEARTBEAT_TTL_MS)
        .zadd(FLEET_WORKERS_KEY, hb.updated_at + HEARTBEAT_TTL_MS, hb.worker_id);
      if (this.leases.size) {
        const expiry = String(Date.now() + CALL_LEASE_TTL_MS);
        // XX: renew only; a lease the dialler already swept must not come back.
        multi.zadd(CALL_LEASES_KEY, 'XX', ...[...this.leases].flatMap((id) => [expiry, id]));
      }
      const unwritten = [...this.unwritten];
      if (unwritten.length) multi.zadd(CALL_LEASES_KEY, 'NX', ...unwritten.flatMap((id) => [String(Date.now() + CALL_LEASE_TTL_MS), id]));
      await multi.exec();
      this.written = true;
      for (const id of unwritten) this.unwritten.delete(id);
      if (this.failures) this.logger.info({ after_failures: this.failures }, 'heartbeat restored');
      this.failures = 0;
    } catch (err) {
      if (this.failures++ === 0) this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'heartbeat failed');
    }
  }

  /** Stops beating and removes this worker from the fleet. */
  async stop(workerId: string): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.multi().del(fleetWorkerKey(workerId)).zrem(FLEET_WORKERS_KEY, workerId).exec().catch(() => undefined);
  }
}

export interface FleetView {
  workers: WorkerHeartbeat[];
  totals: { workers: number; active_calls: number; max_calls: number; free_slots: number; admittable: number; draining_workers: number; reservations: number };
}

/** Every live worker from its heartbeat; expired members are pruned from the index on the way. */
export async function readFleet(redis: Redis, nowMs = Date.now()): Promise<FleetView> {
  await redis.zremrangebyscore(FLEET_WORKERS_KEY, '-inf', nowMs);
  const ids = await redis.zrange(FLEET_WORKERS_KEY, '0', '-1');
  const raw = ids.length ? await redis.mget(ids.map((id) => `${FLEET_WORKER_KEY_PREFIX}${id}`)) : [];
  const workers: WorkerHeartbeat[] = [];
  for (const r of raw) {
    if (!r) continue;
    try {
      workers.push(JSON.parse(r) as WorkerHeartbeat);
    } catch {
      /* a malformed heartbeat is not a live worker */
    }
  }
  workers.sort((a, b) => a.worker_id.localeCompare(b.worker_id));
  const reservations = await redis.zcount(FLEET_RESERVATIONS_KEY, nowMs, '+inf');
  const freeSlots = workers.reduce((n, w) => n + (w.draining ? 0 : Math.max(0, w.max_calls - w.active_calls)), 0);
  return { workers, totals: { ...fleetTotals(workers), free_slots: freeSlots, reservations } };
}
