// The output's pacing: bot audio goes out in real time, one frame per tick, so a barge-in can drop
// everything not yet sent (the caller hears at most one more frame) and the transport never buffers
// seconds of speech. Bot transcripts and the end-of-call marker leave in step with the audio, as frames
// (`bot_audio`, `transport_message`, `end_call`) for the bot's recorder and the transport output.
import { Rechunker, samplesFor } from '../audio/pcm.js';
import type { Direction, Frame, ServerMessage } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export interface TurnTiming {
  /** User end of speech → first bot audio frame sent. */
  latencyMs: number;
  /** The bot's configured end-of-turn silence, part of the latency by design. */
  silenceMs: number;
  /** STT + LLM (first sentence) + TTS (first audio) as the providers measured them. */
  providerMs: number;
  /** What the platform itself added. */
  overheadMs: number;
  /** User end of speech → the turn's end decided (the silence waited, plus how late the decision came). */
  turnEndMs: number;
  /** Each provider stage's time as measured, in order; `beforeTurnEnd` for work done on a pause (a prepared reply, a peek). */
  stages: Array<{ stage: string; provider: string; ms: number; beforeTurnEnd: boolean }>;
  /**
   * The turn's critical path after the decision (docs/design.md §16 `turns`), from when each part reached the
   * output: the final words, the model's first sentence (tools apart), its first audio. They sum, with
   * `turnEndMs`, to `latencyMs` within a frame.
   */
  path: { sttMs: number; llmMs: number; toolMs: number; ttsMs: number };
  /** The caller's words that ended the turn. */
  userText: string;
  /** Wall-clock times of the caller's end of speech and of the decision. */
  userEndAt: Date;
  decidedAt: Date;
  /** A reply prepared on the pause played (its stages were done before the decision). */
  preemptive: boolean;
  /** Set later if the caller cut this reply short. */
  interrupted: boolean;
  /** The flow node the caller's words were heard in (shared/DESIGN.md §18); absent without a flow. */
  node?: string;
}

/** A `performance.now()` time as a wall-clock Date. */
const wallAt = (perfMs: number) => new Date(Date.now() - (performance.now() - perfMs));

/** The turn being answered: its decision and when each part of the reply reached the output. */
interface OpenTurn {
  speechEndAtMs: number;
  atMs: number;
  silenceMs: number;
  providerMs: number;
  stages: Stage[];
  text: string;
  textAtMs: number | null;
  llmAtMs: number | null;
  ttsAtMs: number | null;
  toolMs: number;
  preemptive: boolean;
  node?: string;
}

type Stage = TurnTiming['stages'][number];

export interface OutputEvents {
  onTurn?(t: TurnTiming): void;
  onProviderTime?(stage: string, provider: string, ms: number): void;
  /** Time between two frames of one stretch of speech (jitter of the pacing). */
  onFrameGap?(ms: number): void;
}

type Item = { t: 'audio'; pcm: Int16Array } | { t: 'msg'; msg: ServerMessage } | { t: 'end' } | { t: 'mark'; reached: () => void };

export class OutputProcessor extends FrameProcessor {
  private readonly frameMs = 20;
  private readonly chunker: Rechunker;
  private readonly outQueue: Item[] = [];
  private timer: NodeJS.Timeout | null = null;
  private anchorMs = 0;
  private sentInSpurt = 0;
  private lastSentMs = 0;
  private turn: OpenTurn | null = null;
  /** The last turn answered, while its reply may still be cut short. */
  private answered: TurnTiming | null = null;
  /** Provider stages timed since the last reply was heard and before this turn ended (its breakdown). */
  private earlyStages: Stage[] = [];
  /** Frames sent in advance of real time: a little slack for timer jitter, not enough to hear after a barge-in. */
  private readonly leadFrames = 1;
  /** A preemptive reply waits here unheard until `release` (or an interruption drops it). */
  private held = false;
  private readonly heldQueue: Item[] = [];
  /** Speech over the bot: nothing is sent until it is known to be a backchannel (resume) or not (interruption). */
  private paused = false;
  /** The bot's audio is reaching the caller (told upstream: speech that starts now is over the bot). */
  private botSpeaking = false;
  private quietTimer: NodeJS.Timeout | null = null;
  framesSent = 0;

