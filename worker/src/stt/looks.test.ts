// Smart turn-taking's later looks (vad.ts REDECIDE_MS, stt.ts peekAt): a recogniser that has not settled a turn's
// last word at min_silence_ms ends the turn at a later look once it has, not at the end-of-turn silence. The real
// WebRTC VAD and live pocketsphinx decoder, fed a line that reaches the decoder late (as a loaded machine or a
// phone line's buffers make it), so the min-silence look deterministically hears the phrase unfinished.
import { setTimeout as sleep } from 'node:timers/promises';
import type { BotPolicy } from '@voice-platform/schemas';
import { waitUntil } from '@voice-platform/tests/infra';
import { concatPcm } from '../audio/pcm.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { Spawner } from '../proc/spawner.js';
import { DEFAULT_RETRY } from '../providers/retry.js';
import { silence, trimmedSpeech } from '../../testing/audio.js';
import { VadProcessor } from '../vad/vad.js';
import { createWebRtcVad } from '../vad/webrtc.js';
import { LiveDecoder } from './live-decoder.js';
import { PocketsphinxStt } from './pocketsphinx.js';
import { SttProcessor, type SttProvider } from './stt.js';
import { completeUtterance } from './turns.js';

const POLICY = {
  intents: [
    { name: 'due', examples: ['when is it due'], reply: 'Friday.' },
    { name: 'amount', examples: ['how much'], reply: 'Forty dollars.' },
  ],
  fallback: { reply: 'Sorry?' },
} as unknown as BotPolicy;
const FRAME = 320; // 20 ms at 16 kHz
/** How late the decoder hears the line: more than min_silence_ms, so the first look misses the last word. */
const LAG_FRAMES = 40;
const MIN_SILENCE_MS = 250;
const END_OF_TURN_SILENCE_MS = 3000;

/** The provider with its audio handed to the decoder LAG_FRAMES frames late (all of it before the final words). */
function late(inner: SttProvider): SttProvider {
  return {
    name: inner.name,
    sampleRate: inner.sampleRate,
    resume: inner.resume,
    async open(listener) {
      const s = await inner.open(listener);
      const held: Int16Array[] = [];
      const flush = () => held.splice(0).forEach((pcm) => s.push(pcm));
      return {
        push(pcm) {
          held.push(pcm);
          if (held.length > LAG_FRAMES) s.push(held.shift()!);
        },
        speechStarted: () => s.speechStarted(),
        endOfTurn(signal) {
          flush();
          return s.endOfTurn(signal);
        },
        peek: (signal, overlap) => s.peek!(signal, overlap),
        peekAgainToDecide: s.peekAgainToDecide,
        discardTurn: () => s.discardTurn?.(),
        close: () => s.close(),
      };
    },
  };
}

describe('smart turn-taking looks again after min_silence_ms', () => {
  const spawner = new Spawner();
  const live = new LiveDecoder({ spawner, onLost: () => undefined });
  afterAll(async () => {
    await live.close();
    await spawner.close();
  });

  it('a phrase the decoder finishes late ends at a later look as a complete utterance, not at the end-of-turn silence', async () => {
    const provider = new PocketsphinxStt({ phrases: POLICY.intents.flatMap((i) => i.examples ?? []), spawner, live });
    const ends: string[] = [];
    const stt = new SttProcessor(late(provider), 16000, DEFAULT_RETRY, {
      smart: true,
      complete: (text) => completeUtterance(POLICY, text),
      ignoreBackchannels: true,
      minWords: 2,
      onTurnEnd: (how) => ends.push(how),
    });
    const vad = new VadProcessor(await createWebRtcVad(), 16000, { endOfTurnSilenceMs: END_OF_TURN_SILENCE_MS, minSilenceMs: MIN_SILENCE_MS, smart: true });
    const out: Frame[] = [];
    const p = new Pipeline([vad, stt], { downstream: (f) => f.kind !== 'audio_in' && out.push(f) });
    await p.start();
    expect(provider.decodesLive).toBe(true);
    const pcm = concatPcm([silence(300), trimmedSpeech('when is it due'), silence(END_OF_TURN_SILENCE_MS + 300)]);
    // In real time, as a line delivers it: each look's peek is answered while the silence goes on.
    const t0 = performance.now();
    let atMs = 0;
    for (let i = 0; i < pcm.length && !ends.length; i += FRAME, atMs += 20) {
      p.push({ kind: 'audio_in', pcm: pcm.slice(i, i + FRAME), sampleRate: 16000, atMs });
      await p.idle();
      await sleep(Math.max(0, t0 + atMs + 20 - performance.now()));
    }
    await waitUntil(() => ends.length > 0, { what: 'the end of the turn', timeoutMs: 10_000 });
    p.cancel('done');
    const stopped = out.filter((f): f is Extract<Frame, { kind: 'user_stopped_speaking' }> => f.kind === 'user_stopped_speaking');
    // The min-silence look heard the phrase unfinished; a later one heard it whole and ended the turn there.
    expect(ends).toEqual(['complete']);
    expect(out.filter((f) => f.kind === 'transcript' && f.final).map((f) => (f as { text: string }).text)).toEqual(['when is it due']);
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.silenceMs).toBeGreaterThan(MIN_SILENCE_MS + 20);
    expect(stopped[0]!.silenceMs).toBeLessThan(END_OF_TURN_SILENCE_MS);
  });
});
