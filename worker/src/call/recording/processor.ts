// The recording's taps in the pipeline: one after the transport input sees the caller's audio frames,
// one after the paced output sees the bot's, each writing its channel of the call's recorder.
import type { Direction, Frame } from '../../pipeline/frames.js';
import { FrameProcessor } from '../../pipeline/processor.js';
import { concatPcm } from '../../audio/pcm.js';
import type { CallRecorder } from './recorder.js';

export type RecordedSide = 'user' | 'bot';

export class RecorderProcessor extends FrameProcessor {
  /** The caller's frames cut from one transport chunk (they share its arrival time), written together. */
  private chunk: Int16Array[] = [];
  private chunkAtMs = 0;

  /** `recorder()` is the call's recorder once the call has started (null before: nothing is recorded). */
  constructor(
    private readonly side: RecordedSide,
    private readonly recorder: () => Pick<CallRecorder, 'writeUser' | 'writeBot'> | null,
  ) {
    super(`recorder_${side}`);
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    this.push(frame, dir);
    if (dir !== 'downstream') return;
    if (this.side === 'bot' && frame.kind === 'bot_audio') this.recorder()?.writeBot(frame.pcm, frame.atMs);
    if (this.side === 'user' && frame.kind === 'audio_in') {
      if (this.chunk.length && frame.atMs !== this.chunkAtMs) this.writeChunk();
      this.chunk.push(frame.pcm);
      this.chunkAtMs = frame.atMs;
    }
  }

  /** A chunk is placed on the timeline as it arrived: ending at its arrival time. */
  private writeChunk(): void {
    const pcm = this.chunk.length === 1 ? this.chunk[0]! : concatPcm(this.chunk);
    this.chunk = [];
    this.recorder()?.writeUser(pcm, this.chunkAtMs);
  }

  /** The call is ending: the last chunk goes in before the recording is finished. */
  protected override onCancel(): void {
    if (this.chunk.length) this.writeChunk();
  }
}
