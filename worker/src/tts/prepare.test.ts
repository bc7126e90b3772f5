// Speech synthesised ahead of its turn (a dial-out's greeting while the phone rings): the text frame that
// later carries the same text plays the prepared audio instead of synthesising it again, sample for
// sample what a fresh synthesis gives; other texts and a cancelled call are unaffected.
import { concatPcm } from '../audio/pcm.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { EspeakTts } from './espeak.js';
import { TtsProcessor, type TtsProvider } from './tts.js';

const RATE = 16000;

/** Real espeak-ng, counting what it is asked to say. */
class CountingTts implements TtsProvider {
  readonly inner = new EspeakTts();
  readonly name = this.inner.name;
  readonly sampleRate = this.inner.sampleRate;
  readonly resume = this.inner.resume;
  readonly asked: string[] = [];
  readonly signals: AbortSignal[] = [];
  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    this.asked.push(text);
    this.signals.push(signal);
    return this.inner.synthesize(text, signal);
  }
}

/** Speaks `texts` through a TTS stage and returns the audio of each, in order. */
async function speak(tts: TtsProcessor, texts: string[]): Promise<Int16Array[]> {
  const audio: Int16Array[][] = texts.map(() => []);
  let current = -1;
  let ended = false;
  const pipeline = new Pipeline([tts], {
    downstream: (f: Frame) => {
      if (f.kind === 'transcript') current = texts.indexOf(f.text);
      if (f.kind === 'audio_out') audio[current]!.push(f.pcm);
      if (f.kind === 'response_end') ended = true;
    },
  });
  pipeline.push({ kind: 'response_start' });
  for (const text of texts) pipeline.push({ kind: 'text', text });
  pipeline.push({ kind: 'response_end', endCall: false });
  const deadline = Date.now() + 20_000;
  while (!ended) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the speech');
    await new Promise((r) => setTimeout(r, 10));
  }
  return audio.map((chunks) => concatPcm(chunks));
}

describe('prepared speech', () => {
  it('plays the prepared audio for its text, identical to a fresh synthesis, without asking the provider again', async () => {
    const fresh = await speak(new TtsProcessor(new EspeakTts(), RATE), ['Hello Sam, this is your payment reminder.']);

    const provider = new CountingTts();
    const tts = new TtsProcessor(provider, RATE);
    tts.prepare('Hello Sam, this is your payment reminder.');
    expect(provider.asked).toEqual(['Hello Sam, this is your payment reminder.']);
    const [greeting, next] = await speak(tts, ['Hello Sam, this is your payment reminder.', 'Please pay soon.']);
    // The prepared text was not synthesised again; the next one, not prepared, was.
    expect(provider.asked).toEqual(['Hello Sam, this is your payment reminder.', 'Please pay soon.']);
    expect(greeting!.length).toBeGreaterThan(RATE / 2);
    expect(Buffer.from(greeting!.buffer, greeting!.byteOffset, greeting!.byteLength).equals(Buffer.from(fresh[0]!.buffer, fresh[0]!.byteOffset, fresh[0]!.byteLength))).toBe(true);
    expect(next!.length).toBeGreaterThan(0);

    // Used once: the same text again is synthesised anew.
    await speak(tts, ['Hello Sam, this is your payment reminder.']);
    expect(provider.asked).toHaveLength(3);
  });

  it('a call that never starts stops what it prepared', async () => {
    const provider = new CountingTts();
    const tts = new TtsProcessor(provider, RATE);
    tts.prepare('This greeting is never heard.');
    const pipeline = new Pipeline([tts]);
    pipeline.cancel('not_started');
    const deadline = Date.now() + 10_000;
    while (!provider.signals[0]?.aborted) {
      if (Date.now() > deadline) throw new Error('the prepared synthesis was not aborted');
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(provider.asked).toEqual(['This greeting is never heard.']);
  });
});
