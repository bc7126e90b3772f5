// Voice activity detection and turn taking. The engine classifies fixed frames as speech or not;
// the processor turns that into user_started_speaking (plus an interruption: barge-in) and, after
// the bot's configured end-of-turn silence, user_stopped_speaking.
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
  endOfTurnSilenceMs: number;
  /** Voiced audio needed before speech counts as started (short clicks must not barge in). */
  startSpeechMs?: number;
}

export class VadProcessor extends FrameProcessor {
  private readonly resampler: Resampler | null = null;
  private readonly chunker: Rechunker;
  private speaking = false;
  private voicedMs = 0;
  private silenceMs = 0;
  private speechEndAtMs = 0;
  private readonly startSpeechMs: number;

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
    this.push(frame, dir);
    if (frame.kind !== 'audio_in') return;
    const pcm = this.resampler ? this.resampler.push(frame.pcm) : frame.pcm;
    const frameMs = this.engine.frameMs;
    for (const chunk of this.chunker.push(pcm)) {
      const voiced = this.engine.isSpeech(chunk);
      if (!this.speaking) {
        this.voicedMs = voiced ? this.voicedMs + frameMs : 0;
        if (this.voicedMs >= this.startSpeechMs) {
          this.speaking = true;
          this.silenceMs = 0;
          this.speechEndAtMs = frame.atMs;
          this.push({ kind: 'user_started_speaking', atMs: frame.atMs });
          this.push({ kind: 'interruption' });
        }
      } else if (voiced) {
        this.silenceMs = 0;
        this.speechEndAtMs = frame.atMs;
      } else {
        this.silenceMs += frameMs;
        if (this.silenceMs >= this.opts.endOfTurnSilenceMs) {
          this.speaking = false;
          this.voicedMs = 0;
          this.push({ kind: 'user_stopped_speaking', atMs: frame.atMs, speechEndAtMs: this.speechEndAtMs, silenceMs: this.silenceMs });
        }
      }
    }
  }

  protected override onCancel(): void {
    this.engine.close();
  }
}
