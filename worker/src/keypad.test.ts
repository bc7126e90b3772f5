// The keypad (docs/design.md §9), with real services: keys pressed by a WebSocket caller
// ({"type":"dtmf"}) and by the test phone on a real SIP line (a `+15005552…` keypad number: sipp sends
// RFC 4733 events, livekit-sip turns them into SipDTMF packets in the call's LiveKit room) become one
// user turn that selects the scripted policy's `dtmf` intent; send_dtmf presses keys back.
import { dispose } from '@livekit/rtc-node';
import type { Call } from '@voice-platform/schemas';
import { keypadNumber, listenNumber, PhoneEar } from '@voice-platform/tests/infra';
import { admin, backendUrl, callUntil, createApiKey, ensureTrunk, TEST_VARIABLES } from '../testing/backend.js';
import { startCall } from '../testing/client.js';
import { startCloudStandIn, type CloudStandIn } from '../testing/cloud.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';

let w: TestWorker;
let apiKey: string;
let cloud: CloudStandIn;
beforeAll(async () => {
  apiKey = await createApiKey();
  await ensureTrunk();
  cloud = await startCloudStandIn();
  w = await startWorker(telephonyEnv());
});
afterAll(async () => {
  await w?.stop();
  await cloud?.close();
  await dispose();
});

/** A scripted bot whose intents answer keys: `42` (and `421`, the phone's) ends the call, `1` is a menu choice. */
async function keypadBot(greeting = ''): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', {
    name: 'keypad bot',
    greeting,
    variables: TEST_VARIABLES,
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 90,
    policy: {
      intents: [
        { name: 'account', examples: [], dtmf: '42', reply: 'Account {{digits}} found. Goodbye.', end_call: true },
        { name: 'account_3', examples: [], dtmf: '421', reply: 'Account {{digits}} found. Goodbye.', end_call: true },
        { name: 'menu', examples: [], dtmf: '1', reply: 'You chose the first option.' },
        { name: 'stop', examples: ['stop calling', 'goodbye'], reply: 'Understood.', end_call: true },
      ],
      fallback: { reply: 'Sorry, I did not catch that.' },
    },
  });
  if (res.status !== 201) throw new Error(`bot create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const ended = (c: Call) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null;
const lines = (c: Call) => c.transcript.map((e) => [e.role, e.text]);

describe('the keypad on a WebSocket call', () => {
  it('{"type":"dtmf","digits":"1#"} is one user turn that selects the dtmf intent', async () => {
    const botId = await keypadBot();
    const { caller, callId } = await startCall(w.wsUrl, botId, { customer_name: 'Sam' });
    caller.send({ type: 'dtmf', digits: '1#' });
    const turn = await caller.until(() => caller.message('transcript', (m) => m.role === 'user' && m.final === true), 'the keypad turn');
    expect(turn).toMatchObject({ role: 'user', text: '1', final: true, dtmf: true });
    await caller.until(() => caller.message('transcript', (m) => m.role === 'bot' && m.text === 'You chose the first option.'), 'the intent\'s reply');

    // Keys without `#` form their turn after the pause (1500 ms).
    caller.send({ type: 'dtmf', digits: '4' });
    caller.send({ type: 'dtmf', digits: '2' });
    // A bad key string is refused like any other bad message; the call goes on.
    caller.send({ type: 'dtmf', digits: '12a' });
    await caller.until(() => caller.message('error', (m) => m.code === 'invalid_message'), 'the refusal');
    await caller.closed;

    const call = await callUntil(callId, ended, 'the end of the call', 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(lines(call)).toEqual([
      ['user', '1'],
      ['bot', 'You chose the first option.'],
      ['user', '42'],
      ['bot', 'Account 42 found.'],
      ['bot', 'Goodbye.'],
    ]);
    expect(call.actions.map((a) => [a.type, a.name, a.status, a.arguments])).toEqual([
      ['dtmf_in', 'keypad', 'ok', { digits: '1' }],
      ['dtmf_in', 'keypad', 'ok', { digits: '42' }],
    ]);
    // The pause-ended turn took the inter-digit timeout to form.
    expect(call.actions[1]!.duration_ms).toBeGreaterThanOrEqual(1400);
  });

  it("keys without # form their turn after the bot's own keypad pause (dtmf.inter_digit_timeout_ms)", async () => {
    const res = await admin('POST', '/api/v1/bots', {
      name: 'slow keys bot',
      greeting: '',
      dtmf: { inter_digit_timeout_ms: 3000 },
      // A keypad-only intent: no examples (docs/design.md §2, Bots).
      policy: { intents: [{ name: 'account', dtmf: '42', reply: 'Account {{digits}} found.', end_call: true }], fallback: { reply: 'Sorry?' } },
    });
    expect(res.status).toBe(201);
    const { caller, callId } = await startCall(w.wsUrl, res.body.id as string);
    caller.send({ type: 'dtmf', digits: '4' });
    caller.send({ type: 'dtmf', digits: '2' });
    await caller.closed;
    const call = await callUntil(callId, ended, 'the end of the call', 30_000);
    expect(lines(call)).toEqual([
      ['user', '42'],
      ['bot', 'Account 42 found.'],
    ]);
    // The turn waited for the bot's 3 s pause, not the default 1.5 s.
    expect(call.actions[0]).toMatchObject({ type: 'dtmf_in', arguments: { digits: '42' } });
    expect(call.actions[0]!.duration_ms).toBeGreaterThanOrEqual(2900);
  });

  it('the LLM sees the keys in words and presses keys back with send_dtmf', async () => {
    const res = await admin('POST', '/api/v1/bots', {
      name: 'keypad llm bot',
      greeting: '',
      llm: { provider: 'openai', model: 'local-model', temperature: 0, base_url: `${cloud.url}/v1` },
      tools: [{ name: 'press_keys', description: 'Presses keys on the line', type: 'send_dtmf' }],
    });
    expect(res.status).toBe(201);
    cloud.reset();
    cloud.chatScript = [{ toolCalls: [{ id: 'call_1', name: 'press_keys', arguments: '{"digits":"123#"}' }] }, { text: 'I pressed them for you.' }];
    const { caller, callId } = await startCall(w.wsUrl, res.body.id as string);
    caller.send({ type: 'dtmf', digits: '0#' });
    await caller.until(() => caller.message('transcript', (m) => m.role === 'bot' && m.text === 'I pressed them for you.'), 'the reply after the tool');
    expect(caller.message('transcript', (m) => m.role === 'bot' && m.text === '123#')).toMatchObject({ final: true, dtmf: true });
    expect(cloud.chats[0]!.messages.filter((m: { role: string }) => m.role === 'user')).toEqual([{ role: 'user', content: 'The caller pressed 0 on the keypad.' }]);
    expect(cloud.chats[1]!.messages.find((m: { role: string }) => m.role === 'tool')).toMatchObject({ tool_call_id: 'call_1', content: '{"ok":true,"sent":"123#"}' });
    caller.send({ type: 'stop' });
    await caller.closed;
    const call = await callUntil(callId, ended, 'the end of the call', 30_000);
    expect(lines(call)).toEqual([
      ['user', '0'],
      ['bot', '123#'],
      ['bot', 'I pressed them for you.'],
    ]);
    expect(call.actions.map((a) => [a.type, a.name, a.status, a.arguments])).toEqual([
      ['dtmf_in', 'keypad', 'ok', { digits: '0' }],
      ['dtmf_out', 'press_keys', 'ok', { digits: '123#' }],
    ]);
  });
});

