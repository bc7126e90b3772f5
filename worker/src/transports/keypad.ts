// The caller's keypad (docs/design.md §9): keys arrive one `dtmf` frame each (from the WebSocket protocol's
// {"type":"dtmf"} or a phone line's RFC 4733 events through LiveKit) and are collected until `#` or a pause
// of `interDigitTimeoutMs` without a key; then they form one user turn, a final `transcript` frame with
// `dtmf: true` holding the keys (`#` left out; `#` alone is the turn "#"), which the LLM stage words as
// "The caller pressed … on the keypad.". Each key interrupts the bot, as speech does.
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export const DEFAULT_INTER_DIGIT_TIMEOUT_MS = 1500;
/** Keys one turn holds at most (a longer run is cut into turns). */
export const MAX_TURN_KEYS = 32;
const KEY = /^[0-9*#]$/;

export interface KeypadTurn {
  digits: string;
  /** When the first key of the turn arrived, and how long the turn took to complete (ms). */
  startedAt: Date;
  durationMs: number;
}

export class KeypadProcessor extends FrameProcessor {
  private keys = '';
  private startedAt: { wall: Date; perf: number } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly interDigitTimeoutMs = DEFAULT_INTER_DIGIT_TIMEOUT_MS,
    private readonly onTurn?: (turn: KeypadTurn) => void,
  ) {
    super('keypad');
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind !== 'dtmf' || dir !== 'downstream') return this.push(frame, dir);
    if (!KEY.test(frame.digit)) return;
    // A key press is a barge-in: the bot stops talking and stops generating its reply.
    this.push({ kind: 'interruption' });
    this.startedAt ??= { wall: new Date(), perf: frame.atMs };
    this.stopTimer();
    if (frame.digit === '#') return this.complete(this.keys || '#');
    this.keys += frame.digit;
    if (this.keys.length >= MAX_TURN_KEYS) return this.complete(this.keys);
    this.timer = setTimeout(() => this.complete(this.keys), this.interDigitTimeoutMs);
  }

  private complete(digits: string): void {
    this.stopTimer();
    const started = this.startedAt;
    this.keys = '';
    this.startedAt = null;
    if (!digits || this.cancelled) return;
    this.onTurn?.({ digits, startedAt: started?.wall ?? new Date(), durationMs: started ? Math.max(0, Math.round(performance.now() - started.perf)) : 0 });
    this.push({ kind: 'transcript', role: 'user', text: digits, final: true, dtmf: true });
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  protected override onCancel(): void {
    this.stopTimer();
    this.keys = '';
  }
}
