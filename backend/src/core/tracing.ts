// The backend's OpenTelemetry traces (docs/design.md §16): a server span per API request, continuing the
// caller's `traceparent` (a worker's config read and call events join their call's trace), and the dial-out's
// span handed to the worker in the call job. Off (the API's no-op tracer) without OTEL_EXPORTER_OTLP_ENDPOINT.
import type { Middleware } from 'koa';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { startTracing, type Tracing } from '@voice-platform/schemas/node';
import type { Logger } from 'pino';
import type { Settings } from './settings.js';

export type { Tracing };

/** service.name of this process: its own setting, else by its roles (a dialler-only process is `voice-dialler`). */
export function serviceNameFor(settings: Pick<Settings, 'OTEL_SERVICE_NAME' | 'roles'>): string {
  if (settings.OTEL_SERVICE_NAME) return settings.OTEL_SERVICE_NAME;
  return settings.roles.includes('api') ? 'voice-backend' : 'voice-dialler';
}

export function createTracing(settings: Settings, logger: Logger, version?: string): Tracing {
  return startTracing({
    serviceName: serviceNameFor(settings),
    serviceVersion: version,
    endpoint: settings.OTEL_EXPORTER_OTLP_ENDPOINT,
    maxQueueSize: settings.OTEL_BSP_MAX_QUEUE_SIZE,
    exportTimeoutMs: settings.OTEL_EXPORTER_OTLP_TIMEOUT,
    warn: (fields, msg) => logger.warn(fields, msg),
  });
}

/** Tracing off: what apps built without one (tests) use. */
export const tracingOff: Tracing = startTracing({ serviceName: 'voice-backend' });

/** Probes and scrapes make no spans: they would bury the calls' traces. */
const UNTRACED = new Set(['/health', '/health/live', '/metrics']);

/**
 * A server span around each request, named by its route once matched (`POST /api/v1/dialout`), child of the
 * request's `traceparent` when it has one. Handlers add their own attributes to it (`call.id`).
 */
export function traceRequests(tracing: Tracing): Middleware {
  if (!tracing.enabled) return (_ctx, next) => next();
  return async (ctx, next) => {
    if (UNTRACED.has(ctx.path)) return next();
    const parent = tracing.extract(ctx.get('traceparent'));
    const span = tracing.tracer.startSpan(`${ctx.method} ${ctx.path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } }, parent);
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched';
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': ctx.status });
      const callId = (ctx.params as Record<string, string> | undefined)?.id;
      if (callId && route.startsWith('/api/v1/calls/')) span.setAttribute('call.id', callId);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
