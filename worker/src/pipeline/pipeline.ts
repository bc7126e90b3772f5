// A pipeline links processors in order (transport in → VAD → STT → LLM → TTS → transport out) and
// hands the frames that leave either end to the call: upstream errors, downstream leftovers.
import type { Direction, Frame } from './frames.js';
import { FrameProcessor } from './processor.js';

class Edge extends FrameProcessor {
  constructor(
    name: string,
    private readonly sink: (frame: Frame, dir: Direction) => void,
  ) {
    super(name);
  }
  protected override onEdge(frame: Frame, dir: Direction): void {
    this.sink(frame, dir);
  }
}

export interface PipelineEvents {
  /** Frames that reached the source going upstream (errors, mostly). */
  upstream?(frame: Frame): void;
  /** Frames that passed the last processor. */
  downstream?(frame: Frame): void;
}

export class Pipeline {
  private readonly source: Edge;
  private readonly sink: Edge;
  private starting: { resolve(): void; reject(err: unknown): void } | null = null;
  constructor(
    readonly processors: FrameProcessor[],
    events: PipelineEvents = {},
  ) {
    this.source = new Edge('source', (f) => {
      if (f.kind === 'error' && f.fatal && this.starting) return this.startFailed(f);
      events.upstream?.(f);
    });
    this.sink = new Edge('sink', (f) => {
      if (f.kind === 'start' && this.starting) {
        this.starting.resolve();
        this.starting = null;
      }
      events.downstream?.(f);
    });
    let at: FrameProcessor = this.source;
    for (const p of processors) at = at.link(p);
    at.link(this.sink);
  }

  /**
   * Sends the start frame through: each processor opens its services when it sees it. Resolves once the
   * frame has passed every processor; rejects with the first fatal error one of them sends meanwhile
   * (the call cannot start: the error is not reported as one of the call's).
   */
  start(): Promise<void> {
    const started = new Promise<void>((resolve, reject) => (this.starting = { resolve, reject }));
    this.push({ kind: 'start' });
    return started;
  }

  private startFailed(f: Extract<Frame, { kind: 'error' }>): void {
    this.starting!.reject(f.cause ?? new Error(f.message));
    this.starting = null;
  }

  /** Feeds a frame in at the head. */
  push(frame: Frame): void {
    this.source.queueFrame(frame, 'downstream');
  }

  /** Stops every processor now; queued frames are dropped. */
  cancel(reason: string): void {
    this.source.queueFrame({ kind: 'cancel', reason }, 'downstream');
  }

  /** Resolves once every processor has handled what it was given. */
  async idle(): Promise<void> {
    for (const p of [this.source, ...this.processors, this.sink]) await p.idle();
  }
}
