import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { freePort } from '@voice-platform/tests/infra';
import { CallRecorder, RecordingError, RecordingStore, recordingKey, saveRecording, sweepRecordings } from './recording.js';
import { RecorderProcessor } from './recording/processor.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { TransportInputProcessor, TransportOutputProcessor } from '../transports/io.js';

const RATE = 16000;
const tone = (samples: number, value: number) => new Int16Array(samples).fill(value);

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'vp-recording-test-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
const callDir = () => path.join(root, `call-${Math.random().toString(36).slice(2, 10)}`);

describe('CallRecorder', () => {
  it('places caller left and bot right on the call timeline, padded to the end of the call', async () => {
    const rec = new CallRecorder(RATE, 1_000);
    rec.writeUser(tone(320, 100), 1_020); // the chunk that arrives at 20 ms started at 0
    rec.writeBot(tone(160, -200), 1_500); // bot audio at 500 ms
    rec.writeUser(tone(320, 300), 2_040); // after a gap: silence in between
    const { stream, bytes, durationSeconds } = await rec.finish(3_000);
    const wav = await collect(stream);
    await rec.discard();

    expect(durationSeconds).toBe(2);
    expect(wav.length).toBe(bytes);
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(2); // channels
    expect(wav.readUInt32LE(24)).toBe(RATE);
    const data = wav.subarray(44);
    expect(data.length).toBe(2 * RATE * 4);
    const left = (i: number) => data.readInt16LE(i * 4);
    const right = (i: number) => data.readInt16LE(i * 4 + 2);
    expect([left(0), left(319), left(320), left(8000)]).toEqual([100, 100, 0, 0]);
    expect([right(7999), right(8000), right(8159), right(8160)]).toEqual([0, -200, -200, 0]);
    expect([left(16319), left(16320), left(16639), left(16640)]).toEqual([0, 300, 300, 0]);
    expect(right(RATE * 2 - 1)).toBe(0);
    expect(existsSync(rec.dir)).toBe(false);
  });

  it('records from the pipeline: caller frames after the transport input, paced bot frames before the transport output', async () => {
    const rec = new CallRecorder(RATE, 1_000);
    const input = new TransportInputProcessor(RATE);
    const sent: number[] = [];
    const pipeline = new Pipeline([
      input,
      new RecorderProcessor('user', () => rec),
      new RecorderProcessor('bot', () => rec),
      new TransportOutputProcessor({ sendAudio: (pcm) => sent.push(pcm.length), sendMessage: () => undefined, onEndCall: () => undefined }),
    ]);
    input.receive(tone(640, 100), 1_040); // one 40 ms chunk: two frames, placed together, ending at 40 ms
    pipeline.push({ kind: 'bot_audio', pcm: tone(160, -200), sampleRate: RATE, atMs: 1_500 });
    input.receive(tone(320, 300), 2_040);
    await pipeline.idle();
    pipeline.cancel('hangup'); // the last chunk goes in
    const { stream } = await rec.finish(3_000);
    const data = (await collect(stream)).subarray(44);
    await rec.discard();

    expect(sent).toEqual([160]);
    const left = (i: number) => data.readInt16LE(i * 4);
    const right = (i: number) => data.readInt16LE(i * 4 + 2);
    expect([left(0), left(639), left(640), left(8000)]).toEqual([100, 100, 0, 0]);
    expect([right(7999), right(8000), right(8159), right(8160)]).toEqual([0, -200, -200, 0]);
    expect([left(16319), left(16320), left(16639), left(16640)]).toEqual([0, 300, 300, 0]);
  });

  it('keys recordings by the UTC day the call started', () => {
    expect(recordingKey('abc', new Date('2026-01-02T23:59:59Z'))).toBe('recordings/2026/01/02/abc.wav');
  });
});

// A synthetic call: the caller sends a 20 ms chunk every 20 ms (chunk k holds userValue(k)); the bot
// speaks for 2 s at the start of every 10 s (its chunk j in window w holds botValue(w, j)).
const CHUNK = 320;
const userValue = (k: number) => (k % 20_000) + 1;
const botValue = (w: number, j: number) => -(1 + (w % 300) * 100 + j);

/** Writes `seconds` of call; every simulated second the writer catches up, as a disk does in real time. */
async function writeCall(rec: CallRecorder, seconds: number): Promise<{ maxBufferedBytes: number }> {
  let maxBufferedBytes = 0;
  for (let k = 0; k < (seconds * 1000) / 20; k++) {
    const tMs = k * 20;
    rec.writeUser(tone(CHUNK, userValue(k)), tMs + 20);
    const w = Math.floor(tMs / 10_000);
    if (tMs - w * 10_000 < 2_000) rec.writeBot(tone(CHUNK, botValue(w, (tMs - w * 10_000) / 20)), tMs);
    maxBufferedBytes = Math.max(maxBufferedBytes, rec.bufferedBytes);
    if (k % 50 === 49) await rec.written();
  }
  return { maxBufferedBytes };
}

