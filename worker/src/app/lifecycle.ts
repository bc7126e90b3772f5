// The worker's lifecycle: start (listen, heartbeat, claim loop), drain (take no new calls, let the active
// ones finish or end them at the deadline), and shutdown, which gives the outbox a last while to deliver
// the calls' events.
import type http from 'node:http';
import type { WebSocketServer } from 'ws';
import { sweepRecordings } from '../call/recording.js';
import type { ClaimLoop } from '../fleet/claim.js';
import { readCpuAllowance } from '../fleet/load.js';
import type { WorkerContext } from './context.js';

const STALE_RECORDING_MS = 60 * 60 * 1000;
/** Stopping, the outbox gets at least this long to deliver the last calls' events. */
const MIN_EVENT_FLUSH_MS = 5000;

export interface Lifecycle {
  listen(port: number, host?: string): Promise<number>;
  drain(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function createLifecycle(
  ctx: WorkerContext,
  parts: { server: http.Server; wss: WebSocketServer; claim: ClaimLoop | null; /** Fork the offline providers' processes at listen (not when a test brought its own providers). */ startSpawner: boolean },
): Lifecycle {
  const { settings, logger, metrics, slots, heartbeat, load, sessions, spawner, recordingDir, version } = ctx;
  const { server, wss, claim } = parts;
  const events = ctx.events.outbox;

  /** Waits up to `ms` for the outbox; what it still holds then stays parked in Redis for the dialler. */
  async function flushEvents(ms: number): Promise<void> {
    if (!events.pending) return;
    logger.info({ pending: events.pending, wait_ms: ms }, 'waiting for call events to reach the backend');
    if (!(await events.flush(ms))) {
      logger.warn({ pending: events.pending }, 'call events not taken before shutdown; the dialler closes their calls from the parked ends');
      events.close();
    }
  }

  /** Reads the CPU allowance, then samples the load every LOAD_SAMPLE_INTERVAL_MS (the heartbeat reports it). */
  async function startLoad(): Promise<void> {
    const allowance = settings.CPU_ALLOWANCE_CORES > 0 ? { cores: settings.CPU_ALLOWANCE_CORES, source: 'setting' as const } : await readCpuAllowance();
    load.setAllowance(allowance);
    // Said once: without a readable cgroup quota the worker assumes the whole machine is its own.
    if (allowance.note) logger.info({ cpu_allowance_cores: allowance.cores, why: allowance.note }, 'CPU allowance: the machine\'s cores (no cgroup quota read)');
    else logger.info({ cpu_allowance_cores: allowance.cores, source: allowance.source }, 'CPU allowance');
    let reported = { load: -1, admittable: -1 };
    load.start(settings.LOAD_SAMPLE_INTERVAL_MS, (sample) => {
      const admittable = slots.free;
      metrics.load.set(sample.load);
      metrics.admittable.set(admittable);
      slots.remeasured();
      // The fleet sees a change of room at once, not at the next 2 s beat (a dial-out may be waiting on it).
      if (admittable !== reported.admittable || Math.abs(sample.load - reported.load) >= 0.05) heartbeat.nudge();
      reported = { load: sample.load, admittable };
    });
  }

  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    await claim?.stop();
    load.stop();
    for (const s of sessions.values()) void s.end('worker_shutdown', 'completed');
    await Promise.allSettled([...sessions.values()].map((s) => s.done));
    ctx.controls.close();
    await flushEvents(MIN_EVENT_FLUSH_MS);
    for (const client of wss.clients) client.terminate();
    await heartbeat.stop(settings.WORKER_ID);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    // Last: every call has ended, so no provider process is still needed.
    await spawner.close();
    // The last spans go out if the collector answers soon; a dead one never holds the shutdown.
    await Promise.race([ctx.tracing.shutdown(), new Promise((r) => setTimeout(r, 2000).unref())]);
  }

  return {
    async listen(port, host = '0.0.0.0') {
      // Track files of calls a crashed worker left behind; an hour untouched means no live call owns them.
      try {
        const removed = await sweepRecordings(recordingDir, STALE_RECORDING_MS);
        if (removed.length) logger.info({ removed: removed.length, dir: recordingDir }, 'removed stale recording files');
      } catch (err) {
        logger.warn({ dir: recordingDir, err: err instanceof Error ? err.message : String(err) }, 'could not sweep stale recording files');
      }
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      await startLoad();
      await heartbeat.start();
      claim?.start();
      // Forked now, while the worker is still small and idle, not on the first call's first sentence.
      // The live decoders' process too (through the spawner): a missing binding is said at boot.
      if (parts.startSpawner) {
        spawner.start();
        ctx.live?.start();
      }
      const addr = server.address();
      const bound = typeof addr === 'object' && addr ? addr.port : port;
      logger.info({ port: bound, worker_id: settings.WORKER_ID, max_calls: slots.max, version }, 'worker listening');
      return bound;
    },
    async drain(timeoutMs) {
      slots.draining = true;
      metrics.draining.set(1);
      await heartbeat.beat();
      logger.info({ active_calls: slots.active, timeout_ms: timeoutMs }, 'draining');
      await claim?.stop();
      const started = Date.now();
      const all = () => Promise.allSettled([...ctx.pending, ...[...sessions.values()].map((s) => s.done), claim?.settled()]);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const outcome = await Promise.race([all().then(() => 'done' as const), deadline]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        logger.warn({ active_calls: sessions.size }, 'drain timeout: ending the remaining calls');
        await Promise.allSettled([...sessions.values()].map((s) => s.end('worker_shutdown', 'completed')));
        await all();
      }
      // The calls' reports get what is left of the drain time (at least a few seconds) to reach the backend.
      await flushEvents(Math.max(MIN_EVENT_FLUSH_MS, timeoutMs - (Date.now() - started)));
      await close();
    },
    close,
  };
}
