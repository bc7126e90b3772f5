// Redaction (shared/DESIGN.md §16) on real services: a WebSocket caller presses a card number on the keypad
// (4111 1111 1111 1111, a Luhn-valid test card) to a bot that redacts card numbers. Everything the worker
// keeps, reports or logs shows the mask: the live and stored transcript (the bot's reply reading it back too),
// the keypad action, an HTTP tool's arguments and answer, the turns, the worker's log lines; the live LLM gets
// the keys unless redact_llm. Recording per bot: off (no recording at all), and keypad tones silenced.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Call } from '@voice-platform/schemas';
import { admin, callUntil, createApiKey } from '../testing/backend.js';
import { startCall } from '../testing/client.js';
import { startCloudStandIn, type CloudStandIn } from '../testing/cloud.js';
import { readRecording } from '../testing/recordings.js';
import { startWorker, type TestWorker } from '../testing/worker.js';

const CARD = '4111111111111111';

let w: TestWorker;
let cloud: CloudStandIn;
let echo: http.Server;
let echoUrl: string;
beforeAll(async () => {
  await createApiKey();
  cloud = await startCloudStandIn();
  // A tool endpoint that answers with what it was sent (so the card comes back in the tool's result).
  echo = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ref: 'R-7', got: JSON.parse(body || '{}') })));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/cards`;
  w = await startWorker({ TOOLS_ALLOW_PRIVATE_ADDRESSES: 'true' });
});
afterAll(async () => {
  await w?.stop();
  await cloud?.close();
  echo?.closeAllConnections();
  echo?.close();
});

async function bot(body: Record<string, unknown>): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', { greeting: '', max_call_seconds: 60, ...body });
  if (res.status !== 201) throw new Error(`bot create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const recorded = (c: Call) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null;

describe('a card number pressed on the keypad, to a bot redacting card numbers', () => {
  it('is masked in the transcript, the actions, the turns and the worker\'s logs', async () => {
    const botId = await bot({
      name: 'card bot',
      redaction: { entities: ['card_number'] },
      tools: [{ name: 'take_card', description: 'Takes a card', type: 'http', url: echoUrl, timeout_ms: 2000, parameters: { type: 'object', properties: { card: { type: 'string' } } } }],
      policy: {
        intents: [{ name: 'card', dtmf: CARD, action: { tool: 'take_card', arguments: { card: '{{digits}}' } }, reply: 'Card {{digits}} noted, reference {{result.ref}}.', end_call: true }],
        fallback: { reply: 'Sorry?' },
      },
    });
    const logsBefore = w.logs.length;
    const { caller, callId } = await startCall(w.wsUrl, botId);
    caller.send({ type: 'dtmf', digits: `${CARD}#` });
    await caller.closed;
    // The live transcript is masked as well: the caller's own screen shows the mask.
    expect(caller.message('transcript', (m) => m.role === 'user' && m.final === true)).toMatchObject({ text: '[card_number]', dtmf: true });

    const call = await callUntil(callId, recorded, 'the end of the call');
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    // The scripted policy matched the keys as pressed (the bot acts on the words), and the tool got them.
    expect(call.transcript.map((e) => [e.role, e.text])).toEqual([
      ['user', '[card_number]'],
      ['bot', 'Card [card_number] noted, reference R-7.'],
    ]);
    expect(call.actions.map((a) => [a.type, a.name, a.status, a.arguments])).toEqual([
      ['dtmf_in', 'keypad', 'ok', { digits: '[card_number]' }],
      ['tool', 'take_card', 'ok', { card: '[card_number]' }],
    ]);
    expect(call.actions[1]!.result).toContain('[card_number]');
    for (const t of call.turns ?? []) expect(t.user_text).not.toContain(CARD);
    expect(JSON.stringify(call)).not.toContain(CARD);
    const logs = w.logs.slice(logsBefore).join('');
    expect(logs).toContain(callId); // the call did log
    expect(logs).not.toContain(CARD);
  });

  it('the live LLM gets the keys as pressed, or masked with redact_llm', async () => {
    const llm = { provider: 'openai', model: 'local-model', temperature: 0, base_url: `${cloud.url}/v1` };
    const userMessages = async (redactLlm: boolean): Promise<unknown[]> => {
      const botId = await bot({ name: `card llm bot ${redactLlm}`, llm, redaction: { entities: ['card_number'], redact_llm: redactLlm } });
      cloud.reset();
      cloud.chatScript = [{ text: 'Thank you.' }];
      const { caller, callId } = await startCall(w.wsUrl, botId);
      caller.send({ type: 'dtmf', digits: `${CARD}#` });
      await caller.until(() => caller.message('transcript', (m) => m.role === 'bot' && m.text === 'Thank you.'), 'the reply');
      caller.send({ type: 'stop' });
      await caller.closed;
      const call = await callUntil(callId, recorded, 'the end of the call');
      expect(call.transcript.map((e) => e.text)).toEqual(['[card_number]', 'Thank you.']);
      return cloud.chats[0]!.messages.filter((m: { role: string }) => m.role === 'user');
    };
    expect(await userMessages(false)).toEqual([{ role: 'user', content: `The caller pressed ${CARD} on the keypad.` }]);
    expect(await userMessages(true)).toEqual([{ role: 'user', content: 'The caller pressed [card_number] on the keypad.' }]);
  });
});

