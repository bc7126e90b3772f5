// The live pocketsphinx decoders (live-decoder.ts, worker/python/live_decoder.py on Debian's python3-pocketsphinx)
// against the real decoder and espeak-ng speech: final words without a whole-turn decode, one decoder reused
// across a call's turns, calls that do not mix, a killed decoder process, and the per-turn fallback.
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Spawner } from '../proc/spawner.js';
import type { ProviderError } from '../providers/errors.js';
import { retryPolicy } from '../providers/retry.js';
import { silence, speech, trimmedSpeech } from '../../testing/audio.js';
import { LiveDecoder } from './live-decoder.js';
import { PocketsphinxStt } from './pocketsphinx.js';
import { openSttSession, type SttSession } from './stt.js';

const phrases = ['how much', 'what amount', 'stop calling', 'goodbye'];
const FRAME = 320; // 20 ms at 16 kHz
const never = new AbortController().signal;

const dir = mkdtempSync(path.join(tmpdir(), 'vp-live-decoder-'));
/** A pocketsphinx_continuous that notes each run in `runs` (then decodes as the real one). */
const runs = path.join(dir, 'runs');
const counted = path.join(dir, 'pocketsphinx-counted');
writeFileSync(counted, `#!/bin/sh\necho run >> ${runs}\nexec pocketsphinx_continuous "$@"\n`);
chmodSync(counted, 0o755);

function feed(session: SttSession, pcm: Int16Array): void {
  for (let i = 0; i < pcm.length; i += FRAME) session.push(pcm.subarray(i, i + FRAME));
}

/** One turn: a little silence (the pre-roll), speech start, the phrase, the end-of-turn silence. */
async function turn(session: SttSession, phrase: string): Promise<string> {
  feed(session, silence(300));
  session.speechStarted();
  feed(session, speech(phrase));
  feed(session, silence(400));
  return session.endOfTurn(never);
}

