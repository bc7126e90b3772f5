import { concatPcm } from '../audio/pcm.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { silence, speech } from '../../testing/audio.js';
import { TtsProcessor } from '../tts/tts.js';
import { EspeakTts } from '../tts/espeak.js';
import { VadProcessor } from '../vad/vad.js';
import { createWebRtcVad } from '../vad/webrtc.js';
import type { ServerMessage } from '../pipeline/frames.js';
import { OutputProcessor } from './output.js';
import { TransportOutputProcessor } from './io.js';

const RATE = 16000;

/** Real VAD → real espeak-ng TTS → paced output, as in a call. */
async function botPipeline() {
  const sent: Array<{ atMs: number }> = [];
  const messages: ServerMessage[] = [];
  let interruptedAtFrame = -1;
  let ended = 0;
  const output = new OutputProcessor(RATE);
  const transportOut = new TransportOutputProcessor({
    sendAudio: () => sent.push({ atMs: performance.now() }),
    sendMessage: (m) => messages.push(m),
    onEndCall: () => ended++,
  });
  const pipeline = new Pipeline([new VadProcessor(await createWebRtcVad(), RATE, { endOfTurnSilenceMs: 500 }), new TtsProcessor(new EspeakTts(), RATE), output, transportOut], {
    downstream: (f: Frame) => {
      if (f.kind === 'interruption') interruptedAtFrame = sent.length;
    },
  });
  return { pipeline, output, sent, messages, interrupted: () => interruptedAtFrame, ended: () => ended };
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Caller audio in real time, 20 ms frames. */
async function speak(pipeline: Pipeline, pcm: Int16Array): Promise<void> {
  const start = performance.now();
  for (let i = 0, k = 0; i < pcm.length; i += 320, k++) {
    pipeline.push({ kind: 'audio_in', pcm: pcm.slice(i, i + 320), sampleRate: RATE, atMs: performance.now() });
    const wait = start + (k + 1) * 20 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

describe('paced output and barge-in', () => {
  it('sends bot audio in real time, 20 ms frames, with transcripts in step', async () => {
    const t = await botPipeline();
    t.pipeline.push({ kind: 'response_start' });
    t.pipeline.push({ kind: 'text', text: 'Goodbye.' });
    t.pipeline.push({ kind: 'response_end', endCall: true });
    await until(() => t.ended() === 1, 'end of call marker');
    expect(t.messages).toEqual([{ type: 'transcript', role: 'bot', text: 'Goodbye.', final: true }]);
    const spanMs = t.sent[t.sent.length - 1]!.atMs - t.sent[0]!.atMs;
    // Paced, not dumped: n frames take about (n - 2) × 20 ms (one frame of lead).
    expect(spanMs).toBeGreaterThan((t.sent.length - 3) * 20 * 0.9);
  });

  it('stops bot audio within one frame of user speech and drops the queued sentences', async () => {
    const t = await botPipeline();
    t.pipeline.push({ kind: 'response_start' });
    t.pipeline.push({ kind: 'text', text: 'This is a long first sentence that the caller is going to interrupt quite soon.' });
    t.pipeline.push({ kind: 'text', text: 'This second sentence must never be heard.' });
    t.pipeline.push({ kind: 'response_end', endCall: true });
    await until(() => t.sent.length >= 10, 'bot audio to start');
    await speak(t.pipeline, concatPcm([speech('stop calling'), silence(300)]));
    expect(t.interrupted()).toBeGreaterThanOrEqual(10);
    expect(t.sent.length - t.interrupted()).toBeLessThanOrEqual(1);
    expect(t.messages.map((m) => (m.type === 'transcript' ? m.text : m.type))).toEqual([
      'This is a long first sentence that the caller is going to interrupt quite soon.',
    ]);
    expect(t.ended()).toBe(0);
    expect(t.output.speaking).toBe(false);
  });

  it('a mark is reached once the speech before it has been sent, and at once when a barge-in drops that speech', async () => {
    const t = await botPipeline();
    let reachedAtFrame = -1;
    t.pipeline.push({ kind: 'response_start' });
    t.pipeline.push({ kind: 'text', text: 'One moment please.' });
    t.pipeline.push({ kind: 'mark', reached: () => (reachedAtFrame = t.sent.length) });
    await until(() => reachedAtFrame >= 0, 'the first mark');
    // Every frame of the sentence had gone out (the paced queue was empty) when the mark was reached.
    expect(reachedAtFrame).toBeGreaterThan(20);
    expect(t.output.speaking).toBe(false);

    let dropped = false;
    t.pipeline.push({ kind: 'text', text: 'This is a long sentence that the caller is going to interrupt quite soon.' });
    t.pipeline.push({ kind: 'mark', reached: () => (dropped = true) });
    await until(() => t.sent.length >= reachedAtFrame + 10, 'the second sentence to start');
    expect(dropped).toBe(false);
    await speak(t.pipeline, concatPcm([speech('stop calling'), silence(300)]));
    await until(() => dropped, 'the mark after the dropped speech');
  });
});

describe('the turn breakdown (onTurn)', () => {
  it("times the caller's turn end and each provider stage, marking work done before the turn ended", async () => {
    type Turn = Parameters<NonNullable<NonNullable<ConstructorParameters<typeof OutputProcessor>[1]>['onTurn']>>[0];
    const turns: Turn[] = [];
    let sent = 0;
    const output = new OutputProcessor(RATE, { onTurn: (t) => turns.push(t) });
    const pipeline = new Pipeline([output, new TransportOutputProcessor({ sendAudio: () => sent++, sendMessage: () => undefined, onEndCall: () => undefined })]);
    const frames = (n: number): Frame => ({ kind: 'audio_out', pcm: new Int16Array(320 * n).fill(1000), sampleRate: RATE });
    const t0 = performance.now();
    // A peek on the caller's pause, before the turn's end; then the turn ends 300 ms after the speech.
    pipeline.push({ kind: 'provider_time', stage: 'stt', provider: 'pocketsphinx', ms: 40 });
    pipeline.push({ kind: 'user_stopped_speaking', atMs: t0, speechEndAtMs: t0 - 300, silenceMs: 250 });
    pipeline.push({ kind: 'provider_time', stage: 'llm', provider: 'scripted', ms: 5 });
    pipeline.push({ kind: 'provider_time', stage: 'tts', provider: 'espeak-ng', ms: 90 });
    pipeline.push(frames(3));
    await until(() => turns.length === 1 && sent === 3, 'the turn reported and its audio sent');
    const [turn] = turns;
    expect(turn!.turnEndMs).toBe(300);
    expect(turn!.silenceMs).toBe(250);
    expect(turn!.providerMs).toBe(95);
    expect(turn!.stages).toEqual([
      { stage: 'stt', provider: 'pocketsphinx', ms: 40, beforeTurnEnd: true },
      { stage: 'llm', provider: 'scripted', ms: 5, beforeTurnEnd: false },
      { stage: 'tts', provider: 'espeak-ng', ms: 90, beforeTurnEnd: false },
    ]);
    expect(turn!.latencyMs).toBeGreaterThanOrEqual(300);
    // A stage timed for the bot's own speech (no caller turn pending) is not carried into the next turn.
    pipeline.push({ kind: 'provider_time', stage: 'tts', provider: 'espeak-ng', ms: 70 });
    pipeline.push(frames(1));
    await until(() => sent === 4, 'the bot speaking on its own');
    const t1 = performance.now();
    pipeline.push({ kind: 'user_stopped_speaking', atMs: t1, speechEndAtMs: t1 - 700, silenceMs: 700 });
    pipeline.push(frames(1));
    await until(() => turns.length === 2, 'the second turn reported');
    expect(turns[1]!.stages).toEqual([]);
    expect(turns[1]!.turnEndMs).toBe(700);
  });
});
