// Text to speech. The processor speaks each sentence of the reply in order, converts the provider's
// audio to the call's rate, and stops at once on barge-in. Retries are the stage's (providers/retry.ts):
// a provider makes one attempt per sentence and declares how a broken stream resumes.
import { Resampler } from '../audio/resample.js';
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';
import { asProviderError } from '../providers/errors.js';
import { streamPostPcm, type StreamPost } from '../providers/http.js';
import { DEFAULT_RETRY, retryStream, type Resume, type RetryPolicy } from '../providers/retry.js';

export interface TtsProvider {
  readonly name: string;
  /** Rate of the PCM16 mono chunks `synthesize` yields. */
  readonly sampleRate: number;
  /**
   * After audio was delivered a failure is final: a new request is a new rendition, never spliced into
   * a sentence being heard. (`chars`, restarting at a character offset of the text, would need the
   * provider's alignment of audio to text, which this interface does not carry yet.)
   */
  readonly resume: Extract<Resume, 'none'>;
  /** ONE attempt: failures are ProviderErrors (stage `tts`); the stage retries. */
  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array>;
}

/** What an HTTP TTS provider needs of its options. */
export interface HttpTtsOptions {
  /** The API's base URL; a trailing `/` is ignored. */
  baseUrl: string;
  timeoutMs: number;
}

/**
 * A provider that POSTs each sentence and reads raw PCM16LE back as it is synthesised (OpenAI,
 * ElevenLabs). Resume `none`: a new request is a new rendition, so the stage retries only a failure
 * before the first audio.
 */
export abstract class HttpPcmTts<O extends HttpTtsOptions> implements TtsProvider {
  abstract readonly name: string;
  abstract readonly sampleRate: number;
  readonly resume = 'none' as const;
  constructor(protected readonly opts: O) {}

  /** The request speaking `text`; `path` is below the base URL. */
  protected abstract request(text: string): Pick<StreamPost, 'what' | 'headers' | 'body'> & { path: string };

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    const { path, ...req } = this.request(text);
    yield* streamPostPcm({ stage: 'tts', ...req, url: `${this.opts.baseUrl.replace(/\/$/, '')}${path}`, signal, timeoutMs: this.opts.timeoutMs });
  }
}

/** The provider's audio for `text` with the stage's retries, at the call's rate. */
export async function* speak(provider: TtsProvider, text: string, signal: AbortSignal, policy: RetryPolicy, callSampleRate: number): AsyncIterable<Int16Array> {
  const resampler = new Resampler(provider.sampleRate, callSampleRate);
  for await (const chunk of retryStream({ stage: 'tts', policy, resume: provider.resume, signal, attempt: () => provider.synthesize(text, signal) })) {
    const pcm = resampler.push(chunk);
    if (pcm.length) yield pcm;
  }
  if (signal.aborted) return;
  const tail = resampler.flush();
  if (tail.length) yield tail;
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

  constructor(audio: (signal: AbortSignal) => AsyncIterable<Int16Array>) {
    void this.fill(audio(this.abort.signal));
  }

  private async fill(audio: AsyncIterable<Int16Array>): Promise<void> {
    try {
      for await (const pcm of audio) {
        this.chunks.push(pcm);
        this.notify();
      }
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
    private provider: TtsProvider,
    private readonly callSampleRate: number,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    super('tts');
  }

  /** Starts synthesising `text` now; the text frame that later carries it plays this audio at once. */
  prepare(text: string): void {
    if (!this.prepared.has(text)) this.prepared.set(text, new PreparedSpeech((signal) => this.synthesize(text, signal)));
  }

  /** The provider's audio for `text`, with the stage's retries, converted to the call's rate. */
  private synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    return speak(this.provider, text, signal, this.retry, this.callSampleRate);
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'response_start') this.timeFirstChunk = true;
    if (frame.kind === 'voice') {
      // Another bot took the call: its voice from the next sentence on.
      this.provider = frame.provider as TtsProvider;
      return;
    }
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
      this.pushError(asProviderError('tts', err).code, err, true);
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