describe('live pocketsphinx decoding', () => {
  const spawner = new Spawner();
  const lost: number[] = [];
  const live = new LiveDecoder({ spawner, onLost: (_err, calls) => lost.push(calls) });
  const stt = new PocketsphinxStt({ phrases, binary: counted, spawner, live });

  afterAll(async () => {
    await live.close();
    await spawner.close();
  });

  it('hears the turn as it is spoken: words before its end, the final words with no pocketsphinx_continuous run', async () => {
    const session = await stt.open();
    expect(stt.decodesLive).toBe(true);
    const pcm = speech('stop calling');
    feed(session, silence(300));
    session.speechStarted();
    // The first word, not yet the second: the live decoder already has it.
    feed(session, pcm.subarray(0, Math.round(pcm.length * 0.45)));
    const mid = await session.peek!(never);
    expect(mid).toEqual({ text: 'stop', final: true });
    feed(session, pcm.subarray(Math.round(pcm.length * 0.45)));
    feed(session, silence(400));
    expect(await session.endOfTurn(never)).toBe('stop calling');
    session.close();
    expect(existsSync(runs)).toBe(false);
  });

  it('reuses the call’s decoder across its turns (one decoder opened for three turns), hearing each as the first', async () => {
    const opened = live.opened;
    const session = await new PocketsphinxStt({ phrases: [...phrases, 'i will pay on friday'], binary: counted, spawner, live }).open();
    expect(await turn(session, 'what amount')).toBe('what amount');
    // A turn with a pause in it.
    feed(session, silence(300));
    session.speechStarted();
    feed(session, trimmedSpeech('i will'));
    feed(session, silence(300));
    feed(session, trimmedSpeech('pay on friday'));
    feed(session, silence(200));
    expect(await session.endOfTurn(never)).toBe('i will pay on friday');
    // The next turn's quiet last word is heard at its first pause (the smart end-of-turn ends the turn on it).
    feed(session, silence(300));
    session.speechStarted();
    feed(session, trimmedSpeech('how much'));
    feed(session, silence(100));
    expect((await session.peek!(never)).text).toBe('how much');
    feed(session, silence(400));
    expect(await session.endOfTurn(never)).toBe('how much');
    session.close();
    expect(live.opened - opened).toBe(1);
    expect(existsSync(runs)).toBe(false);
  });

  it('peeks at a pause mid-phrase hear the words so far, not a whole phrase (smart end-of-turn stays meaningful)', async () => {
    const session = await stt.open();
    feed(session, silence(300));
    session.speechStarted();
    feed(session, speech('what'));
    feed(session, silence(500));
    expect((await session.peek!(never)).text).toBe('what');
    // The caller goes on: the turn's final words are the whole phrase.
    feed(session, speech('amount'));
    feed(session, silence(400));
    expect(await session.endOfTurn(never)).toBe('what amount');
    session.close();
  });

  it('over the bot, an acknowledgement is heard as one (the overlap grammar), not forced into a phrase', async () => {
    const session = await stt.open();
    feed(session, silence(300));
    session.speechStarted();
    feed(session, speech('okay'));
    feed(session, silence(500));
    expect((await session.peek!(never, true)).text).toBe('okay');
    session.discardTurn!();
    expect(await turn(session, 'stop calling')).toBe('stop calling');
    session.close();
  });

  it('keeps two calls at once apart', async () => {
    const [a, b] = await Promise.all([stt.open(), stt.open()]);
    const [pa, pb] = [speech('what amount'), speech('goodbye')];
    for (const s of [a!, b!]) {
      feed(s, silence(300));
      s.speechStarted();
    }
    // Frame by frame in turn, as two calls' audio arrives.
    for (let i = 0; i < Math.max(pa.length, pb.length); i += FRAME) {
      if (i < pa.length) a!.push(pa.subarray(i, i + FRAME));
      if (i < pb.length) b!.push(pb.subarray(i, i + FRAME));
    }
    feed(a!, silence(400));
    feed(b!, silence(400));
    expect(await Promise.all([a!.endOfTurn(never), b!.endOfTurn(never)])).toEqual(['what amount', 'goodbye']);
    a!.close();
    b!.close();
  });

  it('a decoder process killed mid-call fails that call (stt) and the next call gets a new one', async () => {
    let reported: ProviderError | null = null;
    const gotError = new Promise<void>((resolve) => {
      void openSttSession(stt, { error: (e) => ((reported = e), resolve()) }, retryPolicy(2)).then(async (session) => {
        session.speechStarted();
        feed(session, speech('how much'));
        await session.peek(never);
        const pid = live.pid!;
        process.kill(pid, 'SIGKILL');
        await expect(session.endOfTurn(never)).rejects.toMatchObject({ name: 'ProviderError', stage: 'stt', code: 'stt_failed' });
        session.close();
      });
    });
    await gotError;
    expect(reported).toMatchObject({ stage: 'stt', code: 'stt_failed', message: expect.stringContaining('SIGKILL') });
    expect(lost).toEqual([1]);
    const next = await stt.open();
    expect(await turn(next, 'what amount')).toBe('what amount');
    next.close();
    expect(existsSync(runs)).toBe(false);
  });

  it('closing a call frees its decoder for the next call with the same grammar (no second load)', async () => {
    const session = await stt.open();
    session.close();
    const again = await stt.open();
    expect(live.lastLoad).toMatchObject({ reused: true });
    again.close();
  });
});

describe('without the Python binding', () => {
  it('decodes each turn whole, saying so once', async () => {
    // A Python that cannot see Debian's dist-packages (-S: no site): the binding does not import.
    const noBinding = path.join(dir, 'python-no-binding');
    writeFileSync(noBinding, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    chmodSync(noBinding, 0o755);
    const spawner = new Spawner();
    const told: string[] = [];
    const live = new LiveDecoder({ spawner, python: noBinding, onUnavailable: (why) => told.push(why) });
    const stt = new PocketsphinxStt({ phrases, spawner, live });
    for (const phrase of ['goodbye', 'how much']) {
      const session = await stt.open();
      expect(await turn(session, phrase)).toBe(phrase);
      session.close();
    }
    expect(stt.decodesLive).toBe(false);
    expect(told).toEqual([expect.stringContaining('pocketsphinx')]);
    await spawner.close();
  });
});
