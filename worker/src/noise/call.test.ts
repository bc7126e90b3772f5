// A bot's audio.noise_suppression over a whole call (the WebSocket path, in real time): the worker reads it
// from the bot's config and the call's VAD and pocketsphinx hear the caller denoised.
import { createBot } from '../../testing/backend.js';
import { startCall } from '../../testing/client.js';
import { noisyPhrase, NOISY_PHRASES, whiteNoise } from '../../testing/noise.js';
import { startWorker, type TestWorker } from '../../testing/worker.js';

const POLICY = {
  intents: NOISY_PHRASES.map((p, k) => ({ name: `p${k}`, examples: [p], reply: `Heard ${k}.` })),
  fallback: { reply: 'Sorry, what was that?' },
};

let w: TestWorker;
beforeAll(async () => {
  w = await startWorker();
});
afterAll(async () => {
  await w?.stop();
});

/** The caller says `phrase` on a line with white noise at 0 dB SNR; the first final words the bot heard. */
async function callInNoise(noiseSuppression: boolean, phrase: string): Promise<string | null> {
  const bot = await createBot({ name: `noise ${noiseSuppression}`, greeting: '', policy: POLICY, audio: { noise_suppression: noiseSuppression } });
  const { caller } = await startCall(w.wsUrl, bot);
  try {
    // The noise goes on after the phrase, long enough for the turn to end (700 ms of no speech) and be decoded.
    await caller.stream(noisyPhrase(phrase, whiteNoise(16000 * 10), 0, 0, 2500).pcm);
    const final = () => caller.messages.find((m) => m.type === 'transcript' && m.role === 'user' && m.final);
    return ((await caller.until(final, 'the caller heard', 5000).catch(() => null))?.text as string | undefined) ?? null;
  } finally {
    if (caller.closeCode === null) caller.send({ type: 'stop' });
    await caller.closed;
  }
}

describe('noise suppression in a call', () => {
  it('a bot with it hears the caller right through white noise at 0 dB SNR; the same bot without it does not', async () => {
    expect(await callInNoise(true, 'call me back later')).toBe('call me back later');
    expect(await callInNoise(false, 'call me back later')).not.toBe('call me back later');
  });
});
