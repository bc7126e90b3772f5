// Speech to text. A provider opens one session per call; the processor feeds it the caller's audio
// and the VAD's turn events, and turns the session's final text into a user transcript frame.
// Streaming providers may also report interim hypotheses and failures as they happen through an
// optional listener; a batch provider ignores it.
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

/** What a session reports between turn ends. Both optional: providers without either ignore it. */
export interface SttListener {
  /** The current turn's hypothesis so far (not final: it may still change). */
  interim?(text: string): void;
  /** The session failed for good (e.g. its connection is gone and reconnects failed); the next
   * `endOfTurn` rejects with the same error. */
  error?(err: SttError): void;
}

export interface SttProvider {
  readonly name: string;
  readonly sampleRate: number;
  open(listener?: SttListener): Promise<SttSession>;
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
  private session: SttSession | null = null;
  /** Set once a fatal error went upstream: the same failure may surface twice (listener, endOfTurn). */
  private failed = false;

  constructor(
    private readonly provider: SttProvider,
    callSampleRate: number,
  ) {
    super('stt');
    this.resampler = new Resampler(callSampleRate, provider.sampleRate);
  }

  /** Opens the provider's session for this call (before the pipeline runs: a refusal fails the call's start). */
  async open(): Promise<SttSession> {
    this.session = await this.provider.open({
      // Interims go downstream as non-final transcripts: the caller sees them, the LLM ignores them.
      interim: (text) => {
        if (!this.failed && text) this.push({ kind: 'transcript', role: 'user', text, final: false });
      },
      // Reported as it happens, not at the end of the turn, so the call ends now.
      error: (err) => this.fail(err),
    });
    return this.session;
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    const session = this.session;
    if (!session) throw new Error('stt: session not open');
    if (frame.kind === 'audio_in') {
      if (!this.failed) session.push(this.resampler.push(frame.pcm));
      this.push(frame, dir);
      return;
    }
    if (frame.kind === 'user_started_speaking') session.speechStarted();
    this.push(frame, dir);
    if (frame.kind !== 'user_stopped_speaking' || this.failed) return;
    const started = performance.now();
    let text: string;
    try {
      text = await session.endOfTurn(this.abort.signal);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.push({ kind: 'provider_time', stage: 'stt', provider: this.provider.name, ms: performance.now() - started });
    if (text) this.push({ kind: 'transcript', role: 'user', text, final: true });
  }

  private fail(err: unknown): void {
    if (this.cancelled || this.failed) return;
    this.failed = true;
    this.pushError(err instanceof SttError ? err.code : 'stt_failed', err, true);
  }

  protected override onCancel(): void {
    this.abort.abort();
    this.session?.close();
  }
}
