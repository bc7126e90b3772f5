// Call recordings: a stereo WAV (left: caller, right: bot) on the call's own timeline, uploaded to
// object storage at `recordings/YYYY/MM/DD/{call_id}.wav`. A failed recording never fails the call.
//
// A 2-hour call is ~460 MB of WAV at 16 kHz, so nothing call-long stays in memory: each track goes
// to its own temp file through a small buffer (flushed every ~1 s of audio, one async write at a time),
// and the WAV is streamed from the two files to storage at the end.
import { mkdir, open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { endianness, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { Client } from 'minio';
import { wavHeader } from '../audio/wav.js';

const BIG_ENDIAN = endianness() === 'BE';
/** Under RECORDING_DIR: one folder per call, `<call_id>/{user,bot}.pcm` (PCM16LE mono). */
export const RECORDINGS_SUBDIR = 'vp-worker-recordings';
/** WAV blocks read from the track files at the end: 16384 stereo frames = 64 KiB. */
const BLOCK_FRAMES = 16_384;
const UPLOAD_PART_BYTES = 5 * 1024 * 1024;

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

/**
 * One track on disk. `length` is the track's timeline in samples; the file holds what was written at
 * `2 × sample` bytes, and never-written ranges (gaps, the end) are holes or past EOF: silence on read.
 */
class TrackFile {
  length = 0;
  private cur: Buffer | null = null;
  private inFlight = 0;
  private closed = false;
  private curBytes = 0;
  private curOffsetBytes = 0;
  private readonly queue: Array<{ buf: Buffer; bytes: number; offsetBytes: number }> = [];
  private pump: Promise<void> | null = null;
  private fh: FileHandle | null = null;

  constructor(
    private readonly file: string,
    private readonly bufferBytes: number,
    private readonly limitBytes: number,
    private readonly ensureDir: () => Promise<void>,
    private readonly rec: { readonly stopped: boolean; fail(err: unknown): void },
  ) {}

  /** Places audio at its time; gaps become silence, small overlaps (jitter) are appended. */
  write(pcm: Int16Array, atSample: number, slack: number): void {
    if (atSample - this.length > slack) this.pad(atSample - this.length);
    this.length += pcm.length;
    if (this.rec.stopped) return;
    let done = 0;
    while (done < pcm.length) {
      if (!this.cur) {
        this.cur = Buffer.from(new ArrayBuffer(this.bufferBytes)); // zeroed, so in-buffer padding is free
        this.curBytes = 0;
        this.curOffsetBytes = (this.length - pcm.length + done) * 2;
      }
      const n = Math.min(pcm.length - done, (this.bufferBytes - this.curBytes) / 2);
      new Int16Array(this.cur.buffer, this.cur.byteOffset + this.curBytes, n).set(pcm.subarray(done, done + n));
      this.curBytes += n * 2;
      done += n;
      if (this.curBytes === this.bufferBytes) this.flush();
    }
  }

  pad(samples: number): void {
    if (samples <= 0) return;
    this.length += samples;
    if (!this.cur) return; // the next write starts at the new length; the file keeps a hole
    // Strictly less: a buffer is never left full, so write() always has room once it has one.
    if (this.curBytes + samples * 2 < this.bufferBytes) this.curBytes += samples * 2;
    else this.flush();
  }

  /** Hands the filling buffer to the writer. */
  flush(): void {
    const buf = this.cur;
    this.cur = null;
    if (!buf || this.rec.stopped) return;
    if (BIG_ENDIAN) buf.subarray(0, this.curBytes).swap16(); // the files are little-endian, like WAV
    this.queue.push({ buf, bytes: this.curBytes, offsetBytes: this.curOffsetBytes });
    // Memory stays bounded even if the disk stalls: past the limit the recording is given up.
    if (this.heldBytes > this.limitBytes) return this.rec.fail(new Error(`disk writes fell behind by more than ${this.limitBytes} bytes`));
    this.kick();
  }

  /** Bytes held in memory: the filling buffer plus those queued or being written. */
  get heldBytes(): number {
    return ((this.cur ? 1 : 0) + this.queue.length + this.inFlight) * this.bufferBytes;
  }

  private kick(): void {
    if (this.pump || !this.queue.length || this.rec.stopped) return;
    this.pump = this.drain().finally(() => {
      this.pump = null;
      this.kick(); // a buffer queued between the loop's end and here
    });
  }

  /** One write at a time; buffers that queued up meanwhile and are contiguous go out as one writev. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length && !this.rec.stopped) {
        if (!this.fh) {
          await this.ensureDir();
          this.fh = await open(this.file, 'w+', 0o600);
        }
        const batch = [this.queue.shift()!];
        while (this.queue.length && this.queue[0]!.offsetBytes === batch.at(-1)!.offsetBytes + batch.at(-1)!.bytes) batch.push(this.queue.shift()!);
        this.inFlight = batch.length;
        try {
          await this.fh.writev(
            batch.map((b) => b.buf.subarray(0, b.bytes)),
            batch[0]!.offsetBytes,
          );
        } finally {
          this.inFlight = 0;
        }
      }
    } catch (err) {
      this.rec.fail(err);
    }
  }

  /** Drops whatever is held (the recording was given up or discarded). */
  release(): void {
    this.queue.length = 0;
    this.cur = null;
  }

  /** Resolves when nothing handed to the writer is still queued or being written. */
  async written(): Promise<void> {
    while (this.pump) await this.pump;
  }

  /** Writes out the rest; resolves when the file holds the whole track. */
  async settle(): Promise<void> {
    this.flush();
    while (this.pump) await this.pump;
  }

  /** Reads `frames` samples from `frame` into `into` (zero-filled past what the file holds). */
  async read(into: Buffer, frame: number, frames: number): Promise<void> {
    const want = frames * 2;
    let got = 0;
    // A discarded track must not read as silence: a late reader would upload a blank recording.
    if (this.closed) throw new Error('the recording was discarded');
    if (this.fh) {
      while (got < want) {
        const { bytesRead } = await this.fh.read(into, got, want - got, frame * 2 + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
    }
    into.fill(0, got, want);
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.pump) await this.pump;
    const fh = this.fh;
    this.fh = null;
    await fh?.close();
  }
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

export interface FinishedRecording {
  /** The WAV: header, then interleaved blocks read from the track files. */
  stream: Readable;
  bytes: number;
  durationSeconds: number;
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
    const dataBytes = totalFrames * 4;
    const { user, bot, sampleRate } = this;
    async function* wav(): AsyncGenerator<Buffer> {
      yield wavHeader(sampleRate, 2, dataBytes);
      const l = Buffer.from(new ArrayBuffer(BLOCK_FRAMES * 2));
      const r = Buffer.from(new ArrayBuffer(BLOCK_FRAMES * 2));
      const l16 = new Uint16Array(l.buffer);
      const r16 = new Uint16Array(r.buffer);
      for (let frame = 0; frame < totalFrames; frame += BLOCK_FRAMES) {
        const n = Math.min(BLOCK_FRAMES, totalFrames - frame);
        await Promise.all([user.read(l, frame, n), bot.read(r, frame, n)]);
        // Whole 16-bit units are moved, so the file's little-endian bytes pass through unchanged.
        const out = new Uint16Array(n * 2);
        for (let i = 0; i < n; i++) {
          out[2 * i] = l16[i]!;
          out[2 * i + 1] = r16[i]!;
        }
        yield Buffer.from(out.buffer);
      }
    }
    return { stream: Readable.from(wav(), { objectMode: false }), bytes: 44 + dataBytes, durationSeconds: totalFrames / this.sampleRate };
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

export function recordingKey(callId: string, startedAt: Date): string {
  const y = startedAt.getUTCFullYear();
  const m = String(startedAt.getUTCMonth() + 1).padStart(2, '0');
  const d = String(startedAt.getUTCDate()).padStart(2, '0');
  return `recordings/${y}/${m}/${d}/${callId}.wav`;
}

export interface StorageOptions {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  secure: boolean;
  timeoutMs: number;
}

const MIN_UPLOAD_BYTES_PER_SECOND = 1 << 20;

export class RecordingStore {
  private readonly client: Client | null;
  private bucketReady: Promise<void> | null = null;
  constructor(private readonly opts: StorageOptions) {
    const [host, port] = opts.endpoint.split(':');
    this.client =
      opts.accessKey && opts.secretKey
        ? new Client({
            endPoint: host!,
            port: port ? Number(port) : undefined,
            useSSL: opts.secure,
            accessKey: opts.accessKey,
            secretKey: opts.secretKey,
            // The client holds a whole part in memory (and a whole object up to one part): the default
            // 64 MiB part would make each upload of a long call hold 64 MiB; 5 MiB is S3's minimum.
            partSize: UPLOAD_PART_BYTES,
          })
        : null;
  }

  get bucket(): string {
    return this.opts.bucket;
  }

  private ensureBucket(client: Client): Promise<void> {
    this.bucketReady ??= (async () => {
      if (!(await client.bucketExists(this.opts.bucket))) {
        try {
          await client.makeBucket(this.opts.bucket);
        } catch (err) {
          // Another worker may have made it in between.
          if (!(err instanceof Error && /BucketAlready(OwnedByYou|Exists)/.test((err as { code?: string }).code ?? err.message))) throw err;
        }
      }
    })().catch((err: unknown) => {
      this.bucketReady = null; // try again on the next upload
      throw err;
    });
    return this.bucketReady;
  }

  /** Uploads `bytes` bytes from `body`; on failure or timeout the stream is destroyed. */
  async upload(key: string, body: Readable, bytes: number): Promise<void> {
    const client = this.client;
    if (!client) {
      body.destroy();
      throw new Error('storage is not configured (STORAGE_ACCESS_KEY / STORAGE_SECRET_KEY)');
    }
    // STORAGE_TIMEOUT_MS, plus time for the size at a floor of 1 MiB/s: a two-hour recording is
    // ~460 MB and must not fail on a fixed timeout meant for short calls.
    const timeoutMs = this.opts.timeoutMs + Math.ceil((bytes / MIN_UPLOAD_BYTES_PER_SECOND) * 1000);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`upload took longer than ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([
        (async () => {
          await this.ensureBucket(client);
          await client.putObject(this.opts.bucket, key, body, bytes, { 'Content-Type': 'audio/wav' });
        })(),
        deadline,
      ]);
    } catch (err) {
      // A put that lost the race must not keep reading (the temp files go away next). No error
      // argument: nobody may be listening for one any more.
      body.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Finishes the recording, uploads it, and removes its temp files whatever happened. Throws a
 * RecordingError: stage `disk` if the temp files failed during the call, `upload` otherwise.
 */
export async function saveRecording(rec: CallRecorder, store: RecordingStore | null, key: string, endMs: number): Promise<void> {
  try {
    const wav = await rec.finish(endMs);
    try {
      if (!store) throw new Error('storage is not configured');
      await store.upload(key, wav.stream, wav.bytes);
    } catch (err) {
      wav.stream.destroy();
      throw new RecordingError('upload', err);
    }
  } finally {
    await rec.discard();
  }
}

/**
 * Removes call folders under `root` that nothing touched for `olderThanMs` (left by a worker that died
 * mid-call). The newest mtime inside counts, so a long call that is still writing is never taken.
 */
export async function sweepRecordings(root: string, olderThanMs: number, nowMs = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    try {
      let newestMs = (await stat(dir)).mtimeMs;
      for (const f of await readdir(dir).catch(() => [] as string[])) {
        newestMs = Math.max(newestMs, (await stat(path.join(dir, f)).catch(() => ({ mtimeMs: 0 }))).mtimeMs);
      }
      if (nowMs - newestMs < olderThanMs) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove: leave it
    }
  }
  return removed;
}
