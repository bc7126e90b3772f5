// The worker's OpenTelemetry traces (docs/design.md §16): a `call` span per claimed job, child of the job's
// `traceparent` (the backend's dial-out request), a `turn` span per turn with a span per stage (stt, llm, tool,
// tts) made after the fact from the turn's measured path, tool requests, and `traceparent` on every request
// to the backend. Off (the API's no-op tracer: nothing recorded) without OTEL_EXPORTER_OTLP_ENDPOINT.
import { context, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { startTracing, type Tracing } from '@voice-platform/schemas/node';
import type { Logger } from './logger.js';
import type { Settings } from './settings.js';

/** The parts of a turn's timing its spans are made of (transports/output.ts TurnTiming has them). */
export interface TurnSpanInput {
  userEndAt: Date;
  decidedAt: Date;
  latencyMs: number;
  path: { sttMs: number; llmMs: number; toolMs: number; ttsMs: number };
  preemptive: boolean;
}

/** Calls whose context is kept for later spans and requests (their events go out after the call ends). */
const MAX_KEPT_CALLS = 5000;

export class WorkerTracing {
  /** Each call's span context: the parent of its turns, tool requests and backend requests. */
  private readonly calls = new Map<string, Context>();
  private readonly turnCount = new Map<string, number>();

  constructor(readonly t: Tracing) {}

  get enabled(): boolean {
    return this.t.enabled;
  }

  /**
   * Runs a claimed job's call inside its `call` span (the job's traceparent its parent): every log line of the
   * call carries its trace_id, and the span ends when `fn` settles.
   */
  async call<T>(job: { call_id: string; bot_id: string; direction: string; traceparent?: string }, fn: () => Promise<T>): Promise<T> {
    if (!this.t.enabled) return fn();
    const parent = this.t.extract(job.traceparent);
    const span = this.t.tracer.startSpan('call', { kind: SpanKind.CONSUMER, attributes: { 'call.id': job.call_id, 'bot.id': job.bot_id, 'call.direction': job.direction } }, parent);
    const ctx = trace.setSpan(parent, span);
    this.keep(job.call_id, ctx);
    try {
      return await context.with(ctx, fn);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  }

  /**
   * A WebSocket call (no job): its `call` span starts as the caller connects (the record's creation is in it)
   * and ends with the call; `named` gives it the call's id once the backend made it.
   */
  async wsCall<T>(botId: string, fn: (named: (callId: string) => void) => Promise<T>): Promise<T> {
    if (!this.t.enabled) return fn(() => undefined);
    const span = this.t.tracer.startSpan('call', { kind: SpanKind.SERVER, attributes: { 'bot.id': botId, 'call.direction': 'websocket' } }, context.active());
    const ctx = trace.setSpan(context.active(), span);
    try {
      return await context.with(ctx, () =>
        fn((callId) => {
          span.setAttribute('call.id', callId);
          this.keep(callId, ctx);
        }),
      );
    } finally {
      span.end();
    }
  }

  private keep(callId: string, ctx: Context): void {
    this.calls.delete(callId);
    this.calls.set(callId, ctx);
    // Oldest first out: a call's context is only needed while its last events are still being sent.
    while (this.calls.size > MAX_KEPT_CALLS) {
      const oldest = this.calls.keys().next().value!;
      this.calls.delete(oldest);
      this.turnCount.delete(oldest);
    }
  }

  /** The call's span context (its requests and late spans join its trace); the active one otherwise. */
  contextOf(callId?: string): Context {
    return (callId && this.calls.get(callId)) || context.active();
  }

  /** `traceparent` for a request made for a call (or in the active context). */
  headers(callId?: string): Record<string, string> {
    return this.t.enabled ? this.t.inject({}, this.contextOf(callId)) : {};
  }

  /**
   * A finished turn as a `turn` span (the caller's end of speech → the bot's first audio) with its stages as
   * children, laid end to end from the decision as the turn's critical path measured them. No words: a trace
   * store is no place for what callers say.
   */
  turn(callId: string, t: TurnSpanInput): void {
    if (!this.t.enabled) return;
    const index = (this.turnCount.get(callId) ?? 0) + 1;
    this.turnCount.set(callId, index);
    const startMs = t.userEndAt.getTime();
    const span = this.t.tracer.startSpan('turn', { startTime: startMs, attributes: { 'call.id': callId, 'turn.index': index, 'turn.latency_ms': Math.round(t.latencyMs), 'turn.preemptive': t.preemptive } }, this.contextOf(callId));
    const ctx = trace.setSpan(this.contextOf(callId), span);
    let at = t.decidedAt.getTime();
    const stages: Array<[string, number]> = [
      ['stt', t.path.sttMs],
      ['llm', t.path.llmMs],
      ...(t.path.toolMs > 0 ? ([['tool', t.path.toolMs]] as Array<[string, number]>) : []),
      ['tts', t.path.ttsMs],
    ];
    for (const [stage, ms] of stages) {
      const d = Math.max(0, ms);
      this.t.tracer.startSpan(stage, { startTime: at, attributes: { 'call.id': callId, 'turn.index': index, 'stage.ms': Math.round(d) } }, ctx).end(at + d);
      at += d;
    }
    span.end(Math.max(at, startMs + Math.max(0, t.latencyMs)));
  }

  /** A client span around one outgoing HTTP request (a tool, the backend), its headers given `traceparent`. */
  async request<T>(name: string, attributes: Record<string, string | number>, callId: string | undefined, fn: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    if (!this.t.enabled) return fn({});
    const span = this.t.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: { ...(callId ? { 'call.id': callId } : {}), ...attributes } }, this.contextOf(callId));
    const ctx = trace.setSpan(this.contextOf(callId), span);
    try {
      return await context.with(ctx, () => fn(this.t.inject({}, ctx)));
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  }

  /** Marks the current request span's answer (status code; 5xx an error). */
  static answered(status: number): void {
    const span = trace.getActiveSpan();
    span?.setAttribute('http.response.status_code', status);
    if (status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
  }

  flush(): Promise<void> {
    return this.t.flush();
  }

  shutdown(): Promise<void> {
    return this.t.shutdown();
  }
}

export function createTracing(settings: Settings, logger: Logger, version?: string): WorkerTracing {
  return new WorkerTracing(
    startTracing({
      serviceName: settings.OTEL_SERVICE_NAME,
      serviceVersion: version,
      endpoint: settings.OTEL_EXPORTER_OTLP_ENDPOINT,
      maxQueueSize: settings.OTEL_BSP_MAX_QUEUE_SIZE,
      exportTimeoutMs: settings.OTEL_EXPORTER_OTLP_TIMEOUT,
      warn: (fields, msg) => logger.warn(fields, msg),
    }),
  );
}

/** Tracing off: what a client or session built without one uses. */
export const tracingOff = new WorkerTracing(startTracing({ serviceName: 'voice-worker' }));
