// Speech to text. A provider opens one session per call; the processor feeds it the caller's audio
// and the VAD's turn events, and turns the session's final text into a user transcript frame.
// Streaming providers may also report interim hypotheses and failures as they happen through an
// optional listener; a batch provider ignores it.
import { Resampler } from '../audio/resample.js';
import { errorFrame, type Direction, type Frame, type FrameOf } from '../pipeline/frames.js';
import { interrupts } from './turns.js';
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
  /**
   * The current turn's words so far, the turn going on (smart turn detection, docs/design.md §11); `final`: the
   * recogniser holds them final. Providers without it: turns end at the end-of-turn silence only.
   */
  peek?(signal: AbortSignal, overlap?: boolean): Promise<Peek>;
  /**
   * A peek costs little and hears more with more of the pause: each deciding look (min_silence_ms, then every
   * REDECIDE_MS) peeks again rather than reusing the first silence's words (a live grammar decode 100 ms after the
   * last word missed it: "who is this" heard as "when is").
   */
  readonly peekAgainToDecide?: boolean;
  /** The turn ended on what a peek gave: its audio is forgotten (the next turn starts afresh). */
  discardTurn?(): void;
  close(): void;
}

export interface Peek {
  text: string;
  final: boolean;
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
/** The stage's session: peeks always answer (nothing final, from a provider that cannot peek). */
export interface StageSttSession extends SttSession {
  /** `overlap`: the caller speaks over the bot (a recogniser may listen for acknowledgements then). */
  peek(signal: AbortSignal, overlap?: boolean): Promise<Peek>;
  discardTurn(): void;
}

export async function openSttSession(provider: SttProvider, listener: SttListener, policy: RetryPolicy): Promise<StageSttSession> {
  const session = new StageSession(provider, listener, policy);
  await session.start();
  return session;
}

class StageSession implements StageSttSession {
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

  get peekAgainToDecide(): boolean {
    return !!this.inner?.peekAgainToDecide;
  }

  /** The inner session's peek; none (or reconnecting): nothing final is known, so the turn waits for its end. */
  async peek(signal: AbortSignal, overlap = false): Promise<Peek> {
    if (this.failed) throw this.failed;
    const inner = this.inner;
    if (this.reconnecting || !inner?.peek) return { text: '', final: false };
    return inner.peek(signal, overlap);
  }

  discardTurn(): void {
    this.turn = [];
    this.turnSamples = 0;
    this.lastInterim = '';
    this.drops = 0;
    if (!this.reconnecting) this.inner?.discardTurn?.();
  }

  close(): void {
    this.closed = true;
    this.inner?.close();
  }
}

/** Smart turn-taking (docs/design.md §11), as the bot's settings give it; none: turns end at the VAD's end-of-turn silence. */
export interface TurnTaking {
  /** Smart mode: a complete utterance ends the turn at the VAD's min-silence pause. */
  smart: boolean;
  /** Whether what was heard is a whole utterance (stt/turns.ts completeUtterance with the bot's policy). */
  complete(text: string): boolean;
  /** Tentative speech (it began while the bot spoke): acknowledgements only keep the bot going. */
  ignoreBackchannels: boolean;
  minWords: number;
  /** How each turn ended (metrics). */
  onTurnEnd?(how: 'complete' | 'silence' | 'backchannel'): void;
}

/** Speech over the bot that goes on this long is no backchannel, whatever its words: it interrupts. */
export const BACKCHANNEL_MAX_MS = 1200;

/** One turn of the caller's, from the VAD's speech start to its end (at a pause, at the end-of-turn silence, or dropped as a backchannel). */
interface Turn {
  turn: number;
  /** Began over the bot with backchannels ignored, not yet known to be more than one. */
  tentative: boolean;
  /** Bumped when the caller goes on after a pause: a peek of an earlier stretch is stale. */
  stretch: number;
  ended: boolean;
  /** The latest peek, for the stretch it was made in (whether to decide, and at what silence). */
  peek: { stretch: number; decide: boolean; silenceMs: number; result: Promise<Peek | null>; ms?: number } | null;
  timer: NodeJS.Timeout | null;
}

export class SttProcessor extends FrameProcessor {
  private readonly resampler: Resampler;
  private abort = new AbortController();
  private session: StageSttSession | null = null;
  /** Set once a fatal error went upstream: the same failure may surface twice (listener, endOfTurn). */
  private failed = false;
  private current: Turn | null = null;

  constructor(
    private readonly provider: SttProvider,
    callSampleRate: number,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
    private readonly turns: TurnTaking | null = null,
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
    if (dir === 'upstream') return this.push(frame, dir);
    const session = this.session;
    if (!session) throw new Error('stt: session not open');
    switch (frame.kind) {
      case 'audio_in':
        if (!this.failed) session.push(this.resampler.push(frame.pcm));
        return this.push(frame, dir);
      case 'user_started_speaking':
        session.speechStarted();
        this.startTurn(frame.turn, frame.tentative ?? false);
        return this.push(frame, dir);
      case 'user_resumed':
        if (this.current && this.current.turn === frame.turn) this.current.stretch++;
        return this.push(frame, dir);
      case 'user_paused':
        this.paused(frame);
        return;
      case 'user_stopped_speaking':
        return this.stopped(frame);
      default:
        this.push(frame, dir);
    }
  }

