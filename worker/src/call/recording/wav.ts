// WAV encoding of a recording: the header, then the two tracks interleaved (left, right) block by block,
// read from their files as the stream is consumed.
import { Readable } from 'node:stream';
import { wavHeader } from '../../audio/wav.js';

/** WAV blocks read from the track files at the end: 16384 stereo frames = 64 KiB. */
const BLOCK_FRAMES = 16_384;

/** A track that can read `frames` samples from `frame` into `into` (zero-filled past its end). */
export interface TrackReader {
  read(into: Buffer, frame: number, frames: number): Promise<void>;
}

export interface FinishedRecording {
  /** The WAV: header, then interleaved blocks read from the track files. */
  stream: Readable;
  bytes: number;
  durationSeconds: number;
}

/** A stereo PCM16 WAV of `totalFrames` frames, `left` and `right` interleaved, as a stream of known size. */
export function stereoWav(left: TrackReader, right: TrackReader, sampleRate: number, totalFrames: number): FinishedRecording {
  const dataBytes = totalFrames * 4;
  async function* wav(): AsyncGenerator<Buffer> {
    yield wavHeader(sampleRate, 2, dataBytes);
    const l = Buffer.from(new ArrayBuffer(BLOCK_FRAMES * 2));
    const r = Buffer.from(new ArrayBuffer(BLOCK_FRAMES * 2));
    const l16 = new Uint16Array(l.buffer);
    const r16 = new Uint16Array(r.buffer);
    for (let frame = 0; frame < totalFrames; frame += BLOCK_FRAMES) {
      const n = Math.min(BLOCK_FRAMES, totalFrames - frame);
      await Promise.all([left.read(l, frame, n), right.read(r, frame, n)]);
      // Whole 16-bit units are moved, so the file's little-endian bytes pass through unchanged.
      const out = new Uint16Array(n * 2);
      for (let i = 0; i < n; i++) {
        out[2 * i] = l16[i]!;
        out[2 * i + 1] = r16[i]!;
      }
      yield Buffer.from(out.buffer);
    }
  }
  return { stream: Readable.from(wav(), { objectMode: false }), bytes: 44 + dataBytes, durationSeconds: totalFrames / sampleRate };
}
