// GET /api/v1/calls/{id}/recording on a real object store: this file's own MinIO (so freezing it disturbs no
// other file), the WAV put there by the test the way a worker uploads it. The whole file, byte ranges (206
// with exactly those bytes), suffix ranges, 416, HEAD, who may read it (an admin, the key that placed the call;
// another key's call is 404 as for the call itself), calls without a recording, and a stalled store (503
// naming storage within STORAGE_TIMEOUT_MS).
import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import { Client } from 'minio';
import { ObjectId } from 'mongodb';
import { startTestEnv, type Service, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, createKey, startHarness, type Harness } from '../../testing/harness.js';
import { insertCall, queuedCall } from './store.js';
import { parseRange } from './recording.js';

const BUCKET = 'recordings';
const STORAGE_TIMEOUT_MS = 1000;
/** Beyond the timeout, for a busy 2-core machine. */
const MARGIN_MS = 1500;

let env: TestEnv;
let minio: Service;
let h: Harness;
let auth: string;
let botId: string;
let key: { id: string; key: string };
let otherKey: { id: string; key: string };
let s3: Client;

/** A stereo 16-bit WAV of `frames` frames whose sample bytes follow a pattern (so any range is checkable). */
function wav(frames: number, rate = 16000): Buffer {
  const data = frames * 4;
  const b = Buffer.alloc(44 + data);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + data, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(2, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 4, 28);
  b.writeUInt16LE(4, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(data, 40);
  for (let i = 44; i < b.length; i++) b[i] = (i * 7) % 251;
  return b;
}
const WAV = wav(8000); // half a second: 32 044 bytes

/** A settled call stored the way the backend stores it; `recording`: the key, null for none. */
async function storedCall(opts: { apiKeyId?: string | null; recording?: string | null } = {}): Promise<{ id: string; objectKey: string | null }> {
  const id = new ObjectId().toHexString();
  const at = new Date(h.clock.ms);
  const doc = queuedCall({ _id: id, bot_id: botId, direction: 'outbound', to_number: '+14155550100', from_number: '+15550001000', variables: {}, api_key_id: opts.apiKeyId ?? null }, at);
  const recording = opts.recording === undefined ? `recordings/${at.toISOString().slice(0, 10).replace(/-/g, '/')}/${id}.wav` : opts.recording;
  await insertCall(h.db, { ...doc, status: 'completed', end_reason: 'bot_hangup', started_at: at, ended_at: at, status_times: { queued: at, in_progress: at, completed: at }, recording_key: recording });
  return { id, objectKey: recording };
}
async function callWithRecording(body: Buffer = WAV, apiKeyId: string | null = key.id): Promise<{ id: string; objectKey: string }> {
  const { id, objectKey } = await storedCall({ apiKeyId });
  await s3.putObject(BUCKET, objectKey!, body, body.length, { 'Content-Type': 'audio/wav' });
  return { id, objectKey: objectKey! };
}

/** The body as bytes, whatever its type. */
const bytes = (response: unknown, cb: (err: Error | null, body: Buffer) => void) => {
  const res = response as IncomingMessage;
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};
const get = (id: string, headers: Record<string, string> = { Authorization: auth }) => h.http.get(`/api/v1/calls/${id}/recording`).set(headers).buffer(true).parse(bytes);

beforeAll(async () => {
  env = await startTestEnv(['minio']);
  minio = env.services.minio!;
  const storage = minio.env;
  h = await startHarness({
    env: {
      STORAGE_ENDPOINT: storage.STORAGE_ENDPOINT!,
      STORAGE_ACCESS_KEY: storage.STORAGE_ACCESS_KEY!,
      STORAGE_SECRET_KEY: storage.STORAGE_SECRET_KEY!,
      STORAGE_BUCKET: BUCKET,
      STORAGE_TIMEOUT_MS: String(STORAGE_TIMEOUT_MS),
    },
  });
  auth = await adminToken(h);
  botId = await createBot(h, auth);
  key = await createKey(h, auth, { name: 'crm' });
  otherKey = await createKey(h, auth, { name: 'other crm' });
  const [host, port] = storage.STORAGE_ENDPOINT!.split(':');
  s3 = new Client({ endPoint: host!, port: Number(port), useSSL: false, accessKey: storage.STORAGE_ACCESS_KEY!, secretKey: storage.STORAGE_SECRET_KEY! });
  await s3.makeBucket(BUCKET);
});
afterAll(async () => {
  minio?.thaw();
  await h?.close();
  await env?.stop();
});

describe('parseRange', () => {
  it('reads one range of each form, cut to the file, and ignores what it cannot serve', () => {
    expect(parseRange(undefined, 100)).toEqual({ kind: 'whole' });
    expect(parseRange('bytes=0-9', 100)).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(parseRange('bytes=90-200', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=99-', 100)).toEqual({ kind: 'partial', start: 99, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=-1000', 100)).toEqual({ kind: 'partial', start: 0, end: 99 });
    expect(parseRange('Bytes=5-5', 100)).toEqual({ kind: 'partial', start: 5, end: 5 });
    expect(parseRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=100-200', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=99999999999999999999999-', 100)).toEqual({ kind: 'unsatisfiable' });
    // Ignored (RFC 9110 §14.2): several ranges, another unit, an end before the start, nonsense.
    for (const h of ['bytes=0-1,5-6', 'items=0-1', 'bytes=9-2', 'bytes=-', 'bytes=a-b', 'bytes 0-1', '']) expect([h, parseRange(h, 100)]).toEqual([h, { kind: 'whole' }]);
  });
});

