// The Koa app: request id + logging + metrics, CORS, the one error middleware, then the routes of each
// area. No listening and no store connections here: main.ts does that, tests use app.callback().
import { wireCallHandlers } from './callHandlers.js';
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import cors from '@koa/cors';
import { Router } from '@koa/router';
import type { AppDeps, Services } from './core/deps.js';
import { VERSION } from './core/deps.js';
import { errorMiddleware } from './core/errors.js';
import { StoreCache } from './core/cache.js';
import { recordingStoreFromSettings } from './core/storage.js';
import { createMetrics, type Metrics } from './core/metrics.js';
import { traceRequests, tracingOff } from './core/tracing.js';
import { authRoutes } from './users/session.js';
import { apiKeyRoutes } from './apiKeys/routes.js';
import { userRoutes } from './users/routes.js';
import { botRoutes } from './bots/routes.js';
import { botTestRoutes } from './botTests/routes.js';
import { dialoutRoutes } from './dialout/routes.js';
import { callRoutes } from './calls/routes.js';
import { configRoutes } from './runtimeConfig/routes.js';
import { trunkRoutes } from './trunks/routes.js';
import { inboundNumberRoutes } from './inbound/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { widgetRoutes } from './widget/routes.js';
import { liveKitWebhookRoutes } from './inbound/calls.js';
import { campaignRoutes } from './campaigns/routes.js';
import { dncRoutes } from './campaigns/dnc.js';
import { healthRoutes } from './health.js';
import { apiDocsRoutes } from './apiDocs.js';
import { auditRoutes } from './audit/routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { fleetRoutes } from './fleet/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { knowledgeRoutes } from './knowledge/routes.js';

export type VoiceApp = Koa & { router: Router; metrics: Metrics };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The API role: every route. */
export function createApp(deps: AppDeps): VoiceApp {
  wireCallHandlers();
  return buildApp(deps, (router, svc, metrics) => {
    healthRoutes(router, svc, metrics);
    authRoutes(router, svc);
    userRoutes(router, svc);
    apiKeyRoutes(router, svc);
    botRoutes(router, svc);
    botTestRoutes(router, svc, metrics);
    trunkRoutes(router, svc);
    inboundNumberRoutes(router, svc);
    dialoutRoutes(router, svc, metrics);
    widgetRoutes(router, svc, metrics);
    liveKitWebhookRoutes(router, svc);
    callRoutes(router, svc, metrics);
    configRoutes(router, svc);
    webhookRoutes(router, svc, metrics);
    campaignRoutes(router, svc, metrics);
    dncRoutes(router, svc);
    auditRoutes(router, svc);
    analyticsRoutes(router, svc, metrics);
    fleetRoutes(router, svc, metrics);
    mcpRoutes(router, svc, metrics);
    knowledgeRoutes(router, svc);
    apiDocsRoutes(router, svc);
  });
}

/** A process without the API role (dialler only): the probes and /metrics, every other path 404 `not_found`. */
export function createProbeApp(deps: AppDeps): VoiceApp {
  return buildApp(deps, healthRoutes);
}

function buildApp(deps: AppDeps, routes: (router: Router, svc: Services, metrics: Metrics) => void): VoiceApp {
  const clock = deps.clock ?? Date.now;
  // A write's pending mark (cache.ts) outlives any MongoDB operation: a retried one waits for a server twice.
  const pendingMs = 2 * (deps.settings.MONGODB_SERVER_SELECTION_TIMEOUT_MS + deps.settings.MONGODB_SOCKET_TIMEOUT_MS);
  const svc: Services = {
    ...deps,
    recordings: deps.recordings !== undefined ? deps.recordings : recordingStoreFromSettings(deps.settings),
    clock,
    version: deps.version ?? VERSION,
    now: () => new Date(clock()),
    cache: new StoreCache(deps.redis, pendingMs),
    tracing: deps.tracing ?? tracingOff,
  };
  const metrics = createMetrics();
  svc.tracing.onDropped((reason, spans) => metrics.traceSpansDropped.inc({ reason }, spans));
  const app = new Koa({ proxy: false }) as VoiceApp;
  app.silent = true; // errors are logged by our own middleware, without request data
  // First, so the request's log line and every line of its handlers carry its trace_id.
  app.use(traceRequests(svc.tracing));

  app.use(async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    // Every answer, errors included: a browser must never sniff a JSON body into something it runs.
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.state.bodyReadTimeoutMs = deps.settings.BODY_READ_TIMEOUT_MS; // read by body.ts
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched';
      metrics.httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      const line = { req_id: requestId, method: ctx.method, route, path: ctx.path, status: ctx.status, duration_ms: Math.round(seconds * 1e4) / 10 };
      const unexpected = ctx.state.unexpectedError as unknown;
      if (unexpected) svc.logger.error({ ...line, err: unexpected }, 'request failed');
      else if (ctx.status >= 500) svc.logger.warn({ ...line, cause: ctx.state.errorCause }, 'request failed');
      else if (route !== '/health' && route !== '/health/live' && route !== '/metrics') svc.logger.info(line, 'request');
      else svc.logger.debug(line, 'request');
    }
  });
  const allowed = new Set(deps.settings.corsOrigins);
  app.use(
    cors({
      origin: (ctx) => {
        const origin = ctx.get('Origin');
        return allowed.has(origin) ? origin : '';
      },
      allowMethods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
      allowHeaders: ['Content-Type', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'X-Request-Id', 'X-Filename'],
      exposeHeaders: ['Retry-After', 'X-Request-Id', 'Location', 'Idempotent-Replayed', 'Content-Disposition', 'Content-Range', 'Accept-Ranges'],
      maxAge: 600,
    }),
  );
  app.use(errorMiddleware());

  const router = new Router();
  routes(router, svc, metrics);
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.router = router;
  app.metrics = metrics;
  return app;
}
