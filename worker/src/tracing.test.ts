// OpenTelemetry end to end (docs/design.md §16): a dial-out to the suite's test phone through a backend and a
// worker that export to a real Jaeger (tests/infra startJaeger) is ONE trace, found by its call id, with the
// backend's dial-out request span, the worker's call span under it, a turn span with its stage spans, and the
// worker's requests to the backend continued by the backend; the call's log lines carry that trace id. And a
// collector that accepts connections and never answers leaves calls untouched: the spans are dropped, counted
// in voice_worker_trace_spans_dropped_total, and the failure is logged once.
import net from 'node:net';
import path from 'node:path';
import { dispose } from '@livekit/rtc-node';
import { answeringNumber, findTraces, freePort, repoRoot, startJaeger, startProcess, waitUntil, type FoundSpan, type FoundTrace, type JaegerHandle, type ManagedProcess } from '@voice-platform/tests/infra';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { callUntil, createApiKey, createPolicyBot, ensureTrunk, workerToken } from '../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';

const root = path.resolve(new URL('.', import.meta.url).pathname, '../..');

let jaeger: JaegerHandle;
let backend: ManagedProcess;
let suiteBackendUrl: string;
let apiKey: string;
let botId: string;

/** A backend process of its own that exports to `otlpUrl`, on the suite's stores (the suite's one exports nowhere). */
async function startTracedBackend(otlpUrl: string): Promise<{ proc: ManagedProcess; url: string }> {
  const port = await freePort();
  const proc = startProcess('backend-traced', process.execPath, [path.join(root, 'backend/dist/main.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      ROLES: 'api',
      MONGODB_DB: 'worker_tests',
      JWT_SECRET: 'tracing-test-jwt-secret-0123456789abcdef-0123',
      WORKER_AUTH_TOKEN: workerToken(),
      LOG_LEVEL: 'info',
      DIALOUT_RATE_PER_SECOND: '100',
      DIALOUT_BURST: '100',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
    },
    logFile: path.join(process.env.VP_TEST_DIR!, `backend-traced-${port}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/health`)).status === 200, { what: 'the traced backend', proc });
  return { proc, url };
}

