// Bot tests with an OpenAI-compatible bot (docs/design.md §17) on real services: the suite's backend (API and
// webhook deliverer), a worker, a dialler process of its own running the tests (ROLES=dialler,
// TEST_RUNNER_WORKER_URL: this worker), and the OpenAI stand-in (testing/cloud.ts) as the bot's LLM (its
// llm.base_url), which is also the judge's and the persona caller's LLM. A real HTTP receiver gets the signed
// `test_run.completed` webhook.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { dispose } from '@livekit/rtc-node';
import { freePort, repoRoot, startProcess, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { admin, createBot, workerToken } from '../testing/backend.js';
import { startCloudStandIn, type ChatRequest, type CloudStandIn } from '../testing/cloud.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';

// The suite backend's (jest.global-setup.js): the dialler shares its database and secrets.
const JWT_SECRET = 'worker-suite-jwt-secret-0123456789abcdef-0123';
const GREETING = 'Hello, this is the test line.';
const GOODBYE = 'Thank you for calling. Goodbye.';

interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

let w: TestWorker;
let cloud: CloudStandIn;
let dialler: ManagedProcess;
let receiver: http.Server;
let receiverUrl = '';
const got: Delivery[] = [];
let hookId: string | null = null;

/** A receiver's check of `X-Voice-Signature` (`t=<unix s>,v1=<hex HMAC-SHA256 of "t.body">`), as the README says. */
function verify(secret: string, header: string | undefined, raw: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  return timingSafeEqual(createHmac('sha256', secret).update(`${m[1]}.${raw}`).digest(), Buffer.from(m[2]!, 'hex'));
}

beforeAll(async () => {
  cloud = await startCloudStandIn();
  // With telephony: a `sip` case's dial-out goes through livekit-sip to the dialler's simulated phone.
  w = await startWorker(telephonyEnv());
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      got.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/tests`;
  const port = await freePort();
  const env = { ...process.env, MONGODB_DB: 'worker_tests', JWT_SECRET, WORKER_AUTH_TOKEN: workerToken(), LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE: 'true' };
  dialler = startProcess('test-dialler-llm', process.execPath, [path.join(repoRoot, 'backend/dist/main.js')], {
    env: { ...env, PORT: String(port), ROLES: 'dialler', TEST_RUNNER_WORKER_URL: w.url, TEST_RUNNER_POLL_INTERVAL_MS: '200', TEST_PHONE_SIP_ADDRESS: `127.0.0.1:${await freePort()}` },
    logFile: path.join(process.env.VP_TEST_DIR!, 'test-dialler-llm.log'),
  });
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.ok === true || (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200, { what: 'dialler', proc: dialler });
});
afterAll(async () => {
  // Other files' runs in the suite's database must not be sent to a receiver that is gone.
  if (hookId) await admin('DELETE', `/api/v1/webhooks/${hookId}`);
  await dialler?.stop(2000);
  await w?.stop();
  await dispose(); // the telephony worker's rtc-node runtime, or jest does not exit
  await cloud?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

/** The bot's own turns (streamed): the greeting is spoken by the worker; the first reply ends the call. */
const botTurns = (req: ChatRequest) => (req.stream ? { text: GOODBYE, endCall: true } : undefined);
const judgeRequests = () => cloud.chats.filter((c) => c.responseFormat?.type === 'json_schema');

async function runUntilDone(botId: string, body: object): Promise<any> {
  const started = await admin('POST', `/api/v1/bots/${botId}/test-runs`, body);
  expect(started.status).toBe(202);
  let run: any;
  await waitUntil(async () => {
    run = (await admin('GET', `/api/v1/bots/${botId}/test-runs/${started.body.id}`)).body;
    return run.status === 'done';
  }, { what: 'the run done', timeoutMs: 120_000 });
  return run;
}

const runsSeen: string[] = [];

describe('the LLM judge (expect.judge)', () => {
  it("the bot's LLM grades each call's transcript against the criterion: a met criterion passes, an unmet one fails with the judge's reason", async () => {
    const botId = await createBot({ name: 'judged bot', greeting: GREETING, llm: { provider: 'openai', model: 'local-model', temperature: 0.4, base_url: `${cloud.url}/v1` } });
    cloud.chatReplyFor = botTurns;
    // The judge answers from the criterion it was asked about (the analysis request's system message).
    cloud.structuredReplyFor = (req) => {
      const system = String(req.messages[0]?.content ?? '');
      if (system.includes('The bot said goodbye politely.')) return { summary: 'The bot thanked the caller and said goodbye.', success: true };
      if (system.includes('The bot offered a refund.')) return { summary: 'The bot never mentioned a refund.', success: false };
      return undefined;
    };
    const base = { transport: 'ws', caller: { script: [{ say: 'hello there', wait_for_bot: true }] } };
    const polite = await admin('POST', `/api/v1/bots/${botId}/tests`, { ...base, name: 'polite', expect: { end_reason: 'bot_hangup', judge: 'The bot said goodbye politely.' } });
    const refund = await admin('POST', `/api/v1/bots/${botId}/tests`, { ...base, name: 'refund', expect: { judge: 'The bot offered a refund.' } });
    expect([polite.status, refund.status]).toEqual([201, 201]);

    const run = await runUntilDone(botId, { cases: [polite.body.id, refund.body.id], concurrency: 2 });
    runsSeen.push(run.id);
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 1 });
    expect(run.cases.map((c: any) => [c.name, c.passed, c.failures])).toEqual([
      ['polite', true, []],
      ['refund', false, [{ expectation: 'judge', detail: 'The bot never mentioned a refund.' }]],
    ]);

    // One judge request per case, through the analysis request: temperature 0, the criterion as `success`, the
    // call's transcript (the bot's greeting and goodbye) in the user message.
    const judged = judgeRequests();
    expect(judged).toHaveLength(2);
    for (const req of judged) {
      expect(req).toMatchObject({ stream: false, temperature: 0, tools: [] });
      expect(req.responseFormat.json_schema.schema.required).toEqual(['summary', 'success']);
      expect(req.messages[1].content).toContain(`Bot: ${GREETING}`);
      expect(req.messages[1].content).toContain('Bot: Thank you for calling.'); // the goodbye, a line a sentence
    }
    expect(judged.map((r) => /criterion: (.*)$/m.exec(r.messages[0].content)?.[1]).sort()).toEqual(['The bot offered a refund.', 'The bot said goodbye politely.']);
    cloud.reset();
  });
});

describe('the test_run.completed webhook', () => {
  it('a receiver subscribed to it gets the run, signed, once the last case has its result', async () => {
    const hook = await admin('POST', '/api/v1/webhooks', { url: receiverUrl, events: ['test_run.completed'] });
    expect(hook.status).toBe(201);
    hookId = hook.body.id;
    const botId = await createBot({ name: 'webhook test bot', greeting: GREETING, llm: { provider: 'openai', model: 'local-model', temperature: 0.4, base_url: `${cloud.url}/v1` } });
    cloud.chatReplyFor = botTurns;
    const made = await admin('POST', `/api/v1/bots/${botId}/tests`, { name: 'hangs up', transport: 'ws', caller: { script: [{ say: 'hello there', wait_for_bot: true }] }, expect: { end_reason: 'bot_hangup' } });
    expect(made.status).toBe(201);

    const run = await runUntilDone(botId, {});
    runsSeen.push(run.id);
    await waitUntil(() => got.some((d) => d.body.data.id === run.id), { what: 'test_run.completed at the receiver', timeoutMs: 30_000 });
    const delivery = got.find((d) => d.body.data.id === run.id)!;
    expect(delivery.body).toEqual({ id: `evt_test_run_${run.id}`, type: 'test_run.completed', created_at: expect.any(String), data: run });
    expect(delivery.body.data).toMatchObject({ id: run.id, bot_id: botId, version: 1, status: 'done', passed: 1, failed: 0 });
    expect(delivery.headers['x-voice-event-id']).toBe(`evt_test_run_${run.id}`);
    expect(verify(hook.body.secret, delivery.headers['x-voice-signature'] as string, delivery.raw)).toBe(true);
    cloud.reset();
  });
});

describe('persona callers (caller.persona)', () => {
  const llm = () => ({ provider: 'openai' as const, model: 'local-model', temperature: 0.4, base_url: `${cloud.url}/v1` });
  const personaRequests = () => cloud.chats.filter((c) => !c.stream && c.responseFormat === null);
  const persona = { prompt: 'You are Sam, a calm customer who owes fifty dollars.', goal: 'Promise to pay fifty dollars on Friday.' };
  /** The persona's lines, in order: what the stand-in answers each persona request. */
  const LINES = ['I would like to pay my bill', 'fifty dollars on friday', 'is that all'];
  const personaTurns = (req: ChatRequest) => ({ text: LINES[req.messages.filter((m: any) => m.role === 'assistant').length] ?? 'bye' });
  /** The persona's lines, and the bot: it asks for the amount after the caller's first line, says goodbye and hangs up after the second. */
  const askThenHangUp = (req: ChatRequest) => {
    if (!req.stream) return personaTurns(req);
    const heard = req.messages.filter((m: any) => m.role === 'user').length;
    return heard < 2 ? { text: 'How much would you like to pay?' } : { text: 'Noted, thank you. Goodbye.', endCall: true };
  };

  it("is refused at save for a bot without an OpenAI-compatible LLM (the persona's LLM is the bot's)", async () => {
    const botId = await createBot({ name: 'scripted llm bot', greeting: GREETING });
    const res = await admin('POST', `/api/v1/bots/${botId}/tests`, { name: 'persona', transport: 'ws', caller: { persona }, expect: {} });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'caller.persona', message: expect.stringContaining('OpenAI-compatible') }] });
    expect((await admin('GET', `/api/v1/bots/${botId}/tests`)).body.items).toEqual([]);
  });

  it("the bot's LLM plays the caller toward its goal from what the bot said, each line spoken; the call ends when the bot hangs up", async () => {
    const botId = await createBot({ name: 'persona bot', greeting: GREETING, llm: llm() });
    cloud.chatReplyFor = askThenHangUp;
    const made = await admin('POST', `/api/v1/bots/${botId}/tests`, { name: 'pays', transport: 'ws', caller: { persona: { ...persona, max_turns: 5 } }, expect: { end_reason: 'bot_hangup', said: ['how much', 'goodbye'] } });
    expect(made.status).toBe(201);
    expect(made.body.caller).toEqual({ persona: { ...persona, max_turns: 5 } });

    const run = await runUntilDone(botId, {});
    runsSeen.push(run.id);
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 0 });
    expect(run.cases[0]).toMatchObject({ name: 'pays', passed: true, failures: [] });

    // Two persona lines (the bot hung up before a third was asked for), each asked with what the bot said so far.
    const asked = personaRequests();
    expect(asked).toHaveLength(2);
    expect(asked[0]!.messages[0]).toEqual({ role: 'system', content: expect.stringContaining(persona.prompt) });
    expect(asked[0]!.messages[0].content).toContain(`Your goal in this call: ${persona.goal}`);
    expect(asked[0]!.messages.slice(1)).toEqual([{ role: 'user', content: GREETING }]);
    expect(asked[1]!.messages.slice(1)).toEqual([
      { role: 'user', content: GREETING },
      { role: 'assistant', content: LINES[0] },
      { role: 'user', content: 'How much would you like to pay?' },
    ]);
    expect(asked.every((r) => r.tools.length === 0)).toBe(true);
    // The worker heard two caller turns (its recogniser's words, not the persona's exact text) and the bot hung up.
    const call = (await admin('GET', `/api/v1/calls/${run.cases[0].call_id}`)).body;
    expect(call.end_reason).toBe('bot_hangup');
    expect(call.transcript.filter((t: any) => t.role === 'user').length).toBeGreaterThanOrEqual(2);
    cloud.reset();
  });

  it("on the phone (sip): the persona reads the bot's words from the call's room (joined hidden) and speaks over the simulated phone", async () => {
    const botId = await createBot({ name: 'persona phone bot', greeting: GREETING, llm: llm() });
    cloud.chatReplyFor = askThenHangUp;
    const made = await admin('POST', `/api/v1/bots/${botId}/tests`, { name: 'pays by phone', transport: 'sip', caller: { persona: { ...persona, max_turns: 5 } }, expect: { end_reason: 'bot_hangup', said: ['how much', 'goodbye'] } });
    expect(made.status).toBe(201);

    const run = await runUntilDone(botId, {});
    runsSeen.push(run.id);
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 0 });
    const asked = personaRequests();
    expect(asked).toHaveLength(2);
    expect(asked[0]!.messages.slice(1)).toEqual([{ role: 'user', content: GREETING }]);
    expect(asked[1]!.messages.slice(1)).toEqual([
      { role: 'user', content: GREETING },
      { role: 'assistant', content: LINES[0] },
      { role: 'user', content: 'How much would you like to pay?' },
    ]);
    const call = (await admin('GET', `/api/v1/calls/${run.cases[0].call_id}`)).body;
    expect(call).toMatchObject({ direction: 'outbound', end_reason: 'bot_hangup', from_number: '+15550100999' });
    cloud.reset();
  });

  it('a bot that never hangs up: the persona says max_turns lines, hears the answer and hangs up itself', async () => {
    const botId = await createBot({ name: 'endless bot', greeting: GREETING, llm: llm() });
    cloud.chatReplyFor = (req) => (req.stream ? { text: 'Anything else?' } : personaTurns(req));
    const made = await admin('POST', `/api/v1/bots/${botId}/tests`, { name: 'two lines', transport: 'ws', caller: { persona: { ...persona, max_turns: 2 } }, expect: { end_reason: 'bot_hangup' } });
    expect(made.status).toBe(201);

    const run = await runUntilDone(botId, {});
    runsSeen.push(run.id);
    expect(run).toMatchObject({ status: 'done', passed: 0, failed: 1 });
    expect(run.cases[0].failures).toEqual([{ expectation: 'end_reason', detail: 'expected bot_hangup, the call ended with caller_hangup' }]);
    expect(personaRequests()).toHaveLength(2);
    cloud.reset();
  });

  it("a persona whose LLM fails: the case fails naming the caller and the LLM's status, never its answer", async () => {
    const botId = await createBot({ name: 'persona bot 500', greeting: GREETING, llm: llm() });
    cloud.chatReplyFor = (req) => (req.stream ? { text: 'Anything else?' } : undefined);
    cloud.faults = ['http_500']; // the first request: the persona's first line (the greeting needs no LLM)
    const made = await admin('POST', `/api/v1/bots/${botId}/tests`, { name: 'llm down', transport: 'ws', caller: { persona }, expect: {} });
    const run = await runUntilDone(botId, { cases: [made.body.id] });
    runsSeen.push(run.id);
    expect(run.cases[0]).toMatchObject({ passed: false, failures: [{ expectation: 'caller', detail: "the persona's LLM failed: HTTP 500" }] });
    expect(run.cases[0].call_id).toEqual(expect.any(String));
    cloud.reset();
  });
});

describe('afterwards', () => {
  // Each run's event is awaited (the last run's may still be on its way); runs later in this file kept the dialler
  // passing for many more seconds after the earlier ones: a duplicate of those would have come by now.
  it('each run came to the receiver exactly once, and only test_run.completed (the one event subscribed to)', async () => {
    const completed = runsSeen.slice(1); // the judge's run finished before the webhook existed
    expect(completed.length).toBeGreaterThan(0);
    await waitUntil(async () => completed.every((id) => got.some((d) => d.body.data.id === id)), { what: 'every run delivered', timeoutMs: 30_000 });
    for (const id of completed) expect(got.filter((d) => d.body.data.id === id)).toHaveLength(1);
    expect(new Set(got.map((d) => d.body.type))).toEqual(new Set(['test_run.completed']));
  });
});
