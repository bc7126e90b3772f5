// End to end on real services: FerretDB, Redis, MinIO, the real backend, and the worker with its
// offline providers (espeak-ng, pocketsphinx, scripted policy), driven by a WebSocket caller that
// speaks in real time.
import { Redis } from 'ioredis';
import { fleetWorkerKey } from '@voice-platform/schemas';
import { recognise, silence, speech } from '../testing/audio.js';
import { admin, callUntil, createBot, createPolicyBot, getCall, updateBot } from '../testing/backend.js';
import { TestCaller, withTestCallToken } from '../testing/client.js';
import { startWorker, type TestWorker } from '../testing/worker.js';
import { freePort, waitUntil } from '@voice-platform/tests/infra';
import { readRecording } from '../testing/recordings.js';

const waitUntilAsync = (check: () => Promise<boolean>, what: string) => waitUntil(check, { what, timeoutMs: 20_000 });

const VARIABLES = { customer_name: 'Sam', amount_due: 'forty' };
const GREETING = 'Hello {{customer_name}}, this is your payment reminder.';
const replies = ['hello sam this is your payment reminder', 'the open amount is forty dollars', 'understood goodbye sam', 'sorry i did not catch that'];

let w: TestWorker;
let botId: string;
beforeAll(async () => {
  botId = await createPolicyBot({
    name: 'reminder',
    greeting: GREETING,
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 60,
  });
  w = await startWorker();
});
afterAll(async () => {
  await w?.stop();
});

/** Streams silence in real time until the bot has spoken and then been quiet for `quietMs`. */
async function waitForBotToFinish(caller: TestCaller, quietMs = 400): Promise<void> {
  await caller.until(() => caller.audio.length > 0, 'bot audio');
  while (performance.now() - caller.audio[caller.audio.length - 1]!.atMs < quietMs) await caller.stream(silence(100));
}