async function dialout(baseUrl: string, to: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/sip/dialout`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ bot_id: botId, to_number: to, variables: { customer_name: 'Sam' } }),
  });
  const body = (await res.json()) as { call_id: string };
  if (res.status !== 201) throw new Error(`dial-out failed: ${res.status} ${JSON.stringify(body)}`);
  return body.call_id;
}

/** A worker metric's value from its /metrics (0 when absent). */
async function metric(w: TestWorker, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${w.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  suiteBackendUrl = process.env.VP_BACKEND_URL!;
  jaeger = await startJaeger();
  const traced = await startTracedBackend(jaeger.otlpHttpUrl);
  backend = traced.proc;
  // The suite's helpers (admin, keys, bots, the worker's SERVICE_CONFIG_URL) reach the traced backend from here on.
  process.env.VP_BACKEND_URL = traced.url;
  apiKey = await createApiKey();
  await ensureTrunk();
  botId = await createPolicyBot({ name: 'traced reminder', greeting: 'Hello {{customer_name}}, this is your payment reminder.', turn_detection: { end_of_turn_silence_ms: 600 }, max_call_seconds: 90 });
});
afterAll(async () => {
  process.env.VP_BACKEND_URL = suiteBackendUrl;
  await backend?.stop();
  await jaeger?.stop();
  await dispose();
});

describe('a traced dial-out', () => {
  let w: TestWorker;
  afterAll(async () => {
    await w?.stop();
  });

  it('is one trace from the dial-out request through the call, its turn and stages, and the worker → backend requests; its logs carry the trace id', async () => {
    w = await startWorker(telephonyEnv({ RINGING_TIMEOUT_SECONDS: '6', OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttpUrl }));
    const callId = await dialout(process.env.VP_BACKEND_URL!, answeringNumber());
    const call = await callUntil(callId, (c) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(call.turns).toHaveLength(1);

    // Every part has exported its spans of the call (the worker's call span ends once its events are handed over).
    const need = (t: FoundTrace) => {
      const names = (service: string) => t.spans.filter((s) => s.service === service).map((s) => s.name);
      return ['call', 'turn', 'stt', 'llm', 'tts'].every((n) => names('voice-worker').includes(n)) && names('voice-backend').includes('POST /api/v1/sip/dialout') && names('voice-backend').includes('POST /api/v1/calls/:id/events');
    };
    let traces: FoundTrace[] = [];
    await waitUntil(
      async () => {
        traces = await findTraces(jaeger.queryUrl, { service: 'voice-worker', tags: { 'call.id': callId } });
        return traces.length === 1 && need(traces[0]!);
      },
      { what: "the call's trace in Jaeger, whole", timeoutMs: 30_000 },
    );
    // The backend's look-up by the call id finds that trace too; its others are the test's reads of the call
    // (GET /api/v1/calls/{id} polled above: requests of their own, each its own one-span trace).
    const fromBackend = await findTraces(jaeger.queryUrl, { service: 'voice-backend', tags: { 'call.id': callId }, limit: 100 });
    expect(fromBackend.map((t) => t.traceId)).toContain(traces[0]!.traceId);
    for (const t of fromBackend.filter((x) => x.traceId !== traces[0]!.traceId)) expect(t.spans.map((s) => [s.service, s.name])).toEqual([['voice-backend', 'GET /api/v1/calls/:id']]);

    const { traceId, spans } = traces[0]!;
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const one = (service: string, name: string): FoundSpan => {
      const found = spans.filter((s) => s.service === service && s.name === name);
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    // The dial-out request is the root; the worker's call span is its child (the job's traceparent).
    const request = one('voice-backend', 'POST /api/v1/sip/dialout');
    expect(request.parentSpanId).toBeNull();
    expect(request.attributes).toMatchObject({ 'call.id': callId, 'bot.id': botId, 'http.response.status_code': 201 });
    const callSpan = one('voice-worker', 'call');
    expect(callSpan.parentSpanId).toBe(request.spanId);
    expect(callSpan.attributes).toMatchObject({ 'call.id': callId, 'bot.id': botId, 'call.direction': 'outbound' });
    // The turn under the call, its stages under it in order, inside the turn, summing to the record's stage times.
    const turn = one('voice-worker', 'turn');
    expect(turn.parentSpanId).toBe(callSpan.spanId);
    expect(turn.attributes).toMatchObject({ 'call.id': callId, 'turn.index': 1, 'turn.latency_ms': call.turns![0]!.latency_ms });
    const stages = ['stt', 'llm', 'tts'].map((n) => one('voice-worker', n));
    for (const s of stages) expect(s.parentSpanId).toBe(turn.spanId);
    for (let i = 1; i < stages.length; i++) expect(stages[i]!.startUs).toBeGreaterThanOrEqual(stages[i - 1]!.startUs + stages[i - 1]!.durationUs);
    expect(Date.parse(call.turns![0]!.user_end_at) * 1000).toBe(turn.startUs);
    expect(stages.at(-1)!.startUs + stages.at(-1)!.durationUs).toBeLessThanOrEqual(turn.startUs + turn.durationUs);
    // The worker's requests to the backend are client spans of the call, each continued by a backend server span.
    const clientSpans = spans.filter((s) => s.service === 'voice-worker' && s.name.startsWith('backend '));
    expect(clientSpans.length).toBeGreaterThanOrEqual(2);
    for (const c of clientSpans) expect(c.parentSpanId).toBe(callSpan.spanId);
    const events = spans.filter((s) => s.service === 'voice-backend' && s.name === 'POST /api/v1/calls/:id/events');
    expect(events.length).toBeGreaterThanOrEqual(1);
    for (const e of events) {
      expect(byId.get(e.parentSpanId!)?.name).toBe('backend POST');
      expect(e.attributes['call.id']).toBe(callId);
    }
    const config = one('voice-backend', 'GET /api/v1/config');
    expect(byId.get(config.parentSpanId!)).toMatchObject({ service: 'voice-worker', name: 'backend GET' });
    // One trace, every span of it.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
    // Its outline (service, span, offset from the request, duration), kept for the README's example.
    const outline: string[] = [];
    const walk = (s: FoundSpan, depth: number) => {
      outline.push(`${'  '.repeat(depth)}${s.service.padEnd(14)} ${s.name.padEnd(34 - 2 * depth)} +${String(Math.round((s.startUs - request.startUs) / 1000)).padStart(5)} ms ${String(Math.round(s.durationUs / 1000)).padStart(6)} ms`);
      for (const c of spans.filter((x) => x.parentSpanId === s.spanId).sort((a, b) => a.startUs - b.startUs)) walk(c, depth + 1);
    };
    walk(request, 0);
    mkdirSync(path.join(repoRoot, 'test-artifacts', 'tracing'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'test-artifacts', 'tracing', 'dialout-trace.txt'), `trace ${traceId} (call ${callId})\n${outline.join('\n')}\n`);

    // The call's log lines lead to the trace: the worker's and the backend's.
    const workerLines = jsonLines(w.logs.join('')).filter((l) => l.call_id === callId);
    expect(workerLines.length).toBeGreaterThan(0);
    expect(workerLines.some((l) => l.trace_id === traceId)).toBe(true);
    expect(workerLines.every((l) => l.trace_id === undefined || l.trace_id === traceId)).toBe(true);
    const queued = jsonLines(readFileSync(backend.logFile, 'utf8')).find((l) => l.call_id === callId && l.msg === 'call queued');
    expect(queued).toMatchObject({ trace_id: traceId });
  });
});

describe('a collector that never answers', () => {
  let w: TestWorker;
  let silent: net.Server;
  const sockets = new Set<net.Socket>();
  afterAll(async () => {
    await w?.stop();
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent?.close(r));
  });

  it('leaves the call untouched: its spans are dropped and counted, and the failure is logged once', async () => {
    // Accepts every connection and never says a word.
    silent = net.createServer((s) => void sockets.add(s.on('error', () => undefined)));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    w = await startWorker(telephonyEnv({ RINGING_TIMEOUT_SECONDS: '6', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: '500', OTEL_BSP_MAX_QUEUE_SIZE: '16' }));
    expect(await metric(w, 'voice_worker_trace_spans_dropped_total', 'reason="export_failed"')).toBe(0);
    const started = Date.now();
    const callId = await dialout(process.env.VP_BACKEND_URL!, answeringNumber());
    const call = await callUntil(callId, (c) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup', recording_error: null });
    expect(call.turns).toHaveLength(1);
    // The call took no longer than an untraced one does (the phone speaks at 5 s; the collector's 500 ms timeouts are not in it).
    expect(Date.now() - started).toBeLessThan(30_000);
    await waitUntil(async () => (await metric(w, 'voice_worker_trace_spans_dropped_total', 'reason="export_failed"')) >= 5, { what: 'the call’s spans counted as dropped', timeoutMs: 15_000 });
    const failures = jsonLines(w.logs.join('')).filter((l) => l.msg === 'trace export failing: spans dropped (calls are unaffected)');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ level: 'warn', reason: 'export_failed', endpoint: `http://127.0.0.1:${port}` });
    expect(failures[0]!.dropped_spans).toBeGreaterThan(0);
    // The collector was tried (the part did export), and nothing it held back touched the worker's health.
    expect(sockets.size).toBeGreaterThan(0);
    expect((await fetch(`${w.url}/health`)).status).toBe(200);
  });
});
