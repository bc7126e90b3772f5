// Post-call analysis (docs/design.md §10) against real stores (the suite's FerretDB; a Redis of this file's own,
// flushed between tests), real HTTP receivers and a local OpenAI-compatible server: a scripted bot's call gets
// its fields from the matched intents' `sets`; a call without a caller turn is skipped; a bot that asks for
// nothing gets no analysis; two runners racing, a runner whose lease expires mid-job, a crash between the result
// and its event, and a Redis loss all end with one analysis and one call.analyzed per webhook (real dialler processes
// killed with SIGKILL: analysis-process.test.ts); the lease is ANALYSIS_LEASE_MS; include_transcript
// puts the transcript in call.ended and call.analyzed; an OpenAI-compatible bot is analysed with a json_schema
// response_format, retried 3 times with backoff, then failed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import type { BotCreate } from '@voice-platform/schemas';
import { adminToken, createBot, JWT_SECRET, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { calls, endingCalls, findCall } from '../calls/store.js';
import type { WebhookDeliverer } from '../webhooks/deliverer.js';
import { callEventId } from '../webhooks/outbox.js';
import { loadSettings, SettingsError } from '../core/settings.js';
import { ANALYSIS_DUE_KEY } from './jobs.js';
import { analysisSchema } from './openai.js';
import type { AnalysisRunner, AnalysisRunnerOptions } from './runner.js';

interface Got {
  id: string;
  type: string;
  data: Record<string, unknown>;
}
interface Receiver {
  url: string;
  got: Got[];
  close(): Promise<void>;
}
async function receiver(): Promise<Receiver> {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Got);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    got,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let env: TestEnv;
let h: Harness;
let auth: string;
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  env = await startTestEnv(['redis']); // the due set and the outbox stream are global: a Redis of our own
});
afterAll(() => env.stop());
beforeEach(async () => {
  const r = new Redis(env.env.REDIS_URL!);
  await r.flushall();
  r.disconnect();
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { WEBHOOK_ALLOW_PRIVATE: 'true', ANALYSIS_RETRY_DELAY_MS: '1000' } });
  auth = await adminToken(h);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await h?.close();
});

const worker = `Bearer ${WORKER_TOKEN}`;
const runner = (opts: AnalysisRunnerOptions = {}): AnalysisRunner => {
  const r = h.analysisRunner(opts);
  cleanups.push(() => r.stop());
  return r;
};
const deliverer = (): WebhookDeliverer => {
  const d = h.deliverer();
  cleanups.push(() => d.stop());
  return d;
};
const listen = async (): Promise<Receiver> => {
  const r = await receiver();
  cleanups.push(() => r.close());
  return r;
};
const hook = async (url: string, body: object = {}) =>
  (await h.http.post('/api/v1/webhooks').set('Authorization', auth).send({ url, events: ['call.ended', 'call.analyzed'], ...body }).expect(201)).body.id as string;

/** A debt collector's scripted bot: its intents set the analysis fields. */
const COLLECTOR: Partial<BotCreate> = {
  analysis: {
    summary: true,
    fields: [
      { name: 'outcome', type: 'enum', values: ['promised', 'refused', 'callback'], description: 'what the caller agreed to' },
      { name: 'amount', type: 'number' },
      { name: 'wants_callback', type: 'boolean' },
      { name: 'note', type: 'string' },
    ],
    success: 'The caller agreed: the promise intent matched.',
  },
  policy: {
    intents: [
      { name: 'promise', examples: ['I will pay forty dollars'], reply: 'Thank you.', sets: { outcome: 'promised', amount: 40 } },
      { name: 'callback', examples: ['call me back later'], reply: 'We will call you back.', sets: { outcome: 'callback', wants_callback: true } },
      { name: 'account', examples: [], dtmf: '42', reply: 'Account found.', sets: { note: 'account 42' } },
      { name: 'bye', examples: ['goodbye'], reply: 'Goodbye.', end_call: true },
    ],
    fallback: { reply: 'Sorry?' },
  },
};

