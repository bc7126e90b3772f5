import { concatPcm } from '../audio/pcm.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { silence, speech } from '../testing/audio.js';
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
