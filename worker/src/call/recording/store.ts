// Object storage (S3 / MinIO) for finished recordings, at `recordings/YYYY/MM/DD/{call_id}.wav`.
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { RecordingError, type CallRecorder } from './recorder.js';

const UPLOAD_PART_BYTES = 5 * 1024 * 1024;

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

