import { concatPcm } from '../audio/pcm.js';
import { silence, speech } from '../testing/audio.js';
import { PocketsphinxStt } from './pocketsphinx.js';

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
});
