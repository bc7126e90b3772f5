// Prometheus metrics, one registry per app instance (tests run several apps in one process).
import client from 'prom-client';

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const httpDuration = new client.Histogram({
    name: 'backend_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const dialouts = new client.Counter({
    name: 'backend_dialout_requests_total',
    help: 'Dial-out requests by result (queued, replayed or the error code)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const keyAuthFailures = new client.Counter({
    name: 'backend_api_key_auth_failures_total',
    help: 'Refused X-API-Key authentications by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const slotReleases = new client.Counter({
    name: 'backend_capacity_slot_releases_total',
    help: 'Capacity reservations released by a terminal call event (released) or already gone (claimed or expired)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const callsSwept = new client.Counter({
    name: 'backend_calls_swept_total',
    help: 'Calls the dialler failed because they stayed queued past QUEUED_CALL_TIMEOUT_SECONDS (end_reason not_claimed or not_started)',
    registers: [registry],
  });
  const callsLost = new client.Counter({
    name: 'backend_calls_lost_total',
    help: 'Calls the dialler ended failed / worker_lost because their worker stopped renewing their lease',
    registers: [registry],
  });
  const webhookAttempts = new client.Counter({
    name: 'backend_webhook_attempts_total',
    help: 'Webhook delivery attempts by result: delivered (2xx), failed (retry scheduled) or dead (no more retries)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const webhookEmitFailures = new client.Counter({
    name: 'backend_webhook_events_lost_total',
    help: 'Webhook events stored nowhere: neither Redis nor MongoDB took them before the process exited or while its in-memory queue was full',
    registers: [registry],
  });
  const webhookFallbacks = new client.Counter({
    name: 'backend_webhook_events_fallback_total',
    help: 'Webhook events written to the MongoDB fallback outbox (webhook_outbox) because the Redis outbox failed',
    registers: [registry],
  });
  const webhookHeldTotal = new client.Counter({
    name: 'backend_webhook_events_held_total',
    help: 'Webhook events kept in process memory because neither Redis nor MongoDB took them; retried with backoff',
    registers: [registry],
  });
  const webhookHeld = new client.Gauge({
    name: 'backend_webhook_events_held',
    help: 'Webhook events in process memory now, waiting for Redis or MongoDB to take them',
    registers: [registry],
  });
  const analysisJobs = new client.Counter({
    name: 'backend_analysis_jobs_total',
    help: 'Post-call analysis attempts by result: done, skipped (no caller turn), failed (no more attempts), retry (an attempt failed; retried later) or superseded (another dialler finished it first)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const analysisDuration = new client.Histogram({
    name: 'backend_analysis_duration_seconds',
    help: 'Time one post-call analysis attempt took, by how it was made (scripted offline, or openai chat completions)',
    labelNames: ['provider'] as const,
    buckets: [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const traceSpansDropped = new client.Counter({
    name: 'voice_backend_trace_spans_dropped_total',
    help: 'Trace spans never delivered to the collector, by reason: queue_full (the collector slower than the spans) or export_failed (down, slow or refusing)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['queue_full', 'export_failed']) traceSpansDropped.inc({ reason }, 0);
  return { registry, traceSpansDropped, analysisJobs, analysisDuration, httpDuration, dialouts, keyAuthFailures, slotReleases, callsSwept, callsLost, webhookAttempts, webhookEmitFailures, webhookFallbacks, webhookHeldTotal, webhookHeld };
}

export type Metrics = ReturnType<typeof createMetrics>;
