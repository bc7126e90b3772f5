// Noise suppression in the call's pipeline (docs/design.md §15): between the caller's recording tap and the
// VAD, so the recording keeps what the caller sent while the VAD and the STT hear the denoised audio. One
// RNNoise state per call, freed when the call's pipeline is cancelled (its end).
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';
import type { NoiseSuppressor } from './rnnoise.js';

export class NoiseSuppressionProcessor extends FrameProcessor {
  constructor(private readonly suppressor: NoiseSuppressor) {
    super('noise_suppression');
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (dir === 'downstream' && frame.kind === 'audio_in') {
      if (frame.sampleRate !== this.suppressor.sampleRate) throw new Error(`caller audio at ${frame.sampleRate} Hz, noise suppression set up for ${this.suppressor.sampleRate} Hz`);
      this.push({ ...frame, pcm: this.suppressor.push(frame.pcm) }, dir);
      return;
    }
    this.push(frame, dir);
  }

  protected override onCancel(): void {
    this.suppressor.close();
  }
}
