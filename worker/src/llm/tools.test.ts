// OpenAI-compatible tool calling, end to end inside the LLM stage: the stand-in streams tool calls the
// way the API does, the bot's HTTP tools run against a real local receiver, and each round's request is
// checked message for message.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { RuntimeConfig } from '@voice-platform/schemas';
import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import { llmStage } from '../../testing/stages.js';
import { Pipeline } from '../pipeline/pipeline.js';
import type { Frame } from '../pipeline/frames.js';
import { retryPolicy } from '../providers/retry.js';
import { llmFor } from '../app/providers.js';
import { ToolError, ToolRunner, type ToolConfig, type TransferHandler } from '../tools/runner.js';
import { LlmProcessor, MAX_TOOL_ROUNDS, type ChatMessage, type LlmChunk } from './llm.js';
import { OpenAiLlm } from './openai.js';

let cloud: CloudStandIn;
let receiver: http.Server;
let base: string;
/** Requests the receiver got, by path, in order. */
const got: string[] = [];
/** Per path: how to answer (default: ANSWERS). */
let hold: Record<string, (res: http.ServerResponse) => void> = {};
const ANSWERS: Record<string, unknown> = {
  '/orders': { order: 'A17', status: 'shipped' },
  '/promises': { reference: 'PTP-1042' },
  '/balance': { balance: 40 },
};
const answer = (res: http.ServerResponse, path: string) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(ANSWERS[path]));
};
/** Resolves when the receiver has got a request for `path`. */
const waiters: Array<{ path: string; resolve: () => void }> = [];
const arrived = (path: string) => (got.includes(path) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ path, resolve })));

beforeAll(async () => {
  cloud = await startCloudStandIn();
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      got.push(path);
      for (const w of waiters.filter((x) => x.path === path)) w.resolve();
      (hold[path] ?? ((r: http.ServerResponse) => answer(r, path)))(res);
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await cloud.close();
});
beforeEach(() => {
  cloud.reset();
  got.length = 0;
  hold = {};
});

const llm = () => new OpenAiLlm({ baseUrl: `${cloud.url}/v1`, apiKey: 'sk-local', model: 'gpt-4o-mini', temperature: 0.2, timeoutMs: 2000 });
const tools = (): ToolConfig[] => [
  {
    name: 'lookup_order',
    description: 'Finds an order',
    type: 'http',
    url: `${base}/orders`,
    timeout_ms: 2000,
    say_while_waiting: 'One moment, please.',
    parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  },
  { name: 'record_promise', description: 'Records a promise to pay', type: 'http', url: `${base}/promises`, timeout_ms: 2000, parameters: { type: 'object', properties: { amount: { type: 'number' } } } },
  { name: 'get_balance', description: 'The open balance', type: 'http', method: 'GET', url: `${base}/balance`, timeout_ms: 2000 },
];
const runner = () =>
  new ToolRunner(tools(), { call_id: 'c_1', bot_id: 'b_1', direction: 'outbound', to_number: '+15005550006', from_number: null, variables: {} }, { secret: 'whsec_x', allowPrivate: true });
const texts = (frames: Frame[]) => frames.flatMap((f) => (f.kind === 'text' ? [f.text] : []));

const LOOKUP = { id: 'call_a1', name: 'lookup_order', arguments: '{"order_id":"A17"}' };
const PROMISE = { id: 'call_b1', name: 'record_promise', arguments: '{"amount":40}' };
const BALANCE = { id: 'call_b2', name: 'get_balance', arguments: '{}' };
const asCall = (c: { id: string; name: string; arguments: string }) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } });

