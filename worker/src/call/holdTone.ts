// What a caller on hold hears while a warm transfer dials the person (docs/design.md §9): a soft 425 Hz
// tone, 0.4 s every 3 s, so the line is never dead and never loud. Sent straight to the transport: the
// pipeline is waiting on the transfer and says nothing meanwhile.

const FRAME_MS = 20;
const TONE_HZ = 425;
const TONE_MS = 400;
const CYCLE_MS = 3000;
/** About -24 dBFS. */
const AMPLITUDE = 2000;

export class HoldTone {
  private timer: NodeJS.Timeout | null = null;
  private elapsedMs = 0;
  private phase = 0;

  constructor(
    private readonly sampleRate: number,
    private readonly send: (pcm: Int16Array) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), FRAME_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One frame: the tone in the first TONE_MS of each cycle; nothing between (the transport sends no silence). */
  private tick(): void {
    const inCycle = this.elapsedMs % CYCLE_MS;
    this.elapsedMs += FRAME_MS;
    if (inCycle >= TONE_MS) return;
    this.send(this.frame());
  }

  frame(): Int16Array {
    const n = (this.sampleRate * FRAME_MS) / 1000;
    const pcm = new Int16Array(n);
    const step = (2 * Math.PI * TONE_HZ) / this.sampleRate;
    for (let i = 0; i < n; i++) {
      pcm[i] = Math.round(AMPLITUDE * Math.sin(this.phase));
      this.phase += step;
    }
    this.phase %= 2 * Math.PI;
    return pcm;
  }
}
