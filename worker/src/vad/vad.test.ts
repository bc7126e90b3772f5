import { concatPcm } from '../audio/pcm.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { silence, speech, trimmedSpeech } from '../../testing/audio.js';
import { VadProcessor } from './vad.js';
import { createWebRtcVad } from './webrtc.js';

/** Feeds audio as 20 ms frames stamped with audio time (no real-time wait needed for the VAD). */
async function run(pcm: Int16Array, rate: number, endOfTurnSilenceMs: number): Promise<Frame[]> {
  const events: Frame[] = [];
  const p = new Pipeline([new VadProcessor(await createWebRtcVad(), rate, { endOfTurnSilenceMs })], {
    downstream: (f) => f.kind !== 'audio_in' && events.push(f),
  });
  const n = rate / 50;
  for (let i = 0; i < pcm.length; i += n) p.push({ kind: 'audio_in', pcm: pcm.slice(i, i + n), sampleRate: rate, atMs: (i / rate) * 1000 });
  await p.idle();
  return events;
}

describe('WebRTC VAD turn detection', () => {
  it('hears nothing in silence', async () => {
    expect(await run(silence(1500), 16000, 500)).toEqual([]);
  });

  it('marks speech start (with a barge-in) and the end of turn after the configured silence', async () => {
    const said = speech('how much is it', 16000);
    const audio = concatPcm([silence(500), said, silence(1200)]);
    const events = await run(audio, 16000, 600);
    expect(events.map((e) => e.kind)).toEqual(['user_started_speaking', 'interruption', 'user_stopped_speaking']);
    const start = events[0] as Extract<Frame, { kind: 'user_started_speaking' }>;
    const stop = events[2] as Extract<Frame, { kind: 'user_stopped_speaking' }>;
    const saidMs = (said.length / 16000) * 1000;
    expect(start.atMs).toBeGreaterThanOrEqual(500);
    expect(start.atMs).toBeLessThan(700);
    // Speech ends within the spoken audio; the turn ends the configured silence after it.
    expect(stop.speechEndAtMs).toBeGreaterThan(500 + saidMs - 500); // espeak-ng ends with a short pause
    expect(stop.speechEndAtMs).toBeLessThanOrEqual(500 + saidMs);
    expect(stop.silenceMs).toBe(600);
    expect(stop.atMs - stop.speechEndAtMs).toBeGreaterThanOrEqual(600);
    expect(stop.atMs - stop.speechEndAtMs).toBeLessThanOrEqual(640);
  });

  it('does not end the turn when the silence is shorter than the bot setting', async () => {
    const audio = concatPcm([speech('stop calling', 16000), silence(400)]);
    const events = await run(audio, 16000, 800);
    expect(events.map((e) => e.kind)).toEqual(['user_started_speaking', 'interruption']);
  });

  it('works at call rates the detector does not take natively (24 kHz)', async () => {
    const audio = concatPcm([silence(300), speech('goodbye', 24000), silence(800)], );
    const events = await run(audio, 24000, 500);
    expect(events.map((e) => e.kind)).toEqual(['user_started_speaking', 'interruption', 'user_stopped_speaking']);
  });
});

describe('WebRTC VAD: smart turn detection', () => {
  const start = async (opts: ConstructorParameters<typeof VadProcessor>[2]) => {
    const events: Frame[] = [];
    const vad = new VadProcessor(await createWebRtcVad(), 16000, opts);
    const p = new Pipeline([vad], { downstream: (f) => f.kind !== 'audio_in' && events.push(f) });
    let at = 0;
    const feed = async (pcm: Int16Array) => {
      for (let i = 0; i < pcm.length; i += 320) {
        p.push({ kind: 'audio_in', pcm: pcm.slice(i, i + 320), sampleRate: 16000, atMs: at });
        at += 20;
      }
      await p.idle();
    };
    return { events, feed, vad };
  };

  it('reports the first silence, then min_silence_ms and a look every REDECIDE_MS, then the caller going on, and ends the turn at the maximum', async () => {
    const { events, feed } = await start({ endOfTurnSilenceMs: 700, minSilenceMs: 250, smart: true });
    await feed(concatPcm([silence(300), trimmedSpeech('i will'), silence(400), trimmedSpeech('pay on friday'), silence(900)]));
    const kinds = events.map((e) => (e.kind === 'user_paused' ? `paused:${e.decide ? 'decide' : 'first'}` : e.kind));
    const looks = (n: number) => Array.from({ length: n }, () => 'paused:decide');
    expect(kinds).toEqual(['user_started_speaking', 'interruption', 'paused:first', ...looks(1), 'user_resumed', 'paused:first', ...looks(5), 'user_stopped_speaking']);
    const pauses = events.filter((e): e is Extract<Frame, { kind: 'user_paused' }> => e.kind === 'user_paused');
    // In whole VAD frames (20 ms): the first at or past each mark; the last look before the 700 ms end.
    expect(pauses.map((e) => e.silenceMs)).toEqual([100, 260, 100, 260, 360, 460, 560, 660]);
    expect(new Set(events.flatMap((e) => ('turn' in e ? [e.turn] : [])))).toEqual(new Set([1]));
  });

  it('fixed mode reports no pauses', async () => {
    const { events, feed } = await start({ endOfTurnSilenceMs: 700, minSilenceMs: 250 });
    await feed(concatPcm([silence(300), trimmedSpeech('i will'), silence(400), trimmedSpeech('pay on friday'), silence(900)]));
    expect(events.map((e) => e.kind)).toEqual(['user_started_speaking', 'interruption', 'user_stopped_speaking']);
  });

  it('speech over the bot starts tentative (no interruption) when backchannels are ignored', async () => {
    const { events, feed, vad } = await start({ endOfTurnSilenceMs: 700, minSilenceMs: 250, ignoreBackchannels: true });
    // Fixed mode: the pauses of speech over the bot are reported all the same.
    vad.queueFrame({ kind: 'bot_speaking', speaking: true }, 'upstream');
    await feed(concatPcm([silence(200), speech('uh huh', 16000), silence(800)]));
    expect(events[0]).toMatchObject({ kind: 'user_started_speaking', tentative: true, turn: 1 });
    expect(events.some((e) => e.kind === 'interruption')).toBe(false);
    expect(events.filter((e) => e.kind === 'user_paused').map((e) => (e as { decide: boolean }).decide)).toEqual([false, true, true, true, true, true]);
  });

  it('a turn the STT stage ended at a pause is over: the next speech is a new turn', async () => {
    const { events, feed, vad } = await start({ endOfTurnSilenceMs: 700, minSilenceMs: 250, smart: true });
    await feed(concatPcm([silence(200), speech('how much', 16000), silence(300)]));
    vad.queueFrame({ kind: 'end_turn', turn: 1 }, 'upstream');
    await feed(concatPcm([silence(600), speech('stop calling', 16000), silence(300)]));
    expect(events.filter((e) => e.kind === 'user_stopped_speaking')).toEqual([]);
    expect(events.filter((e) => e.kind === 'user_started_speaking').map((e) => (e as { turn: number }).turn)).toEqual([1, 2]);
  });
});