/** A WebSocket call of `botId` the worker's way: created, answered, ended with `transcript`, its recording reported. */
async function call(botId: string, transcript: Array<{ role: 'user' | 'bot'; text: string; dtmf?: boolean }>, opts: { answered?: boolean } = {}): Promise<string> {
  const created = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201);
  const id = created.body.call_id as string;
  const at = (s: number) => new Date(h.clock.ms + s * 1000).toISOString();
  const event = (body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body).expect(200);
  if (opts.answered === false) {
    await event({ status: 'failed', end_reason: 'error', at: at(1) });
    return id;
  }
  await event({ status: 'in_progress', at: at(1) });
  await event({ status: 'completed', end_reason: 'caller_hangup', at: at(9), transcript: transcript.map((t, i) => ({ ...t, at: at(2 + i * 0.5) })) });
  await event({ status: 'completed', recording_key: `recordings/${id}.wav` });
  return id;
}
const analysisOf = async (id: string) => (await h.http.get(`/api/v1/calls/${id}`).set('Authorization', auth).expect(200)).body.analysis;
const analyzed = (r: Receiver, id: string) => r.got.filter((g) => g.type === 'call.analyzed' && g.data.call_id === id);

const SAID = [
  { role: 'bot' as const, text: 'Hello, this is Acme about your balance.' },
  { role: 'user' as const, text: 'call me back later' },
  { role: 'bot' as const, text: 'We will call you back.' },
  { role: 'user' as const, text: '42', dtmf: true },
  { role: 'bot' as const, text: 'Account found.' },
  { role: 'user' as const, text: 'actually I will pay forty dollars' },
  { role: 'bot' as const, text: 'Thank you.' },
];

