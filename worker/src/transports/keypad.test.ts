// The keypad stage on its own: keys collected to `#` or a pause, one transcript turn each, every key a barge-in.
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { KeypadProcessor, type KeypadTurn } from './keypad.js';

function keypad(timeoutMs: number) {
  const out: Frame[] = [];
  const turns: KeypadTurn[] = [];
  const pipeline = new Pipeline([new KeypadProcessor(timeoutMs, (t) => turns.push(t))], { downstream: (f) => out.push(f) });
  const press = (keys: string) => {
    for (const digit of keys) pipeline.push({ kind: 'dtmf', digit, atMs: performance.now() });
  };
  const transcripts = () => out.filter((f) => f.kind === 'transcript');
  return { pipeline, out, turns, press, transcripts };
}

const until = async (check: () => boolean, timeoutMs = 2000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('KeypadProcessor', () => {
  it('# ends a turn at once (left out of it); # alone is the turn "#"; each key interrupts', async () => {
    const k = keypad(10_000);
    k.press('12#');
    await until(() => k.transcripts().length === 1);
    expect(k.transcripts()).toEqual([{ kind: 'transcript', role: 'user', text: '12', final: true, dtmf: true }]);
    expect(k.out.filter((f) => f.kind === 'interruption')).toHaveLength(3);
    k.press('#');
    await until(() => k.transcripts().length === 2);
    expect(k.transcripts()[1]).toMatchObject({ text: '#' });
    expect(k.turns.map((t) => t.digits)).toEqual(['12', '#']);
    k.pipeline.cancel('done');
  });

  it('a pause without a key ends the turn; * is a key like the others', async () => {
    const k = keypad(150);
    k.press('4*2');
    await new Promise((r) => setTimeout(r, 60));
    expect(k.transcripts()).toEqual([]);
    await until(() => k.transcripts().length === 1);
    expect(k.transcripts()[0]).toMatchObject({ text: '4*2', dtmf: true });
    expect(k.turns[0]!.durationMs).toBeGreaterThanOrEqual(140);
    // Other frames pass untouched.
    k.pipeline.push({ kind: 'transcript', role: 'user', text: 'hello', final: true });
    await until(() => k.transcripts().length === 2);
    expect(k.transcripts()[1]).toEqual({ kind: 'transcript', role: 'user', text: 'hello', final: true });
    k.pipeline.cancel('done');
  });

  it('a cancelled call forms no turn from the keys it was collecting', async () => {
    const k = keypad(50);
    k.press('9');
    k.pipeline.cancel('hangup');
    await new Promise((r) => setTimeout(r, 120));
    expect(k.transcripts()).toEqual([]);
  });
});
