// One channel of a call recording (caller or bot): samples placed on the call's timeline and written to
// a temp file through a small buffer (flushed every ~1 s of audio, one async write at a time), so
// nothing call-long stays in memory.
import { open, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';

const BIG_ENDIAN = endianness() === 'BE';

/** What a track needs of its recording: whether writes stopped, and where a failed write goes. */
export interface TrackOwner {
  readonly stopped: boolean;
  fail(err: unknown): void;
}

/**
 * One track on disk. `length` is the track's timeline in samples; the file holds what was written at
 * `2 × sample` bytes, and never-written ranges (gaps, the end) are holes or past EOF: silence on read.
 */
export class TrackFile {
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
    private readonly rec: TrackOwner,
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

