// Call recordings: a stereo WAV (left: caller, right: bot) on the call's own timeline, uploaded to
// object storage at `recordings/YYYY/MM/DD/{call_id}.wav`. A failed upload never fails the call.
import { Client } from 'minio';
import { endianness } from 'node:os';
import { wavHeader } from '../audio/wav.js';

const BIG_ENDIAN = endianness() === 'BE';

class Track {
  private chunks: Int16Array[] = [];
  length = 0;
  /** Places audio at its time; gaps become silence, small overlaps (jitter) are appended. */
  write(pcm: Int16Array, atSample: number, slack: number): void {
    if (atSample - this.length > slack) this.pad(atSample - this.length);
    this.chunks.push(pcm.slice());
    this.length += pcm.length;
  }
  pad(samples: number): void {
    if (samples <= 0) return;
    this.chunks.push(new Int16Array(samples));
    this.length += samples;
  }
  read(): Int16Array {
    const out = new Int16Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export class CallRecorder {
  private readonly user = new Track();
  private readonly bot = new Track();
  private readonly slack: number;
  constructor(
    readonly sampleRate: number,
    readonly startMs: number,
  ) {
    this.slack = Math.round(sampleRate * 0.06);
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
  /** The WAV of the whole call, `endMs - startMs` long. */
  finish(endMs: number): { wav: Buffer; durationSeconds: number } {
    const total = Math.max(this.at(endMs), this.user.length, this.bot.length);
    const l = this.user.read();
    const r = this.bot.read();
    // Interleave on a typed array: a per-sample Buffer.writeInt16LE loop blocked the event loop (and so
    // every other call) for ~100 ms at the end of a 5-minute call.
    const stereo = new Int16Array(total * 2);
    for (let i = 0; i < l.length; i++) stereo[2 * i] = l[i]!;
    for (let i = 0; i < r.length; i++) stereo[2 * i + 1] = r[i]!;
    const data = Buffer.from(stereo.buffer, stereo.byteOffset, stereo.byteLength);
    if (BIG_ENDIAN) data.swap16(); // WAV samples are little-endian
    return { wav: Buffer.concat([wavHeader(this.sampleRate, 2, data.length), data]), durationSeconds: total / this.sampleRate };
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

export class RecordingStore {
  private readonly client: Client | null;
  private bucketReady: Promise<void> | null = null;
  constructor(private readonly opts: StorageOptions) {
    const [host, port] = opts.endpoint.split(':');
    this.client =
      opts.accessKey && opts.secretKey
        ? new Client({ endPoint: host!, port: port ? Number(port) : undefined, useSSL: opts.secure, accessKey: opts.accessKey, secretKey: opts.secretKey })
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

  async upload(key: string, wav: Buffer): Promise<void> {
    const client = this.client;
    if (!client) throw new Error('storage is not configured (STORAGE_ACCESS_KEY / STORAGE_SECRET_KEY)');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`upload took longer than ${this.opts.timeoutMs} ms`)), this.opts.timeoutMs);
    });
    try {
      await Promise.race([
        (async () => {
          await this.ensureBucket(client);
          await client.putObject(this.opts.bucket, key, wav, wav.length, { 'Content-Type': 'audio/wav' });
        })(),
        deadline,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
