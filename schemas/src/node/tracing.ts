// OpenTelemetry traces of one part (docs/design.md §16), the same for the backend and the worker: OTLP/HTTP
// to OTEL_EXPORTER_OTLP_ENDPOINT, W3C trace context in and out. Off unless an endpoint is given: the parts
// then use the API's no-op tracer (nothing recorded, nothing queued, nothing sent). A collector that is down
// or slow never holds a call: spans wait in a bounded queue, what cannot be sent is dropped and counted, and
// export failures are logged at most once a minute.
import { context, propagation, trace, type Context, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export type { Context, Span, SpanContext, Tracer };

/** Why spans were lost: the queue was full (the collector slower than the part), or an export failed. */
export type SpanDropReason = 'queue_full' | 'export_failed';

export interface TracingOptions {
  /** service.name of every span (`voice-backend`, `voice-dialler`, `voice-worker`). */
  serviceName: string;
  serviceVersion?: string;
  /** OTLP/HTTP base URL (spans go to `<endpoint>/v1/traces`); empty or absent: tracing is off. */
  endpoint?: string;
  /** Spans waiting for export at most; more are dropped (counted). */
  maxQueueSize?: number;
  /** One export request may take this long before it counts as failed. */
  exportTimeoutMs?: number;
  /** Pause between two exports of a part queue. */
  scheduledDelayMs?: number;
  /** Where the once-a-minute export failure line goes. */
  warn?(fields: Record<string, unknown>, msg: string): void;
  /** The pause between two failure lines (tests shorten it). */
  failureLogIntervalMs?: number;
}

export interface Tracing {
  readonly enabled: boolean;
  /** The part's tracer: spans of this part's service.name (the API's no-op tracer when off). */
  readonly tracer: Tracer;
  /** The `traceparent` of a context (default: the active one), or undefined when it holds no sampled span. */
  traceparent(ctx?: Context): string | undefined;
  /** Adds `traceparent` (and `tracestate`) of a context (default: the active one) to outgoing headers. */
  inject(headers: Record<string, string>, ctx?: Context): Record<string, string>;
  /** The context a `traceparent` (a header, a job field) continues; the root context when absent or invalid. */
  extract(traceparent: string | undefined | null): Context;
  /** Adds a counter of lost spans (the part's Prometheus counter, once its registry exists). */
  onDropped(listener: (reason: SpanDropReason, spans: number) => void): void;
  /** Exports what is queued (tests; a shutdown). Never throws. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();
let contextManagerSet = false;

export { activeTraceId } from '../log.js';

/**
 * Counts what cannot be sent and logs it at most once per interval: spans handed over while the queue is full are
 * dropped here (the batch processor behind never sees more than its queue holds, so it drops nothing uncounted),
 * and a failed export loses its batch (the processor does not retry).
 */
class BoundedProcessor implements SpanProcessor {
  private queued = 0;
  private droppedSinceLog = 0;
  private lastLogAt = 0;
  private lastError = '';

  constructor(
    private readonly inner: BatchSpanProcessor,
    private readonly maxQueueSize: number,
    private readonly opts: TracingOptions,
    private readonly listeners: ReadonlySet<(reason: SpanDropReason, spans: number) => void>,
  ) {}

  /** The exporter took a batch: those spans left the queue. */
  taken(spans: number): void {
    this.queued = Math.max(0, this.queued - spans);
  }

  dropped(reason: SpanDropReason, spans: number, error?: string): void {
    for (const count of this.listeners) count(reason, spans);
    this.droppedSinceLog += spans;
    if (error) this.lastError = error;
    const now = Date.now();
    if (now - this.lastLogAt < (this.opts.failureLogIntervalMs ?? 60_000)) return;
    this.lastLogAt = now;
    this.opts.warn?.({ dropped_spans: this.droppedSinceLog, reason, error: this.lastError || undefined, endpoint: this.opts.endpoint }, 'trace export failing: spans dropped (calls are unaffected)');
    this.droppedSinceLog = 0;
  }

  onStart(span: Parameters<SpanProcessor['onStart']>[0], ctx: Context): void {
    this.inner.onStart(span, ctx);
  }

  onEnd(span: ReadableSpan): void {
    if (this.queued >= this.maxQueueSize) {
      this.dropped('queue_full', 1);
      return;
    }
    this.queued++;
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** The OTLP exporter, telling the processor what left the queue and what was lost. */
class CountingExporter implements SpanExporter {
  processor: BoundedProcessor | null = null;
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.processor?.taken(spans.length);
    let answered = false;
    this.inner.export(spans, (result) => {
      if (answered) return;
      answered = true;
      if (result.code !== ExportResultCode.SUCCESS) this.processor?.dropped('export_failed', spans.length, result.error?.message ?? 'export failed');
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** This part's tracing: on with an endpoint, a no-op without one. */
export function startTracing(opts: TracingOptions): Tracing {
  const endpoint = opts.endpoint?.trim().replace(/\/+$/, '');
  const inject = (headers: Record<string, string>, ctx: Context = context.active()): Record<string, string> => {
    propagator.inject(ctx, headers, { set: (carrier, key, value) => void (carrier[key] = value) });
    return headers;
  };
  const listeners = new Set<(reason: SpanDropReason, spans: number) => void>();
  const base = {
    inject,
    onDropped: (listener: (reason: SpanDropReason, spans: number) => void) => void listeners.add(listener),
    traceparent: (ctx: Context = context.active()): string | undefined => inject({}, ctx).traceparent,
    extract(traceparent: string | undefined | null): Context {
      if (!traceparent) return context.active();
      return propagator.extract(context.active(), { traceparent }, { get: (c, k) => c[k as 'traceparent'], keys: (c) => Object.keys(c) });
    },
  };
  if (!endpoint) {
    return { ...base, enabled: false, tracer: trace.getTracer('voice-platform'), flush: async () => {}, shutdown: async () => {} };
  }
  // One context manager per process (the API keeps the first): parts sharing a process (tests) share it.
  if (!contextManagerSet) {
    contextManagerSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(propagator);
  }
  const maxQueueSize = opts.maxQueueSize ?? 2048;
  const exportTimeoutMs = opts.exportTimeoutMs ?? 10_000;
  const exporter = new CountingExporter(new OTLPTraceExporter({ url: `${endpoint}/v1/traces`, timeoutMillis: exportTimeoutMs, concurrencyLimit: 4 }));
  const batch = new BatchSpanProcessor(exporter, {
    maxQueueSize,
    maxExportBatchSize: Math.min(512, maxQueueSize),
    scheduledDelayMillis: opts.scheduledDelayMs ?? 1000,
    // A little longer than the exporter's own deadline, so its failure (counted) comes first.
    exportTimeoutMillis: exportTimeoutMs + 1000,
  });
  const processor = new BoundedProcessor(batch, maxQueueSize, { ...opts, endpoint }, listeners);
  exporter.processor = processor;
  // The provider is this part's own (not the global one): a backend and a worker in one test process keep
  // their own service.name.
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, ...(opts.serviceVersion ? { 'service.version': opts.serviceVersion } : {}) }),
    spanProcessors: [processor],
  });
  const quiet = (p: Promise<unknown>) => p.then(() => undefined, () => undefined);
  return {
    ...base,
    enabled: true,
    tracer: provider.getTracer('voice-platform'),
    flush: () => quiet(provider.forceFlush()),
    shutdown: () => quiet(provider.shutdown()),
  };
}
