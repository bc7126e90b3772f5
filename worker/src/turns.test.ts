// Turn-taking (docs/design.md §11) heard as a caller hears it, over the WebSocket path: real espeak-ng speech
// in real time, the worker's WebRTC VAD and pocketsphinx, the scripted policy, espeak-ng replies. The
// caller's clock orders events (what it had streamed when the bot's audio came), nothing asserts a duration.
import { concatPcm } from './audio/pcm.js';
import { rms, silence, trimmedSpeech } from '../testing/audio.js';
import type { CallTurn } from '@voice-platform/schemas';
import { callUntil, createBot } from '../testing/backend.js';
import { startCall, type TestCaller } from '../testing/client.js';
import { startWorker, type TestWorker } from '../testing/worker.js';
import { useCloudCalls } from '../testing/cloud-calls.js';

const POLICY = {
  intents: [
    { name: 'friday', examples: ['i will pay on friday'], reply: 'Friday it is.' },
    { name: 'amount', examples: ['how much'], reply: 'It is forty dollars.' },
    { name: 'stop', examples: ['stop calling'], reply: 'Goodbye.', end_call: true },
  ],
  fallback: { reply: 'Sorry, what was that?' },
};
const GREETING = 'Hello, this is the payment reminder from Example Company about your open invoice of forty dollars, which is due on Friday.';

let w: TestWorker;
beforeAll(async () => {
  w = await startWorker();
});
afterAll(async () => {
  await w?.stop();
});