describe('post-call analysis of scripted bots', () => {
  it("fills the fields from the matched intents' sets (a later intent wins), summarises, judges the criterion; call.analyzed goes to the webhooks", async () => {
    const r = await listen();
    await hook(r.url);
    const botId = await createBot(h, auth, COLLECTOR);
    const id = await call(botId, SAID);
    expect(await analysisOf(id)).toEqual({ status: 'pending', summary: null, data: null, success: null, error: null, completed_at: null });
    // Pending keeps the call in calls_ending (ended, not settled); listed in the due set.
    expect(await endingCalls(h.db).findOne({ _id: id })).not.toBeNull();
    expect(await h.redis.zscore(ANALYSIS_DUE_KEY, id)).not.toBeNull();

    const pass = await runner().runOnce();
    expect(pass.results).toEqual(['done']);
    const analysis = await analysisOf(id);
    expect(analysis).toEqual({
      status: 'done',
      summary: 'Intents: callback, account, promise. The caller said: "call me back later"; pressed 42; "actually I will pay forty dollars".',
      data: { outcome: 'promised', amount: 40, wants_callback: true, note: 'account 42' },
      success: true,
      error: null,
      completed_at: new Date(h.clock.ms).toISOString(),
    });
    // Settled: moved to calls, off the due set.
    expect(await endingCalls(h.db).findOne({ _id: id })).toBeNull();
    expect(await calls(h.db).findOne({ _id: id })).not.toBeNull();
    expect(await h.redis.zscore(ANALYSIS_DUE_KEY, id)).toBeNull();

    const d = deliverer();
    d.start();
    await waitUntil(() => analyzed(r, id).length === 1 && r.got.some((g) => g.type === 'call.ended'), { what: 'call.ended and call.analyzed', timeoutMs: 20_000 });
    const event = analyzed(r, id)[0]!;
    expect(event.id).toBe(callEventId(id, 'call.analyzed'));
    expect(event.data).toMatchObject({ call_id: id, bot_id: botId, status: 'completed', end_reason: 'caller_hangup', analysis });
    expect(event.data).not.toHaveProperty('transcript');
    expect(h.logs.join('')).toContain('call analysed');
  });

  it('a criterion naming no intent or field has no offline verdict (null); no intent matched reads so', async () => {
    const botId = await createBot(h, auth, { ...COLLECTOR, analysis: { ...COLLECTOR.analysis!, success: 'The caller sounded happy.' } });
    const id = await call(botId, [{ role: 'user', text: 'what is this about' }]);
    await runner().runOnce();
    expect(await analysisOf(id)).toMatchObject({
      status: 'done',
      summary: 'No intent matched. The caller said: "what is this about".',
      data: { outcome: null, amount: null, wants_callback: null, note: null },
      success: null,
    });
  });

  it('a call without a caller turn is skipped (also one never answered), with its call.analyzed; a bot asking for nothing gets no analysis', async () => {
    const r = await listen();
    await hook(r.url);
    const botId = await createBot(h, auth, COLLECTOR);
    const silent = await call(botId, [{ role: 'bot', text: 'Hello?' }]);
    const unanswered = await call(botId, [], { answered: false });
    const plain = await createBot(h, auth, { policy: COLLECTOR.policy && { ...COLLECTOR.policy, intents: COLLECTOR.policy.intents.map(({ sets: _s, ...i }) => i) } });
    const none = await call(plain, SAID);
    expect(await analysisOf(none)).toBeNull();
    expect(await h.redis.zscore(ANALYSIS_DUE_KEY, none)).toBeNull();
    expect(await calls(h.db).findOne({ _id: none })).not.toBeNull(); // settled at its end

    expect((await runner().runOnce()).results.sort()).toEqual(['skipped', 'skipped']);
    for (const id of [silent, unanswered]) {
      expect(await analysisOf(id)).toEqual({ status: 'skipped', summary: null, data: null, success: null, error: null, completed_at: new Date(h.clock.ms).toISOString() });
    }
    const d = deliverer();
    d.start();
    await waitUntil(() => analyzed(r, silent).length === 1 && analyzed(r, unanswered).length === 1, { what: 'both call.analyzed', timeoutMs: 20_000 });
    expect(analyzed(r, none)).toEqual([]);
  });
});

