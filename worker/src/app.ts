// The worker: HTTP (/health, /health/live, /health/fleet, /metrics), `WS /ws/{bot_id}`, the call-job claim
// loop, the fleet heartbeat, and drain. createWorker(deps) joins its parts (app/): the entry (HTTP and
// WebSocket), the call dispatcher (job kind → transport → session) and the lifecycle, on one shared
// context; main.ts adds settings, signals and listen.
import type http from 'node:http';
import type { Metrics } from './core/metrics.js';
import type { CallSession } from './call/session.js';
import type { CallEventOutbox } from './call/outbox.js';
import type { Spawner } from './proc/spawner.js';
import type { LiveDecoder } from './stt/live-decoder.js';
import type { Slots } from './fleet/capacity.js';
import { ClaimLoop } from './fleet/claim.js';
import { createContext, type WorkerDeps } from './app/context.js';
import { createDispatcher } from './app/dispatcher.js';
import { createEntry } from './app/entry.js';
import { createLifecycle } from './app/lifecycle.js';

export type { WorkerDeps } from './app/context.js';

export const VERSION = '0.1.0';

export interface Worker {
  readonly server: http.Server;
  readonly slots: Slots;
  readonly metrics: Metrics;
  readonly sessions: ReadonlyMap<string, CallSession>;
  readonly spawner: Spawner;
  /** The live pocketsphinx decoders (the bench reads their process's CPU); null: POCKETSPHINX_LIVE=false. */
  readonly live: LiveDecoder | null;
  /** Call events on their way to the backend. */
  readonly events: CallEventOutbox;
  listen(port: number, host?: string): Promise<number>;
  /** Stop taking calls, let active ones finish (ending them at the deadline), then stop. */
  drain(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function createWorker(deps: WorkerDeps): Worker {
  const ctx = createContext(deps, deps.version ?? VERSION);
  const { settings, logger, redis, slots, heartbeat } = ctx;
  const dispatch = createDispatcher(ctx);
  const claim =
    deps.blockingRedis && settings.DIALOUT_ENABLED
      ? new ClaimLoop({ redis, blockingRedis: deps.blockingRedis, slots, workerId: settings.WORKER_ID, logger, run: dispatch, onClaim: (id) => heartbeat.claim(id), staleAfterMs: settings.DIALOUT_STALE_CLAIM_MS })
      : null;
  const { server, wss } = createEntry(ctx);
  const lifecycle = createLifecycle(ctx, { server, wss, claim, startSpawner: !deps.providers });
  return { server, slots, metrics: ctx.metrics, sessions: ctx.sessions, spawner: ctx.spawner, live: ctx.live, events: ctx.events.outbox, ...lifecycle };
}