describe('OpenAI-compatible tool calling', () => {
  it('the stand-in streams two calls in one reply, arguments in pieces; the provider hands them on whole, by index', async () => {
    cloud.chatScript = [{ toolCalls: [LOOKUP, PROMISE] }];
    const raw = await fetch(`${cloud.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [] }) }).then((r) => r.text());
    const deltas = raw
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices[0]);
    const pieces = (index: number) => deltas.filter((d) => d.delta.tool_calls?.[0]?.index === index && d.delta.tool_calls[0].function?.arguments);
    expect(pieces(0).length).toBeGreaterThan(2);
    expect(pieces(1).length).toBeGreaterThan(1);
    expect(deltas[deltas.length - 1].finish_reason).toBe('tool_calls');

    cloud.chatScript = [{ text: 'Let me see. ', toolCalls: [LOOKUP, PROMISE] }];
    const chunks: LlmChunk[] = [];
    for await (const c of llm().generate([{ role: 'user', content: 'x' }], new AbortController().signal, { tools: runner().specs })) chunks.push(c);
    expect(chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text).join('')).toBe('Let me see. ');
    expect(chunks[chunks.length - 1]).toEqual({ type: 'tool_calls', calls: [asCall(LOOKUP), asCall(PROMISE)] });
    expect(cloud.chats[1]!.tools).toEqual(['end_call', 'lookup_order', 'record_promise', 'get_balance']);
  });

  it('a call split over chunks, two parallel calls, a second round, then text and end_call: each request holds exactly the protocol messages', async () => {
    cloud.chatScript = [
      { text: 'Let me look that up. ', toolCalls: [LOOKUP] },
      { toolCalls: [PROMISE, BALANCE] },
      { text: 'Your promise is recorded under PTP-1042. Goodbye.', endCall: true },
    ];
    // Parallel for real: the promise is answered only once the balance request has arrived too.
    hold['/promises'] = (res) => void arrived('/balance').then(() => answer(res, '/promises'));
    const r = await llmStage(llm(), 'I will pay forty dollars', retryPolicy(2), runner());
    expect(r.error).toBeNull();
    expect(r.sentences).toEqual(['Let me look that up.', 'One moment, please.', 'Your promise is recorded under PTP-1042.', 'Goodbye.']);
    expect(r.frames.filter((f) => f.kind === 'response_start' || f.kind === 'response_end')).toEqual([{ kind: 'response_start' }, { kind: 'response_end', endCall: true }]);
    expect(got.sort()).toEqual(['/balance', '/orders', '/promises']);

    const user: ChatMessage = { role: 'user', content: 'I will pay forty dollars' };
    const round1 = [
      { role: 'assistant', content: 'Let me look that up.', tool_calls: [asCall(LOOKUP)] },
      { role: 'tool', tool_call_id: 'call_a1', content: '{"order":"A17","status":"shipped"}' },
    ];
    const round2 = [
      { role: 'assistant', content: null, tool_calls: [asCall(PROMISE), asCall(BALANCE)] },
      { role: 'tool', tool_call_id: 'call_b1', content: '{"reference":"PTP-1042"}' },
      { role: 'tool', tool_call_id: 'call_b2', content: '{"balance":40}' },
    ];
    expect(cloud.chats.map((c) => c.messages)).toEqual([[user], [user, ...round1], [user, ...round1, ...round2]]);
    expect(cloud.chats.map((c) => c.toolChoice)).toEqual([undefined, undefined, undefined]);
  });

  it('a failing tool answers {"error":…} to the model and the reply goes on', async () => {
    cloud.chatScript = [{ toolCalls: [{ ...PROMISE, arguments: '{"amount":"forty"}' }] }, { text: 'I could not record that.' }];
    const r = await llmStage(llm(), 'I will pay', retryPolicy(2), runner());
    expect(r.sentences).toEqual(['I could not record that.']);
    expect(got).toEqual([]); // invalid arguments: the URL is not called
    const tool = cloud.chats[1]!.messages[2];
    expect(tool.role).toBe('tool');
    expect(JSON.parse(tool.content)).toEqual({ error: 'invalid_arguments', details: [{ path: '/amount', message: 'must be number' }] });
  });

  it(`at most ${MAX_TOOL_ROUNDS} rounds a turn: then the model is asked to answer without tools`, async () => {
    cloud.chatScript = [
      ...Array.from({ length: MAX_TOOL_ROUNDS }, (_, i) => ({ toolCalls: [{ ...BALANCE, id: `call_${i}` }] })),
      { text: 'Your balance is forty dollars.', toolCalls: [{ ...BALANCE, id: 'call_late' }] },
    ];
    const r = await llmStage(llm(), 'balance?', retryPolicy(2), runner());
    expect(r.sentences).toEqual(['Your balance is forty dollars.']);
    expect(got).toHaveLength(MAX_TOOL_ROUNDS);
    expect(cloud.chats.map((c) => c.toolChoice)).toEqual([...Array<undefined>(MAX_TOOL_ROUNDS).fill(undefined), 'none']);
  });

  it('a barge-in while a tool runs: nothing more is said, the result still joins the history before the next words', async () => {
    cloud.chatScript = [{ text: 'Let me look that up. ', toolCalls: [LOOKUP] }, { text: 'Sure, go on.' }];
    let release!: () => void;
    hold['/orders'] = (res) => void new Promise<void>((resolve) => (release = resolve)).then(() => answer(res, '/orders'));
    const frames: Frame[] = [];
    const stage = new LlmProcessor(llm(), '', retryPolicy(2), runner());
    const pipeline = new Pipeline([stage], { downstream: (f) => frames.push(f) });
    pipeline.push({ kind: 'transcript', role: 'user', text: 'where is my order', final: true });
    await arrived('/orders');
    pipeline.push({ kind: 'interruption' });
    pipeline.push({ kind: 'transcript', role: 'user', text: 'actually never mind', final: true });
    release();
    await pipeline.idle();
    expect(texts(frames)).toEqual(['Let me look that up.', 'One moment, please.', 'Sure, go on.']);
    expect(cloud.chats).toHaveLength(2); // no round after the barge-in
    expect(cloud.chats[1]!.messages).toEqual([
      { role: 'user', content: 'where is my order' },
      { role: 'assistant', content: 'Let me look that up.', tool_calls: [asCall(LOOKUP)] },
      { role: 'tool', tool_call_id: 'call_a1', content: '{"order":"A17","status":"shipped"}' },
      { role: 'user', content: 'actually never mind' },
    ]);
    expect(stage.messages[stage.messages.length - 1]).toEqual({ role: 'assistant', content: 'Sure, go on.' });
  });

  it("a bot's llm.base_url replaces OPENAI_BASE_URL, needs no OPENAI_API_KEY and is never sent the worker's", async () => {
    const cfg = {
      bot: { llm: { provider: 'openai', model: 'local-model', temperature: 0, base_url: `${cloud.url}/v1` }, policy: null },
      call: null,
    } as unknown as RuntimeConfig;
    // The worker has a key: it goes to OPENAI_BASE_URL only, never to an address a bot's editor chose.
    const provider = llmFor(cfg, { OPENAI_API_KEY: 'sk-worker-key', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', PROVIDER_TIMEOUT_MS: 2000 } as never);
    const r = await llmStage(provider, 'hello');
    expect(r.error).toBeNull();
    expect(cloud.requests[0]!.headers.authorization).toBeUndefined();
    expect(cloud.requests[0]!.body.model).toBe('local-model');
    // Without a base_url of its own the key is still required.
    const plain = { ...cfg, bot: { ...cfg.bot, llm: { provider: 'openai', model: 'm', temperature: 0 } } } as RuntimeConfig;
    expect(() => llmFor(plain, { OPENAI_API_KEY: '', OPENAI_BASE_URL: cloud.url, PROVIDER_TIMEOUT_MS: 2000 } as never)).toThrow(/OPENAI_API_KEY/);
  });
});

describe('transfer_call in the LLM stage', () => {
  const transferTool: ToolConfig = {
    name: 'to_person',
    description: 'Hands the caller to a person',
    type: 'transfer_call',
    mode: 'cold',
    destinations: [{ name: 'billing', number: '+15005553000' }, { name: 'sales', sip_uri: 'sip:sales@pbx.example.com' }],
    announcement: 'Let me connect you, {{customer_name}}.',
    on_failure: 'Nobody is free right now.',
  };
  /** The stage with a runner whose transfers go to `handler`; marks are reached as they leave (no output stage here). */
  function staged(handler: TransferHandler) {
    const r = new ToolRunner([transferTool], { call_id: 'c_1', bot_id: 'b_1', direction: 'outbound', to_number: null, from_number: null, variables: {} }, {
      secret: null,
      allowPrivate: true,
      transfer: handler,
      render: (t) => t.replace('{{customer_name}}', 'Sam'),
    });
    const frames: Frame[] = [];
    const stage = new LlmProcessor(llm(), '', retryPolicy(2), r);
    const pipeline = new Pipeline([stage], {
      downstream: (f) => {
        frames.push(f);
        if (f.kind === 'mark') f.reached();
      },
    });
    return { r, frames, stage, pipeline };
  }
  const TRANSFER = { id: 'call_t1', name: 'to_person', arguments: '{"destination":"billing"}' };

  it('offers the destinations by name, says the announcement before the transfer starts, and asks nothing more once it worked', async () => {
    cloud.chatScript = [{ text: 'Of course. ', toolCalls: [TRANSFER] }, { text: 'never asked' }];
    let seenAtTransfer: string[] = [];
    const { r, frames, pipeline } = staged(async (req) => {
      await req.spoken;
      seenAtTransfer = texts(frames);
      expect(req.destination).toEqual({ name: 'billing', number: '+15005553000' });
      return { sipStatusCode: 202 };
    });
    pipeline.push({ kind: 'transcript', role: 'user', text: 'a person please', final: true });
    await pipeline.idle();
    expect(seenAtTransfer).toEqual(['Of course.', 'Let me connect you, Sam.']);
    expect(texts(frames)).toEqual(['Of course.', 'Let me connect you, Sam.']);
    expect(cloud.chats).toHaveLength(1);
    expect(cloud.requests[0]!.body.tools).toContainEqual({
      type: 'function',
      function: {
        name: 'to_person',
        description: 'Hands the caller to a person',
        parameters: { type: 'object', properties: { destination: { type: 'string', enum: ['billing', 'sales'], description: 'who to transfer the caller to: billing; sales' } }, required: ['destination'] },
      },
    });
    expect(r.actions).toEqual([expect.objectContaining({ type: 'transfer', name: 'to_person', status: 'ok', arguments: { destination: 'billing' }, error: null })]);
  });

  it('a failed transfer: on_failure is the last word of the turn, the model gets the error in the history', async () => {
    cloud.chatScript = [{ toolCalls: [TRANSFER] }, { text: 'never asked' }];
    const { r, frames, stage, pipeline } = staged(async () => {
      throw new ToolError('transfer_failed', 'refused', { sip_status_code: 603 });
    });
    pipeline.push({ kind: 'transcript', role: 'user', text: 'a person please', final: true });
    await pipeline.idle();
    expect(texts(frames)).toEqual(['Let me connect you, Sam.', 'Nobody is free right now.']);
    expect(cloud.chats).toHaveLength(1);
    expect(stage.messages).toEqual([
      { role: 'user', content: 'a person please' },
      { role: 'assistant', content: null, tool_calls: [asCall(TRANSFER)] },
      { role: 'tool', tool_call_id: 'call_t1', content: '{"error":"transfer_failed","details":{"sip_status_code":603}}' },
      { role: 'assistant', content: 'Nobody is free right now.' },
    ]);
    expect(r.actions).toEqual([expect.objectContaining({ type: 'transfer', status: 'failed', error: 'transfer_failed' })]);
  });

  it('a destination the tool does not have is invalid_arguments; the transfer is not tried', async () => {
    cloud.chatScript = [{ toolCalls: [{ ...TRANSFER, arguments: '{"destination":"legal"}' }] }, { text: 'I cannot do that.' }];
    let tried = false;
    const { pipeline, frames } = staged(async () => {
      tried = true;
      return { sipStatusCode: 202 };
    });
    pipeline.push({ kind: 'transcript', role: 'user', text: 'a lawyer please', final: true });
    await pipeline.idle();
    expect(tried).toBe(false);
    // Nothing announced for a transfer that cannot be made.
    expect(texts(frames)).toEqual(['I cannot do that.']);
    expect(JSON.parse(cloud.chats[1]!.messages[2].content)).toEqual({ error: 'invalid_arguments', details: [{ path: '/destination', message: 'must be one of: billing, sales' }] });
  });
});