describe('one analysis and one call.analyzed per webhook, however runners race or die', () => {
  it('two runners racing, and a runner whose lease expires mid-job: one result, one delivery per webhook', async () => {
    const [plainHook, fullHook] = [await listen(), await listen()];
    await hook(plainHook.url);
    await hook(fullHook.url, { include_transcript: true });
    const botId = await createBot(h, auth, COLLECTOR);

    // Two runners at once: one takes the job, the other finds it leased.
    const a = await call(botId, SAID);
    const passes = await Promise.all([runner().runOnce(), runner().runOnce()]);
    expect(passes.flatMap((p) => p.results)).toEqual(['done']);

    // A runner held past its lease: another takes the job over and finishes it; the first one's result is dropped.
    const b = await call(botId, SAID);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atResult = new Promise<void>((resolve) => (reached = resolve));
    const slow = runner({ leaseMs: 300, beforeResult: async () => (reached(), held) });
    const slowPass = slow.runOnce();
    await atResult;
    await new Promise((resolve) => setTimeout(resolve, 400)); // its lease has expired
    // Due again once the lease is over (the attempt moved due_at past it): the clock moves on.
    h.clock.advance(400);
    const takeover = await runner().runOnce();
    expect(takeover.results).toEqual(['done']);
    release();
    expect((await slowPass).results).toEqual(['superseded']);
    const doc = await findCall(h.db, b);
    expect(doc!.analysis).toMatchObject({ status: 'done', data: { outcome: 'promised' } });
    expect(h.logs.join('')).toContain('call analysis finished elsewhere first; this result dropped');

    // A restarted runner finds nothing to do; the deliveries are one per call and webhook.
    expect((await runner().runOnce()).results).toEqual([]);
    const d = deliverer();
    d.start();
    await waitUntil(() => [a, b].every((id) => analyzed(plainHook, id).length === 1 && analyzed(fullHook, id).length === 1), { what: 'call.analyzed at both receivers', timeoutMs: 20_000 });
    await d.runOnce();
    for (const id of [a, b]) {
      expect(analyzed(plainHook, id)).toHaveLength(1);
      expect(analyzed(fullHook, id)).toHaveLength(1);
    }
  });

  it('include_transcript: call.ended and call.analyzed carry the transcript to that webhook only', async () => {
    const [plainHook, fullHook] = [await listen(), await listen()];
    await hook(plainHook.url);
    const fullId = await hook(fullHook.url, { include_transcript: true });
    expect((await h.http.get(`/api/v1/webhooks/${fullId}`).set('Authorization', auth).expect(200)).body.include_transcript).toBe(true);
    const botId = await createBot(h, auth, COLLECTOR);
    const id = await call(botId, SAID);
    await runner().runOnce();
    const d = deliverer();
    d.start();
    await waitUntil(() => [plainHook, fullHook].every((r) => r.got.length === 2), { what: 'call.ended and call.analyzed at both', timeoutMs: 20_000 });
    const transcript = (await h.http.get(`/api/v1/calls/${id}`).set('Authorization', auth).expect(200)).body.transcript;
    expect(transcript).toHaveLength(SAID.length);
    for (const g of fullHook.got) expect([g.type, g.data.transcript]).toEqual([g.type, transcript]);
    for (const g of plainHook.got) expect([g.type, 'transcript' in g.data]).toEqual([g.type, false]);
    // The same event (id) either way.
    expect(fullHook.got.map((g) => g.id).sort()).toEqual(plainHook.got.map((g) => g.id).sort());
    // Turned off: the next call's events come without it.
    await h.http.patch(`/api/v1/webhooks/${fullId}`).set('Authorization', auth).send({ include_transcript: false }).expect(200);
    const next = await call(botId, SAID);
    await runner().runOnce();
    await waitUntil(() => fullHook.got.filter((g) => g.data.call_id === next).length === 2, { what: 'the next call\'s events', timeoutMs: 20_000 });
    for (const g of fullHook.got.filter((x) => x.data.call_id === next)) expect('transcript' in g.data).toBe(false);
  });

  it('a crash between the result and its event: the deliverer sends call.analyzed once; the call settles', async () => {
    const r = await listen();
    await hook(r.url);
    const botId = await createBot(h, auth, COLLECTOR);
    const id = await call(botId, SAID);
    const crashing = runner({
      afterResultWrite: () => {
        throw new Error('killed');
      },
    });
    expect((await crashing.runOnce()).results).toEqual([]);
    const doc = await findCall(h.db, id);
    expect(doc!.analysis!.status).toBe('done');
    expect(doc!.webhook_due).toEqual(['call.analyzed']);
    expect(await endingCalls(h.db).findOne({ _id: id })).not.toBeNull(); // not settled while its event is due
    // Restarted: nothing to analyse again; the deliverer's scan for stranded events sends it.
    expect((await runner().runOnce()).results).toEqual([]);
    const d = deliverer();
    await d.runOnce();
    d.start();
    await waitUntil(() => analyzed(r, id).length === 1, { what: 'call.analyzed', timeoutMs: 20_000 });
    await waitUntil(async () => (await calls(h.db).findOne({ _id: id })) !== null && (await endingCalls(h.db).findOne({ _id: id })) === null, { what: 'the call settled', timeoutMs: 20_000 });
    expect(analyzed(r, id)).toHaveLength(1);
  });

  it("the lease: ANALYSIS_LEASE_MS, else ANALYSIS_TIMEOUT_MS + 30 s; never as short as an attempt", async () => {
    const settings = (env: Record<string, string>) => loadSettings({ JWT_SECRET, WORKER_AUTH_TOKEN: WORKER_TOKEN, ...env });
    expect(settings({}).ANALYSIS_LEASE_MS).toBeUndefined();
    expect(settings({ ANALYSIS_TIMEOUT_MS: '5000', ANALYSIS_LEASE_MS: '5001' }).ANALYSIS_LEASE_MS).toBe(5001);
    expect(() => settings({ ANALYSIS_TIMEOUT_MS: '5000', ANALYSIS_LEASE_MS: '5000' })).toThrow('ANALYSIS_LEASE_MS must be greater than ANALYSIS_TIMEOUT_MS (got 5000 <= 5000)');
    expect(() => settings({ ANALYSIS_LEASE_MS: '30000' })).toThrow(SettingsError); // the default attempt is 30 s
    const started = () => h.logs.filter((l) => l.includes('call analysis runner started')).at(-1);
    const r = runner();
    r.start();
    expect(started()).toContain(`"lease_ms":${30_000 + 30_000}`);
    await r.stop();
    await h.close();
    h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { ANALYSIS_LEASE_MS: '45000' } });
    const leased = runner();
    leased.start();
    expect(started()).toContain('"lease_ms":45000');
  });

  it('a Redis loss: the due set is rebuilt from the pending calls, and the job runs', async () => {
    const botId = await createBot(h, auth, COLLECTOR);
    const id = await call(botId, SAID);
    await h.redis.flushall();
    const pass = await runner().runOnce();
    expect(pass).toEqual({ recovered: 1, results: ['done'] });
    expect((await analysisOf(id)).status).toBe('done');
  });
});

