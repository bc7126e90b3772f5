import { EspeakTts } from './espeak.js';
import { concatPcm } from '../audio/pcm.js';
import { resample } from '../audio/resample.js';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recognise } from '../../testing/audio.js';
import { ttsStage } from '../../testing/stages.js';

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

  it('declares resume none: a failure after audio is final (run once, the audio heard stays, tts_failed)', async () => {
    const tts = new EspeakTts();
    expect(tts.resume).toBe('none');
    const dir = mkdtempSync(path.join(tmpdir(), 'vp-espeak-'));
    const runs = path.join(dir, 'runs');
    const broken = path.join(dir, 'espeak-broken');
    // Real espeak-ng output cut after 20000 bytes (header and some audio), then a failing exit.
    writeFileSync(broken, `#!/bin/sh\necho run >> ${runs}\nespeak-ng "$@" | head -c 20000\nexit 3\n`);
    chmodSync(broken, 0o755);
    const r = await ttsStage(new EspeakTts({ binary: broken }), 'this is a long sentence that goes on and on for quite a while indeed');
    expect(r.error).toMatchObject({ code: 'tts_failed', message: expect.stringContaining('exited with 3') });
    expect(r.audio.length).toBeGreaterThan(1000);
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
  });

  it('a missing binary is not retried by the stage', async () => {
    const r = await ttsStage(new EspeakTts({ binary: '/nonexistent/espeak' }), 'hi');
    expect(r.error).toMatchObject({ code: 'tts_unavailable', message: expect.stringContaining('could not start') });
    expect(r.error!.message).not.toContain('attempts');
  });
});