/** Reads the stream through, keeping only the frames asked for: [left, right] by frame. */
async function framesOf(stream: Readable, frames: number[]): Promise<{ bytes: number; header: Buffer; at: Map<number, [number, number]> }> {
  const at = new Map<number, [number, number]>();
  let offset = 0;
  let header = Buffer.alloc(0);
  // The last 3 bytes of what came before: enough for a frame split across chunks.
  let carry = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (offset < 44) header = Buffer.concat([header, chunk.subarray(0, 44 - offset)]);
    const buf = Buffer.concat([carry, chunk]);
    const bufStart = offset - carry.length;
    for (const f of frames) {
      const rel = 44 + f * 4 - bufStart;
      if (rel >= 0 && rel + 4 <= buf.length) at.set(f, [buf.readInt16LE(rel), buf.readInt16LE(rel + 2)]);
    }
    offset += chunk.length;
    carry = Buffer.from(buf.subarray(Math.max(0, buf.length - 3)));
  }
  return { bytes: offset, header, at };
}

describe('CallRecorder on disk', () => {
  it('keeps a 20-minute call in bounded memory and streams the exact WAV', async () => {
    const rec = new CallRecorder(RATE, 0, { dir: callDir() });
    const { maxBufferedBytes } = await writeCall(rec, 20 * 60);
    // At most the filling buffer and one being written, per track: 2 s of audio each, whatever the length.
    expect(maxBufferedBytes).toBeLessThanOrEqual(2 * 2 * RATE * 2);
    expect(maxBufferedBytes).toBeLessThanOrEqual(rec.limitBytes);

    const endMs = 20 * 60 * 1000 + 500; // the last 0.5 s is silence on both tracks
    const total = (endMs * RATE) / 1000;
    const { stream, bytes, durationSeconds } = await rec.finish(endMs);
    expect(bytes).toBe(44 + total * 4);
    expect(durationSeconds).toBe(1200.5);
    const lastUser = 60_000 * CHUNK - 1;
    const checks: Array<[number, number, number]> = [
      // frame, left, right
      [0, userValue(0), botValue(0, 0)],
      [319, userValue(0), botValue(0, 0)],
      [320, userValue(1), botValue(0, 1)],
      [31_999, userValue(99), botValue(0, 99)],
      [32_000, userValue(100), 0], // the bot's gap is silence
      [12_345 * CHUNK + 7, userValue(12_345), 0],
      [570_000 * 16 + 5, userValue(28_500), botValue(57, 0)],
      [570_000 * 16 + 50 * CHUNK, userValue(28_550), botValue(57, 50)],
      [1_190_000 * 16 + 99 * CHUNK + 319, userValue(59_599), botValue(119, 99)],
      [1_190_000 * 16 + 100 * CHUNK, userValue(59_600), 0],
      [lastUser, userValue(59_999), 0],
      [lastUser + 1, 0, 0],
      [total - 1, 0, 0],
    ];
    const got = await framesOf(
      stream,
      checks.map((c) => c[0]),
    );
    await rec.discard();
    expect(got.bytes).toBe(bytes);
    expect([got.header.toString('ascii', 0, 4), got.header.readUInt32LE(4), got.header.readUInt32LE(40)]).toEqual(['RIFF', bytes - 8, total * 4]);
    expect(checks.map(([f]) => got.at.get(f))).toEqual(checks.map(([, l, r]) => [l, r]));
    expect(existsSync(rec.dir)).toBe(false);
  });

  it('keeps the timeline across buffer edges: a gap that fills a buffer exactly, a chunk split over buffers', async () => {
    const rec = new CallRecorder(RATE, 0, { dir: callDir(), bufferBytes: 4000 }); // 2000 samples
    rec.writeBot(tone(40, 7), 0);
    rec.writeBot(tone(40, 9), 125); // sample 2000: a 1960-sample gap ends exactly at the buffer's end
    rec.writeBot(tone(3000, 11), 127.5); // sample 2040: spans two buffers
    const { stream } = await rec.finish(400);
    const got = await framesOf(stream, [0, 39, 40, 1999, 2000, 2039, 2040, 5039, 5040, 6399]);
    await rec.discard();
    expect([...got.at.values()].map(([, r]) => r)).toEqual([7, 7, 0, 0, 9, 9, 11, 11, 0, 0]);
    expect(got.bytes).toBe(44 + 6400 * 4);
  });

  const store = (endpoint = process.env.STORAGE_ENDPOINT!) =>
    new RecordingStore({
      endpoint,
      accessKey: process.env.STORAGE_ACCESS_KEY!,
      secretKey: process.env.STORAGE_SECRET_KEY!,
      bucket: 'recordings',
      secure: false,
      timeoutMs: 10_000,
    });

  it('uploads a multi-part WAV to MinIO from the track files, then removes them', async () => {
    const rec = new CallRecorder(RATE, 0, { dir: callDir() });
    await writeCall(rec, 100); // 6.4 MB: more than one 5 MiB part
    const key = `recordings/test/${path.basename(rec.dir)}.wav`;
    await saveRecording(rec, store(), key, 100_000);
    expect(existsSync(rec.dir)).toBe(false);

    const [host, port] = process.env.STORAGE_ENDPOINT!.split(':');
    const client = new Client({ endPoint: host!, port: Number(port), useSSL: false, accessKey: process.env.STORAGE_ACCESS_KEY!, secretKey: process.env.STORAGE_SECRET_KEY! });
    expect((await client.statObject('recordings', key)).size).toBe(44 + 100 * RATE * 4);
    const frame = 90_000 * 16 + 3; // the bot's window 9, chunk 0, near the end of the second part
    const sample = await collect(await client.getPartialObject('recordings', key, 44 + frame * 4, 4));
    expect([sample.readInt16LE(0), sample.readInt16LE(2)]).toEqual([userValue(4500), botValue(9, 0)]);
  });

  it('removes the track files after a failed upload', async () => {
    const rec = new CallRecorder(RATE, 0, { dir: callDir() });
    await writeCall(rec, 3);
    await rec.written();
    expect(existsSync(path.join(rec.dir, 'user.pcm'))).toBe(true);
    const nobody = `127.0.0.1:${await freePort()}`; // nothing listens there
    const err = await saveRecording(rec, store(nobody), 'recordings/test/nowhere.wav', 3_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecordingError);
    expect((err as RecordingError).stage).toBe('upload');
    expect((err as RecordingError).message).toMatch(/^recording upload failed: /);
    expect(existsSync(rec.dir)).toBe(false);
  });

  it('a full disk gives the recording up once, frees its buffers, and keeps taking audio', async () => {
    const dir = callDir();
    await mkdir(dir, { recursive: true });
    await symlink('/dev/full', path.join(dir, 'user.pcm')); // every write: ENOSPC
    const errors: RecordingError[] = [];
    const rec = new CallRecorder(RATE, 0, { dir, onError: (e) => errors.push(e) });
    await writeCall(rec, 5);
    expect(errors.map((e) => [e.stage, e.message])).toEqual([['disk', 'recording write failed: ENOSPC (write)']]);
    expect(rec.bufferedBytes).toBe(0);
    const err = await saveRecording(rec, store(), 'recordings/test/full.wav', 5_000).catch((e: unknown) => e);
    expect(err).toBe(errors[0]);
    expect(errors.length).toBe(1);
    expect(existsSync(dir)).toBe(false);
  });

  it('a folder that cannot be made gives the recording up', async () => {
    const file = path.join(root, `not-a-dir-${Math.random().toString(36).slice(2, 8)}`);
    await writeFile(file, '');
    const errors: RecordingError[] = [];
    const rec = new CallRecorder(RATE, 0, { dir: path.join(file, 'call'), onError: (e) => errors.push(e) });
    await writeCall(rec, 2);
    await expect(rec.finish(2_000)).rejects.toThrow(/^recording write failed: ENOTDIR \(mkdir\)$/);
    expect(errors.length).toBe(1);
    await rec.discard();
  });
});

describe('sweepRecordings', () => {
  it('removes call folders untouched for longer than the limit, keeping those still written to', async () => {
    const base = path.join(root, 'sweep');
    const hourAgo = (Date.now() - 2 * 3600_000) / 1000;
    for (const name of ['crashed', 'long-call', 'fresh']) await mkdir(path.join(base, name), { recursive: true });
    await writeFile(path.join(base, 'crashed', 'user.pcm'), 'x');
    await writeFile(path.join(base, 'long-call', 'user.pcm'), 'x'); // written just now
    await utimes(path.join(base, 'crashed', 'user.pcm'), hourAgo, hourAgo);
    await utimes(path.join(base, 'crashed'), hourAgo, hourAgo);
    await utimes(path.join(base, 'long-call'), hourAgo, hourAgo); // made long ago
    expect(await sweepRecordings(base, 3600_000)).toEqual(['crashed']);
    expect([existsSync(path.join(base, 'crashed')), existsSync(path.join(base, 'long-call')), existsSync(path.join(base, 'fresh'))]).toEqual([false, true, true]);
    expect(await sweepRecordings(path.join(root, 'missing'), 3600_000)).toEqual([]);
  });
});
