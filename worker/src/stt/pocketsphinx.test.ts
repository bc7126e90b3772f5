import { concatPcm } from '../audio/pcm.js';
import { silence, speech } from '../../testing/audio.js';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { retryPolicy } from '../providers/retry.js';
import { PocketsphinxStt } from './pocketsphinx.js';
import { openSttSession } from './stt.js';

async function transcribe(stt: PocketsphinxStt, pcm: Int16Array): Promise<string> {
  const session = await stt.open();
  session.push(silence(300));
  session.speechStarted();
  for (let i = 0; i < pcm.length; i += 320) session.push(pcm.slice(i, i + 320));
  const text = await session.endOfTurn(new AbortController().signal);
  session.close();
  return text;
}

describe('pocketsphinx STT', () => {
  const phrases = ['how much', 'what amount', 'stop calling', 'goodbye', 'Zyxqv blorp'];

  it('builds a grammar of the policy phrases, dropping ones with words it cannot say', () => {
    const stt = new PocketsphinxStt({ phrases });
    expect(stt.grammarInfo?.dropped).toEqual(['Zyxqv blorp']);
  });

  it.each(['how much', 'stop calling', 'what amount'])('recognises "%s" spoken by espeak-ng', async (phrase) => {
    const stt = new PocketsphinxStt({ phrases });
    expect(await transcribe(stt, concatPcm([speech(phrase), silence(300)]))).toBe(phrase);
  });

  it('returns nothing for a turn without captured audio', async () => {
    const session = await new PocketsphinxStt({ phrases }).open();
    expect(await session.endOfTurn(new AbortController().signal)).toBe('');
  });

  it('reports a missing binary as an STT error, not a crash', async () => {
    const stt = new PocketsphinxStt({ phrases, binary: '/nonexistent/pocketsphinx' });
    await expect(transcribe(stt, speech('goodbye'))).rejects.toMatchObject({ code: 'stt_unavailable' });
  });

  it('declares resume none: a failed decode is final, through the stage too (run once, stt_failed)', async () => {
    expect(new PocketsphinxStt({ phrases }).resume).toBe('none');
    const dir = mkdtempSync(path.join(tmpdir(), 'vp-pocketsphinx-'));
    const runs = path.join(dir, 'runs');
    const broken = path.join(dir, 'pocketsphinx-broken');
    writeFileSync(broken, `#!/bin/sh\necho run >> ${runs}\necho 'decoder crashed' >&2\nexit 4\n`);
    chmodSync(broken, 0o755);
    let reported: unknown = null;
    const session = await openSttSession(new PocketsphinxStt({ phrases, binary: broken }), { error: (e) => (reported = e) }, retryPolicy(2));
    session.speechStarted();
    session.push(speech('goodbye'));
    const turn = session.endOfTurn(new AbortController().signal);
    await expect(turn).rejects.toMatchObject({ name: 'ProviderError', code: 'stt_failed', retryable: false, message: expect.stringContaining('exited with 4') });
    expect(reported).toMatchObject({ code: 'stt_failed' });
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
    await expect(session.endOfTurn(new AbortController().signal)).rejects.toMatchObject({ code: 'stt_failed' });
    session.close();
  });
});
