// Flows and handoffs end to end (shared/DESIGN.md §18), on real services: the backend, the worker with its
// offline providers (espeak-ng, pocketsphinx, the scripted policy) and, for a model, the OpenAI stand-in.
import type { Call } from '@voice-platform/schemas';
import { silence, speech } from '../testing/audio.js';
import { admin, callUntil } from '../testing/backend.js';
import { startCall, type TestCaller } from '../testing/client.js';
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

async function bot(body: object): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', { turn_detection: { end_of_turn_silence_ms: 600 }, max_call_seconds: 90, ...body });
  if (res.status !== 201) throw new Error(`bot create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
const ended = (c: Call) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null;
const botLines = (caller: TestCaller) => caller.messages.filter((m) => m.type === 'transcript' && m.role === 'bot').map((m) => m.text);
const said = (caller: TestCaller, text: string) => caller.until(() => caller.message('transcript', (m) => m.role === 'bot' && m.text === text), `the bot to say "${text}"`);
/** Says `words` as the caller, then silence enough for the turn to end. */
async function say(caller: TestCaller, words: string): Promise<void> {
  await caller.stream(speech(words));
  await caller.stream(silence(900));
}
const flowEntries = (c: Call) => c.actions.filter((a) => a.type === 'flow').map((a) => [a.name, a.arguments]);

describe('a scripted flow on a WebSocket call', () => {
  it('walks three nodes by phrases: each node matches its own intents, says its say on entry, the last ends the call; each turn has its node', async () => {
    const id = await bot({
      name: 'flow desk',
      policy: { intents: [], fallback: { reply: 'Sorry, I did not catch that.' } },
      flow: {
        start: 'menu',
        nodes: {
          menu: { intents: [{ name: 'billing', examples: ['billing please'], reply: 'Billing it is.' }], transitions: [{ to: 'billing', when: { intent: 'billing' } }] },
          billing: { say: 'Say confirm to pay.', intents: [{ name: 'confirm', examples: ['confirm'], reply: 'Confirmed.' }], transitions: [{ to: 'done', when: { intent: 'confirm' }, context: 'summary' }] },
          done: { say: 'Thank you. Goodbye.', transitions: [], end_call: true },
        },
      },
    });
    const { caller, callId } = await startCall(w.wsUrl, id);
    // "confirm" is billing's intent: in the menu it is not matched (the fallback answers).
    await say(caller, 'confirm');
    await said(caller, 'Sorry, I did not catch that.');
    await say(caller, 'billing please');
    await said(caller, 'Say confirm to pay.');
    await say(caller, 'confirm');
    await caller.closed;
    expect(botLines(caller)).toEqual(['Sorry, I did not catch that.', 'Billing it is.', 'Say confirm to pay.', 'Confirmed.', 'Thank you.', 'Goodbye.']);
    const call = await callUntil(callId, ended, 'the call record');
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(call.turns!.map((t) => [t.user_text, t.node])).toEqual([
      ['confirm', 'menu'],
      ['billing please', 'menu'],
      ['confirm', 'billing'],
    ]);
    expect(flowEntries(call)).toEqual([
      ['menu', { from: null, via: 'start' }],
      ['billing', { from: 'menu', via: 'intent:billing' }],
      ['done', { from: 'billing', via: 'intent:confirm' }],
    ]);
  });
});

describe('handoff to another bot', () => {
  it('the other bot greets in its own voice and answers from then on; the record names the handoff; an inactive bot gets on_failure and the call goes on', async () => {
    const billing = await bot({ name: 'billing bot', greeting: 'Billing desk here.', voice: { provider: 'espeak-ng', voice_id: 'en-gb', speed: 1.1 }, policy: { intents: [{ name: 'pay', dtmf: '3', reply: 'Billing bot says paid.', end_call: true }], fallback: { reply: 'Billing bot did not catch that.' } } });
    const asleep = await bot({ name: 'asleep bot', greeting: 'You should not hear me.' });
    const front = await bot({
      name: 'front bot',
      handoff: { bots: [billing, asleep], on_failure: 'That desk is closed, I stay with you.' },
      policy: {
        intents: [
          { name: 'to_billing', dtmf: '9', reply: 'Passing you to billing.', action: { tool: 'handoff', arguments: { bot_id: billing } } },
          { name: 'to_asleep', dtmf: '8', reply: 'Passing you on.', action: { tool: 'handoff', arguments: { bot_id: asleep } } },
          { name: 'still', dtmf: '3', reply: 'Front bot still here.' },
        ],
        fallback: { reply: 'Front bot did not catch that.' },
      },
    });
    // Deactivated after the front bot was saved (at save it had to be active): the call finds it inactive.
    expect((await admin('PATCH', `/api/v1/bots/${asleep}`, { active: false })).status).toBe(200);

    const { caller, callId } = await startCall(w.wsUrl, front);
    caller.send({ type: 'dtmf', digits: '8#' });
    await said(caller, 'That desk is closed, I stay with you.');
    caller.send({ type: 'dtmf', digits: '3#' });
    await said(caller, 'Front bot still here.');
    caller.send({ type: 'dtmf', digits: '9#' });
    await said(caller, 'Billing desk here.');
    caller.send({ type: 'dtmf', digits: '3#' });
    await caller.closed;
    expect(botLines(caller)).toEqual(['Passing you on.', 'That desk is closed, I stay with you.', 'Front bot still here.', 'Passing you to billing.', 'Billing desk here.', 'Billing bot says paid.']);
    const call = await callUntil(callId, ended, 'the call record');
    expect(call).toMatchObject({ bot_id: front, status: 'completed', end_reason: 'bot_hangup' });
    expect(call.transcript.filter((e) => e.role === 'bot').map((e) => e.text)).toEqual(botLines(caller));
    expect(call.actions.filter((a) => a.type === 'handoff').map((a) => ({ status: a.status, arguments: a.arguments, error: a.error ?? null }))).toEqual([
      { status: 'failed', arguments: { from_bot_id: front, bot_id: asleep, context: 'all' }, error: 'bot_inactive' },
      { status: 'ok', arguments: { from_bot_id: front, bot_id: billing, context: 'all' }, error: null },
    ]);
  });
});

describe('a flow with an OpenAI-compatible model', () => {
  it('offers go_to functions beside the node tools only; calling one moves the flow, the model is asked again in the new node with its prompt', async () => {
    const http = (name: string) => ({ name, description: `the ${name} tool`, type: 'http', url: 'https://93.184.216.34/tool' });
    const id = await bot({
      name: 'llm flow',
      prompt: 'You are the order desk.',
      llm: { provider: 'openai', model: 'local-model', temperature: 0, base_url: `${cloud.url}/v1` },
      tools: [http('lookup'), http('refund'), http('charge')],
      flow: {
        start: 'greet',
        nodes: {
          greet: { tools: ['lookup'], transitions: [{ to: 'pay', when: { intent: 'the caller wants to pay' } }] },
          pay: { prompt: 'Take the payment.', tools: ['charge'], transitions: [{ to: 'bye', when: { intent: 'the payment is done' } }] },
          bye: { say: 'Goodbye.', transitions: [], end_call: true },
        },
      },
    });
    cloud.chatScript = [{ toolCalls: [{ id: 'call_1', name: 'go_to_pay', arguments: '{}' }] }, { text: 'Paid, thank you.', toolCalls: [{ id: 'call_2', name: 'go_to_bye', arguments: '{}' }] }, { text: 'unused' }];
    const { caller, callId } = await startCall(w.wsUrl, id);
    caller.send({ type: 'dtmf', digits: '40#' });
    await caller.closed;
    expect(botLines(caller)).toEqual(['Paid, thank you.', 'Goodbye.']);
    // Each request: the node's tools only, its go_to functions, the bot's prompt with the node's.
    expect(cloud.chats.map((c) => c.tools)).toEqual([
      ['end_call', 'lookup', 'go_to_pay'],
      ['end_call', 'charge', 'go_to_bye'],
    ]);
    expect(cloud.chats[0]!.messages[0]).toEqual({ role: 'system', content: 'You are the order desk.' });
    expect(cloud.chats[1]!.messages[0]).toEqual({ role: 'system', content: 'You are the order desk.\n\nTake the payment.' });
    // append: the history goes along, the go_to call and its answer in it.
    expect(cloud.chats[1]!.messages.slice(1).map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool']);
    const call = await callUntil(callId, ended, 'the call record');
    expect(flowEntries(call)).toEqual([
      ['greet', { from: null, via: 'start' }],
      ['pay', { from: 'greet', via: 'go_to:pay' }],
      ['bye', { from: 'pay', via: 'go_to:bye' }],
    ]);
  });
});
