// Post-call analysis end to end (docs/design.md §10): the suite's real backend (all roles: its dialler runs the
// analysis) and a worker; an OpenAI-compatible bot whose llm.base_url is the OpenAI stand-in (testing/cloud.ts).
// A WebSocket call ends; the dialler asks the stand-in once, with a strict json_schema response_format built from
// the bot's analysis fields, and the call record gets the stand-in's structured answer.
import type { Call } from '@voice-platform/schemas';
import { callUntil, createBot } from '../testing/backend.js';
import { startCall } from '../testing/client.js';
import { startCloudStandIn, type CloudStandIn } from '../testing/cloud.js';
import { startWorker, type TestWorker } from '../testing/worker.js';

let w: TestWorker;
let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
  w = await startWorker();
});
afterAll(async () => {
  await w?.stop();
  await cloud?.close();
});
beforeEach(() => cloud.reset());

const ANALYSIS = {
  summary: true,
  fields: [
    { name: 'outcome', type: 'enum' as const, values: ['paid', 'promised', 'refused'], description: 'what the caller agreed to' },
    { name: 'amount', type: 'number' as const, description: 'the amount promised, in dollars' },
    { name: 'wants_callback', type: 'boolean' as const },
  ],
  success: 'The caller promised to pay.',
};
const analysed = (c: Call) => c.analysis !== null && c.analysis.status !== 'pending';

describe('post-call analysis of an OpenAI-compatible bot', () => {
  it("the call ends; the dialler asks the stand-in once with a json_schema built from the fields; the call record gets its structured data", async () => {
    const botId = await createBot({
      name: 'analysed llm bot',
      greeting: '',
      llm: { provider: 'openai', model: 'local-model', temperature: 0.4, base_url: `${cloud.url}/v1` },
      analysis: ANALYSIS,
    });
    cloud.chatScript = [{ text: 'Forty dollars, noted. Goodbye.', endCall: true }];
    const structured = { data: { outcome: 'promised', amount: 40, wants_callback: null }, summary: 'The caller promised to pay forty dollars.', success: true };
    cloud.structuredReply = structured;

    const { caller, callId } = await startCall(w.wsUrl, botId);
    caller.send({ type: 'dtmf', digits: '40#' });
    await caller.closed;
    const call = await callUntil(callId, analysed, 'the analysis', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(call.analysis).toEqual({ status: 'done', ...structured, error: null, completed_at: expect.any(String) });

    // The call's one turn (streamed), then exactly one analysis request.
    expect(cloud.chats.map((c) => [c.stream, c.responseFormat?.type ?? null])).toEqual([
      [true, null],
      [false, 'json_schema'],
    ]);
    const request = cloud.chats[1]!;
    expect(request.temperature).toBe(0);
    expect(request.tools).toEqual([]);
    expect(request.responseFormat).toEqual({
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
                outcome: { type: ['string', 'null'], enum: ['paid', 'promised', 'refused', null], description: 'what the caller agreed to' },
                amount: { type: ['number', 'null'], description: 'the amount promised, in dollars' },
                wants_callback: { type: ['boolean', 'null'] },
              },
              required: ['outcome', 'amount', 'wants_callback'],
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
    // The transcript as the call went, keys included; the bot's own server gets no key.
    expect(request.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(request.messages[1].content).toBe('Transcript:\nCaller (keypad): 40\nBot: Forty dollars, noted.\nBot: Goodbye.');
    const sent = cloud.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(sent).toHaveLength(2);
    expect(sent[1]!.headers.authorization).toBeUndefined();
  });

  it('without a scripted answer the stand-in builds one from the schema, as strict structured outputs would fit it', async () => {
    const botId = await createBot({
      name: 'analysed llm bot 2',
      greeting: '',
      llm: { provider: 'openai', model: 'local-model', temperature: 0, base_url: `${cloud.url}/v1` },
      analysis: { summary: false, fields: ANALYSIS.fields, success: null },
    });
    cloud.chatScript = [{ text: 'Goodbye.', endCall: true }];
    const { caller, callId } = await startCall(w.wsUrl, botId);
    caller.send({ type: 'dtmf', digits: '1#' });
    await caller.closed;
    const call = await callUntil(callId, analysed, 'the analysis', 60_000);
    expect(call.analysis).toMatchObject({ status: 'done', summary: null, success: null, data: { outcome: 'paid', amount: 0, wants_callback: true } });
    expect(cloud.chats.filter((c) => c.responseFormat !== null)).toHaveLength(1);
  });

  it('the stand-in refuses a strict schema the API would refuse (400 invalid_request_error)', async () => {
    const post = (schema: object) =>
      fetch(`${cloud.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [], response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema } } }),
      });
    const loose = await post({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    expect(loose.status).toBe(400);
    expect(((await loose.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const missing = await post({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'], additionalProperties: false });
    expect(missing.status).toBe(400);
    const ok = await post({ type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'], additionalProperties: false });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { object: string; choices: Array<{ message: { content: string } }> })).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: '{"a":"stand-in"}' } }] });
  });
});
