// Speech to text. A provider opens one session per call; the processor feeds it the caller's audio
// and the VAD's turn events, and turns the session's final text into a user transcript frame.
// Streaming providers may also report interim hypotheses and failures as they happen through an
// optional listener; a batch provider ignores it.
import { Resampler } from '../audio/resample.js';
import { errorFrame, type Direction, type Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';
import { asProviderError, ProviderError } from '../providers/errors.js';
import { DEFAULT_RETRY, openWithRetries, type RetryPolicy } from '../providers/retry.js';

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
  /** The session failed (its connection is gone); the next `endOfTurn` rejects with the same error. */
  error?(err: ProviderError): void;
}

/**
 * After a session broke mid-call: `turn`, the stage opens a new one and sends it the current turn's
 * audio again (a turn's text is final only at its end, so nothing is lost or said twice); `none`, the
 * failure is final.
 */
export type SttResume = 'none' | 'turn';

export interface SttProvider {
  readonly name: string;
  readonly sampleRate: number;
  readonly resume: SttResume;
  /** ONE attempt: one session (one connection); failures are ProviderErrors (stage `stt`). The stage retries. */
  open(listener?: SttListener): Promise<SttSession>;
}

/** Audio a `turn` resume sends again at most (seconds). */
const MAX_REPLAY_SECONDS = 30;

/**
 * The stage's session: the provider's session, opened with the policy's retries, and for a `turn`
 * provider reopened when it breaks (at once, then with the policy's backoff), with the turn's audio sent
 * again. A provider that breaks every session (`attempts` times in a row without a finished turn) fails.
 */
export async function openSttSession(provider: SttProvider, listener: SttListener, policy: RetryPolicy): Promise<SttSession> {
  const session = new StageSession(provider, listener, policy);
  await session.start();
  return session;
}

class StageSession implements SttSession {
  private inner: SttSession | null = null;
  /** Which provider session the events are for: earlier ones' are ignored. */
  private generation = 0;
  private turn: Int16Array[] = [];
  private turnSamples = 0;
  private failed: ProviderError | null = null;
  private reconnecting: Promise<void> | null = null;
  private closed = false;
  /** Sessions lost in a row without a finished turn. */
  private drops = 0;
  private lastInterim = '';

  constructor(
    private readonly provider: SttProvider,
    private readonly listener: SttListener,
    private readonly policy: RetryPolicy,
  ) {}

  async start(): Promise<void> {
    this.inner = await openWithRetries('stt', this.policy, () => this.provider.open(this.events()));
  }

  private events(): SttListener {
    const gen = ++this.generation;
    return {
      interim: (text) => {
        if (gen !== this.generation || this.failed || text === this.lastInterim) return;
        this.lastInterim = text;
        this.listener.interim?.(text);
      },
      error: (err) => {
        if (gen === this.generation) this.broke(err);
      },
    };
  }

  private broke(err: unknown): void {
    if (this.closed || this.failed || this.reconnecting) return;
    const e = asProviderError('stt', err);
    if (!e.retryable || this.provider.resume === 'none') return this.fail(e);
    const retries = this.policy.attempts - 1;
    if (++this.drops > retries) {
      return this.fail(new ProviderError('stt', 'unavailable', `${this.provider.name}: connection lost ${this.drops} times in a row (${this.bare(e)})`, { retryable: false, cause: e }));
    }
    this.reconnecting = this.reconnect(retries);
  }

  private async reconnect(retries: number): Promise<void> {
    this.generation++;
    this.inner?.close();
    try {
      // At once: the caller is talking. Then with the policy's backoff.
      const session = await openWithRetries('stt', this.policy, () => this.provider.open(this.events()), {
        attempts: retries,
        stop: () => this.closed,
        spent: (n, last) =>
          new ProviderError('stt', 'unavailable', `${this.provider.name}: connection lost and ${n} reconnects failed (${this.bare(last)})`, { retryable: false, cause: last }),
      });
      this.reconnecting = null;
      if (this.closed) return session.close();
      this.inner = session;
      for (const pcm of this.turn) session.push(pcm);
    } catch (err) {
      this.reconnecting = null;
      this.fail(asProviderError('stt', err));
    }
  }

  private bare(e: ProviderError): string {
    return e.message.replace(`${this.provider.name}: `, '');
  }

  private fail(e: ProviderError): void {
    if (this.failed || this.closed) return;
    this.failed = e;
    this.listener.error?.(e);
  }

  push(pcm: Int16Array): void {
    if (this.closed || this.failed) return;
    if (this.provider.resume === 'turn' && this.turnSamples < MAX_REPLAY_SECONDS * this.provider.sampleRate) {
      this.turn.push(pcm);
      this.turnSamples += pcm.length;
    }
    if (!this.reconnecting) this.inner?.push(pcm);
  }

  speechStarted(): void {
    if (!this.reconnecting) this.inner?.speechStarted();
  }

  async endOfTurn(signal: AbortSignal): Promise<string> {
    for (;;) {
      if (this.failed) throw this.failed;
      if (this.reconnecting) {
        await this.reconnecting;
        continue;
      }
      const inner = this.inner!;
      try {
        const text = await inner.endOfTurn(signal);
        this.turn = [];
        this.turnSamples = 0;
        this.lastInterim = '';
        this.drops = 0;
        return text;
      } catch (err) {
        if (signal.aborted || this.closed) throw err;
        if (inner === this.inner && !this.reconnecting) this.broke(err);
      }
    }
  }

  close(): void {
    this.closed = true;
    this.inner?.close();
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
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    super('stt');
    this.resampler = new Resampler(callSampleRate, provider.sampleRate);
  }

  /** Opens the provider's session for this call (the start frame does, before the call runs: a refusal fails the call's start). */
  async open(): Promise<SttSession> {
    this.session = await openSttSession(this.provider, {
      // Interims go downstream as non-final transcripts: the caller sees them, the LLM ignores them.
      interim: (text) => {
        if (!this.failed && text) this.push({ kind: 'transcript', role: 'user', text, final: false });
      },
      // Reported as it happens, not at the end of the turn, so the call ends now.
      error: (err) => this.fail(err),
    }, this.retry);
    return this.session;
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'start' && dir === 'downstream') {
      try {
        await this.open();
      } catch (err) {
        // The start stops here: the pipeline's start rejects with this error.
        this.push({ ...errorFrame(this.name, asProviderError('stt', err).code, err, true), cause: err }, 'upstream');
        return;
      }
      this.push(frame, dir);
      return;
    }
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
    this.pushError(asProviderError('stt', err).code, err, true);
  }

  protected override onCancel(): void {
    this.abort.abort();
    this.session?.close();
  }
}
