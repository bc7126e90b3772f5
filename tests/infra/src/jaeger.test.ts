// The trace collector the product's tests export to (docs/design.md §16): a real Jaeger v2 takes an
// OTLP/HTTP trace, and findTraces finds it by service and span attribute the way a dial-out's trace is
// looked up by its call id. Every listener of the process is on loopback.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { findTraces, startJaeger, type JaegerHandle } from './tracing.js';

describe('Jaeger (the tests\' trace collector)', () => {
  let jaeger: JaegerHandle;
  beforeAll(async () => {
    jaeger = await startJaeger();
  }, 120_000);
  afterAll(async () => {
    await jaeger?.stop();
  });

  it('stores an OTLP/HTTP JSON trace that findTraces finds by service and attribute', async () => {
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    const endNs = BigInt(Date.now()) * 1_000_000n;
    const startNs = endNs - 25_000_000n;
    const res = await fetch(`${jaeger.otlpHttpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'probe' } }] },
            scopeSpans: [
              {
                scope: { name: 'jaeger.test' },
                spans: [
                  {
                    traceId,
                    spanId,
                    name: 'dialout',
                    kind: 2, // server
                    startTimeUnixNano: String(startNs),
                    endTimeUnixNano: String(endNs),
                    attributes: [{ key: 'call.id', value: { stringValue: 'abc' } }],
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    // Stored by the time the export is answered (no batching in between): no waiting.
    const found = await findTraces(jaeger.queryUrl, { service: 'probe', tags: { 'call.id': 'abc' } });
    expect(found).toEqual([
      {
        traceId,
        spans: [
          expect.objectContaining({
            traceId,
            spanId,
            parentSpanId: null,
            name: 'dialout',
            service: 'probe',
            attributes: expect.objectContaining({ 'call.id': 'abc', 'span.kind': 'server' }),
            startUs: Number(startNs / 1000n),
            durationUs: 25_000,
          }),
        ],
      },
    ]);
    // The attribute filters: another call id finds nothing, nor another service.
    expect(await findTraces(jaeger.queryUrl, { service: 'probe', tags: { 'call.id': 'other' } })).toEqual([]);
    expect(await findTraces(jaeger.queryUrl, { service: 'nobody', tags: { 'call.id': 'abc' } })).toEqual([]);

    // api/v3 finds it by service and time (query.num_traces is required: 500 without it), but takes no
    // attribute filter in Jaeger 1.76 (hence findTraces reads /api/traces): a query by another call id
    // still answers the trace.
    const v3 = async (extra: string) => {
      const min = new Date(Date.now() - 3_600_000).toISOString();
      const max = new Date(Date.now() + 60_000).toISOString();
      const r = await fetch(`${jaeger.queryUrl}/api/v3/traces?query.service_name=probe&query.start_time_min=${min}&query.start_time_max=${max}&query.num_traces=20${extra}`);
      expect(r.status).toBe(200);
      const body = (await r.json()) as { result: { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string }> }> }> } };
      return body.result.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => `${s.traceId}/${s.spanId}`)));
    };
    expect(await v3('')).toEqual([`${traceId}/${spanId}`]);
    expect(await v3(`&query.attributes=${encodeURIComponent('{"call.id":"other"}')}`)).toEqual([`${traceId}/${spanId}`]);
  });

  it('listens on loopback only', () => {
    const listeners = listeningSockets(jaeger.pid);
    // OTLP gRPC and HTTP, the query API's HTTP and gRPC: nothing else (no metrics, health, pprof or zpages).
    expect(listeners).toHaveLength(4);
    expect(listeners.filter((l) => !l.startsWith('127.0.0.1:'))).toEqual([]);
    const ports = [jaeger.otlpHttpUrl, jaeger.otlpGrpcUrl, jaeger.queryUrl].map((u) => `127.0.0.1:${new URL(u).port}`);
    expect(listeners).toEqual(expect.arrayContaining(ports));
  });
});

/** The TCP sockets a process listens on and the UDP sockets it bound, as address:port (from /proc). */
function listeningSockets(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  const out: string[] = [];
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      if (table.startsWith('tcp') && f[3] !== '0A') continue; // TCP: listening sockets only
      out.push(hexAddress(f[1]!));
    }
  }
  return out.sort();
}

/** /proc/net's 0100007F:1F90 as 127.0.0.1:8080 (IPv6: the hex address as it is, never 127.0.0.1). */
function hexAddress(hex: string): string {
  const [addr, port] = hex.split(':') as [string, string];
  const ip = addr.length === 8 ? [3, 2, 1, 0].map((i) => parseInt(addr.slice(i * 2, i * 2 + 2), 16)).join('.') : `[${addr}]`;
  return `${ip}:${parseInt(port, 16)}`;
}