  constructor(
    private readonly sampleRate: number,
    private readonly sink: OutputEvents = {},
  ) {
    super('output');
    this.chunker = new Rechunker(samplesFor(this.frameMs, sampleRate));
  }

  /** True while bot audio is queued. */
  get speaking(): boolean {
    return this.outQueue.some((i) => i.t === 'audio');
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    switch (frame.kind) {
      case 'audio_out':
        for (const pcm of this.chunker.push(frame.pcm)) this.enqueue({ t: 'audio', pcm });
        return;
      case 'transcript':
        if (frame.preemptive) return; // what a reply is prepared on, not what the caller is shown
        if (frame.role === 'user' && frame.final && this.turn && this.turn.textAtMs === null) {
          this.turn.text = frame.text;
          this.turn.textAtMs = performance.now();
          if (frame.node) this.turn.node = frame.node;
        }
        if (frame.role === 'user') this.message({ type: 'transcript', role: 'user', text: frame.text, final: frame.final, ...(frame.dtmf ? { dtmf: true } : {}) });
        else this.enqueue({ t: 'msg', msg: { type: 'transcript', role: 'bot', text: frame.text, final: frame.final } });
        return;
      case 'response_start':
        if (frame.held) this.held = true;
        this.push(frame, dir);
        return;
      case 'pause_output':
        this.paused = true;
        this.stopTimer();
        if (this.quietTimer) clearTimeout(this.quietTimer);
        this.quietTimer = null;
        return;
      case 'resume_output':
        this.paused = false;
        if (this.outQueue.length && !this.timer) this.tick();
        else if (!this.outQueue.some((i) => i.t === 'audio')) this.setSpeaking(false);
        return;
      case 'release':
        if (this.turn) this.turn.preemptive = true;
        this.held = false;
        for (const item of this.heldQueue.splice(0)) this.enqueue(item);
        return;
      case 'response_end':
        for (const pcm of this.chunker.flush()) this.enqueue({ t: 'audio', pcm });
        if (frame.endCall) this.enqueue({ t: 'end' });
        return;
      case 'mark':
        for (const pcm of this.chunker.flush()) this.enqueue({ t: 'audio', pcm });
        this.enqueue({ t: 'mark', reached: frame.reached });
        return;
      case 'user_stopped_speaking':
        this.turn = {
          speechEndAtMs: frame.speechEndAtMs,
          atMs: frame.atMs,
          silenceMs: frame.silenceMs,
          providerMs: 0,
          stages: this.earlyStages.splice(0),
          text: '',
          textAtMs: null,
          llmAtMs: null,
          ttsAtMs: null,
          toolMs: 0,
          preemptive: false,
        };
        return;
      case 'provider_time':
        if (this.turn) {
          const now = performance.now();
          if (frame.stage === 'tool' && this.turn.llmAtMs === null) this.turn.toolMs += frame.ms;
          if (frame.stage === 'llm') this.turn.llmAtMs ??= now;
          if (frame.stage === 'tts') this.turn.ttsAtMs ??= now;
          this.turn.providerMs += frame.ms;
          this.turn.stages.push({ stage: frame.stage, provider: frame.provider, ms: frame.ms, beforeTurnEnd: false });
        } else if (this.earlyStages.length < 32) {
          this.earlyStages.push({ stage: frame.stage, provider: frame.provider, ms: frame.ms, beforeTurnEnd: true });
        }
        this.sink.onProviderTime?.(frame.stage, frame.provider, frame.ms);
        return;
      default:
        this.push(frame, dir);
    }
  }

  protected override onInterrupt(): void {
    // A reply still playing is cut short (an interruption with the bot silent is a turn starting, or a prepared reply dropped unheard).
    if (this.answered && this.outQueue.some((i) => i.t === 'audio')) this.answered.interrupted = true;
    this.clear();
  }

  private message(msg: ServerMessage): void {
    this.push({ kind: 'transport_message', msg });
  }

  protected override onCancel(): void {
    this.clear();
    if (this.quietTimer) clearTimeout(this.quietTimer);
  }

