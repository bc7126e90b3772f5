// A frame processor: frames arrive from the previous (downstream) or next (upstream) processor and
// are handled one at a time in order; system frames are handled at once. An exception inside a
// processor becomes an error frame: it never escapes and never kills the call by itself.
import { errorFrame, isInterruptible, isSystemFrame, type Direction, type Frame } from './frames.js';

export abstract class FrameProcessor {
  private prev: FrameProcessor | null = null;
  private next: FrameProcessor | null = null;
  private readonly queue: Array<{ frame: Frame; dir: Direction }> = [];
  private draining = false;
  private idleWaiters: Array<() => void> = [];
  protected cancelled = false;

  constructor(readonly name: string) {}

  link(next: FrameProcessor): FrameProcessor {
    this.next = next;
    next.prev = this;
    return next;
  }

  /** Entry point for frames from neighbours. */
  queueFrame(frame: Frame, dir: Direction = 'downstream'): void {
    if (this.cancelled && frame.kind !== 'cancel') return;
    if (isSystemFrame(frame)) {
      if (frame.kind === 'interruption' || frame.kind === 'cancel') this.dropQueued();
      void this.handle(frame, dir);
      return;
    }
    this.queue.push({ frame, dir });
    if (!this.draining) void this.drain();
  }

  /** Resolves when nothing is queued or running (tests and orderly shutdown). */
  idle(): Promise<void> {
    if (!this.draining && !this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  protected push(frame: Frame, dir: Direction = 'downstream'): void {
    if (this.cancelled) return;
    const target = dir === 'downstream' ? this.next : this.prev;
    if (target) target.queueFrame(frame, dir);
    else this.onEdge(frame, dir);
  }

  /** Frames that fall off either end of the chain (the pipeline overrides this on its edges). */
  protected onEdge(_frame: Frame, _dir: Direction): void {}

  /** Errors go upstream to the pipeline's source, where the call decides what they mean. */
  protected pushError(code: string, err: unknown, fatal = true): void {
    this.push(errorFrame(this.name, code, err, fatal), 'upstream');
  }

  /** Handle one frame. The default passes it on in its direction. */
  protected async process(frame: Frame, dir: Direction): Promise<void> {
    this.push(frame, dir);
  }

  /** Barge-in hook: stop producing output for the current reply. */
  protected onInterrupt(): void {}
  /** Cancel hook: release resources (child processes, sockets, timers). */
  protected onCancel(): void {}

  private dropQueued(): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (isInterruptible(this.queue[i]!.frame)) this.queue.splice(i, 1);
    }
  }

  private async handle(frame: Frame, dir: Direction): Promise<void> {
    try {
      if (frame.kind === 'interruption') this.onInterrupt();
      if (frame.kind === 'cancel') {
        this.queue.length = 0;
        this.onCancel();
        this.push(frame, dir);
        this.cancelled = true;
        return;
      }
      await this.process(frame, dir);
    } catch (err) {
      this.pushError(`${this.name}_failed`, err, true);
    }
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.queue.length && !this.cancelled) {
      const item = this.queue.shift()!;
      await this.handle(item.frame, item.dir);
    }
    this.queue.length = 0;
    this.draining = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
