// Failures inside one call stay inside it: a cloud LLM that keeps breaking mid-stream ends its own
// call with a clean error while another call on the same worker completes; storage that goes away
// mid-call costs the recording, not the call; so does a disk that cannot hold the recording's track files.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { silence, speech } from '../../testing/audio.js';
import { callUntil, createBot, TEST_POLICY } from '../../testing/backend.js';
import { TestCaller, withTestCallToken } from '../../testing/client.js';
import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import { startWorker, type TestWorker } from '../../testing/worker.js';

const VARIABLES = { customer_name: 'Sam', amount_due: 'forty' };
const variables = [
  { name: 'customer_name', required: true, description: '' },
  { name: 'amount_due', required: false, description: '' },
];

let cloud: CloudStandIn;
let storage: TestEnv;
let w: TestWorker;
let offlineBot: string;
let cloudBot: string;

beforeAll(async () => {
  [cloud, storage] = await Promise.all([startCloudStandIn(), startTestEnv(['minio'])]);
  offlineBot = await createBot({ name: 'offline', greeting: '', variables, policy: TEST_POLICY, turn_detection: { end_of_turn_silence_ms: 500 } });
  cloudBot = await createBot({
    name: 'cloud llm',
    greeting: '',
    variables,
    policy: TEST_POLICY,
    llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0 },
    // Fixed: the fault plan counts requests, and a smart turn may ask ahead on a pause's words.
    turn_detection: { mode: 'fixed', end_of_turn_silence_ms: 500 },
  });
  w = await startWorker({
    OPENAI_API_KEY: 'sk-local',
    OPENAI_BASE_URL: `${cloud.url}/v1`,
    PROVIDER_TIMEOUT_MS: '2000',
    PROVIDER_RETRIES: '2',
    STORAGE_ENDPOINT: storage.env.STORAGE_ENDPOINT!,
    STORAGE_ACCESS_KEY: storage.env.STORAGE_ACCESS_KEY!,
    STORAGE_SECRET_KEY: storage.env.STORAGE_SECRET_KEY!,
  });
});
afterAll(async () => {
  await w?.stop();
  await cloud?.close();
  await storage?.stop();
});

async function call(bot: string): Promise<{ caller: TestCaller; callId: string }> {
  const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${bot}`));
  await caller.opened;
  caller.send({ type: 'start', variables: VARIABLES });
  const started = await caller.until(() => caller.message('started'), 'started');
  return { caller, callId: started.call_id as string };
}

async function say(caller: TestCaller, phrase: string): Promise<void> {
  await caller.stream(speech(phrase));
  await caller.stream(silence(800));
}

describe('one call failing does not disturb another', () => {
  it('a chat LLM breaking mid-stream is retried, then the call ends with a clean error; the other call completes', async () => {
    cloud.fault = 'break_mid_stream';
    cloud.requests.length = 0;
    const failing = await call(cloudBot);
    const healthy = await call(offlineBot);
    await Promise.all([say(failing.caller, 'how much'), say(healthy.caller, 'stop calling')]);
    await Promise.all([failing.caller.closed, healthy.caller.closed]);

    expect(cloud.requests.filter((r) => r.path === '/v1/chat/completions').length).toBe(3);
    expect(failing.caller.messages.slice(-2)).toEqual([
      { type: 'error', code: 'llm_unavailable', message: expect.stringContaining('failed after 3 attempts') },
      { type: 'ended', reason: 'error:llm_unavailable' },
    ]);
    expect(failing.caller.audio).toEqual([]);
    expect(healthy.caller.messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(healthy.caller.message('ended')).toEqual({ type: 'ended', reason: 'bot_hangup' });
    expect(healthy.caller.audio.length).toBeGreaterThan(50);

    const bad = await callUntil(failing.callId, (c) => c.status === 'failed', 'failed');
    expect(bad.end_reason).toBe('error:llm_unavailable');
    const good = await callUntil(healthy.callId, (c) => c.status === 'completed', 'completed');
    expect(good.end_reason).toBe('bot_hangup');
  });
});

describe('object storage down', () => {
  it('the call completes; the failed upload is logged, counted and reported on the call; uploads work again after', async () => {
    const before = await (await fetch(`${w.url}/metrics`)).text();
    expect(before).toContain('voice_worker_recording_upload_failures_total 0');
    const { caller, callId } = await call(offlineBot);
    await storage.services.minio!.stop();
    try {
      await say(caller, 'stop calling');
      await caller.closed;
      expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'bot_hangup' });
      const rec = await callUntil(callId, (c) => c.recording_error !== null, 'recording_error');
      expect(rec).toMatchObject({ status: 'completed', end_reason: 'bot_hangup', recording_key: null });
      expect(rec.recording_error).toMatch(/^recording upload failed: /);
      const after = await (await fetch(`${w.url}/metrics`)).text();
      expect(after).toContain('voice_worker_recording_upload_failures_total 1');
      expect(after).toContain('voice_worker_recording_failures_total{stage="upload"} 1');
      expect(w.logs.some((l) => l.includes('"recording upload failed"') && l.includes(callId))).toBe(true);
      expect(existsSync(path.join(w.settings.RECORDING_DIR, 'vp-worker-recordings', callId))).toBe(false);
    } finally {
      await storage.services.minio!.start();
    }
    const next = await call(offlineBot);
    next.caller.send({ type: 'stop' });
    await next.caller.closed;
    const ok = await callUntil(next.callId, (c) => c.recording_key !== null, 'recording_key');
    expect(ok).toMatchObject({ status: 'completed', end_reason: 'caller_hangup', recording_error: null });
  });
});

describe('recording disk failing', () => {
  it('the call completes; the lost recording is logged once, counted and reported on the call', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'vp-resilience-'));
    const notADir = path.join(dir, 'file');
    await writeFile(notADir, ''); // every track file would be under a regular file: ENOTDIR
    const broken = await startWorker({
      RECORDING_DIR: notADir,
      STORAGE_ENDPOINT: storage.env.STORAGE_ENDPOINT!,
      STORAGE_ACCESS_KEY: storage.env.STORAGE_ACCESS_KEY!,
      STORAGE_SECRET_KEY: storage.env.STORAGE_SECRET_KEY!,
    });
    try {
      const caller = new TestCaller(withTestCallToken(`${broken.wsUrl}/ws/${offlineBot}`));
      await caller.opened;
      caller.send({ type: 'start', variables: VARIABLES });
      const started = await caller.until(() => caller.message('started'), 'started');
      const callId = started.call_id as string;
      await say(caller, 'stop calling');
      await caller.closed;
      expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'bot_hangup' });
      expect(caller.audio.length).toBeGreaterThan(50);

      const rec = await callUntil(callId, (c) => c.recording_error !== null, 'recording_error');
      expect(rec).toMatchObject({ status: 'completed', end_reason: 'bot_hangup', recording_key: null, recording_error: 'recording write failed: ENOTDIR (mkdir)' });
      const metrics = await (await fetch(`${broken.url}/metrics`)).text();
      expect(metrics).toContain('voice_worker_recording_failures_total{stage="disk"} 1');
      expect(metrics).toContain('voice_worker_recording_upload_failures_total 0');
      expect(broken.logs.filter((l) => l.includes('"recording write failed"') && l.includes(callId)).length).toBe(1);
    } finally {
      await broken.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
