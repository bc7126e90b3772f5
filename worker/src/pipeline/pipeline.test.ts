import { errorFrame, type Direction, type Frame } from './frames.js';
import { FrameProcessor } from './processor.js';
import { Pipeline } from './pipeline.js';

/** Holds each text frame until released, so frames queue up behind it. */
class Gate extends FrameProcessor {
  private release: Array<() => void> = [];
  interrupted = 0;
  constructor() {
    super('gate');
  }
  open(): void {
    for (const r of this.release.splice(0)) r();
  }
  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'text') await new Promise<void>((r) => this.release.push(r));
    this.push(frame, dir);
  }
  protected override onInterrupt(): void {
    this.interrupted++;
    this.open();
  }
}

class Thrower extends FrameProcessor {
  constructor() {
    super('thrower');
  }
  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'text' && frame.text === 'boom') throw new Error('provider exploded');
    this.push(frame, dir);
  }
}

/** Opens its service on the start frame, and fails to. */
class Opener extends FrameProcessor {
  constructor(private readonly refusal: Error) {
    super('opener');
  }
  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind !== 'start') return this.push(frame, dir);
    await new Promise((r) => setImmediate(r));
    this.push({ ...errorFrame(this.name, 'opener_failed', this.refusal), cause: this.refusal }, 'upstream');
  }
}

describe('Pipeline', () => {
  it('passes frames through every processor in order', async () => {
    const out: Frame[] = [];
    const p = new Pipeline([new Thrower(), new Thrower()], { downstream: (f) => out.push(f) });
    for (const text of ['a', 'b', 'c']) p.push({ kind: 'text', text });
    await p.idle();
    expect(out.map((f) => (f.kind === 'text' ? f.text : f.kind))).toEqual(['a', 'b', 'c']);
  });

  it('turns an exception into an error frame upstream and keeps running', async () => {
    const out: Frame[] = [];
    const up: Frame[] = [];
    const p = new Pipeline([new Thrower()], { downstream: (f) => out.push(f), upstream: (f) => up.push(f) });
    p.push({ kind: 'text', text: 'boom' });
    p.push({ kind: 'text', text: 'after' });
    await p.idle();
    expect(up).toEqual([{ kind: 'error', code: 'thrower_failed', message: 'provider exploded', fatal: true, source: 'thrower' }]);
    expect(out).toEqual([{ kind: 'text', text: 'after' }]);
  });

  it('lets an interruption overtake queued frames and drops the queued reply', async () => {
    const out: Frame[] = [];
    const gate = new Gate();
    const p = new Pipeline([gate], { downstream: (f) => out.push(f) });
    p.push({ kind: 'text', text: 'first' });
    p.push({ kind: 'text', text: 'second' });
    p.push({ kind: 'response_end', endCall: false });
    p.push({ kind: 'transcript', role: 'user', text: 'kept', final: true });
    await new Promise((r) => setImmediate(r));
    p.push({ kind: 'interruption' });
    await p.idle();
    expect(gate.interrupted).toBe(1);
    // The interruption arrives first; 'first' was in progress and finishes; the queued reply is gone,
    // frames that are not part of the reply (the transcript) survive.
    expect(out.map((f) => f.kind + (f.kind === 'text' || f.kind === 'transcript' ? `:${f.text}` : ''))).toEqual([
      'interruption',
      'text:first',
      'transcript:kept',
    ]);
  });

  it('start resolves once the start frame passed every processor, and rejects with the error of one that could not open', async () => {
    const out: Frame[] = [];
    await new Pipeline([new Thrower(), new Thrower()], { downstream: (f) => out.push(f) }).start();
    expect(out).toEqual([{ kind: 'start' }]);

    const up: Frame[] = [];
    const refusal = new Error('no key');
    const p = new Pipeline([new Opener(refusal), new Thrower()], { downstream: (f) => out.push(f), upstream: (f) => up.push(f) });
    await expect(p.start()).rejects.toBe(refusal);
    expect(out).toHaveLength(1);
    expect(up).toEqual([]); // a start that failed is the caller's refusal, not an error of the call
  });

  it('cancel stops every processor and drops what is queued', async () => {
    const out: Frame[] = [];
    const gate = new Gate();
    const p = new Pipeline([gate], { downstream: (f) => out.push(f) });
    p.push({ kind: 'text', text: 'held' });
    p.push({ kind: 'transcript', role: 'user', text: 'queued', final: true });
    await new Promise((r) => setImmediate(r));
    p.cancel('hangup');
    gate.open();
    await p.idle();
    p.push({ kind: 'text', text: 'late' });
    await p.idle();
    expect(out.map((f) => f.kind)).toEqual(['cancel']);
  });
});
