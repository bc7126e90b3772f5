// The claim loop: read call jobs (dial-outs, browser and inbound calls) from the backend's Redis stream
// (consumer group `workers`) only while this worker has a free slot, take the slot, ack, drop the
// backend's reservation (the heartbeat's active_calls now counts the call), and run it. Jobs a crashed
// worker read but never acked (it died before starting them) are claimed again after `staleAfterMs`.
import type { Redis } from 'ioredis';
import { CALL_JOBS_CONSUMER_GROUP, CALL_JOBS_STREAM_KEY, CallJobError, decodeCallJob, FLEET_RESERVATIONS_KEY, FLEET_TEST_RESERVATIONS_KEY, streamEntries } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';
import type { Slots } from './capacity.js';

export interface CallJob {
  entryId: string;
  call_id: string;
  bot_id: string;
  to_number: string;
  variables: Record<string, string>;
  /** The telephony plane's id of the trunk that places the call, and the caller ID it presents. */
  sip_trunk_id: string;
  from_number: string;
  /** `web`: a browser test call (the caller joins the call's room); `inbound`: a caller rings in `room_name`; otherwise a dial-out. */
  direction: 'outbound' | 'web' | 'inbound';
  /** Inbound calls: the caller's room (other calls' rooms are named by the call id). */
  room_name: string;
  /** The W3C trace context of the request that queued the call: the call span's parent. */
  traceparent?: string;
}

export interface ClaimOptions {
  /** Commands (ack, reservation, stale claims). */
  redis: Redis;
  /** A connection of its own for the blocking read, cut on stop. */
  blockingRedis: Redis;
  slots: Slots;
  workerId: string;
  logger: Logger;
  /** Runs the claimed call; the slot is held until it resolves. */
  run(job: CallJob): Promise<void>;
  /**
   * Turns the call's reservation into this worker's active call, called in the same tick as the slot is
   * taken (default: drops the reservation). The worker's heartbeat does both in one transaction.
   */
  onClaim?(callId: string): Promise<unknown>;
  blockMs?: number;
  staleAfterMs?: number;
}

/** The job of one entry, decoded by the wire format's one schema (schemas/src/job.ts), or why it is none. */
function parseFields(entryId: string, fields: string[]): CallJob | { error: string } {
  try {
    const job = decodeCallJob(fields);
    return { entryId, ...job, to_number: job.to_number ?? '', sip_trunk_id: job.sip_trunk_id ?? '', from_number: job.from_number ?? '', room_name: job.room_name ?? '' };
  } catch (err) {
    if (err instanceof CallJobError) return { error: err.message };
    throw err;
  }
}

type Entries = Array<[string, string[]]>;

export class ClaimLoop {
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private wake: (() => void) | null = null;

  constructor(private readonly opts: ClaimOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Stops claiming (the blocking read is cut short); calls already claimed keep running. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.opts.blockingRedis.disconnect();
    await this.loop?.catch(() => undefined);
  }

  /** Resolves when every claimed call has finished. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.opts.redis.xgroup('CREATE', CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, '$', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error && err.message.includes('BUSYGROUP'))) throw err;
    }
  }

  private async run(): Promise<void> {
    const { redis, slots, logger } = this.opts;
    let backoffMs = 200;
    while (!this.stopped) {
      if (slots.free === 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          void slots.changed().then(resolve);
        });
        continue;
      }
      try {
        const entries = (await this.staleEntry()) ?? (await this.readNew());
        backoffMs = 200;
        for (const [entryId, fields] of entries) this.take(entryId, fields);
      } catch (err) {
        if (this.stopped) return;
        const msg = err instanceof Error ? err.message : String(err);
        if (msg.includes('NOGROUP')) {
          await this.ensureGroup().catch(() => undefined);
          continue;
        }
        logger.warn({ err: msg, retry_in_ms: backoffMs }, 'dial-out claim failed');
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5000);
      }
    }
  }

  private async readNew(): Promise<Entries> {
    const res = await this.opts.blockingRedis.xreadgroup(
      'GROUP',
      CALL_JOBS_CONSUMER_GROUP,
      this.opts.workerId,
      'COUNT',
      1,
      'BLOCK',
      this.opts.blockMs ?? 2000,
      'STREAMS',
      CALL_JOBS_STREAM_KEY,
      '>',
    );
    return streamEntries(res).filter((e): e is [string, string[]] => Array.isArray(e[1]));
  }

  /** A job another consumer read but never acked (it crashed), idle long enough to be ours. */
  private async staleEntry(): Promise<Entries | null> {
    const res = (await this.opts.redis.xautoclaim(CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, this.opts.workerId, this.opts.staleAfterMs ?? 60_000, '0-0', 'COUNT', 1)) as [
      string,
      Entries,
    ];
    const entries = (res?.[1] ?? []).filter((e) => Array.isArray(e[1]));
    return entries.length ? entries : null;
  }

  private take(entryId: string, fields: string[]): void {
    const { redis, slots, logger } = this.opts;
    const job = parseFields(entryId, fields);
    if ('error' in job) {
      logger.error({ entry_id: entryId, reason: job.error }, 'malformed dial-out job dropped');
      void redis.xack(CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, entryId).catch(() => undefined);
      return;
    }
    // We only read while a slot was free; a WebSocket call may have taken it meanwhile. The job then
    // stays pending and is claimed again (here or elsewhere) once it is stale.
    // The load was looked at before the read (slots.free); a sample taken during the read does not send back a
    // job the backend reserved on this fleet's room: left pending, its caller would wait for the stale claim.
    if (slots.tryAcquire(job.call_id, 'dialout', { admitted: true }) !== 'ok') {
      logger.warn({ call_id: job.call_id }, 'no free slot for a claimed job; left pending');
      return;
    }
    // A browser call counts in the test-call share from the claim on, in the same heartbeat that drops its
    // reservation (false when the share is full: the call then fails when it starts).
    if (job.direction === 'web') slots.markTest(job.call_id);
    // Before any other command on this connection (the heartbeat the slot change nudges included): the
    // fleet never counts the call twice, as a reservation and as an active call.
    const claimed = (this.opts.onClaim?.(job.call_id) ?? redis.multi().zrem(FLEET_RESERVATIONS_KEY, job.call_id).zrem(FLEET_TEST_RESERVATIONS_KEY, job.call_id).exec()).catch(() => undefined);
    const p = (async () => {
      try {
        // Ack before the call runs: a call lasts minutes, longer than the stale-claim idle time, and a
        // job claimed again mid-call would phone the same person twice. A crash mid-call must never redial.
        await redis.xack(CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, entryId).catch((err: unknown) => {
          logger.error({ call_id: job.call_id, err: err instanceof Error ? err.message : String(err) }, 'dial-out job ack failed');
        });
        await claimed;
        await this.opts.run(job);
      } catch (err) {
        logger.error({ call_id: job.call_id, err: err instanceof Error ? err.message : String(err) }, 'dial-out call failed');
      } finally {
        slots.release(job.call_id);
      }
    })();
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }
}