describe('post-call analysis of OpenAI-compatible bots', () => {
  interface Chat {
    headers: http.IncomingHttpHeaders;
    body: any;
  }
  async function llm(answers: Array<number | object>): Promise<{ url: string; chats: Chat[] }> {
    const chats: Chat[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        chats.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        const a = answers.shift() ?? 500;
        if (typeof a === 'number') return void res.writeHead(a, { 'Content-Type': 'application/json' }).end('{"error":{"message":"nope, sk-secret"}}');
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify(a) } }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, chats };
  }
  const openaiBot = (baseUrl: string) =>
    createBot(h, auth, { llm: { provider: 'openai', model: 'local-model', temperature: 0.7, base_url: baseUrl }, analysis: { ...COLLECTOR.analysis!, success: 'The caller promised to pay.' } });
  const GOOD = { data: { outcome: 'promised', amount: 40, wants_callback: null, note: 'pays Friday' }, summary: 'The caller promised 40 dollars.', success: true };

  it('one chat completions request with a strict json_schema built from the fields; a bad answer or an error is retried with backoff', async () => {
    const server = await llm([500, { data: { outcome: 'maybe' }, summary: 'x', success: true }, GOOD]);
    const botId = await openaiBot(server.url);
    const id = await call(botId, SAID);
    const r = runner();
    expect((await r.runOnce()).results).toEqual(['retry']);
    expect(await analysisOf(id)).toMatchObject({ status: 'pending', error: 'chat completions: HTTP 500' });
    // Not due before its backoff (1 s, then 2 s).
    expect((await r.runOnce()).results).toEqual([]);
    h.clock.advance(1000);
    expect((await r.runOnce()).results).toEqual(['retry']);
    expect((await analysisOf(id)).error).toMatch(/^chat completions: the model's answer does not fit the schema/);
    h.clock.advance(1999);
    expect((await r.runOnce()).results).toEqual([]);
    h.clock.advance(1);
    expect((await r.runOnce()).results).toEqual(['done']);
    expect(await analysisOf(id)).toEqual({ status: 'done', ...GOOD, error: null, completed_at: new Date(h.clock.ms).toISOString() });

    expect(server.chats).toHaveLength(3);
    const { body, headers } = server.chats[0]!;
    expect(headers.authorization).toBeUndefined(); // the bot's own server never gets a key
    expect(body).toMatchObject({ model: 'local-model', temperature: 0, stream: false });
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'call_analysis',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            data: {
              type: 'object',
              description: expect.any(String),
              properties: {
                outcome: { type: ['string', 'null'], enum: ['promised', 'refused', 'callback', null], description: 'what the caller agreed to' },
                amount: { type: ['number', 'null'] },
                wants_callback: { type: ['boolean', 'null'] },
                note: { type: ['string', 'null'] },
              },
              required: ['outcome', 'amount', 'wants_callback', 'note'],
              additionalProperties: false,
            },
            summary: { type: 'string', description: expect.any(String) },
            success: { type: 'boolean', description: 'Whether the call met the success criterion: The caller promised to pay.' },
          },
          required: ['data', 'summary', 'success'],
          additionalProperties: false,
        },
      },
    });
    expect(body.response_format.json_schema.schema).toEqual(analysisSchema({ ...COLLECTOR.analysis!, success: 'The caller promised to pay.' } as never));
    expect(body.messages[0].role).toBe('system');
    expect(body.messages[1]).toEqual({ role: 'user', content: expect.stringContaining('Caller: call me back later\nBot: We will call you back.\nCaller (keypad): 42') });
  });

  it('fails after 4 attempts (3 retries) with the last error, and says so in call.analyzed; never the provider\'s words', async () => {
    const rcv = await listen();
    await hook(rcv.url);
    const server = await llm([500, 500, 503, 502]);
    const id = await call(await openaiBot(server.url), SAID);
    const r = runner();
    const results: string[] = [];
    for (let i = 0; i < 4; i++) {
      results.push(...(await r.runOnce()).results);
      h.clock.advance(10_000);
    }
    expect(results).toEqual(['retry', 'retry', 'retry', 'failed']);
    expect(server.chats).toHaveLength(4);
    const analysis = await analysisOf(id);
    expect(analysis).toMatchObject({ status: 'failed', summary: null, data: null, success: null, error: 'chat completions: HTTP 502' });
    const d = deliverer();
    d.start();
    await waitUntil(() => analyzed(rcv, id).length === 1, { what: 'call.analyzed (failed)', timeoutMs: 20_000 });
    expect(analyzed(rcv, id)[0]!.data.analysis).toEqual(analysis);
    expect(h.logs.join('')).not.toContain('sk-secret');
  });

  it('without its own base_url the bot is analysed at OPENAI_BASE_URL with OPENAI_API_KEY (never logged); without a key it fails at once', async () => {
    const server = await llm([{ summary: GOOD.summary }]);
    await h.close();
    h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-backend-key-0123' } });
    auth = await adminToken(h);
    const id = await call(await createBot(h, auth, { llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0 }, analysis: { summary: true, fields: [], success: null } }), SAID);
    expect((await runner().runOnce()).results).toEqual(['done']);
    expect(server.chats[0]!.headers.authorization).toBe('Bearer sk-backend-key-0123');
    expect(server.chats[0]!.body.response_format.json_schema.schema).toEqual({ type: 'object', properties: { summary: expect.any(Object) }, required: ['summary'], additionalProperties: false });
    expect(await analysisOf(id)).toMatchObject({ status: 'done', summary: GOOD.summary, data: {}, success: null });
    expect(h.logs.join('')).not.toContain('sk-backend-key-0123');

    await h.close();
    h = await startHarness({ redisUrl: env.env.REDIS_URL });
    auth = await adminToken(h);
    const keyless = await call(await createBot(h, auth, { llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0 }, analysis: { summary: true, fields: [], success: null } }), SAID);
    expect((await runner().runOnce()).results).toEqual(['failed']);
    expect((await analysisOf(keyless)).error).toBe('OPENAI_API_KEY is not set on the backend (or give the bot its own llm.base_url)');
  });
});
