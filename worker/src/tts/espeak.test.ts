import { EspeakTts } from './espeak.js';
import { concatPcm } from '../audio/pcm.js';
import { resample } from '../audio/resample.js';
import { recognise } from '../testing/audio.js';

async function collect(it: AsyncIterable<Int16Array>): Promise<Int16Array[]> {
  const out: Int16Array[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('espeak-ng TTS', () => {
  it('streams 22050 Hz speech that pocketsphinx understands after conversion to 16 kHz', async () => {
    const tts = new EspeakTts();
    const chunks = await collect(tts.synthesize('stop calling', new AbortController().signal));
    const pcm = resample(concatPcm(chunks), 22050, 16000);
    expect(pcm.length / 16000).toBeGreaterThan(0.4);
    expect(recognise(pcm, 16000, ['stop calling', 'how much', 'goodbye'])).toBe('stop calling');
  });

  it('streams long text in several chunks', async () => {
    const text = 'This is the first sentence of a reply. Here is the second one, a bit longer than the first. And a third.';
    const chunks = await collect(new EspeakTts().synthesize(text, new AbortController().signal));
    expect(chunks.length).toBeGreaterThan(1);
  });

  it('stops when aborted', async () => {
    const tts = new EspeakTts();
    const abort = new AbortController();
    const chunks: Int16Array[] = [];
    for await (const c of tts.synthesize('this is a long sentence that goes on and on for quite a while indeed', abort.signal)) {
      chunks.push(c);
      abort.abort();
    }
    expect(chunks.length).toBe(1);
  });

  it('never treats the text as options', async () => {
    const chunks = await collect(new EspeakTts().synthesize('--version', new AbortController().signal));
    expect(concatPcm(chunks).length).toBeGreaterThan(1000);
  });

  it('reports a missing binary as a TTS error', async () => {
    await expect(collect(new EspeakTts({ binary: '/nonexistent/espeak' }).synthesize('hi', new AbortController().signal))).rejects.toMatchObject({ code: 'tts_unavailable' });
  });
});