describe('GET /api/v1/calls/{id}/recording', () => {
  it('streams the whole WAV to an admin and to the key that placed the call', async () => {
    const { id } = await callWithRecording();
    for (const headers of [{ Authorization: auth }, { 'X-API-Key': key.key }] as Array<Record<string, string>>) {
      const res = await get(id, headers).expect(200);
      expect(res.headers['content-type']).toBe('audio/wav');
      expect(res.headers['content-length']).toBe(String(WAV.length));
      expect(res.headers['accept-ranges']).toBe('bytes');
      expect(res.headers['content-range']).toBeUndefined();
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      expect(Buffer.compare(res.body as Buffer, WAV)).toBe(0);
    }
  });

  it('answers a byte range 206 with exactly those bytes, and the last n bytes for a suffix range', async () => {
    const { id } = await callWithRecording();
    const size = WAV.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-43', 0, 43], // the header
      ['bytes=1000-1999', 1000, 1999],
      ['bytes=32000-', 32000, size - 1],
      ['bytes=-100', size - 100, size - 1],
      ['bytes=30000-999999', 30000, size - 1], // an end past the file: to its end
    ];
    for (const [range, start, end] of cases) {
      const res = await get(id, { Authorization: auth, Range: range }).expect(206);
      expect([range, res.headers['content-range'], res.headers['content-length']]).toEqual([range, `bytes ${start}-${end}/${size}`, String(end - start + 1)]);
      expect([range, Buffer.compare(res.body as Buffer, WAV.subarray(start, end + 1))]).toEqual([range, 0]);
    }
    // Several ranges are ignored: the whole file.
    expect((await get(id, { Authorization: auth, Range: 'bytes=0-1,4-5' }).expect(200)).body).toHaveLength(size);
    // If-Range naming another version: the whole file; naming this one: the range.
    const etag = (await get(id).expect(200)).headers.etag as string;
    expect((await get(id, { Authorization: auth, Range: 'bytes=0-9', 'If-Range': '"another"' }).expect(200)).body).toHaveLength(size);
    expect((await get(id, { Authorization: auth, Range: 'bytes=0-9', 'If-Range': etag }).expect(206)).body).toHaveLength(10);
  });

  it('answers a range past the end 416 in the error shape, with the size in Content-Range', async () => {
    const { id } = await callWithRecording();
    for (const range of [`bytes=${WAV.length}-`, 'bytes=999999-1000000', 'bytes=-0']) {
      const res = await h.http.get(`/api/v1/calls/${id}/recording`).set({ Authorization: auth, Range: range }).expect(416);
      expect(res.headers['content-range']).toBe(`bytes */${WAV.length}`);
      expect(res.body).toEqual({ error: { code: 'range_not_satisfiable', message: `the recording has ${WAV.length} bytes`, details: { size: WAV.length } } });
    }
  });

  it('answers HEAD with the headers only', async () => {
    const { id } = await callWithRecording();
    const res = await h.http.head(`/api/v1/calls/${id}/recording`).set({ Authorization: auth, Range: 'bytes=-44' }).expect(206);
    expect(res.headers['content-length']).toBe('44');
    expect(res.headers['content-range']).toBe(`bytes ${WAV.length - 44}-${WAV.length - 1}/${WAV.length}`);
    expect(res.headers['content-type']).toBe('audio/wav');
  });

  it("is 404 for another key's call, as the call itself is, and needs credentials", async () => {
    const { id } = await callWithRecording();
    const res = await get(id, { 'X-API-Key': otherKey.key }).expect(404);
    expect(JSON.parse(res.body.toString()).error.code).toBe('call_not_found');
    expect((await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', otherKey.key).expect(404)).body.error.code).toBe('call_not_found');
    expect((await h.http.get(`/api/v1/calls/${id}/recording`).expect(401)).body.error.code).toBe('missing_api_key');
    expect((await h.http.get(`/api/v1/calls/${id}/recording`).set('Authorization', 'Bearer nope').expect(401)).body.error.code).toBe('unauthorized');
    expect((await h.http.get(`/api/v1/calls/${new ObjectId().toHexString()}/recording`).set('Authorization', auth).expect(404)).body.error.code).toBe('call_not_found');
  });

  it('is 404 recording_not_found for a call without a recording, or whose object is gone', async () => {
    const { id: none } = await storedCall({ recording: null });
    const res = await h.http.get(`/api/v1/calls/${none}/recording`).set('Authorization', auth).expect(404);
    expect(res.body).toEqual({ error: { code: 'recording_not_found', message: 'this call has no recording' } });
    const { id: missing } = await storedCall({ apiKeyId: key.id }); // a key, no object behind it
    const gone = await h.http.get(`/api/v1/calls/${missing}/recording`).set('X-API-Key', key.key).expect(404);
    expect(gone.body.error).toEqual({ code: 'recording_not_found', message: 'the recording is not in object storage' });
    expect(gone.headers['content-range']).toBeUndefined();
  });

  it('is 503 naming storage when the store is not configured', async () => {
    const bare = await startHarness({ env: { STORAGE_ACCESS_KEY: '', STORAGE_SECRET_KEY: '' } });
    try {
      const admin = await adminToken(bare);
      const bot = await createBot(bare, admin);
      const id = new ObjectId().toHexString();
      const at = new Date();
      await insertCall(bare.db, { ...queuedCall({ _id: id, bot_id: bot, direction: 'websocket', to_number: null, from_number: null, variables: {}, api_key_id: null }, at), status: 'completed', recording_key: 'recordings/x.wav' });
      const res = await bare.http.get(`/api/v1/calls/${id}/recording`).set('Authorization', admin).expect(503);
      expect(res.body.error).toMatchObject({ code: 'service_unavailable', details: { failed: ['storage'] } });
      expect(res.headers['retry-after']).toEqual(expect.any(String));
    } finally {
      await bare.close();
    }
  });

  it('is 503 naming storage within STORAGE_TIMEOUT_MS while the store is stalled, and serves again after', async () => {
    const { id } = await callWithRecording();
    minio.freeze();
    try {
      for (const range of [undefined, 'bytes=0-99']) {
        const started = performance.now();
        const res = await h.http.get(`/api/v1/calls/${id}/recording`).set({ Authorization: auth, ...(range ? { Range: range } : {}) });
        const took = performance.now() - started;
        expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([503, 'service_unavailable', { failed: ['storage'] }]);
        expect(res.headers['retry-after']).toBe('5');
        expect(took).toBeLessThan(STORAGE_TIMEOUT_MS + MARGIN_MS);
      }
    } finally {
      minio.thaw();
    }
    expect(Buffer.compare((await get(id).expect(200)).body as Buffer, WAV)).toBe(0);
  });
});