describe('the keypad on a real phone line', () => {
  it('a +15005552… number presses its keys and #: one user turn, the dtmf intent answers', async () => {
    const botId = await keypadBot('Hello {{customer_name}}, please enter your account number.');
    const to = keypadNumber('421');
    const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ bot_id: botId, to_number: to, variables: { customer_name: 'Sam' } }),
    });
    expect(res.status).toBe(201);
    const { call_id: callId } = (await res.json()) as { call_id: string };
    const call = await callUntil(callId, ended, 'the end of the call and its recording', 60_000);
    // The phone presses 4, 2 and # 3 s after answering: the bot's reply to the keys ends the call before
    // the phone would speak (5 s after the keys).
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(lines(call)).toEqual([
      ['bot', 'Hello Sam, please enter your account number.'],
      ['user', '421'],
      ['bot', 'Account 421 found.'],
      ['bot', 'Goodbye.'],
    ]);
    expect(call.actions).toEqual([expect.objectContaining({ type: 'dtmf_in', name: 'keypad', status: 'ok', arguments: { digits: '421' } })]);
  });

  it('keys both ways on one line: the phone\'s ear presses 5#, the bot answers with send_dtmf, the ear decodes the RFC 4733 events', async () => {
    const bot = await admin('POST', '/api/v1/bots', {
      name: 'keypad out bot',
      greeting: 'Hello.',
      max_call_seconds: 60,
      llm: { provider: 'openai', model: 'local-model', temperature: 0, base_url: `${cloud.url}/v1` },
      tools: [{ name: 'press_keys', description: 'Presses keys on the line', type: 'send_dtmf' }],
    });
    expect(bot.status).toBe(201);
    cloud.reset();
    cloud.chatScript = [{ toolCalls: [{ id: 'call_1', name: 'press_keys', arguments: '{"digits":"1*9#"}' }] }, { text: 'Done.', endCall: true }];
    const ear = await PhoneEar.open(Number(process.env.SIP_PHONE_EAR_PORT));
    try {
      const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ bot_id: bot.body.id, to_number: listenNumber(30), variables: {} }),
      });
      expect(res.status).toBe(201);
      const { call_id: callId } = (await res.json()) as { call_id: string };
      // The phone's side of the line: its keys go back to livekit-sip's media address as RFC 4733 events.
      await ear.press('5#');
      const call = await callUntil(callId, ended, 'the end of the call and its recording', 60_000);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
      expect(cloud.chats[0]!.messages.filter((m: { role: string }) => m.role === 'user')).toEqual([{ role: 'user', content: 'The caller pressed 5 on the keypad.' }]);
      expect(lines(call)).toEqual([
        ['bot', 'Hello.'],
        ['user', '5'],
        ['bot', '1*9#'],
        ['bot', 'Done.'],
      ]);
      // What livekit-sip sent the phone: the four keys, in order, as RFC 4733 events.
      expect(ear.keys()).toBe('1*9#');
      const out = call.actions.find((a) => a.type === 'dtmf_out')!;
      expect(out).toMatchObject({ name: 'press_keys', status: 'ok', arguments: { digits: '1*9#' } });
      // Sent one every 250 ms; the tool answered once the line had carried all four (livekit-sip plays a key in about 500 ms).
      expect(out.duration_ms).toBeGreaterThanOrEqual(4 * 500);
    } finally {
      await ear.close();
    }
  });
});

