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

/**
 * Speech synthesised ahead of its turn (a greeting while the phone rings): the provider's audio, already
 * at the call's rate, kept until the text comes down the pipeline, and readable while it still arrives.
 */
class PreparedSpeech {
  private readonly chunks: Int16Array[] = [];
  private done = false;
  private error: unknown = null;
  private wake: (() => void) | null = null;
  readonly abort = new AbortController();

  constructor(provider: TtsProvider, text: string, callSampleRate: number) {
    void this.fill(provider, text, new Resampler(provider.sampleRate, callSampleRate));
  }

  private async fill(provider: TtsProvider, text: string, resampler: Resampler): Promise<void> {
    try {
      for await (const chunk of provider.synthesize(text, this.abort.signal)) {
        const pcm = resampler.push(chunk);
        if (pcm.length) this.chunks.push(pcm);
        this.notify();
      }
      const tail = resampler.flush();
      if (tail.length) this.chunks.push(tail);
    } catch (err) {
      this.error = err;
    }
    this.done = true;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async *read(signal: AbortSignal): AsyncIterable<Int16Array> {
    for (let i = 0; ; ) {
      if (signal.aborted) return;
      if (i < this.chunks.length) {
        yield this.chunks[i++]!;
        continue;
      }
      if (this.error) throw this.error;
      if (this.done) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

export class TtsProcessor extends FrameProcessor {
  private abort: AbortController | null = null;
  private timeFirstChunk = true;
  private readonly prepared = new Map<string, PreparedSpeech>();

  constructor(
    private readonly provider: TtsProvider,
    private readonly callSampleRate: number,
  ) {
    super('tts');
  }

  /** Starts synthesising `text` now; the text frame that later carries it plays this audio at once. */
  prepare(text: string): void {
    if (!this.prepared.has(text)) this.prepared.set(text, new PreparedSpeech(this.provider, text, this.callSampleRate));
  }

  /** The provider's audio for `text`, converted to the call's rate. */
  private async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    const resampler = new Resampler(this.provider.sampleRate, this.callSampleRate);
    for await (const chunk of this.provider.synthesize(text, signal)) {
      const pcm = resampler.push(chunk);
      if (pcm.length) yield pcm;
    }
    if (signal.aborted) return;
    const tail = resampler.flush();
    if (tail.length) yield tail;
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'response_start') this.timeFirstChunk = true;
    if (frame.kind !== 'text') {
      this.push(frame, dir);
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    const prepared = this.prepared.get(frame.text);
    this.prepared.delete(frame.text);
    const started = performance.now();
    this.push({ kind: 'transcript', role: 'bot', text: frame.text, final: true });
    try {
      for await (const pcm of prepared ? prepared.read(abort.signal) : this.synthesize(frame.text, abort.signal)) {
        if (abort.signal.aborted) return;
        if (this.timeFirstChunk) {
          this.timeFirstChunk = false;
          this.push({ kind: 'provider_time', stage: 'tts', provider: this.provider.name, ms: performance.now() - started });
        }
        this.push({ kind: 'audio_out', pcm, sampleRate: this.callSampleRate });
      }
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
    for (const p of this.prepared.values()) p.abort.abort();
    this.prepared.clear();
  }
}
