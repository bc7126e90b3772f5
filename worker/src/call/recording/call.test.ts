// A call's recording at the call's end: whatever failed, save() resolves to the reason for the call
// record, counts the failure once by stage, and leaves no temp files.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logger.js';
import { createMetrics } from '../../core/metrics.js';
import { CallRecording } from './call.js';

const RATE = 16000;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'vp-call-recording-test-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function recording(dir: string) {
  const lines: string[] = [];
  const sink = new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) });
  const metrics = createMetrics(false);
  const rec = new CallRecording(RATE, 0, dir, metrics, createLogger('warn', sink));
  rec.recorder.writeUser(new Int16Array(RATE).fill(100), 1_000);
  const counts = async () => ({
    upload: (await metrics.recordingFailures.get()).values[0]?.value ?? 0,
    stages: Object.fromEntries((await metrics.recordingStageFailures.get()).values.map((v) => [v.labels.stage, v.value])),
  });
  const messages = () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { rec, counts, messages };
}

it('an upload that cannot happen is the recording_error, counted and logged as an upload failure', async () => {
  const dir = path.join(root, 'no-storage');
  const { rec, counts, messages } = recording(dir);
  expect(await rec.save(null, 'recordings/test/none.wav', 2_000)).toEqual({ key: null, error: 'recording upload failed: storage is not configured' });
  expect(await counts()).toEqual({ upload: 1, stages: { disk: 0, upload: 1 } });
  expect(messages()).toEqual(['recording upload failed']);
  expect(existsSync(dir)).toBe(false);
});

it('a disk failure during the call is the recording_error, counted and logged once, when it happened', async () => {
  const file = path.join(root, 'a-file');
  await writeFile(file, '');
  const { rec, counts, messages } = recording(path.join(file, 'call')); // ENOTDIR on the first write
  await rec.recorder.written();
  expect(messages()).toEqual(['recording write failed']);
  expect(await rec.save(null, 'recordings/test/none.wav', 2_000)).toEqual({ key: null, error: 'recording write failed: ENOTDIR (mkdir)' });
  expect(await counts()).toEqual({ upload: 0, stages: { disk: 1, upload: 0 } });
  expect(messages()).toEqual(['recording write failed']);
});
