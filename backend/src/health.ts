// GET /health and GET /metrics. Health pings both stores with a short deadline, so a dead store turns
// the reply to 503 (naming it) instead of hanging the probe.
import { errorBody } from '@voice-platform/schemas';
import type { Router } from '@koa/router';
import type { Services } from './core/deps.js';
import type { Metrics } from './core/metrics.js';

const CHECK_TIMEOUT_MS = 1500;

async function probe(fn: () => Promise<unknown>): Promise<'ok' | 'unreachable'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('store timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(router: Router, svc: Services, metrics: Metrics): void {
  router.get('/health', async (ctx) => {
    const [mongodb, redis] = await Promise.all([
      probe(() => svc.db.command({ ping: 1 })),
      probe(async () => {
        // ioredis would queue the command until reconnected; a non-ready client is simply down.
        if (svc.redis.status !== 'ready') throw new Error('not connected');
        await svc.redis.ping();
      }),
    ]);
    const checks = { mongodb, redis };
    const failed = Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k]) => k);
    ctx.set('Cache-Control', 'no-store');
    if (failed.length === 0) {
      ctx.body = { status: 'ok', checks, version: svc.version };
      return;
    }
    ctx.status = 503;
    ctx.set('Retry-After', '5');
    ctx.body = {
      status: 'unavailable',
      checks,
      version: svc.version,
      ...errorBody('service_unavailable', `${failed.join(' and ')} unreachable`, { failed }),
    };
  });

  // Liveness for the kubelet: the process answers. It does not probe the stores, so an outage of
  // MongoDB or Redis turns readiness (/health) red without restarting every replica in a loop.
  router.get('/health/live', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'alive', version: svc.version };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
