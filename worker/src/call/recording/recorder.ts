// A call's recording: two tracks (left: caller, right: bot) on the call's own timeline, written to
// temp files during the call and read back as one stereo WAV at the end. A failed recording never
// fails the call. A 2-hour call is ~460 MB of WAV at 16 kHz, so nothing call-long stays in memory.
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { TrackFile } from './tracks.js';
import { stereoWav, type FinishedRecording, type TrackReader } from './wav.js';

export type { FinishedRecording } from './wav.js';

/** Under RECORDING_DIR: one folder per call, `<call_id>/{user,bot}.pcm` (PCM16LE mono). */
export const RECORDINGS_SUBDIR = 'vp-worker-recordings';

export type RecordingStage = 'disk' | 'upload';

/** Why a call has no recording; `stage` says whether the temp files or the upload failed. */
export class RecordingError extends Error {
  constructor(
    readonly stage: RecordingStage,
    cause: unknown,
  ) {
    super(`recording ${stage === 'disk' ? 'write' : 'upload'} failed: ${describe(cause)}`.slice(0, 1000), { cause });
  }
}

/** errno code and syscall, not the message: the message names local paths, which the call record should not. */
function describe(err: unknown): string {
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && typeof e.syscall === 'string') return `${e.code} (${e.syscall})`;
  return err instanceof Error ? err.message : String(err);
}

export interface RecorderOptions {
  /** This call's temp folder (created 0700 on the first write). Default: a new folder under the OS temp dir. */
  dir?: string;
  /** Called once, when the recording is given up (disk write failed or fell behind). */
  onError?: (err: RecordingError) => void;
  /** In-memory buffer per track before a write goes out. Default: 1 s of audio. */
  bufferBytes?: number;
  /** Most a track may hold in memory while the disk lags. Default: 30 s of audio. */
  limitBytes?: number;
}

export class CallRecorder {
  readonly dir: string;
  /** Why this recording was given up, or null. */
  failed: RecordingError | null = null;
  private readonly user: TrackFile;
  private readonly bot: TrackFile;
  private readonly slack: number;
  private dirReady: Promise<void> | null = null;
  private readonly onError?: (err: RecordingError) => void;
  private discarded: Promise<void> | null = null;
  /** Most one track holds in memory before the recording is given up. */
  readonly limitBytes: number;
  /** Spans of the caller's channel silenced in the WAV ([from, to) in frames): keypad tones (redact_keypad_tones). */
  private readonly silenced: Array<[number, number]> = [];

  constructor(
    readonly sampleRate: number,
    readonly startMs: number,
    opts: RecorderOptions = {},
  ) {
    this.slack = Math.round(sampleRate * 0.06);
    this.dir = opts.dir ?? path.join(tmpdir(), RECORDINGS_SUBDIR, randomUUID());
    this.onError = opts.onError;
    const bufferBytes = opts.bufferBytes ?? sampleRate * 2;
    if (bufferBytes % 2) throw new Error('bufferBytes must be a whole number of samples');
    this.limitBytes = opts.limitBytes ?? sampleRate * 2 * 30;
    const ensureDir = () => (this.dirReady ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined));
    this.user = new TrackFile(path.join(this.dir, 'user.pcm'), bufferBytes, this.limitBytes, ensureDir, this);
    this.bot = new TrackFile(path.join(this.dir, 'bot.pcm'), bufferBytes, this.limitBytes, ensureDir, this);
  }

  /** Writes stop once the recording failed or is being discarded. */
  get stopped(): boolean {
    return this.failed !== null || this.discarded !== null;
  }

  /** Audio held in memory by both tracks, in bytes (bounded by 2 × limitBytes whatever the call's length). */
  get bufferedBytes(): number {
    return this.user.heldBytes + this.bot.heldBytes;
  }

  fail(err: unknown): void {
    if (this.stopped) return;
    this.failed = err instanceof RecordingError ? err : new RecordingError('disk', err);
    this.user.release();
    this.bot.release();
    this.onError?.(this.failed);
  }

  /** Resolves when the writes handed to the disk so far are done (the filling buffers stay in memory). */
  async written(): Promise<void> {
    await Promise.all([this.user.written(), this.bot.written()]);
  }

  private at(ms: number): number {
    return Math.max(0, Math.round(((ms - this.startMs) * this.sampleRate) / 1000));
  }
  writeUser(pcm: Int16Array, atMs: number): void {
    // Audio arrives at the end of its chunk: it started a chunk's length earlier.
    this.user.write(pcm, this.at(atMs) - pcm.length, this.slack);
  }
  /** The caller's channel is silent from `fromMs` to `toMs` (the call's clock) in the finished WAV. */
  silenceUser(fromMs: number, toMs: number): void {
    this.silenced.push([this.at(fromMs), this.at(toMs)]);
  }
  writeBot(pcm: Int16Array, atMs: number): void {
    this.bot.write(pcm, this.at(atMs), this.slack);
  }

  /**
   * The WAV of the whole call, `endMs - startMs` long, as a stream of known size. Rejects with the
   * RecordingError if the recording was given up. Call discard() once the stream is consumed (or not).
   */
  async finish(endMs: number): Promise<FinishedRecording> {
    const totalFrames = Math.max(this.at(endMs), this.user.length, this.bot.length);
    await Promise.all([this.user.settle(), this.bot.settle()]);
    if (this.failed) throw this.failed;
    return stereoWav(this.silenced.length ? silencedTrack(this.user, this.silenced) : this.user, this.bot, this.sampleRate, totalFrames);
  }

  /** Closes and removes the temp files (idempotent); never throws. */
  discard(): Promise<void> {
    this.discarded ??= (async () => {
      this.user.release();
      this.bot.release();
      await Promise.allSettled([this.user.close(), this.bot.close()]);
      await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
    })();
    return this.discarded;
  }
}


/** `track` read with `spans` ([from, to) in frames) as silence: the samples on disk stay as written until discarded. */
function silencedTrack(track: TrackReader, spans: ReadonlyArray<[number, number]>): TrackReader {
  return {
    async read(into: Buffer, frame: number, frames: number): Promise<void> {
      await track.read(into, frame, frames);
      for (const [from, to] of spans) {
        const a = Math.max(from, frame);
        const b = Math.min(to, frame + frames);
        if (a < b) into.fill(0, (a - frame) * 2, (b - frame) * 2);
      }
    },
  };
}
