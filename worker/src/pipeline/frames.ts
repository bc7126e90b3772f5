// Typed frames: everything that moves through a call's pipeline. System frames (interruption,
// speech start, errors, cancel) overtake queued data so a barge-in is never stuck behind audio.

/** What the caller's side is told (transcripts, the call's start and end), whatever the transport carries it. */
export type ServerMessage =
  | { type: 'started'; call_id: string }
  | { type: 'transcript'; role: 'user' | 'bot'; text: string; final: boolean; dtmf?: boolean }
  | { type: 'ended'; reason: string }
  | { type: 'error'; code: string; message: string };

export type Role = 'user' | 'bot';

export type Frame =
  /** Opens the services: the stages open their providers' sessions; it leaves the pipeline once all are open. */
  | { kind: 'start' }
  /** Caller audio at the call's sample rate; `atMs` is when it arrived (performance.now()). */
  | { kind: 'audio_in'; pcm: Int16Array; sampleRate: number; atMs: number }
  /** Bot audio at the call's sample rate, for the output's pacing. */
  | { kind: 'audio_out'; pcm: Int16Array; sampleRate: number }
  /** Bot audio leaving for the transport, paced: one frame, sent at `atMs` (performance.now()). */
  | { kind: 'bot_audio'; pcm: Int16Array; sampleRate: number; atMs: number }
  /** A message for the caller (transcripts), in step with the bot audio around it. */
  | { kind: 'transport_message'; msg: ServerMessage }
  /** The reply that ends the call has been spoken in full. */
  | { kind: 'end_call' }
  /**
   * A point in the bot's speech: the output calls `reached` once the audio before it has been played (or
   * dropped by a barge-in or the call's end), so an action can wait for what the bot says first (a transfer's announcement).
   */
  | { kind: 'mark'; reached: () => void }
  /**
   * Speech began (`turn`: the VAD's count of them). `tentative`: it began while the bot speaks and the bot ignores
   * backchannels, so no interruption came with it: the STT stage decides from the words (docs/design.md §11).
   */
  | { kind: 'user_started_speaking'; atMs: number; turn?: number; tentative?: boolean }
  /**
   * Smart turn detection: the caller fell silent mid-turn. `decide: false` at the first silence (a preemptive reply
   * may start), `decide: true` after the bot's min_silence_ms (a complete utterance ends the turn here).
   */
  | { kind: 'user_paused'; atMs: number; speechEndAtMs: number; silenceMs: number; turn: number; decide: boolean }
  /** The caller spoke again after a pause of the same turn: what was prepared for the pause is dropped. */
  | { kind: 'user_resumed'; atMs: number; turn: number }
  /** Upstream, to the VAD: the STT stage ended `turn` at a pause (or dropped it as a backchannel). */
  | { kind: 'end_turn'; turn: number }
  /**
   * Speech began over the bot: the output stops sending (keeping what it holds) until `resume_output` (the speech was
   * a backchannel: the bot goes on where it stopped) or an interruption (it was not: what was held is dropped).
   */
  | { kind: 'pause_output' }
  | { kind: 'resume_output' }
  /** Upstream, from the output: the bot's audio started or stopped reaching the caller. */
  | { kind: 'bot_speaking'; speaking: boolean }
  /** End of the user's turn: `speechEndAtMs` is the end of the last voiced frame. */
  | { kind: 'user_stopped_speaking'; atMs: number; speechEndAtMs: number; silenceMs: number }
  /**
   * `dtmf`: a keypad turn (the keys, `#` left out) rather than words. `preemptive`: not final, but what a reply may
   * be prepared on (the caller paused); it is held until the turn ends on the same words.
   */
  | { kind: 'transcript'; role: Role; text: string; final: boolean; dtmf?: boolean; preemptive?: boolean; node?: string }
  /** A handoff (shared/DESIGN.md §18): the TTS speaks with this provider (a TtsProvider) from here on, in order with the text around it. */
  | { kind: 'voice'; provider: object }
  /** One key the caller pressed (0-9, *, #); `atMs` is when it arrived (performance.now()). */
  | { kind: 'dtmf'; digit: string; atMs: number }
  /** Something the bot must say as is (greeting); the LLM stage adds it to the conversation. */
  | { kind: 'say'; text: string; endCall?: boolean }
  /** A supervisor's instruction: the model reads it before its next reply (docs/design.md §16). */
  | { kind: 'instruct'; text: string }
  /** One sentence of the bot's reply, for the TTS. */
  | { kind: 'text'; text: string }
  /** `held`: a preemptive reply, kept at the output unheard until `release` (or dropped by an interruption). */
  | { kind: 'response_start'; held?: boolean }
  /** The held reply's turn ended on the words it was prepared for: play it. */
  | { kind: 'release' }
  | { kind: 'response_end'; endCall: boolean }
  /** Provider timing of the current turn, for the turn-latency breakdown. */
  | { kind: 'provider_time'; stage: 'stt' | 'llm' | 'tts' | 'tool'; provider: string; ms: number }
  /** Barge-in: drop queued bot output and stop generating it. */
  | { kind: 'interruption' }
  /** Errors travel as frames; `fatal` ends the call, otherwise the call goes on. `cause`: the error itself, when a start failed. */
  | { kind: 'error'; code: string; message: string; fatal: boolean; source: string; cause?: unknown }
  /** Stop everything now (hang-up, time limit). */
  | { kind: 'cancel'; reason: string };

export type FrameKind = Frame['kind'];
export type FrameOf<K extends FrameKind> = Extract<Frame, { kind: K }>;
export type Direction = 'downstream' | 'upstream';

const SYSTEM: ReadonlySet<FrameKind> = new Set<FrameKind>(['interruption', 'user_started_speaking', 'bot_speaking', 'pause_output', 'resume_output', 'error', 'cancel']);
export const isSystemFrame = (f: Frame): boolean => SYSTEM.has(f.kind);

/** Frames that belong to the bot's current reply: an interruption discards them wherever they wait. */
const INTERRUPTIBLE: ReadonlySet<FrameKind> = new Set<FrameKind>(['audio_out', 'text', 'response_start', 'response_end', 'release']);
export const isInterruptible = (f: Frame): boolean => INTERRUPTIBLE.has(f.kind);

export function errorFrame(source: string, code: string, err: unknown, fatal = true): FrameOf<'error'> {
  const message = err instanceof Error ? err.message : String(err);
  return { kind: 'error', code, message, fatal, source };
}
