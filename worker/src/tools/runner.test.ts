// The tool runner against a real local HTTP receiver.
import http from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { trace } from '@opentelemetry/api';
import { TRACEPARENT_PATTERN } from '@voice-platform/schemas';
import { startTracing } from '@voice-platform/schemas/node';
import { WorkerTracing } from '../core/tracing.js';
import { ToolRunner, MAX_RESULT_CHARS, type CallIdentity, type ToolConfig } from './runner.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver answering each request with `answer` (a test sets it); requests are kept. */
let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void;
const received: Received[] = [];
let server: http.Server;
let base: string;
/** Requests whose answer was held back (the timeout test), released at the end. */
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const r of held) r.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received.length = 0;
  answer = (_req, res) => json(res, 200, { recorded: true, reference: 'PTP-1042' });
});

const json = (res: http.ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
};

const SECRET = 'whsec_test_0123456789abcdef';
const call: CallIdentity = { call_id: 'c_1', bot_id: 'b_1', direction: 'outbound', to_number: '+15005550006', from_number: '+15550100000', variables: { customer_name: 'Ada' } };
const promise = (over: Partial<ToolConfig> = {}): ToolConfig => ({
  name: 'record_promise',
  description: 'Records a promise to pay',
  type: 'http',
  url: `${base}/promises?source=bot`,
  method: 'POST',
  headers: { Authorization: 'Bearer crm-token-secret' },
  timeout_ms: 2000,
  parameters: { type: 'object', properties: { amount: { type: 'number' }, date: { type: 'string' } }, required: ['amount'], additionalProperties: false },
  ...over,
});
const runner = (tools: ToolConfig[], opts: { secret?: string | null; allowPrivate?: boolean } = {}) =>
  new ToolRunner(tools, call, { secret: opts.secret === undefined ? SECRET : opts.secret, allowPrivate: opts.allowPrivate ?? true });

