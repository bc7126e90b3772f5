// Traces in tests: a real collector of one's own (startJaeger) and a look-up of the traces it holds by
// service and span attributes (findTraces), e.g. a dial-out's trace by its call id.
import { startTestEnv } from './env.js';
import type { Jaeger } from './jaeger.js';

export interface JaegerHandle {
  /** OTLP/HTTP base URL: OTEL_EXPORTER_OTLP_ENDPOINT of a part that exports here (POST /v1/traces). */
  readonly otlpHttpUrl: string;
  /** OTLP/gRPC endpoint. */
  readonly otlpGrpcUrl: string;
  /** Jaeger's query API (findTraces reads it). */
  readonly queryUrl: string;
  /** Variables for a part that exports here (OTEL_EXPORTER_OTLP_ENDPOINT, JAEGER_QUERY_URL). */
  readonly env: Record<string, string>;
  /** The jaeger process (its own process group). */
  readonly pid: number;
  /** Stops Jaeger (every trace goes with it: they live in its memory) and keeps its log. */
  stop(): Promise<void>;
}

/**
 * A Jaeger of its own on free loopback ports, in a test environment of its own (temp folder, the guardian
 * that stops it if the test process dies, its log kept under test-artifacts/logs/).
 */
export async function startJaeger(): Promise<JaegerHandle> {
  const env = await startTestEnv(['jaeger']);
  const jaeger = env.services.jaeger as Jaeger;
  const [proc] = jaeger.processes();
  if (!proc) {
    await env.stop();
    throw new Error('Jaeger: started, but its process is gone');
  }
  return { otlpHttpUrl: jaeger.otlpHttpUrl, otlpGrpcUrl: jaeger.otlpGrpcUrl, queryUrl: jaeger.queryUrl, env: jaeger.env, pid: proc.pid, stop: env.stop };
}

export type SpanAttribute = string | number | boolean;

export interface FoundSpan {
  traceId: string;
  spanId: string;
  /** The span it is a child of in this trace (null for the root). */
  parentSpanId: string | null;
  name: string;
  /** service.name of the part that exported it. */
  service: string;
  attributes: Record<string, SpanAttribute>;
  startUs: number;
  durationUs: number;
}

export interface FoundTrace {
  traceId: string;
  spans: FoundSpan[];
}

export interface TraceQuery {
  /** service.name of (at least one span of) the trace. */
  service: string;
  /** Span attributes one span must all have, e.g. {'call.id': callId}. */
  tags?: Record<string, SpanAttribute>;
  /** How far back to look; 1 hour unless given. */
  lookbackMs?: number;
  limit?: number;
}

/** Jaeger's JSON of the query API (/api/traces), the part read here. */
interface JaegerTraceJson {
  traceID: string;
  spans: Array<{
    traceID: string;
    spanID: string;
    operationName: string;
    references?: Array<{ refType: string; traceID: string; spanID: string }>;
    startTime: number;
    duration: number;
    tags?: Array<{ key: string; value: SpanAttribute }>;
    processID: string;
  }>;
  processes: Record<string, { serviceName: string }>;
}

/**
 * The traces Jaeger holds with a span of `service` having every one of `tags`, whole (every span of every
 * part). Through the query API Jaeger's UI uses (`GET /api/traces?service=…&tags={…}`): Jaeger 1.76's
 * api/v3 (`/api/v3/traces`) filters by service, operation, time and duration, not by attribute.
 */
export async function findTraces(queryUrl: string, query: TraceQuery): Promise<FoundTrace[]> {
  const nowUs = Date.now() * 1000;
  const params = new URLSearchParams({
    service: query.service,
    start: String(nowUs - (query.lookbackMs ?? 3_600_000) * 1000),
    end: String(nowUs + 60_000_000), // a part's clock a little ahead of this one's still counts
    limit: String(query.limit ?? 20),
  });
  if (query.tags && Object.keys(query.tags).length) params.set('tags', JSON.stringify(query.tags));
  const res = await fetch(`${queryUrl}/api/traces?${params}`);
  if (res.status !== 200) throw new Error(`Jaeger's query API answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { data: JaegerTraceJson[] | null };
  return (body.data ?? []).map((t) => ({
    traceId: t.traceID,
    spans: t.spans.map((s) => ({
      traceId: s.traceID,
      spanId: s.spanID,
      parentSpanId: s.references?.find((r) => r.refType === 'CHILD_OF' && r.traceID === s.traceID)?.spanID ?? null,
      name: s.operationName,
      service: t.processes[s.processID]?.serviceName ?? '',
      attributes: Object.fromEntries((s.tags ?? []).map((tag) => [tag.key, tag.value])),
      startUs: s.startTime,
      durationUs: s.duration,
    })),
  }));
}
