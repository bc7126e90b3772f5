// What noise suppression changes for the bot's recogniser: espeak-ng phrases in noise, decoded by the real
// pocketsphinx grammar decoder of the phrases, without and with RNNoise in front (testing/noise.ts).
import { NOISY_PHRASES, recogniseInNoise, rightCount, type NoiseRun } from '../../testing/noise.js';

const explain = (run: NoiseRun) => run.heard.map((h) => `${h.phrase}: without "${h.off}", with "${h.on}"`).join('\n');

describe('phrases recognised in noise, without and with suppression', () => {
  it('white noise at 5 dB SNR: every phrase recognised right with it, at least as many as without', async () => {
    const run = await recogniseInNoise('white', 5);
    expect({ on: rightCount(run, 'on'), explain: explain(run) }).toMatchObject({ on: NOISY_PHRASES.length });
    expect(rightCount(run, 'on')).toBeGreaterThanOrEqual(rightCount(run, 'off'));
  });

  it('babble at 5 dB SNR: recognised right at least as often with it as without', async () => {
    const run = await recogniseInNoise('babble', 5);
    expect({ more: rightCount(run, 'on') >= rightCount(run, 'off'), explain: explain(run) }).toMatchObject({ more: true });
  });

  it('white noise at 0 dB SNR: what the decoder loses without it, it hears with it', async () => {
    const run = await recogniseInNoise('white', 0);
    // Measured: 0 of 8 without, 8 of 8 with.
    expect({ off: rightCount(run, 'off') <= 2, on: rightCount(run, 'on') >= NOISY_PHRASES.length - 1, explain: explain(run) }).toMatchObject({ off: true, on: true });
  });
});
