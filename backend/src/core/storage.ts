// Reading recordings from object storage (S3 / MinIO): the bucket the workers upload to (STORAGE_*, the
// worker's settings of the same names). Requests are signed by the `minio` client (a presigned URL: signed
// locally, no request of its own since the region is a setting) and sent with fetch, so every one of them
// can be given up: an answer must come within STORAGE_TIMEOUT_MS, and a body that pauses that long is
// cut off. A stalled or unreachable store is a StorageUnavailableError (the API answers 503 naming storage).
import { Readable } from 'node:stream';
import { Client } from 'minio';
import type { Settings } from './settings.js';

type StorageSettings = Pick<Settings, 'STORAGE_ENDPOINT' | 'STORAGE_ACCESS_KEY' | 'STORAGE_SECRET_KEY' | 'STORAGE_BUCKET' | 'STORAGE_SECURE' | 'STORAGE_REGION' | 'STORAGE_TIMEOUT_MS'>;

/** Object storage did not answer in time, could not be reached, or refused the request. */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

export interface StoredObject {
  size: number;
  /** As the store sends it (quoted), or null. */
  etag: string | null;
  lastModified: string | null;
}

/** Signed URLs live this long: each is made for one request, sent at once. */
const PRESIGN_SECONDS = 60;

export class RecordingStore {
  private readonly client: Client;
  constructor(private readonly opts: StorageSettings) {
    const [host, port] = opts.STORAGE_ENDPOINT.split(':');
    this.client = new Client({
      endPoint: host!,
      port: port ? Number(port) : undefined,
      useSSL: opts.STORAGE_SECURE,
      accessKey: opts.STORAGE_ACCESS_KEY,
      secretKey: opts.STORAGE_SECRET_KEY,
      region: opts.STORAGE_REGION,
    });
  }

  private async send(method: 'GET' | 'HEAD' | 'PUT' | 'DELETE', key: string, headers: Record<string, string>, signal: AbortSignal, body?: Buffer): Promise<Response> {
    const url = await this.client.presignedUrl(method, this.opts.STORAGE_BUCKET, key, PRESIGN_SECONDS);
    try {
      return await fetch(url, { method, headers, signal, redirect: 'error', ...(body ? { body: new Uint8Array(body) } : {}) });
    } catch (err) {
      throw new StorageUnavailableError(signal.aborted ? `object storage did not answer within ${this.opts.STORAGE_TIMEOUT_MS} ms` : 'object storage is unreachable', { cause: err });
    }
  }

  /** Stores `body` under `key` (knowledge documents' originals); a StorageUnavailableError when the store did not take it. */
  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    const attempt = async () => {
      const res = await this.send('PUT', key, { 'Content-Type': contentType }, AbortSignal.timeout(this.opts.STORAGE_TIMEOUT_MS), body);
      await res.body?.cancel();
      return res.status;
    };
    let status = await attempt();
    // No bucket yet (a fresh store: the workers make it with their first recording): made here, as they do.
    if (status === 404) {
      try {
        await this.client.makeBucket(this.opts.STORAGE_BUCKET, this.opts.STORAGE_REGION);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw new StorageUnavailableError('object storage could not make the bucket', { cause: err });
      }
      status = await attempt();
    }
    if (status < 200 || status >= 300) throw new StorageUnavailableError(`object storage answered ${status}`);
  }

  /** Removes the object (gone already: done). */
  async remove(key: string): Promise<void> {
    const res = await this.send('DELETE', key, {}, AbortSignal.timeout(this.opts.STORAGE_TIMEOUT_MS));
    await res.body?.cancel();
    if (!res.ok && res.status !== 404) throw new StorageUnavailableError(`object storage answered ${res.status}`);
  }

  /** The object's size and version, or null when there is no such object (or bucket). */
  async head(key: string): Promise<StoredObject | null> {
    const res = await this.send('HEAD', key, {}, AbortSignal.timeout(this.opts.STORAGE_TIMEOUT_MS));
    if (res.status === 404) return null;
    if (!res.ok) throw new StorageUnavailableError(`object storage answered ${res.status}`);
    const size = Number(res.headers.get('content-length'));
    if (!Number.isSafeInteger(size) || size < 0) throw new StorageUnavailableError('object storage sent no object size');
    return { size, etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') };
  }

  /**
   * Bytes `start`…`end` (inclusive) of the object, streamed: null when the object is gone. The answer must
   * start within STORAGE_TIMEOUT_MS and the data may pause no longer than that: else the stream fails with
   * a StorageUnavailableError.
   */
  async read(key: string, start: number, end: number): Promise<Readable | null> {
    const timeoutMs = this.opts.STORAGE_TIMEOUT_MS;
    const abort = new AbortController();
    let timer = setTimeout(() => abort.abort(), timeoutMs);
    let res: Response;
    try {
      res = await this.send('GET', key, { Range: `bytes=${start}-${end}` }, abort.signal);
    } catch (err) {
      clearTimeout(timer);
      throw err;
    }
    const length = end - start + 1;
    if (res.status === 404 || !res.ok || !res.body || Number(res.headers.get('content-length')) !== length) {
      clearTimeout(timer);
      abort.abort();
      if (res.status === 404) return null;
      throw new StorageUnavailableError(res.ok ? 'object storage sent another range than asked' : `object storage answered ${res.status}`);
    }
    clearTimeout(timer);
    // A pull stream: storage is waited on only when the reader wants more, so a slow reader (backpressure)
    // never counts as a stalled store.
    const reader = res.body.getReader();
    const stalled = () => body.destroy(new StorageUnavailableError(`object storage sent nothing for ${timeoutMs} ms`));
    const body = new Readable({
      async read() {
        timer = setTimeout(stalled, timeoutMs);
        try {
          const { done, value } = await reader.read();
          clearTimeout(timer);
          if (this.destroyed) return;
          this.push(done ? null : value);
        } catch (err) {
          clearTimeout(timer);
          if (!this.destroyed) this.destroy(new StorageUnavailableError('object storage broke off the recording', { cause: err }));
        }
      },
      destroy(err, callback) {
        clearTimeout(timer);
        abort.abort(); // a reader that went away, or a failed read, ends the request to the store too
        reader.cancel().catch(() => undefined);
        callback(err);
      },
    });
    return body;
  }
}

/** The store of the STORAGE_* settings, or null when its keys are not set (recordings cannot be read). */
export function recordingStoreFromSettings(s: StorageSettings): RecordingStore | null {
  return s.STORAGE_ACCESS_KEY && s.STORAGE_SECRET_KEY ? new RecordingStore(s) : null;
}
