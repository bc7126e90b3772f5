// Runs a refresh every `intervalMs` while the document is visible: paused while the tab is hidden
// (`document.visibilityState`), caught up at once when it shows again if a refresh is due, and never
// overlapping itself (the next wait starts when a refresh ends). `stop()` ends it for good.

export interface PollerEnv {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  isVisible(): boolean;
  /** Subscribes to visibility changes; returns the unsubscribe. */
  onVisibilityChange(fn: () => void): () => void;
}

const browserEnv = (): PollerEnv => ({
  now: () => Date.now(),
  setTimeout: (fn, ms) => window.setTimeout(fn, ms),
  clearTimeout: (h) => window.clearTimeout(h as number),
  isVisible: () => document.visibilityState === 'visible',
  onVisibilityChange: (fn) => {
    document.addEventListener('visibilitychange', fn);
    return () => document.removeEventListener('visibilitychange', fn);
  },
});

export class Poller {
  private timer: unknown = null;
  private running = false;
  private stopped = true;
  private lastRun = 0;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly refresh: () => Promise<unknown>,
    readonly intervalMs: number,
    private readonly env: PollerEnv = browserEnv(),
  ) {}

  /** Starts polling; the first refresh is one interval from now (the caller has just loaded). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.lastRun = this.env.now();
    this.unsubscribe = this.env.onVisibilityChange(() => this.visibilityChanged());
    this.schedule(this.intervalMs);
  }

  stop(): void {
    this.stopped = true;
    this.clear();
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** The data was just loaded by other means (a manual refresh, a new filter): restart the wait. */
  loaded(): void {
    this.lastRun = this.env.now();
    if (!this.stopped && !this.running && this.env.isVisible()) this.schedule(this.intervalMs);
  }

  get active(): boolean {
    return this.timer !== null || this.running;
  }

  private clear(): void {
    if (this.timer !== null) this.env.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    this.clear();
    if (this.stopped || !this.env.isVisible()) return;
    this.timer = this.env.setTimeout(() => {
      this.timer = null;
      void this.run();
    }, ms);
  }

  private async run(): Promise<void> {
    if (this.stopped || this.running || !this.env.isVisible()) return;
    this.running = true;
    try {
      await this.refresh();
    } catch {
      // the refresh reports its own errors; polling goes on
    } finally {
      this.running = false;
      this.lastRun = this.env.now();
    }
    this.schedule(this.intervalMs);
  }

  private visibilityChanged(): void {
    if (this.stopped) return;
    if (!this.env.isVisible()) {
      this.clear();
      return;
    }
    if (this.running) return;
    const due = this.lastRun + this.intervalMs - this.env.now();
    if (due <= 0) void this.run();
    else this.schedule(due);
  }
}
