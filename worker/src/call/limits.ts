// A call's limits: its longest duration (the bot's max_call_seconds), and for test calls an idle timeout
// (no caller audio for that long). Either calls `end(reason)` once; what ending means is the session's.

/** The end reasons the limits decide (docs/design.md §7). */
export const LIMIT_REASONS = { maxDuration: 'max_duration', callerIdle: 'caller_idle' } as const;
export type LimitReason = (typeof LIMIT_REASONS)[keyof typeof LIMIT_REASONS];

export interface CallLimitsOptions {
  maxCallMs: number;
  /** No caller audio for this long ends the call; absent: no idle limit. */
  idleTimeoutMs?: number;
}

export class CallLimits {
  private maxTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** When the caller's audio last arrived (performance.now()); frames of silence count, only no frames is idle. */
  private lastAudioMs = 0;
  private stopped = false;

  constructor(
    private readonly opts: CallLimitsOptions,
    private readonly end: (reason: LimitReason) => void,
  ) {}

  /** The call has started: the clocks run from now. */
  start(): void {
    if (this.stopped || this.maxTimer) return;
    this.maxTimer = setTimeout(() => this.fire(LIMIT_REASONS.maxDuration), this.opts.maxCallMs);
    const idleMs = this.opts.idleTimeoutMs;
    if (!idleMs) return;
    this.lastAudioMs = performance.now();
    // Checked a few times per timeout rather than re-armed per audio chunk (50 chunks a second).
    this.idleTimer = setInterval(() => {
      if (performance.now() - this.lastAudioMs >= idleMs) this.fire(LIMIT_REASONS.callerIdle);
    }, Math.min(1000, idleMs / 5));
    // Only the idle check is unref'd: it must not keep a process alive, the call's own limit may.
    this.idleTimer.unref();
  }

  /** Caller audio arrived at `atMs` (performance.now()). */
  heard(atMs: number): void {
    this.lastAudioMs = atMs;
  }

  /** The call is over, whatever ended it: no limit fires after this. */
  stop(): void {
    this.stopped = true;
    if (this.maxTimer) clearTimeout(this.maxTimer);
    if (this.idleTimer) clearInterval(this.idleTimer);
  }

  private fire(reason: LimitReason): void {
    if (this.stopped) return;
    this.stop();
    this.end(reason);
  }
}
