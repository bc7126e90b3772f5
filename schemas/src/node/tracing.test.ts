// The shared tracing setup (docs/design.md §16): off without an endpoint, W3C trace context out and in, the
// active span's trace id on log lines, and a collector that never answers: the queue stays bounded, every
// lost span is counted by reason, and the failure is logged once per interval.
import net from 'node:net';
import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { createLogger } from '../log.js';
import { TRACEPARENT_PATTERN } from '../fleet.js';
import { startTracing, type SpanDropReason } from './tracing.js';

/** Accepts every connection and never answers (a hung collector). */
async function silentCollector(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => void sockets.add(s.on('error', () => undefined)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => sockets.size,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('tracing off (no endpoint)', () => {
  it('records nothing and sends no trace context', () => {
    for (const endpoint of [undefined, '', '  ']) {
      const t = startTracing({ serviceName: 'voice-test', endpoint });
      expect(t.enabled).toBe(false);
      const span = t.tracer.startSpan('call');
      expect(span.isRecording()).toBe(false);
      expect(t.traceparent(trace.setSpan(context.active(), span))).toBeUndefined();
      expect(t.inject({ a: 'b' })).toEqual({ a: 'b' });
      span.end();
    }
  });
});

describe('tracing on', () => {
  let collector: Awaited<ReturnType<typeof silentCollector>>;
  beforeAll(async () => {
    collector = await silentCollector();
  });
  afterAll(async () => {
    await collector.close();
  });

  it('carries a span as a W3C traceparent and continues it from one; log lines in a span carry its trace id', async () => {
    const t = startTracing({ serviceName: 'voice-test', endpoint: collector.url, exportTimeoutMs: 200 });
    const span = t.tracer.startSpan('dial-out');
    const ctx = trace.setSpan(context.active(), span);
    const tp = t.traceparent(ctx)!;
    expect(tp).toMatch(new RegExp(TRACEPARENT_PATTERN));
    expect(tp).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    expect(t.inject({}, ctx)).toEqual({ traceparent: tp });

    const parent = trace.getSpanContext(t.extract(tp))!;
    expect(parent).toMatchObject({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, isRemote: true });
    const child = t.tracer.startSpan('call', {}, t.extract(tp));
    expect(child.spanContext().traceId).toBe(span.spanContext().traceId);
    expect(trace.getSpanContext(t.extract('00-not-a-trace'))).toBeUndefined();

    const lines: string[] = [];
    const logger = createLogger('worker', 'info', new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }));
    context.with(ctx, () => logger.info({ call_id: 'c1' }, 'in the span'));
    logger.info('outside');
    expect(JSON.parse(lines[0]!)).toMatchObject({ trace_id: span.spanContext().traceId, call_id: 'c1', msg: 'in the span' });
    expect(JSON.parse(lines[1]!)).not.toHaveProperty('trace_id');
    child.end();
    span.end();
    await t.shutdown();
  });

  it('a collector that never answers: the queue stays bounded, lost spans are counted by reason, one failure line per interval', async () => {
    const dropped: Record<SpanDropReason, number> = { queue_full: 0, export_failed: 0 };
    const warnings: Array<Record<string, unknown>> = [];
    const t = startTracing({ serviceName: 'voice-test', endpoint: collector.url, maxQueueSize: 16, exportTimeoutMs: 300, scheduledDelayMs: 50, warn: (fields) => warnings.push(fields) });
    t.onDropped((reason, n) => (dropped[reason] += n));
    const started = performance.now();
    // 16 fill the queue and go out as one batch at once; 16 more fill it again while that export hangs; 8 find it full.
    for (let i = 0; i < 40; i++) t.tracer.startSpan(`s${i}`).end();
    // Ending spans never waits for the collector.
    expect(performance.now() - started).toBeLessThan(200);
    expect(dropped.queue_full).toBe(8);
    await until(() => dropped.export_failed === 32, 'both batches to fail');
    expect(collector.connections()).toBeGreaterThan(0);
    // One line for all of it (the first drop opened the minute), naming the endpoint, never a span's content.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ dropped_spans: 1, reason: 'queue_full', endpoint: collector.url });
    await t.shutdown();
  });

  it('logs again once the interval has passed, with what was dropped meanwhile', async () => {
    const warnings: Array<Record<string, unknown>> = [];
    let dropped = 0;
    const t = startTracing({ serviceName: 'voice-test', endpoint: collector.url, maxQueueSize: 16, exportTimeoutMs: 200, scheduledDelayMs: 20, failureLogIntervalMs: 1000, warn: (fields) => warnings.push(fields) });
    t.onDropped((_r, n) => (dropped += n));
    t.tracer.startSpan('a').end();
    await until(() => dropped === 1, 'the first failure');
    expect(warnings).toEqual([expect.objectContaining({ dropped_spans: 1, reason: 'export_failed' })]);
    t.tracer.startSpan('b').end();
    await until(() => dropped === 2, 'the second failure');
    await new Promise((r) => setTimeout(r, 1000));
    t.tracer.startSpan('c').end();
    await until(() => dropped === 3, 'the third failure');
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatchObject({ dropped_spans: 2, reason: 'export_failed' });
    await t.shutdown();
  });
});
