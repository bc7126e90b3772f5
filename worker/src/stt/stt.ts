// Speech to text. A provider opens one session per call; the processor feeds it the caller's audio
// and the VAD's turn events, and turns the session's final text into a user transcript frame.
import { Resampler } from '../audio/resample.js';
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export interface SttSession {
  /** Caller audio at the provider's sample rate. */
  push(pcm: Int16Array): void;
  /** The VAD heard speech start: streaming providers ignore it, batch ones start capturing. */
  speechStarted(): void;
  /** The user's turn ended: the final transcript of that turn ('' when nothing was understood). */
  endOfTurn(signal: AbortSignal): Promise<string>;
  close(): void;
}

export interface SttProvider {
  readonly name: string;
  readonly sampleRate: number;
  open(): Promise<SttSession>;
}

export class SttError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SttError';
  }
}

export class SttProcessor extends FrameProcessor {
  private readonly resampler: Resampler;
  private abort = new AbortController();

  constructor(
    private readonly provider: SttProvider,
    private readonly session: SttSession,
    callSampleRate: number,
  ) {
    super('stt');
    this.resampler = new Resampler(callSampleRate, provider.sampleRate);
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'audio_in') {
      this.session.push(this.resampler.push(frame.pcm));
      this.push(frame, dir);
      return;
    }
    if (frame.kind === 'user_started_speaking') this.session.speechStarted();
    this.push(frame, dir);
    if (frame.kind !== 'user_stopped_speaking') return;
    const started = performance.now();
    let text: string;
    try {
      text = await this.session.endOfTurn(this.abort.signal);
    } catch (err) {
      if (this.cancelled) return;
      this.pushError(err instanceof SttError ? err.code : 'stt_failed', err, true);
      return;
    }
    this.push({ kind: 'provider_time', stage: 'stt', provider: this.provider.name, ms: performance.now() - started });
    if (text) this.push({ kind: 'transcript', role: 'user', text, final: true });
  }

  protected override onCancel(): void {
    this.abort.abort();
    this.session.close();
  }
}