describe('HTTP tools', () => {
  it('POSTs the arguments and the call identity, signed with the tool secret; the JSON answer is the result', async () => {
    const r = runner([promise()]);
    const out = await r.run('record_promise', '{"amount": 40, "date": "2026-12-01"}');
    expect(out).toEqual({ ok: true, output: '{"recorded":true,"reference":"PTP-1042"}', value: { recorded: true, reference: 'PTP-1042' } });
    expect(received).toHaveLength(1);
    const req = received[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/promises?source=bot');
    expect(JSON.parse(req.body)).toEqual({ tool: 'record_promise', arguments: { amount: 40, date: '2026-12-01' }, call });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.authorization).toBe('Bearer crm-token-secret');
    expect(req.headers['x-voice-tool-call-id']).toMatch(/^tc_[0-9a-f]{24}$/);
    // The receiver's check, as a webhook receiver does it.
    const sig = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-voice-signature']))!;
    expect(sig).not.toBeNull();
    expect(Math.abs(Number(sig[1]) - Date.now() / 1000)).toBeLessThan(60);
    expect(sig[2]).toBe(createHmac('sha256', SECRET).update(`${sig[1]}.${req.body}`).digest('hex'));
    expect(r.actions).toEqual([
      {
        type: 'tool',
        name: 'record_promise',
        at: expect.any(String),
        duration_ms: expect.any(Number),
        status: 'ok',
        arguments: { amount: 40, date: '2026-12-01' },
        result: '{"recorded":true,"reference":"PTP-1042"}',
        error: null,
      },
    ]);
  });

  it('a bot without a tool secret sends no signature; its own headers never replace ours', async () => {
    const r = runner([promise({ headers: { 'X-Voice-Signature': 'forged', 'X-Api-Key': 'k' } })], { secret: null });
    expect((await r.run('record_promise', { amount: 1 })).ok).toBe(true);
    expect(received[0]!.headers['x-voice-signature']).toBeUndefined();
    expect(received[0]!.headers['x-api-key']).toBe('k');
  });

  it('GET sends the arguments as a query string and no body', async () => {
    const r = runner([promise({ method: 'GET', url: `${base}/orders`, parameters: undefined })]);
    expect((await r.run('record_promise', '{"order":"A 17","items":[1,2]}')).ok).toBe(true);
    expect(received[0]!.method).toBe('GET');
    expect(received[0]!.url).toBe('/orders?order=A+17&items=%5B1%2C2%5D');
    expect(received[0]!.body).toBe('');
  });

  it('arguments that fail the parameters schema are answered invalid_arguments; the URL is not called', async () => {
    const r = runner([promise()]);
    const out = await r.run('record_promise', '{"amount":"forty","extra":1}');
    expect(out.ok).toBe(false);
    const parsed = JSON.parse(out.output);
    expect(parsed.error).toBe('invalid_arguments');
    expect(parsed.details).toEqual(expect.arrayContaining([{ path: '/amount', message: 'must be number' }, { path: '', message: 'must NOT have additional properties' }]));
    expect(JSON.parse((await r.run('record_promise', '{"amount": 4')).output).error).toBe('invalid_arguments');
    expect(received).toHaveLength(0);
    expect(r.actions.map((a) => [a.status, a.error])).toEqual([
      ['failed', 'invalid_arguments'],
      ['failed', 'invalid_arguments'],
    ]);
  });

  it('a receiver slower than timeout_ms: {"error":"timeout"}', async () => {
    answer = (_req, res) => void held.push(res);
    const r = runner([promise({ timeout_ms: 500 })]);
    const started = performance.now();
    const out = await r.run('record_promise', { amount: 1 });
    expect(out).toEqual({ ok: false, output: '{"error":"timeout"}' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(490);
    expect(r.actions[0]).toMatchObject({ status: 'failed', error: 'timeout', result: null });
  });

  it('500 → http_500; a 302 is not followed → http_302; a body that is not JSON → bad_response', async () => {
    const r = runner([promise()]);
    answer = (_req, res) => json(res, 500, { message: 'down' });
    expect((await r.run('record_promise', { amount: 1 })).output).toBe('{"error":"http_500"}');
    answer = (_req, res) => res.writeHead(302, { Location: `${base}/elsewhere` }).end();
    expect((await r.run('record_promise', { amount: 1 })).output).toBe('{"error":"http_302"}');
    answer = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>ok</html>');
    expect((await r.run('record_promise', { amount: 1 })).output).toBe('{"error":"bad_response"}');
    expect(received.map((q) => q.url)).toEqual(['/promises?source=bot', '/promises?source=bot', '/promises?source=bot']);
  });

  it('a private address is refused unless allowed: no request is made', async () => {
    const r = runner([promise(), promise({ name: 'by_name', url: base.replace('127.0.0.1', 'localhost') })], { allowPrivate: false });
    expect((await r.run('record_promise', { amount: 1 })).output).toBe('{"error":"refused"}');
    expect((await r.run('by_name', { amount: 1 })).output).toBe('{"error":"refused"}');
    expect(received).toHaveLength(0);
    expect(r.actions.map((a) => a.error)).toEqual(['refused', 'refused']);
  });

  it('a result longer than 4000 characters is cut to 4000 for the model and 1000 for the record', async () => {
    answer = (_req, res) => json(res, 200, { notes: 'x'.repeat(10_000) });
    const r = runner([promise()]);
    const out = await r.run('record_promise', { amount: 1 });
    expect(out.ok).toBe(true);
    expect(out.output).toHaveLength(MAX_RESULT_CHARS);
    expect(out.output.startsWith('{"notes":"xxx')).toBe(true);
    expect(r.actions[0]!.result).toHaveLength(1000);
  });

  it('unknown tools and tools that do not run here answer an error', async () => {
    const r = runner([{ name: 'legacy', description: 'stored before tool types' }]);
    expect((await r.run('nope', '{}')).output).toBe('{"error":"unknown_tool"}');
    expect((await r.run('legacy', '{}')).output).toBe('{"error":"not_runnable"}');
    expect(r.specs).toEqual([{ name: 'legacy', description: 'stored before tool types', parameters: { type: 'object', properties: {} } }]);
  });

  it('send_dtmf presses keys through the call (keys checked first) and is recorded as dtmf_out', async () => {
    const pressed: string[] = [];
    const keypad = async (digits: string) => void pressed.push(digits);
    const r = new ToolRunner([{ name: 'press', type: 'send_dtmf' }], call, { secret: null, allowPrivate: true, keypad });
    expect(r.specs[0]!.parameters).toMatchObject({ required: ['digits'] });
    expect((await r.run('press', '{"digits":"12#"}')).output).toBe('{"ok":true,"sent":"12#"}');
    expect(JSON.parse((await r.run('press', '{"digits":"12a"}')).output)).toMatchObject({ error: 'invalid_arguments' });
    expect(JSON.parse((await r.run('press', '{}')).output)).toMatchObject({ error: 'invalid_arguments' });
    expect(pressed).toEqual(['12#']);
    expect(r.actions.map((a) => [a.type, a.name, a.status, a.arguments, a.error])).toEqual([
      ['dtmf_out', 'press', 'ok', { digits: '12#' }, null],
      ['dtmf_out', 'press', 'failed', { digits: '12a' }, 'invalid_arguments'],
      ['dtmf_out', 'press', 'failed', {}, 'invalid_arguments'],
    ]);
    // Without a keypad (no call to press them on) the tool does not run.
    expect(JSON.parse((await new ToolRunner([{ name: 'press', type: 'send_dtmf' }], call, { secret: null, allowPrivate: true }).run('press', '{"digits":"1"}')).output)).toEqual({ error: 'not_runnable' });
  });
});

describe('tool requests in the call\'s trace (docs/design.md §16)', () => {
  it("send the traceparent of a `tool` span that is a child of the call's span; none without tracing", async () => {
    // A collector nobody listens on: the spans are dropped, the request is untouched.
    const tracing = new WorkerTracing(startTracing({ serviceName: 'voice-worker', endpoint: 'http://127.0.0.1:9', exportTimeoutMs: 200 }));
    const r = new ToolRunner([promise()], call, { secret: SECRET, allowPrivate: true, tracing });
    let callSpan: { traceId: string; spanId: string } | null = null;
    await tracing.call({ call_id: call.call_id, bot_id: call.bot_id, direction: 'outbound' }, async () => {
      callSpan = trace.getActiveSpan()!.spanContext();
      expect((await r.run('record_promise', '{"amount": 40}')).ok).toBe(true);
    });
    const tp = received[0]!.headers.traceparent as string;
    expect(tp).toMatch(new RegExp(TRACEPARENT_PATTERN));
    const [, traceId, spanId] = tp.split('-');
    expect(traceId).toBe(callSpan!.traceId);
    // The request's own span (the tool span), not the call's.
    expect(spanId).not.toBe(callSpan!.spanId);
    // A bot's own header of that name never replaces it.
    received.length = 0;
    const spoofed = new ToolRunner([promise({ headers: { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` } })], call, { secret: SECRET, allowPrivate: true });
    expect((await spoofed.run('record_promise', '{"amount": 40}')).ok).toBe(true);
    expect(received[0]!.headers.traceparent).toBeUndefined();
    await tracing.shutdown();
  });
});
