// Voice activity detection and turn taking. The engine classifies fixed frames as speech or not; the
// processor turns that into user_started_speaking (plus an interruption: barge-in) and, after the bot's
// end-of-turn silence, user_stopped_speaking. Smart turn detection (docs/design.md §11) adds the pauses in
// between: `user_paused` at the first silence (a reply may be prepared) and at min_silence_ms (the STT stage
// ends a complete utterance there, and says so upstream with `end_turn`), and `user_resumed` when the
// caller goes on. While the bot speaks and backchannels are ignored, speech starts `tentative`: no
// interruption from here (the STT stage pauses the bot's audio and decides from the words, at its pauses).
import { Rechunker, samplesFor } from '../audio/pcm.js';
import { Resampler } from '../audio/resample.js';
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export interface VadEngine {
  readonly name: string;
  /** The rate the engine needs; audio is converted to it. */
  readonly sampleRate: number;
  readonly frameMs: number;
  isSpeech(frame: Int16Array): boolean;
  close(): void;
}

export interface VadOptions {
  /** Fixed mode: the silence that ends every turn; smart: the longest wait (an incomplete utterance). */
  endOfTurnSilenceMs: number;
  /** The silence after which the STT stage may end a complete utterance (smart), or decide on speech over the bot. */
  minSilenceMs?: number;
  /** Smart turn detection: every turn reports its pauses; otherwise only speech over the bot does (the STT stage decides on it there). */
  smart?: boolean;
  /** While the bot speaks, speech does not interrupt at once: the words decide (STT stage). */
  ignoreBackchannels?: boolean;
  /** Voiced audio needed before speech counts as started (short clicks must not barge in). */
  startSpeechMs?: number;
}

/** The first silence of a smart turn: long enough not to fire between words, short enough to prepare a reply in. */
export const FIRST_SILENCE_MS = 100;
/**
 * After min_silence_ms, how often the STT stage looks again until end_of_turn_silence_ms: a live decoder may settle
 * a turn's last word a little after the min-silence look ("when is" → "when is it due"), and the turn then ends at
 * the next look instead of waiting for the longest silence. The rule is the same at every look: a complete utterance.
 */
export const REDECIDE_MS = 100;

export class VadProcessor extends FrameProcessor {
  private readonly resampler: Resampler | null = null;
  private readonly chunker: Rechunker;
  private speaking = false;
  private voicedMs = 0;
  private silenceMs = 0;
  private speechEndAtMs = 0;
  private readonly startSpeechMs: number;
  /** Speech starts counted: a turn's number. */
  private turn = 0;
  /** Pauses of this turn already reported (0, 1: first silence, 2: min silence, then one per REDECIDE_MS). */
  private pauses = 0;
  /** The silence at which the next deciding pause is reported. */
  private nextDecideMs = 0;
  private botSpeaking = false;
  /** This turn began over the bot (tentative). */
  private tentative = false;

  constructor(
    private readonly engine: VadEngine,
    private readonly callSampleRate: number,
    private readonly opts: VadOptions,
  ) {
    super('vad');
    if (callSampleRate !== engine.sampleRate) this.resampler = new Resampler(callSampleRate, engine.sampleRate);
    this.chunker = new Rechunker(samplesFor(engine.frameMs, engine.sampleRate));
    this.startSpeechMs = opts.startSpeechMs ?? 60;
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (dir === 'upstream') {
      if (frame.kind === 'bot_speaking') this.botSpeaking = frame.speaking;
      if (frame.kind === 'end_turn') return this.turnEnded(frame.turn);
      this.push(frame, dir);
      return;
    }
    this.push(frame, dir);
    if (frame.kind !== 'audio_in') return;
    const pcm = this.resampler ? this.resampler.push(frame.pcm) : frame.pcm;
    for (const chunk of this.chunker.push(pcm)) this.step(this.engine.isSpeech(chunk), frame.atMs);
  }

  private step(voiced: boolean, atMs: number): void {
    const frameMs = this.engine.frameMs;
    if (!this.speaking) {
      this.voicedMs = voiced ? this.voicedMs + frameMs : 0;
      if (this.voicedMs >= this.startSpeechMs) this.started(atMs);
      return;
    }
    if (voiced) {
      if (this.pauses > 0) this.push({ kind: 'user_resumed', atMs, turn: this.turn });
      this.pauses = 0;
      this.silenceMs = 0;
      this.speechEndAtMs = atMs;
      return;
    }
    this.silenceMs += frameMs;
    const min = this.opts.minSilenceMs;
    if (min !== undefined && (this.opts.smart || this.tentative)) {
      const at = { atMs, speechEndAtMs: this.speechEndAtMs, silenceMs: this.silenceMs, turn: this.turn };
      if (this.pauses === 0 && this.silenceMs >= Math.min(FIRST_SILENCE_MS, min)) {
        this.pauses = 1;
        this.push({ kind: 'user_paused', ...at, decide: false });
      }
      if (this.pauses === 1 && this.silenceMs >= min) {
        this.pauses = 2;
        this.nextDecideMs = this.silenceMs + REDECIDE_MS;
        this.push({ kind: 'user_paused', ...at, decide: true });
      } else if (this.pauses >= 2 && this.silenceMs >= this.nextDecideMs && this.silenceMs < this.opts.endOfTurnSilenceMs) {
        this.pauses++;
        this.nextDecideMs = this.silenceMs + REDECIDE_MS;
        this.push({ kind: 'user_paused', ...at, decide: true });
      }
    }
    if (this.silenceMs >= this.opts.endOfTurnSilenceMs) {
      this.speaking = false;
      this.voicedMs = 0;
      this.pauses = 0;
      this.push({ kind: 'user_stopped_speaking', atMs, speechEndAtMs: this.speechEndAtMs, silenceMs: this.silenceMs });
    }
  }

  private started(atMs: number): void {
    this.speaking = true;
    this.silenceMs = 0;
    this.pauses = 0;
    this.speechEndAtMs = atMs;
    this.turn++;
    const tentative = this.botSpeaking && (this.opts.ignoreBackchannels ?? false);
    this.tentative = tentative;
    this.push({ kind: 'user_started_speaking', atMs, turn: this.turn, ...(tentative ? { tentative: true } : {}) });
    if (!tentative) this.push({ kind: 'interruption' });
  }

  /**
   * The STT stage ended `turn` at a pause. If the caller went on meanwhile, what they say now is a new turn (and
   * interrupts the reply to the old one); otherwise the VAD waits for the next speech.
   */
  private turnEnded(turn: number): void {
    if (!this.speaking || turn !== this.turn) return;
    if (this.pauses > 0) {
      this.speaking = false;
      this.voicedMs = 0;
      this.pauses = 0;
      return;
    }
    this.started(performance.now());
  }

  protected override onCancel(): void {
    this.engine.close();
  }
}