// Flows and handoffs heard over a real phone line (shared/DESIGN.md §18): the test phone presses 421 and #,
// then says its phrase ("stop calling") 5 s later; the scripted flow and the handoff act on both.
describe('a flow and a handoff on a real phone line', () => {
  async function dialKeys(botId: string): Promise<string> {
    const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ bot_id: botId, to_number: keypadNumber('421'), variables: { customer_name: 'Sam' } }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { call_id: string }).call_id;
  }
  const botOf = async (body: object) => {
    const res = await admin('POST', '/api/v1/bots', { variables: TEST_VARIABLES, turn_detection: { end_of_turn_silence_ms: 600 }, max_call_seconds: 90, ...body });
    if (res.status !== 201) throw new Error(`bot create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };

  it('walks three nodes: the keys move menu → verify, the phrase verify → done, which ends the call; each turn has its node', async () => {
    const botId = await botOf({
      name: 'phone flow',
      greeting: 'Hello {{customer_name}}.',
      policy: { intents: [], fallback: { reply: 'Sorry, I did not catch that.' } },
      flow: {
        start: 'menu',
        nodes: {
          menu: { intents: [{ name: 'account', dtmf: '421', reply: 'Account found.' }], transitions: [{ to: 'verify', when: { intent: 'account' } }] },
          verify: { say: 'Say stop calling to finish.', intents: [{ name: 'stop', examples: ['stop calling'], reply: 'Understood.' }], transitions: [{ to: 'done', when: { intent: 'stop' } }] },
          done: { say: 'Goodbye.', end_call: true, transitions: [] },
        },
      },
    });
    const call = await callUntil(await dialKeys(botId), ended, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(lines(call)).toEqual([
      ['bot', 'Hello Sam.'],
      ['user', '421'],
      ['bot', 'Account found.'],
      ['bot', 'Say stop calling to finish.'],
      ['user', 'stop calling'],
      ['bot', 'Understood.'],
      ['bot', 'Goodbye.'],
    ]);
    // turns[] times spoken turns (speech end → the bot's audio); the keypad turn moved the flow (its entry below).
    expect(call.turns!.map((t) => [t.user_text, t.node])).toEqual([['stop calling', 'verify']]);
    expect(call.actions.filter((a) => a.type === 'flow').map((a) => [a.name, a.arguments])).toEqual([
      ['menu', { from: null, via: 'start' }],
      ['verify', { from: 'menu', via: 'intent:account' }],
      ['done', { from: 'verify', via: 'intent:stop' }],
    ]);
  });

  it('hands the caller to a second bot: its greeting (with the call\'s variables) and its answers follow on the same line', async () => {
    // Short lines: the phone speaks 5 s after its keys, and the reply, the handoff and the greeting come before.
    const billing = await botOf({
      name: 'phone billing',
      greeting: 'Billing, hi {{customer_name}}.',
      voice: { provider: 'espeak-ng', voice_id: 'en-gb', speed: 1.1 },
      policy: { intents: [{ name: 'stop', examples: ['stop calling'], reply: 'Billing says goodbye.', end_call: true }], fallback: { reply: 'Billing did not catch that.' } },
    });
    const front = await botOf({
      name: 'phone front',
      greeting: 'Hello {{customer_name}}.',
      handoff: { bots: [billing] },
      policy: {
        intents: [{ name: 'to_billing', dtmf: '421', reply: 'One moment.', action: { tool: 'handoff', arguments: { bot_id: billing } } }],
        fallback: { reply: 'Front did not catch that.' },
      },
    });
    const call = await callUntil(await dialKeys(front), ended, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ bot_id: front, status: 'completed', end_reason: 'bot_hangup' });
    expect(lines(call)).toEqual([
      ['bot', 'Hello Sam.'],
      ['user', '421'],
      ['bot', 'One moment.'],
      ['bot', 'Billing, hi Sam.'],
      ['user', 'stop calling'],
      ['bot', 'Billing says goodbye.'],
    ]);
    expect(call.actions.filter((a) => a.type === 'handoff')).toEqual([
      expect.objectContaining({ status: 'ok', arguments: { from_bot_id: front, bot_id: billing, context: 'all' } }),
    ]);
  });
});