describe('recording per bot', () => {
  it('recording.enabled false: the call has no recording, and no recording error', async () => {
    const botId = await bot({ name: 'unrecorded bot', recording: { enabled: false }, policy: { intents: [{ name: 'bye', dtmf: '9', reply: 'Bye.', end_call: true }], fallback: { reply: 'Sorry?' } } });
    const { caller, callId } = await startCall(w.wsUrl, botId);
    const session = w.worker.sessions.get(callId)!;
    caller.send({ type: 'dtmf', digits: '9#' });
    await caller.closed;
    // Done: ended, recording saved (or not), every event handed to the outbox; settled: all delivered.
    expect(await session.done).toMatchObject({ status: 'completed', recordingKey: null, recordingError: null });
    await w.worker.events.settled(callId);
    expect(await callUntil(callId, (c) => c.status === 'completed', 'the end of the call')).toMatchObject({ end_reason: 'bot_hangup', recording_key: null, recording_error: null });
  });

  it("recording.redact_keypad_tones: the caller's channel is silent around each key, and only there", async () => {
    // The longest run of exact zeros inside the caller's audio (a tone, never zero for long).
    const longestSilenceMs = async (botId: string): Promise<number> => {
      const { caller, callId } = await startCall(w.wsUrl, botId);
      const tone = Int16Array.from({ length: 16000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 16000)) || 1);
      await caller.stream(tone);
      caller.send({ type: 'dtmf', digits: '5' });
      await caller.stream(tone);
      caller.send({ type: 'stop' });
      await caller.closed;
      const call = await callUntil(callId, recorded, 'the recording');
      const { left } = await readRecording(call.recording_key!);
      const first = left.findIndex((s) => s !== 0);
      let last = left.length - 1;
      while (last > 0 && left[last] === 0) last--;
      let longest = 0;
      for (let i = first, run = 0; i <= last; i++) {
        run = left[i] === 0 ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      return (longest / 16000) * 1000;
    };
    const policy = { intents: [{ name: 'five', dtmf: '5', reply: 'Five.' }], fallback: { reply: 'Sorry?' } };
    const silenced = await longestSilenceMs(await bot({ name: 'tone bot', recording: { redact_keypad_tones: true }, policy }));
    const kept = await longestSilenceMs(await bot({ name: 'tone bot kept', policy }));
    // 40 ms before to 300 ms after the key's event.
    expect(silenced).toBeGreaterThanOrEqual(330);
    expect(silenced).toBeLessThan(500);
    expect(kept).toBeLessThan(330);
  });
});
