// The answering machine detector on real speech (espeak-ng), through a phone line's band (8 kHz and back),
// with tones as machines and fax machines make them.
import { concatPcm } from '../audio/pcm.js';
import { resample } from '../audio/resample.js';
import { silence, speech } from '../../testing/audio.js';
import { createWebRtcVad } from '../vad/webrtc.js';
import { AMD, AmdDetector, toneOf } from './detector.js';

const RATE = 16000;
/** What a phone line leaves of it: 8 kHz, and back to the call's rate. */
const line = (pcm: Int16Array) => resample(resample(pcm, RATE, 8000), 8000, RATE);
const tone = (hz: number, ms: number, amplitude = 8000) => Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE)));
const durationMs = (pcm: Int16Array) => (pcm.length / RATE) * 1000;

/** Feeds `audio` in 20 ms chunks until the detector decided (or the audio ran out). */
async function run(audio: Int16Array): Promise<AmdDetector> {
  const d = new AmdDetector(await createWebRtcVad(), RATE);
  for (let at = 0; at < audio.length; at += 320) d.push(audio.subarray(at, at + 320));
  return d;
}

describe('answering machine detection', () => {
  it('toneOf: a pure tone is pure at its frequency; speech and noise are not', () => {
    const t = toneOf(tone(1000, 20), RATE);
    expect(t.hz).toBe(1000);
    expect(t.purity).toBeGreaterThan(0.9);
    const voice = speech('hello there', RATE);
    const mid = voice.subarray(voice.length / 2, voice.length / 2 + 320);
    expect(toneOf(mid, RATE).purity).toBeLessThan(AMD.TONE_PURITY);
    const noise = Int16Array.from({ length: 320 }, () => Math.round((Math.random() - 0.5) * 4000));
    expect(toneOf(noise, RATE).purity).toBeLessThan(0.2);
  });

  it.each([
    ['Hello?', 'clean'],
    ['Yes?', 'on a phone line'],
    ['Hi, this is Dana.', 'on a phone line'],
  ])('a person\'s short answer "%s" (%s): human, within 1.2 s of its end', async (text, how) => {
    const said = speech(text, RATE);
    const audio = concatPcm([silence(300), how === 'clean' ? said : line(said), silence(3000)]);
    const d = await run(audio);
    const decision = await d.decided;
    expect(decision).toMatchObject({ answeredBy: 'human', rule: 'short_answer' });
    expect(decision.atMs - (300 + durationMs(said))).toBeLessThanOrEqual(1200);
  });

  it('a pause, then "hello": human', async () => {
    const d = await run(concatPcm([silence(1500), line(speech('hello', RATE)), silence(2000)]));
    expect(await d.decided).toMatchObject({ answeredBy: 'human', rule: 'short_answer' });
  });

  it('nobody says anything: unknown (greeted as a person) after 2.5 s', async () => {
    const d = await run(silence(4000));
    expect(await d.decided).toEqual({ answeredBy: 'unknown', atMs: AMD.SILENCE_MS, rule: 'silence' });
  });

  it('a long greeting in one breath: machine once it has talked 6 s without a real pause', async () => {
    const greeting = line(speech('Hi you have reached Dana and Mark and we cannot take your call right now so please leave your name and your number and a short message and we will call you back as soon as we can', RATE));
    expect(durationMs(greeting)).toBeGreaterThan(8000);
    const d = await run(concatPcm([silence(400), greeting, silence(2000)]));
    const decision = await d.decided;
    expect(decision).toMatchObject({ answeredBy: 'machine', rule: 'long_greeting' });
    expect(decision.atMs).toBeLessThan(400 + 8000);
  });

  it('a greeting read out in sentences, without a beep: machine by its phrases, before it ends', async () => {
    const greeting = line(speech("Hi, this is Priya. Sorry I missed you. Leave me a message and I'll call you back.", RATE));
    const d = await run(concatPcm([silence(400), greeting, silence(3000)]));
    const decision = await d.decided;
    expect(decision).toMatchObject({ answeredBy: 'machine', rule: 'phrases' });
    expect(decision.atMs).toBeLessThan(400 + durationMs(greeting));
  });

  it('two sentences, then quiet: a greeting, not an answer', async () => {
    const d = await run(concatPcm([silence(300), line(speech("Hello. I'm not available.", RATE)), silence(3000)]));
    expect(await d.decided).toMatchObject({ answeredBy: 'machine', rule: 'phrases' });
  });

  it('a greeting and its beep: machine at the beep; the message goes once the beep ended', async () => {
    const greeting = line(speech('Please leave a message after the tone.', RATE));
    const beepAt = 300 + durationMs(greeting) + 300;
    const d = await run(concatPcm([silence(300), greeting, silence(300), tone(1000, 600), silence(3000)]));
    const decision = await d.decided;
    expect(decision).toMatchObject({ answeredBy: 'machine', rule: 'beep' });
    expect(decision.atMs).toBeGreaterThanOrEqual(beepAt);
    expect(decision.atMs).toBeLessThanOrEqual(beepAt + 200);
    expect(await d.messageCue(30_000)).toBe('beep');
  });

  it('a short greeting, a pause, then its beep: taken for a person, then revised to a machine by the beep', async () => {
    const greeting = line(speech('Please leave a message after the tone.', RATE));
    const beepAt = 300 + durationMs(greeting) + 1500;
    const d = await run(concatPcm([silence(300), greeting, silence(1500), tone(1000, 600), silence(3000)]));
    expect(await d.decided).toMatchObject({ answeredBy: 'human', rule: 'long_answer' });
    const revised = await d.revised;
    expect(revised).toMatchObject({ answeredBy: 'machine', rule: 'late_beep' });
    expect(revised.atMs).toBeGreaterThanOrEqual(beepAt);
    expect(await d.messageCue(30_000)).toBe('beep');
  });

  it('a beep at once (no greeting): machine within 200 ms of it', async () => {
    const d = await run(concatPcm([silence(500), tone(850, 500), silence(2000)]));
    const decision = await d.decided;
    expect(decision).toMatchObject({ answeredBy: 'machine', rule: 'beep' });
    expect(decision.atMs).toBeLessThanOrEqual(500 + 200);
  });

  it('leave_message without a beep: the message goes after the greeting and 1.2 s of quiet', async () => {
    const greeting = line(speech("Hi, you've reached Dana and Mark. We can't take your call right now. Please leave your name, your number and a short message.", RATE));
    const d = new AmdDetector(await createWebRtcVad(), RATE);
    const audio = concatPcm([silence(300), greeting, silence(4000)]);
    let cueAtMs = -1;
    const cue = d.decided.then(() => d.messageCue(30_000)).then((c) => {
      cueAtMs = d.elapsedMs;
      return c;
    });
    for (let at = 0; at < audio.length; at += 320) {
      d.push(audio.subarray(at, at + 320));
      await Promise.resolve(); // let the decision's handlers run between frames, as live audio would
    }
    expect(await cue).toBe('quiet');
    const greetingEnd = 300 + durationMs(greeting);
    expect(cueAtMs).toBeGreaterThanOrEqual(greetingEnd + AMD.GREETING_END_QUIET_MS - 300);
    expect(cueAtMs).toBeLessThanOrEqual(greetingEnd + AMD.GREETING_END_QUIET_MS + 300);
  });

  it('leave_message: a greeting that never ends lets the message go at the wait limit', async () => {
    const d = new AmdDetector(await createWebRtcVad(), RATE);
    const chatter = line(speech('This recording will go on and on and on without any pause at all for quite a long while yet.', RATE));
    const audio = concatPcm([chatter, chatter, chatter]);
    const cue = d.decided.then(() => d.messageCue(3000));
    for (let at = 0; at < audio.length; at += 320) {
      d.push(audio.subarray(at, at + 320));
      await Promise.resolve();
    }
    expect(await cue).toBe('timeout');
  });

  it("a fax machine's CNG (1100 Hz, 0.5 s on, 3 s off): fax at the second burst", async () => {
    const cng = concatPcm([silence(200), tone(1100, 500), silence(3000), tone(1100, 500), silence(1000)]);
    const d = await run(cng);
    const decision = await d.decided;
    expect(decision.answeredBy).toBe('fax');
    expect(decision.rule).toBe('fax_tone');
    expect(decision.atMs).toBeGreaterThanOrEqual(200 + 500 + 3000 + 500);
  });

  it('the long-winded person ("Hello, this is John speaking, how can I help you today?") is not hung up on', async () => {
    const d = await run(concatPcm([silence(300), line(speech('Hello, this is John speaking, how can I help you today?', RATE)), silence(3000)]));
    expect(await d.decided).toMatchObject({ answeredBy: 'human', rule: 'long_answer' });
  });
});