  private clear(): void {
    // Whoever waits for a mark is not left waiting: what came before it will never be played.
    for (const item of [...this.outQueue, ...this.heldQueue]) if (item.t === 'mark') item.reached();
    this.outQueue.length = 0;
    this.heldQueue.length = 0;
    this.chunker.clear();
    this.held = false;
    this.paused = false;
    this.stopTimer();
    this.setSpeaking(false);
  }

  private enqueue(item: Item): void {
    if (this.held) {
      this.heldQueue.push(item);
      return;
    }
    this.outQueue.push(item);
    if (!this.timer && !this.paused) this.tick();
  }

  private setSpeaking(speaking: boolean): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = null;
    if (speaking === this.botSpeaking || this.cancelled) return;
    this.botSpeaking = speaking;
    this.push({ kind: 'bot_speaking', speaking }, 'upstream');
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.sentInSpurt = 0;
  }

  private tick(): void {
    this.timer = null;
    if (this.paused) return;
    const now = performance.now();
    // A new stretch of speech starts its own clock; a queue that ran dry for less than a frame
    // (the TTS between two chunks) keeps the old one, so frames never bunch up.
    if (this.sentInSpurt === 0 || now - this.nextDueMs() > this.frameMs) {
      this.anchorMs = now;
      this.sentInSpurt = 0;
    }
    const due = Math.floor((now - this.anchorMs) / this.frameMs) + 1 + this.leadFrames;
    while (this.outQueue.length && (this.outQueue[0]!.t !== 'audio' || this.sentInSpurt < due)) {
      const item = this.outQueue.shift()!;
      if (item.t === 'msg') this.message(item.msg);
      else if (item.t === 'end') this.push({ kind: 'end_call' });
      else if (item.t === 'mark') item.reached();
      else this.sendFrame(item.pcm, now);
    }
    if (!this.outQueue.some((i) => i.t === 'audio') && this.botSpeaking && !this.quietTimer) {
      // The last frame sent is still playing (and the lead frame ahead of it).
      this.quietTimer = setTimeout(() => this.setSpeaking(false), (this.leadFrames + 1) * this.frameMs);
    }
    if (!this.outQueue.length) return;
    this.timer = setTimeout(() => this.tick(), Math.max(0, this.nextDueMs() - performance.now()));
  }

  /** When the next frame of the current stretch is due. */
  private nextDueMs(): number {
    return this.anchorMs + (this.sentInSpurt - this.leadFrames) * this.frameMs;
  }

  private sendFrame(pcm: Int16Array, now: number): void {
    this.setSpeaking(true);
    if (this.sentInSpurt > 0 && this.sentInSpurt > this.leadFrames) this.sink.onFrameGap?.(now - this.lastSentMs);
    this.lastSentMs = now;
    this.sentInSpurt++;
    this.framesSent++;
    this.push({ kind: 'bot_audio', pcm, sampleRate: this.sampleRate, atMs: now });
    if (this.turn) {
      const t = this.turn;
      const latencyMs = now - t.speechEndAtMs;
      // Each part from the one before it (a part that never came, as a prepared reply's, took no time).
      const textAt = Math.max(t.atMs, t.textAtMs ?? t.atMs);
      const llmAt = Math.max(textAt, t.llmAtMs ?? textAt);
      const ttsAt = Math.max(llmAt, t.ttsAtMs ?? llmAt);
      const toolMs = Math.min(t.toolMs, llmAt - textAt);
      const timing: TurnTiming = {
        latencyMs,
        silenceMs: t.silenceMs,
        providerMs: t.providerMs,
        overheadMs: latencyMs - t.silenceMs - t.providerMs,
        turnEndMs: t.atMs - t.speechEndAtMs,
        stages: t.stages,
        path: { sttMs: textAt - t.atMs, llmMs: llmAt - textAt - toolMs, toolMs, ttsMs: ttsAt - llmAt },
        userText: t.text,
        userEndAt: wallAt(t.speechEndAtMs),
        decidedAt: wallAt(t.atMs),
        preemptive: t.preemptive,
        interrupted: false,
        ...(t.node ? { node: t.node } : {}),
      };
      this.answered = timing;
      this.sink.onTurn?.(timing);
      this.turn = null;
    }
    // Stages timed while the bot speaks belong to no turn of the caller's.
    this.earlyStages.length = 0;
  }
}