const botTexts = (c: TestCaller) => c.messages.filter((m) => m.type === 'transcript' && m.role === 'bot').map((m) => m.text);
const userFinals = (c: TestCaller) => c.messages.filter((m) => m.type === 'transcript' && m.role === 'user' && m.final).map((m) => m.text);
/** Bot audio frames with sound in them (a reply, not padding), arrival times. */
const voiced = (c: TestCaller, fromMs = 0) => c.audio.filter((a) => a.atMs >= fromMs && rms(a.pcm) > 300);

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${w.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Streams silence in 20 ms frames until `done` holds (checked per frame); the silence streamed, ms. */
async function silenceUntil(c: TestCaller, done: () => boolean, maxMs: number): Promise<number> {
  let ms = 0;
  while (!done() && ms < maxMs) {
    await c.stream(silence(20));
    ms += 20;
  }
  return ms;
}

async function hangUp(c: TestCaller): Promise<void> {
  if (c.closeCode === null) c.send({ type: 'stop' });
  await c.closed;
}

describe('smart turn detection', () => {
  it('a caller who pauses 400 ms mid-sentence gets no reply to the fragment; the reply answers the whole sentence', async () => {
    const bot = await createBot({ name: 'turns: pause', greeting: '', policy: POLICY, turn_detection: { mode: 'smart', min_silence_ms: 250, end_of_turn_silence_ms: 900 } });
    const { caller } = await startCall(w.wsUrl, bot);
    try {
      await caller.stream(trimmedSpeech('i will'));
      await caller.stream(silence(400));
      await caller.stream(trimmedSpeech('pay on friday'));
      const spokeUntil = performance.now();
      // Nothing from the bot while the caller was talking or pausing.
      expect(voiced(caller)).toEqual([]);
      await silenceUntil(caller, () => voiced(caller).length > 0, 3000);
      await caller.until(() => botTexts(caller).length > 0, 'the reply');
      expect(userFinals(caller)).toEqual(['i will pay on friday']);
      expect(botTexts(caller)).toEqual(['Friday it is.']);
      expect(voiced(caller)[0]!.atMs).toBeGreaterThan(spokeUntil);
    } finally {
      await hangUp(caller);
    }
  });

  it('a reply prepared at a pause and dropped when the caller goes on is never heard', async () => {
    // A long pause (past min_silence_ms, within the maximum): the reply to "i will" is surely prepared meanwhile.
    const bot = await createBot({ name: 'turns: preemptive', greeting: '', policy: POLICY, turn_detection: { mode: 'smart', min_silence_ms: 600, end_of_turn_silence_ms: 1500 } });
    const dropped = await metric('voice_worker_preemptive_replies_total', 'outcome="dropped"');
    const { caller } = await startCall(w.wsUrl, bot);
    try {
      await caller.stream(trimmedSpeech('i will'));
      await caller.stream(silence(1000));
      await caller.stream(trimmedSpeech('pay on friday'));
      const spokeUntil = performance.now();
      expect(voiced(caller)).toEqual([]);
      await silenceUntil(caller, () => voiced(caller).length > 0, 4000);
      await caller.until(() => botTexts(caller).length > 0, 'the reply');
      expect(botTexts(caller)).toEqual(['Friday it is.']);
      expect(voiced(caller)[0]!.atMs).toBeGreaterThan(spokeUntil);
      // A reply was prepared on "i will" and dropped when the turn ended on other words.
      expect(await metric('voice_worker_preemptive_replies_total', 'outcome="dropped"')).toBe(dropped + 1);
    } finally {
      await hangUp(caller);
    }
  });

  it('a complete short answer ends the turn before the fixed mode would have: smart replies within the silence, fixed after it', async () => {
    const td = { min_silence_ms: 250, end_of_turn_silence_ms: 1500 };
    const smart = await createBot({ name: 'turns: smart', greeting: '', policy: POLICY, turn_detection: { mode: 'smart', ...td } });
    const fixed = await createBot({ name: 'turns: fixed', greeting: '', policy: POLICY, turn_detection: { mode: 'fixed', ...td } });
    const played = await metric('voice_worker_preemptive_replies_total', 'outcome="played"');
    const complete = await metric('voice_worker_turn_ends_total', 'how="complete"');
    const heardAfter: Record<string, number> = {};
    for (const [mode, bot] of [['smart', smart], ['fixed', fixed]] as const) {
      const { caller } = await startCall(w.wsUrl, bot);
      try {
        await caller.stream(trimmedSpeech('how much'));
        // How much silence the caller had streamed when the reply's first sound came.
        heardAfter[mode] = await silenceUntil(caller, () => voiced(caller).length > 0, 4000);
        await caller.until(() => botTexts(caller).length > 0, 'the reply');
        expect(botTexts(caller)).toEqual(['It is forty dollars.']);
      } finally {
        await hangUp(caller);
      }
    }
    expect(heardAfter.smart).toBeLessThan(td.end_of_turn_silence_ms);
    expect(heardAfter.fixed).toBeGreaterThanOrEqual(td.end_of_turn_silence_ms);
    // Smart ended the turn at the pause, and the reply prepared at the first silence is the one that played.
    expect(await metric('voice_worker_turn_ends_total', 'how="complete"')).toBe(complete + 1);
    expect(await metric('voice_worker_preemptive_replies_total', 'outcome="played"')).toBe(played + 1);
  });

  it('a policy phrase whose last word often leaves a sentence open ("repeat that") still ends the turn at the pause', async () => {
    const policy = { intents: [{ name: 'repeat', examples: ['repeat that'], reply: 'It is forty dollars.' }, ...POLICY.intents], fallback: POLICY.fallback };
    const td = { min_silence_ms: 250, end_of_turn_silence_ms: 1500 };
    const bot = await createBot({ name: 'turns: repeat that', greeting: '', policy, turn_detection: { mode: 'smart', ...td } });
    const complete = await metric('voice_worker_turn_ends_total', 'how="complete"');
    const { caller } = await startCall(w.wsUrl, bot);
    try {
      await caller.stream(trimmedSpeech('repeat that'));
      const heardAfter = await silenceUntil(caller, () => voiced(caller).length > 0, 4000);
      await caller.until(() => botTexts(caller).length > 0, 'the reply');
      expect(userFinals(caller)).toEqual(['repeat that']);
      expect(botTexts(caller)).toEqual(['It is forty dollars.']);
      expect(heardAfter).toBeLessThan(td.end_of_turn_silence_ms);
    } finally {
      await hangUp(caller);
    }
    expect(await metric('voice_worker_turn_ends_total', 'how="complete"')).toBe(complete + 1);
  });
});

/** A call to a bot with the long greeting: `say` is spoken `afterMs` into the greeting; the greeting's audio heard, in samples. */
async function greetingWith(wsUrl: string, bot: string, say: Int16Array | null, afterMs = 1500, variables?: Record<string, string>): Promise<{ caller: TestCaller; heard: number; spokeAt: number }> {
  const { caller } = await startCall(wsUrl, bot, variables);
  await caller.until(() => voiced(caller).length > 0, 'the greeting');
  const first = voiced(caller)[0]!.atMs;
  await silenceUntil(caller, () => performance.now() - first >= afterMs, 10_000);
  const spokeAt = performance.now();
  if (say) await caller.stream(concatPcm([say]));
  // The greeting is over when no bot audio came for 1.5 s (a bot that paused for an acknowledgement goes on sooner).
  await silenceUntil(caller, () => caller.audio.length > 0 && performance.now() - caller.audio[caller.audio.length - 1]!.atMs > 1500, 15_000);
  const heard = caller.audio.reduce((n, a) => n + a.pcm.length, 0);
  return { caller, heard, spokeAt };
}

describe('backchannels and barge-in (pocketsphinx)', () => {
  it('"okay" during the greeting does not stop it (the bot pauses, then goes on); "wait, stop" does, soon after it starts', async () => {
    const bot = await createBot({ name: 'turns: backchannel', greeting: GREETING, policy: POLICY, interruption: { ignore_backchannels: true, min_words: 2 } });
    const whole = await greetingWith(w.wsUrl, bot, null);
    await hangUp(whole.caller);
    const backchannels = await metric('voice_worker_turn_ends_total', 'how="backchannel"');

    const acked = await greetingWith(w.wsUrl, bot, trimmedSpeech('okay'));
    try {
      // The whole greeting reached the caller (within a frame), and the acknowledgement was no turn: no reply.
      expect(acked.heard).toBeGreaterThanOrEqual(whole.heard - 320);
      expect(userFinals(acked.caller)).toEqual([]);
      expect(botTexts(acked.caller)).toEqual([GREETING]);
      expect(await metric('voice_worker_turn_ends_total', 'how="backchannel"')).toBe(backchannels + 1);
    } finally {
      await hangUp(acked.caller);
    }

    const stopped = await greetingWith(w.wsUrl, bot, trimmedSpeech('wait stop'));
    try {
      expect(stopped.heard).toBeLessThan(whole.heard - 16000); // at least a second of the greeting was cut
      // The bot's sound ended after the caller began to speak (the greeting went on until then), and before they were done.
      const last = voiced(stopped.caller).filter((a) => a.atMs < stopped.spokeAt + 2000).pop()!;
      expect(last.atMs).toBeGreaterThan(stopped.spokeAt);
      expect(last.atMs).toBeLessThan(stopped.spokeAt + trimmedSpeech('wait stop').length / 16);
      console.log(`"wait, stop": the greeting's last sound reached the caller ${Math.round(last.atMs - stopped.spokeAt)} ms after the caller began`);
    } finally {
      await hangUp(stopped.caller);
    }
  });

  it('with ignore_backchannels off, "okay" stops the greeting', async () => {
    const bot = await createBot({ name: 'turns: no backchannels', greeting: GREETING, policy: POLICY, interruption: { ignore_backchannels: false } });
    const whole = await greetingWith(w.wsUrl, bot, null);
    await hangUp(whole.caller);
    const acked = await greetingWith(w.wsUrl, bot, trimmedSpeech('okay'));
    try {
      expect(acked.heard).toBeLessThan(whole.heard - 16000);
    } finally {
      await hangUp(acked.caller);
    }
  });
});

describe('backchannels with a recogniser that knows the words (the Deepgram stand-in)', () => {
  const suite = useCloudCalls(
    { name: 'turns: deepgram', greeting: GREETING, stt: { provider: 'deepgram', model: 'nova-2', language: 'en-US' }, interruption: { ignore_backchannels: true, min_words: 2 } },
    (cloudUrl) => ({ DEEPGRAM_API_KEY: 'dg-local', DEEPGRAM_URL: `${cloudUrl.replace('http', 'ws')}/v1/listen` }),
    { customer_name: 'Sam', amount_due: 'forty' },
  );

  it('"uh-huh" during the greeting does not stop it; "wait, stop" does', async () => {
    const whole = await greetingWith(suite.w.wsUrl, suite.bot, null, 1500, { customer_name: 'Sam' });
    await hangUp(whole.caller);
    suite.cloud.deepgramTranscripts = ['uh-huh'];
    const acked = await greetingWith(suite.w.wsUrl, suite.bot, trimmedSpeech('uh huh'), 1500, { customer_name: 'Sam' });
    try {
      expect(acked.heard).toBeGreaterThanOrEqual(whole.heard - 320);
      expect(userFinals(acked.caller)).toEqual([]);
      expect(botTexts(acked.caller)).toEqual([GREETING]);
    } finally {
      await hangUp(acked.caller);
    }
    suite.cloud.deepgramTranscripts = ['wait stop'];
    const stopped = await greetingWith(suite.w.wsUrl, suite.bot, trimmedSpeech('wait stop'), 1500, { customer_name: 'Sam' });
    try {
      expect(stopped.heard).toBeLessThan(whole.heard - 16000);
      expect(userFinals(stopped.caller)).toEqual(['wait stop']);
    } finally {
      await hangUp(stopped.caller);
    }
  });
});

/** Streams silence until a reply began after `sinceMs` and then went quiet for 600 ms (no barge-in into it). */
async function replyOver(c: TestCaller, sinceMs: number): Promise<void> {
  await silenceUntil(c, () => voiced(c, sinceMs).length > 0 && performance.now() - c.audio[c.audio.length - 1]!.atMs > 600, 15_000);
  expect(voiced(c, sinceMs).length).toBeGreaterThan(0);
}

/** The stage times of a turn add up to its latency within a frame (docs/design.md §16). */
function expectWholeTurn(turn: CallTurn): void {
  for (const k of ['stt_ms', 'llm_first_token_ms', 'tts_first_audio_ms', 'tool_ms', 'latency_ms'] as const) expect(Number.isInteger(turn[k]) && turn[k] >= 0).toBe(true);
  const decidedMs = Date.parse(turn.decided_at) - Date.parse(turn.user_end_at);
  expect(decidedMs).toBeGreaterThanOrEqual(0);
  expect(Math.abs(decidedMs + turn.stt_ms + turn.llm_first_token_ms + turn.tool_ms + turn.tts_first_audio_ms - turn.latency_ms)).toBeLessThanOrEqual(20);
}

describe('turns on the record (GET /calls/{id} turns)', () => {
  it('fixed turn-taking: each turn with the words, the decision after the silence, and stages that sum to its latency', async () => {
    const td = { mode: 'fixed' as const, end_of_turn_silence_ms: 600 };
    const bot = await createBot({ name: 'turns: record fixed', greeting: '', policy: POLICY, turn_detection: td });
    const { caller, callId } = await startCall(w.wsUrl, bot);
    try {
      for (const said of ['how much', 'i will pay on friday']) {
        await caller.stream(trimmedSpeech(said));
        await replyOver(caller, performance.now());
      }
    } finally {
      await hangUp(caller);
    }
    const call = await callUntil(callId, (c) => c.turns !== undefined, 'the turns');
    expect(call.turns!.map((t) => [t.index, t.user_text, t.preemptive, t.interrupted])).toEqual([
      [1, 'how much', false, false],
      [2, 'i will pay on friday', false, false],
    ]);
    for (const turn of call.turns!) {
      expectWholeTurn(turn);
      // The decision waited the whole end-of-turn silence; the reply's first audio was synthesised after it.
      // (Less a frame or two: the VAD's times are its audio's arrival, and frames streamed together share one.)
      expect(Date.parse(turn.decided_at) - Date.parse(turn.user_end_at)).toBeGreaterThanOrEqual(td.end_of_turn_silence_ms - 60);
      expect(turn.tts_first_audio_ms).toBeGreaterThan(0);
    }
  });

  it('smart turn-taking: a reply prepared on the pause is marked preemptive; a reply the caller cuts short is marked interrupted', async () => {
    const policy = { ...POLICY, intents: [...POLICY.intents, { name: 'long', examples: ['when is it due'], reply: 'It is due on Friday, the twelfth, and you can pay it online, by phone, or at any of our offices before then.' }] };
    const bot = await createBot({ name: 'turns: record smart', greeting: '', policy, turn_detection: { mode: 'smart', min_silence_ms: 250, end_of_turn_silence_ms: 1500 } });
    const { caller, callId } = await startCall(w.wsUrl, bot);
    try {
      await caller.stream(trimmedSpeech('how much'));
      await replyOver(caller, performance.now());
      await caller.stream(trimmedSpeech('when is it due'));
      // Into the long reply: the caller speaks over it.
      await silenceUntil(caller, () => voiced(caller, performance.now() - 200).length > 10, 5000);
      await caller.stream(trimmedSpeech('wait stop'));
      await silenceUntil(caller, () => false, 2000);
    } finally {
      await hangUp(caller);
    }
    const call = await callUntil(callId, (c) => c.turns !== undefined, 'the turns');
    const [first, second] = call.turns!;
    expect(first).toMatchObject({ index: 1, user_text: 'how much', preemptive: true, interrupted: false });
    expect(second).toMatchObject({ index: 2, user_text: 'when is it due', interrupted: true });
    // A prepared reply waited on no stage after the decision.
    expect([first!.llm_first_token_ms, first!.tts_first_audio_ms, first!.tool_ms]).toEqual([0, 0, 0]);
    for (const turn of call.turns!) expectWholeTurn(turn);
  });
});
