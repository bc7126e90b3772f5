// Text without sentence punctuation is spoken too: a greeting "Hello Sam" or a policy reply with no
// final stop must reach the caller as bot audio and a bot transcript, not wait for a stop that never comes.
import { recognise, silence, speech } from '../../testing/audio.js';
import { createBot } from '../../testing/backend.js';
import { startCall, type TestCaller } from '../../testing/client.js';
import { startWorker, type TestWorker } from '../../testing/worker.js';

const VARIABLES = { customer_name: 'Sam', amount_due: 'forty' };
const variables = [
  { name: 'customer_name', required: true, description: '' },
  { name: 'amount_due', required: false, description: '' },
];
const phrases = ['hello sam', 'the open amount is forty dollars', 'goodbye sam', 'sorry'];

let w: TestWorker;
beforeAll(async () => {
  w = await startWorker();
});
afterAll(async () => {
  await w?.stop();
});

const botTexts = (caller: TestCaller) => caller.messages.filter((m) => m.type === 'transcript' && m.role === 'bot').map((m) => m.text);

it('speaks a greeting that has no sentence punctuation', async () => {
  const botId = await createBot({ name: 'bare greeting', greeting: 'Hello {{customer_name}}', variables, max_call_seconds: 30 });
  const { caller } = await startCall(w.wsUrl, botId, VARIABLES);
  try {
    await caller.until(() => caller.message('transcript', (m) => m.role === 'bot'), 'the greeting', 10_000);
    expect(caller.message('transcript', (m) => m.role === 'bot')).toEqual({ type: 'transcript', role: 'bot', text: 'Hello Sam', final: true });
    await caller.until(() => caller.audio.length > 0, 'bot audio', 10_000);
    while (performance.now() - caller.audio[caller.audio.length - 1]!.atMs < 400) await caller.stream(silence(100));
    expect(recognise(caller.botAudio(), 16000, phrases)).toBe('hello sam');
  } finally {
    caller.send({ type: 'stop' });
    await caller.closed;
  }
});

it('speaks policy replies that have no sentence punctuation, the last one before hanging up', async () => {
  const botId = await createBot({
    name: 'bare replies',
    greeting: '',
    variables,
    policy: {
      intents: [
        { name: 'amount', examples: ['how much', 'what amount'], reply: 'The open amount is {{amount_due}} dollars' },
        { name: 'stop', examples: ['stop calling', 'goodbye'], reply: 'Goodbye {{customer_name}}', end_call: true },
      ],
      fallback: { reply: 'Sorry' },
    },
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 60,
  });
  const { caller } = await startCall(w.wsUrl, botId, VARIABLES);
  await caller.stream(silence(300));
  const askedAt = performance.now();
  await caller.stream(speech('how much'));
  await caller.stream(silence(900));
  await caller.until(() => botTexts(caller).length === 1 && caller.audio.some((a) => a.atMs > askedAt), 'the reply', 15_000);
  while (performance.now() - caller.audio[caller.audio.length - 1]!.atMs < 400) await caller.stream(silence(100));
  expect(botTexts(caller)).toEqual(['The open amount is forty dollars']);
  expect(recognise(caller.botAudio(askedAt), 16000, phrases)).toBe('the open amount is forty dollars');

  const byeAt = performance.now();
  await caller.stream(speech('stop calling'));
  await caller.stream(silence(900));
  await caller.until(() => caller.closeCode !== null, 'the call to end', 15_000);
  expect(botTexts(caller)).toEqual(['The open amount is forty dollars', 'Goodbye Sam']);
  expect(recognise(caller.botAudio(byeAt), 16000, phrases)).toBe('goodbye sam');
  expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'bot_hangup' });
});
