// Prometheus metrics of docs/design.md §4, on a registry per worker (tests run several in one process).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics(defaults = true) {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  const recordingStageFailures = new Counter({
    name: 'voice_worker_recording_failures_total',
    help: 'Recordings lost, by stage: disk (temp files during the call), upload',
    labelNames: ['stage'],
    registers: [registry],
  });
  for (const stage of ['disk', 'upload']) recordingStageFailures.inc({ stage }, 0); // exported as 0 from the start
  const traceSpansDropped = new Counter({
    name: 'voice_worker_trace_spans_dropped_total',
    help: 'Trace spans never delivered to the collector, by reason: queue_full (the collector slower than the spans) or export_failed (down, slow or refusing)',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['queue_full', 'export_failed']) traceSpansDropped.inc({ reason }, 0);
  const latencyBuckets = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
  return {
    registry,
    traceSpansDropped,
    activeCalls: new Gauge({ name: 'voice_worker_active_calls', help: 'Calls in progress on this worker', registers: [registry] }),
    maxCalls: new Gauge({ name: 'voice_worker_max_calls', help: 'MAX_CONCURRENT_CALLS of this worker', registers: [registry] }),
    load: new Gauge({ name: 'voice_worker_load', help: 'How busy the worker is, 0-1: the highest of its CPU over its allowance, event-loop lag and queued decode age (docs/design.md §15)', registers: [registry] }),
    admittable: new Gauge({ name: 'voice_worker_admittable_calls', help: 'Calls the worker can still take within LOAD_THRESHOLD (never more than its free slots)', registers: [registry] }),
    draining: new Gauge({ name: 'voice_worker_draining', help: '1 while the worker drains', registers: [registry] }),
    callsTotal: new Counter({ name: 'voice_worker_calls_total', help: 'Calls by result', labelNames: ['result'], registers: [registry] }),
    callsRefused: new Counter({ name: 'voice_worker_calls_refused_total', help: 'Calls refused at start, by code', labelNames: ['code'], registers: [registry] }),
    preemptiveReplies: new Counter({ name: 'voice_worker_preemptive_replies_total', help: 'Replies prepared at a pause: played (the turn ended on the same words) or dropped unheard', labelNames: ['outcome'], registers: [registry] }),
    turnEnds: new Counter({ name: 'voice_worker_turn_ends_total', help: "How callers' turns ended: complete (smart, at min_silence_ms), silence (the end-of-turn silence), backchannel (dropped)", labelNames: ['how'], registers: [registry] }),
    amdTotal: new Counter({ name: 'voice_worker_amd_total', help: 'Answering machine detection verdicts (human, machine, fax, unknown)', labelNames: ['result'], registers: [registry] }),
    amdDecision: new Histogram({
      name: 'voice_worker_amd_decision_seconds',
      help: 'Answer → answering machine detection verdict',
      buckets: [0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10],
      registers: [registry],
    }),
    turnLatency: new Histogram({
      name: 'voice_worker_turn_latency_seconds',
      help: 'User stops speaking → first bot audio frame',
      buckets: latencyBuckets,
      registers: [registry],
    }),
    turnOverhead: new Histogram({
      name: 'voice_worker_turn_overhead_seconds',
      help: 'Turn latency minus end-of-turn silence and provider time: what the platform adds',
      buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
      registers: [registry],
    }),
    providerLatency: new Histogram({
      name: 'voice_worker_provider_latency_seconds',
      help: 'Provider time per turn: STT final, LLM first sentence, TTS first audio',
      labelNames: ['stage', 'provider'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    providerErrors: new Counter({ name: 'voice_worker_provider_errors_total', help: 'Provider failures after retries', labelNames: ['code'], registers: [registry] }),
    recordingFailures: new Counter({ name: 'voice_worker_recording_upload_failures_total', help: 'Recording uploads that failed', registers: [registry] }),
    recordingStageFailures,
    eventFailures: new Counter({
      name: 'voice_worker_call_event_failures_total',
      help: 'Call events the backend did not take, by outcome: refused (4xx), expired (CALL_EVENT_RETRY_MAX_MS), abandoned (worker stopped)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    eventRetries: new Counter({ name: 'voice_worker_call_event_retries_total', help: 'Call event posts tried again (backend unreachable, slow or 5xx)', registers: [registry] }),
    eventsPending: new Gauge({ name: 'voice_worker_call_events_pending', help: 'Call events waiting for the backend to take them', registers: [registry] }),
    jobsClaimed: new Counter({ name: 'voice_worker_dialout_jobs_claimed_total', help: 'Dial-out jobs claimed', registers: [registry] }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