describe('a WebSocket call with the offline providers', () => {
  it('greets, understands a policy phrase, answers, ends, reports, and records', async () => {
    const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${botId}`));
    await caller.opened;
    caller.send({ type: 'start', variables: VARIABLES });
    const started = await caller.until(() => caller.message('started'), 'started');
    const callId = started.call_id as string;
    expect(typeof callId).toBe('string');

    await waitForBotToFinish(caller);
    expect(caller.message('transcript', (m) => m.role === 'bot')).toEqual({ type: 'transcript', role: 'bot', text: 'Hello Sam, this is your payment reminder.', final: true });
    expect(recognise(caller.botAudio(), 16000, replies)).toBe('hello sam this is your payment reminder');
    expect((await getCall(callId)).status).toBe('in_progress');

    const replyFrom = performance.now();
    await caller.stream(speech('stop calling'));
    await caller.stream(silence(900));
    await caller.until(() => caller.closeCode !== null, 'the call to end');

    expect(caller.message('transcript', (m) => m.role === 'user')).toEqual({ type: 'transcript', role: 'user', text: 'stop calling', final: true });
    expect(caller.messages.filter((m) => m.role === 'bot').map((m) => m.text)).toEqual(['Hello Sam, this is your payment reminder.', 'Understood.', 'Goodbye Sam.']);
    expect(recognise(caller.botAudio(replyFrom), 16000, replies)).toBe('understood goodbye sam');
    expect(caller.messages[caller.messages.length - 1]).toEqual({ type: 'ended', reason: 'bot_hangup' });
    expect(caller.closeCode).toBe(1000);

    const call = await callUntil(callId, (c) => c.recording_key !== null, 'the recording key');
    expect(call).toMatchObject({ call_id: callId, bot_id: botId, direction: 'websocket', status: 'completed', end_reason: 'bot_hangup', variables: VARIABLES, recording_error: null });
    expect(Object.keys(call.status_times).sort()).toEqual(['completed', 'in_progress', 'queued']);
    // The end reported each turn's latency: the bot's analytics count the call with them (DESIGN §12).
    const range = `from=${new Date(Date.parse(call.created_at) - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const stats = await admin('GET', `/api/v1/analytics/calls?interval=hour&bot_id=${botId}&${range}`);
    expect(stats.status).toBe(200);
    expect(stats.body.totals).toMatchObject({ total: 1, answered: 1, by_status: { completed: 1 }, by_end_reason: { bot_hangup: 1 } });
    expect(stats.body.totals.turn_latency_ms.p50).toBeGreaterThan(0);
    const d = new Date(call.created_at);
    const key = `recordings/${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}/${callId}.wav`;
    expect(call.recording_key).toBe(key);

    const { info, left, right } = await readRecording(key);
    expect(info).toMatchObject({ sampleRate: 16000, channels: 2, bitsPerSample: 16 });
    const seconds = info.dataBytes / 4 / 16000;
    const callSeconds = (Date.parse(call.ended_at!) - Date.parse(call.started_at!)) / 1000;
    expect(Math.abs(seconds - callSeconds)).toBeLessThan(0.5);
    // Both sides are in it: the caller on the left, the bot on the right.
    expect(recognise(left, 16000, ['stop calling', 'how much', 'goodbye'])).toBe('stop calling');
    expect(right.some((s) => Math.abs(s) > 3000)).toBe(true);
  });
});

describe('calls that cannot start fail at once with the documented code', () => {
  it('unknown bot → bot_not_found, close 4404', async () => {
    const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/no-such-bot`));
    await caller.opened;
    caller.send({ type: 'start', variables: {} });
    expect(await caller.closed).toBe(4404);
    expect(caller.messages).toEqual([{ type: 'error', code: 'bot_not_found', message: 'bot not found' }]);
    expect(caller.audio).toEqual([]);
  });

  it('inactive bot → bot_inactive, close 4409', async () => {
    const id = await createBot({ name: 'inactive', greeting: 'hi' });
    await updateBot(id, { active: false });
    const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${id}`));
    await caller.opened;
    expect(await caller.closed).toBe(4409);
    expect(caller.messages).toEqual([{ type: 'error', code: 'bot_inactive', message: 'the bot is not active' }]);
  });

  it('missing required variables → variables_mismatch, close 4422', async () => {
    const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${botId}`));
    await caller.opened;
    caller.send({ type: 'start', variables: {} });
    expect(await caller.closed).toBe(4422);
    expect(caller.messages[0]).toMatchObject({ type: 'error', code: 'variables_mismatch' });
  });

  it('config unreachable → config_unreachable, close 4502, and the slot is free again', async () => {
    const dead = await freePort();
    const other = await startWorker({ SERVICE_CONFIG_URL: `http://127.0.0.1:${dead}/api/v1/config` });
    try {
      const caller = new TestCaller(withTestCallToken(`${other.wsUrl}/ws/${botId}`));
      await caller.opened;
      caller.send({ type: 'start', variables: VARIABLES });
      expect(await caller.closed).toBe(4502);
      expect(caller.messages).toEqual([{ type: 'error', code: 'config_unreachable', message: expect.stringContaining('backend unreachable') }]);
      await caller.until(() => other.worker.slots.active === 0, 'the slot to be released');
    } finally {
      await other.stop();
    }
  });

  it('a bad first message → invalid_message, close 4400', async () => {
    const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${botId}`));
    await caller.opened;
    caller.ws.send('{"type":"hello"}');
    expect(await caller.closed).toBe(4400);
    expect(caller.messages[0]).toMatchObject({ type: 'error', code: 'invalid_message' });
  });
});

describe('capacity', () => {
  it('runs 30 calls, refuses the 31st with 4503, and takes a call again once one ends', async () => {
    const quiet = await createBot({ name: 'quiet', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
    // Every slot may carry a test call here (TEST_CALL_SHARE=1): the worker's own limit is what is tested.
    const full = await startWorker({ MAX_CONCURRENT_CALLS: '30', TEST_CALL_SHARE: '1' });
    const redis = new Redis(process.env.REDIS_URL!);
    const callers: TestCaller[] = [];
    try {
      for (let i = 0; i < 30; i++) callers.push(new TestCaller(withTestCallToken(`${full.wsUrl}/ws/${quiet}`)));
      await Promise.all(callers.map((c) => c.until(() => c.message('started'), 'started')));
      expect(full.worker.slots.active).toBe(30);

      const extra = new TestCaller(withTestCallToken(`${full.wsUrl}/ws/${quiet}`));
      expect(await extra.closed).toBe(4503);
      expect(extra.messages).toEqual([{ type: 'error', code: 'worker_at_capacity', message: 'this worker runs 30 calls already' }]);

      const health = await (await fetch(`${full.url}/health`)).json();
      expect(health).toEqual({ status: 'ok', active_calls: 30, max_calls: 30, draining: false, load: expect.any(Number), admittable: 0, version: '0.1.0', worker_id: full.settings.WORKER_ID });
      const hb = JSON.parse((await redis.get(fleetWorkerKey(full.settings.WORKER_ID)))!);
      expect(hb).toMatchObject({ worker_id: full.settings.WORKER_ID, active_calls: 30, max_calls: 30, draining: false });

      callers[0]!.send({ type: 'stop' });
      await callers[0]!.closed;
      expect(callers[0]!.message('ended')).toEqual({ type: 'ended', reason: 'caller_hangup' });
      await callers[0]!.until(() => full.worker.slots.active === 29, 'a free slot');
      const next = new TestCaller(withTestCallToken(`${full.wsUrl}/ws/${quiet}`));
      await next.until(() => next.message('started'), 'the next call to start');
      callers.push(next);
    } finally {
      for (const c of callers) c.ws.close();
      await full.stop();
      redis.disconnect();
    }
  });

  it('refuses a call at its load threshold though slots are free, reports load and admittable, and takes calls again when the load falls', async () => {
    const quiet = await createBot({ name: 'quiet load', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
    // One core is this worker's allowance; its own process burning that core is load 1 (the threshold is 0.5; the
    // machine's CPU pressure left out: other suites' processes are not this test's).
    const hot = await startWorker({ MAX_CONCURRENT_CALLS: '30', TEST_CALL_SHARE: '1', LOAD_ADMISSION: 'true', CPU_ALLOWANCE_CORES: '1', LOAD_THRESHOLD: '0.5', LOAD_SAMPLE_INTERVAL_MS: '200', LOAD_CPU_PRESSURE: 'false' });
    const redis = new Redis(process.env.REDIS_URL!);
    const heartbeat = async () => JSON.parse((await redis.get(fleetWorkerKey(hot.settings.WORKER_ID)))!) as { load: number; admittable: number; active_calls: number; max_calls: number };
    let burning = true;
    // CPU in short slices, so the worker's timers (its load samples, heartbeat, WebSocket) still run between them.
    const burner = (async () => {
      while (burning) {
        const end = Date.now() + 30;
        while (Date.now() < end);
        await new Promise((r) => setImmediate(r));
      }
    })();
    try {
      await waitUntilAsync(async () => (await heartbeat()).admittable === 0, 'the heartbeat to report no room');
      const hb = await heartbeat();
      // No room: the load leaves less than one call's estimated cost (0.1 of the core) under the threshold.
      expect(hb.load).toBeGreaterThan(0.4);
      expect([hb.active_calls, hb.max_calls]).toEqual([0, 30]);
      const refused = new TestCaller(withTestCallToken(`${hot.wsUrl}/ws/${quiet}`));
      expect(await refused.closed).toBe(4503);
      expect(refused.messages[0]).toMatchObject({ type: 'error', code: 'worker_at_capacity' });
      expect((refused.messages[0] as unknown as { message: string }).message).toMatch(/^this worker is at its load threshold \(load (0\.\d+|1)\); another call would slow the 0 it runs$/);
      const metrics = await (await fetch(`${hot.url}/metrics`)).text();
      expect(metrics).toMatch(/^voice_worker_admittable_calls 0$/m);
      expect(Number(/^voice_worker_load ([\d.]+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0.4);
      burning = false;
      await burner;
      // The load falls back: room again, and a call is taken.
      await waitUntilAsync(async () => (await heartbeat()).admittable > 0, 'room again');
      const next = new TestCaller(withTestCallToken(`${hot.wsUrl}/ws/${quiet}`));
      await next.until(() => next.message('started'), 'the call to start');
      next.ws.close();
    } finally {
      burning = false;
      await burner;
      await hot.stop();
      redis.disconnect();
    }
  });

  it('test calls hold at most TEST_CALL_SHARE of the slots, so dial-outs always find room', async () => {
    const quiet = await createBot({ name: 'quiet share', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
    const shared = await startWorker({ MAX_CONCURRENT_CALLS: '4', TEST_CALL_SHARE: '0.5' });
    const callers: TestCaller[] = [];
    try {
      for (let i = 0; i < 2; i++) callers.push(new TestCaller(withTestCallToken(`${shared.wsUrl}/ws/${quiet}`)));
      await Promise.all(callers.map((c) => c.until(() => c.message('started'), 'started')));
      const third = new TestCaller(withTestCallToken(`${shared.wsUrl}/ws/${quiet}`));
      expect(await third.closed).toBe(4503);
      expect(third.messages).toEqual([
        { type: 'error', code: 'worker_at_capacity', message: 'test calls hold their share of this worker already (2 of 4 slots; the rest are kept for dial-outs)' },
      ]);
      // The fleet still offers this worker's other two slots to dial-outs.
      const fleet = (await (await fetch(`${shared.url}/health/fleet`)).json()) as { workers: Array<{ worker_id: string; active_calls: number; max_calls: number }> };
      expect(fleet.workers.find((x) => x.worker_id === shared.settings.WORKER_ID)).toMatchObject({ active_calls: 2, max_calls: 4 });
      expect(shared.worker.slots.tryAcquire('a-dial-out')).toBe('ok');
      shared.worker.slots.release('a-dial-out');
    } finally {
      for (const c of callers) c.ws.close();
      await shared.stop();
    }
  });

  it('a test call nobody talks into ends by itself (caller_idle)', async () => {
    const quiet = await createBot({ name: 'quiet idle', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
    const idle = await startWorker({ TEST_CALL_IDLE_TIMEOUT_SECONDS: '5' });
    try {
      const caller = new TestCaller(withTestCallToken(`${idle.wsUrl}/ws/${quiet}`));
      const started = await caller.until(() => caller.message('started'), 'started');
      // Silence is still audio (a muted microphone sends frames): the call stays up while frames come,
      // for longer than the idle timeout (6 s of frames against 5 s).
      await caller.stream(silence(6000));
      expect(caller.closeCode).toBeNull();
      expect(caller.message('ended')).toBeUndefined();
      // Then nothing at all: the call ends on its own.
      expect(await caller.closed).toBe(1000);
      expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'caller_idle' });
      const call = await callUntil(started.call_id as string, (c) => c.status === 'completed', 'completed');
      expect(call.end_reason).toBe('caller_idle');
      await caller.until(() => idle.worker.slots.active === 0, 'the slot back');
    } finally {
      await idle.stop();
    }
  });
});

describe('health, fleet and metrics', () => {
  it('/health/fleet lists live workers from their heartbeats, with totals', async () => {
    const second = await startWorker({ MAX_CONCURRENT_CALLS: '5' });
    try {
      const res = await fetch(`${w.url}/health/fleet`);
      expect(res.status).toBe(200);
      const fleet = (await res.json()) as { workers: Array<{ worker_id: string; max_calls: number }>; totals: Record<string, number> };
      const ids = fleet.workers.map((x) => x.worker_id);
      expect(ids).toEqual(expect.arrayContaining([w.settings.WORKER_ID, second.settings.WORKER_ID]));
      expect(fleet.totals.workers).toBe(fleet.workers.length);
      expect(fleet.totals.max_calls).toBe(fleet.workers.reduce((n, x) => n + x.max_calls, 0));
    } finally {
      await second.stop();
    }
    const after = (await (await fetch(`${w.url}/health/fleet`)).json()) as { workers: Array<{ worker_id: string }> };
    expect(after.workers.map((x) => x.worker_id)).not.toContain(second.settings.WORKER_ID);
  });

  it('/health is ready (200 ok) only once the heartbeat is in the fleet: 503 starting while Redis cannot take it', async () => {
    const ready = await fetch(`${w.url}/health`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe('ok');
    expect(await w.redis.get(fleetWorkerKey(w.settings.WORKER_ID))).not.toBeNull();
    // A worker whose Redis answers nothing: the dial-out API could not see it, so it is not ready.
    const unseen = await startWorker({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, DIALOUT_ENABLED: 'false' });
    try {
      const res = await fetch(`${unseen.url}/health`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ status: 'starting', draining: false, worker_id: unseen.settings.WORKER_ID });
      expect((await fetch(`${unseen.url}/health/live`)).status).toBe(200);
    } finally {
      await unseen.stop();
    }
  });

  it('/metrics has the documented series', async () => {
    const text = await (await fetch(`${w.url}/metrics`)).text();
    for (const name of [
      'voice_worker_active_calls',
      'voice_worker_max_calls 30',
      'voice_worker_calls_total{result="bot_hangup"} 1',
      'voice_worker_turn_latency_seconds_count 1',
      'voice_worker_provider_latency_seconds_count{stage="stt",provider="pocketsphinx"} 1',
      'voice_worker_recording_upload_failures_total 0',
    ]) {
      expect(text).toContain(name);
    }
  });
});
