// Text to speech. The processor speaks each sentence of the reply in order, converts the provider's
// audio to the call's rate, and stops at once on barge-in.
import { Resampler } from '../audio/resample.js';
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export interface TtsProvider {
  readonly name: string;
  /** Rate of the PCM16 mono chunks `synthesize` yields. */
  readonly sampleRate: number;
  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array>;
}

export class TtsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'TtsError';
  }
}

export class TtsProcessor extends FrameProcessor {
  private abort: AbortController | null = null;
  private timeFirstChunk = true;

  constructor(
    private readonly provider: TtsProvider,
    private readonly callSampleRate: number,
  ) {
    super('tts');
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'response_start') this.timeFirstChunk = true;
    if (frame.kind !== 'text') {
      this.push(frame, dir);
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    const resampler = new Resampler(this.provider.sampleRate, this.callSampleRate);
    const started = performance.now();
    this.push({ kind: 'transcript', role: 'bot', text: frame.text, final: true });
    try {
      for await (const chunk of this.provider.synthesize(frame.text, abort.signal)) {
        if (abort.signal.aborted) return;
        if (this.timeFirstChunk) {
          this.timeFirstChunk = false;
          this.push({ kind: 'provider_time', stage: 'tts', provider: this.provider.name, ms: performance.now() - started });
        }
        const pcm = resampler.push(chunk);
        if (pcm.length) this.push({ kind: 'audio_out', pcm, sampleRate: this.callSampleRate });
      }
      if (abort.signal.aborted) return;
      const tail = resampler.flush();
      if (tail.length) this.push({ kind: 'audio_out', pcm: tail, sampleRate: this.callSampleRate });
    } catch (err) {
      if (abort.signal.aborted || this.cancelled) return;
      this.pushError(err instanceof TtsError ? err.code : 'tts_failed', err, true);
    } finally {
      if (this.abort === abort) this.abort = null;
    }
  }

  protected override onInterrupt(): void {
    this.abort?.abort();
  }

  protected override onCancel(): void {
    this.abort?.abort();
  }
}
