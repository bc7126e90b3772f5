// The trace collector of docs/design.md §16: Jaeger v2 (cmd/jaeger, built by scripts/setup.sh) with traces
// kept in memory. OTLP in (gRPC and HTTP), Jaeger's query API out; every listener on loopback, and none
// of its optional ones (metrics, health, pprof, zpages, sampling, other receivers) is configured.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tcpOpen, waitUntil } from './process.js';
import { ports, ProcessService, type ServiceOptions } from './processService.js';
import { binary } from './versions.js';

/** The four ports, in the order ServiceOptions.ports gives them. */
export interface JaegerPorts {
  otlpGrpc: number;
  otlpHttp: number;
  query: number;
  queryGrpc: number;
}

/**
 * Jaeger v2's configuration (an OpenTelemetry Collector's): OTLP → the in-memory store ← the query API.
 * No processor: a span is stored as its export request is answered, so a test finds it at once. JSON is
 * YAML, so it is written as JSON.
 */
export function jaegerConfig(p: JaegerPorts, maxTraces: number): object {
  const at = (port: number) => `127.0.0.1:${port}`;
  return {
    service: {
      extensions: ['jaeger_storage', 'jaeger_query'],
      pipelines: { traces: { receivers: ['otlp'], exporters: ['jaeger_storage_exporter'] } },
      // `level: none`: no internal metrics, so no Prometheus listener (its default is localhost:8888).
      telemetry: { metrics: { level: 'none' }, logs: { level: 'info' } },
    },
    extensions: {
      jaeger_storage: { backends: { memstore: { memory: { max_traces: maxTraces } } } },
      jaeger_query: {
        storage: { traces: 'memstore' },
        // Jaeger would trace its own queries into the store the tests read.
        enable_tracing: false,
        http: { endpoint: at(p.query) },
        grpc: { endpoint: at(p.queryGrpc) },
      },
    },
    receivers: { otlp: { protocols: { grpc: { endpoint: at(p.otlpGrpc) }, http: { endpoint: at(p.otlpHttp) } } } },
    exporters: { jaeger_storage_exporter: { trace_storage: 'memstore' } },
  };
}

export class Jaeger extends ProcessService {
  readonly name = 'jaeger' as const;
  env: Record<string, string> = {};
  private p: JaegerPorts = { otlpGrpc: 0, otlpHttp: 0, query: 0, queryGrpc: 0 };
  private started = false;
  private readonly maxTraces: number;

  private constructor(opts: ServiceOptions & { maxTraces?: number }) {
    super(opts);
    this.maxTraces = opts.maxTraces ?? 10_000;
  }

  /** ports (optional): OTLP gRPC, OTLP HTTP, query HTTP, query gRPC. */
  static async create(opts: ServiceOptions & { maxTraces?: number }): Promise<Jaeger> {
    const svc = new Jaeger(opts);
    await svc.pickPorts(opts);
    return svc;
  }

  private async pickPorts(opts: ServiceOptions): Promise<void> {
    const [otlpGrpc, otlpHttp, query, queryGrpc] = await ports(opts, 4);
    this.p = { otlpGrpc, otlpHttp, query, queryGrpc };
    // The standard variable of every OpenTelemetry SDK: a part given this exports its spans here.
    this.env = { OTEL_EXPORTER_OTLP_ENDPOINT: this.otlpHttpUrl, JAEGER_QUERY_URL: this.queryUrl };
  }

  get otlpHttpUrl(): string {
    return `http://127.0.0.1:${this.p.otlpHttp}`;
  }
  get otlpGrpcUrl(): string {
    return `http://127.0.0.1:${this.p.otlpGrpc}`;
  }
  /** The query API (and Jaeger's UI page) */
  get queryUrl(): string {
    return `http://127.0.0.1:${this.p.query}`;
  }

  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const config = path.join(this.opts.dir, 'config.yaml');
      writeFileSync(config, JSON.stringify(jaegerConfig(this.p, this.maxTraces), null, 2) + '\n');
      const proc = this.launch('jaeger', binary('jaeger'), [`--config=${config}`]);
      try {
        await waitUntil(() => jaegerReady(this.p), { what: 'Jaeger', proc, timeoutMs: 60_000 });
        this.started = true;
        return;
      } catch (err) {
        // As FerretDB's: another process took a free port between its pick and Jaeger's bind: a first start
        // picks others. A restart keeps its ports (clients hold them), as do ports asked for.
        if (this.started || this.opts.ports?.length || attempt >= 3 || !/address already in use/.test(String(err))) throw err;
        await proc.stop();
        this.procs = this.procs.filter((p) => p !== proc);
        await this.pickPorts({ ...this.opts, ports: undefined });
      }
    }
  }
}

/**
 * Ready when the query API answers and the OTLP receivers take requests: the collector starts its
 * extensions (the query API) before its pipelines, so the query API alone is not enough. An empty export
 * request stores nothing.
 */
export async function jaegerReady(p: JaegerPorts): Promise<boolean> {
  const query = await fetch(`http://127.0.0.1:${p.query}/api/services`);
  if (query.status !== 200) return false;
  const otlp = await fetch(`http://127.0.0.1:${p.otlpHttp}/v1/traces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"resourceSpans":[]}',
  });
  return otlp.status === 200 && (await tcpOpen(p.otlpGrpc));
}