  private startTurn(turn: number | undefined, tentative: boolean): void {
    if (this.current?.timer) clearTimeout(this.current.timer);
    const t: Turn = { turn: turn ?? (this.current?.turn ?? 0) + 1, tentative: tentative && !!this.turns?.ignoreBackchannels, stretch: 0, ended: false, peek: null, timer: null };
    this.current = t;
    if (!t.tentative) return;
    // The bot falls silent at once and goes on where it stopped if this was only an acknowledgement.
    this.push({ kind: 'pause_output' });
    t.timer = setTimeout(() => {
      if (this.current === t && t.tentative && !t.ended) this.bargeIn(t);
    }, BACKCHANNEL_MAX_MS);
  }

  /**
   * The turn's words so far; null once stale or failed. One peek per stretch, unless the session's peek is cheap
   * (peekAgainToDecide): then each deciding look (min silence, then every REDECIDE_MS) hears the decoder's latest.
   */
  private peekAt(t: Turn, decide: boolean, silenceMs: number): Promise<Peek | null> {
    const again = decide && !!this.session!.peekAgainToDecide && !t.tentative && t.peek?.silenceMs !== silenceMs;
    if (t.peek?.stretch === t.stretch && !again) return t.peek.result;
    const stretch = t.stretch;
    const started = performance.now();
    const result = this.session!.peek(this.abort.signal, t.tentative).then(
      (p) => {
        if (t.peek?.result === result) t.peek.ms = performance.now() - started;
        return this.current === t && t.stretch === stretch && !t.ended && !this.cancelled ? p : null;
      },
      (err: unknown) => {
        this.fail(err);
        return null;
      },
    );
    t.peek = { stretch, decide, silenceMs, result };
    return result;
  }

  private bargeIn(t: Turn): void {
    t.tentative = false;
    if (t.timer) clearTimeout(t.timer);
    t.timer = null;
    this.push({ kind: 'interruption' });
  }

  /** A pause mid-turn: a preemptive reply may start on the words so far; after min_silence_ms a complete utterance ends the turn. */
  private paused(frame: FrameOf<'user_paused'>): void {
    const t = this.current;
    if (!t || t.turn !== frame.turn || t.ended || this.failed || !this.turns) return;
    void this.peekAt(t, frame.decide, frame.silenceMs).then((p) => {
      if (!p || this.current !== t || t.ended) return;
      if (t.tentative) {
        if (!frame.decide) return;
        // Over the bot, after min_silence_ms: acknowledgements only are dropped (the bot goes on), anything else is a
        // barge-in. A recogniser that cannot peek says nothing final: speech is speech.
        if (p.final && !interrupts(p.text, this.turns!.minWords)) {
          this.push({ kind: 'resume_output' });
          return this.endTurn(t, null, frame);
        }
        this.bargeIn(t);
      }
      if (!this.turns!.smart) return;
      if (!frame.decide) {
        if (p.text) this.push({ kind: 'transcript', role: 'user', text: p.text, final: false, preemptive: true });
        return;
      }
      if (p.final && this.turns!.complete(p.text)) this.endTurn(t, p.text, frame);
    });
  }

  /**
   * Ends the turn at a pause with the words a peek gave (null: a backchannel, dropped): the VAD is told, and the
   * reply starts as at any turn's end.
   */
  private endTurn(t: Turn, text: string | null, pause: FrameOf<'user_paused'>): void {
    t.ended = true;
    if (t.timer) clearTimeout(t.timer);
    this.session!.discardTurn();
    this.push({ kind: 'end_turn', turn: t.turn }, 'upstream');
    this.turns?.onTurnEnd?.(text === null ? 'backchannel' : 'complete');
    if (text === null) return;
    this.push({ kind: 'user_stopped_speaking', atMs: performance.now(), speechEndAtMs: pause.speechEndAtMs, silenceMs: pause.silenceMs });
    // The recogniser's time for these words (mostly spent during the silence, from the first one).
    if (t.peek?.ms !== undefined) this.push({ kind: 'provider_time', stage: 'stt', provider: this.provider.name, ms: t.peek.ms });
    this.push({ kind: 'transcript', role: 'user', text, final: true });
  }

  /** The end-of-turn silence: the turn's final words (unless it ended at a pause already). */
  private async stopped(frame: FrameOf<'user_stopped_speaking'>): Promise<void> {
    const t = this.current;
    if (t?.ended) return;
    if (t) {
      t.ended = true;
      if (t.timer) clearTimeout(t.timer);
    }
    if (this.failed) return this.push(frame);
    const tentative = t?.tentative ?? false;
    // An ordinary turn's end goes on at once (the output times the reply from it); a tentative one waits for its words.
    if (!tentative) this.push(frame);
    const started = performance.now();
    let text: string;
    try {
      text = await this.session!.endOfTurn(this.abort.signal);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (tentative) {
      if (!interrupts(text, this.turns!.minWords)) {
        this.push({ kind: 'resume_output' });
        this.turns?.onTurnEnd?.('backchannel');
        return; // no turn at all
      }
      this.push({ kind: 'interruption' });
      this.push(frame);
    }
    this.turns?.onTurnEnd?.('silence');
    this.push({ kind: 'provider_time', stage: 'stt', provider: this.provider.name, ms: performance.now() - started });
    if (text) this.push({ kind: 'transcript', role: 'user', text, final: true });
  }

  private fail(err: unknown): void {
    if (this.cancelled || this.failed) return;
    this.failed = true;
    this.pushError(asProviderError('stt', err).code, err, true);
  }

  protected override onCancel(): void {
    if (this.current?.timer) clearTimeout(this.current.timer);
    this.abort.abort();
    this.session?.close();
  }
}
