// A browser test call end to end (docs/design.md §7 widget): `POST /livekit/widget` on the real backend queues a
// `web` call and answers a LiveKit token; a worker claims the job and joins the call's room; the
// "browser" (rtc-node, the protocol livekit-client speaks) joins with that token, hears the greeting,
// says "stop calling", and gets the call's events as data on topic `events`. The record ends `web`,
// `completed`, with both sides' transcript and a recording.
import { AudioFrame, AudioSource, dispose, LocalAudioTrack, Room, RoomEvent, TrackPublishOptions, TrackSource } from '@livekit/rtc-node';
import { speech, silence } from '../../testing/audio.js';
import { adminAuth, backendUrl, callUntil, createApiKey, createPolicyBot } from '../../testing/backend.js';
import { readRecording } from '../../testing/recordings.js';
import { startWorker, telephonyEnv, type TestWorker } from '../../testing/worker.js';
import { FLEET_RESERVATIONS_KEY, FLEET_TEST_RESERVATIONS_KEY, fleetWorkerKey } from '@voice-platform/schemas';
import { waitUntil } from '@voice-platform/tests/infra';

const RATE = 16000;
let apiKey: string;
let botId: string;
let w: TestWorker;
beforeAll(async () => {
  apiKey = await createApiKey();
  botId = await createPolicyBot({
    name: 'widget bot',
    greeting: 'Hello {{customer_name}}, this is a test call.',
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 60,
  });
  w = await startWorker(telephonyEnv({ WEB_CALLER_WAIT_SECONDS: '20' }));
});
afterAll(async () => {
  await w?.stop();
  await dispose();
});

interface Widget {
  call_id: string;
  room_name: string;
  livekit_url: string;
  access_token: string;
  expires_at: string;
}
async function widget(headers: Record<string, string>, body: unknown): Promise<{ status: number; body: Widget & { error?: { code: string } } }> {
  const res = await fetch(`${backendUrl()}/livekit/widget`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Widget & { error?: { code: string } } };
}

describe('POST /livekit/widget', () => {
  it('refuses what a dial-out refuses, with the same codes', async () => {
    expect((await widget({}, { bot_id: botId })).status).toBe(401);
    expect((await widget({ 'X-API-Key': apiKey }, { bot_id: 'nope-nope' })).body.error?.code).toBe('bot_not_found');
    expect((await widget({ 'X-API-Key': apiKey }, { bot_id: botId })).body.error?.code).toBe('variables_mismatch');
    expect((await widget({ 'X-API-Key': apiKey }, { bot_id: botId, to_number: '+15005550100' })).body.error?.code).toBe('validation_failed');
  });

  it('a browser joins with the token, talks with the bot, and the call is recorded as web', async () => {
    const res = await widget({ Authorization: await adminAuth() }, { bot_id: botId, variables: { customer_name: 'Sam' } });
    expect(res.status).toBe(201);
    const { call_id: callId, room_name: roomName, livekit_url: url, access_token: token, expires_at: expiresAt } = res.body;
    expect(roomName).toBe(callId);
    expect(url).toBe(process.env.LIVEKIT_URL);
    const ttlMs = Date.parse(expiresAt) - Date.now();
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(600_000);
    // The token is for this room only, as the caller.
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string; video: { room: string; canPublishSources: string[] } };
    expect(claims.sub).toBe('caller');
    expect(claims.video.room).toBe(callId);
    expect(claims.video.canPublishSources).toEqual(['microphone']);

    const browser = new Room();
    const events: Array<{ type: string; role?: string; text?: string; final?: boolean; reason?: string }> = [];
    browser.on(RoomEvent.DataReceived, (payload: Uint8Array, _p, _kind, topic?: string) => {
      if (topic === 'events') events.push(JSON.parse(Buffer.from(payload).toString('utf8')));
    });
    await browser.connect(url, token, { autoSubscribe: true, dynacast: false });
    const mic = new AudioSource(RATE, 1);
    let speaking: NodeJS.Timeout | null = null;
    try {
      await browser.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('microphone', mic), new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
      const greeted = () => events.some((e) => e.type === 'transcript' && e.role === 'bot' && e.final);
      const deadline = Date.now() + 30_000;
      while (!greeted()) {
        if (Date.now() > deadline) throw new Error(`no greeting; events: ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // The caller speaks in real time, 20 ms frames, then stays silent.
      const pcm = new Int16Array([...silence(300), ...speech('stop calling'), ...silence(3000)]);
      let i = 0;
      speaking = setInterval(() => {
        const frame = i < pcm.length ? pcm.slice(i, i + RATE / 50) : new Int16Array(RATE / 50);
        i += RATE / 50;
        if (frame.length === RATE / 50) void mic.captureFrame(new AudioFrame(frame, RATE, 1, RATE / 50)).catch(() => undefined);
      }, 20);
      const call = await callUntil(callId, (c) => ['completed', 'failed'].includes(c.status) && c.recording_key !== null, 'the end of the call', 60_000);
      expect(call).toMatchObject({ direction: 'web', status: 'completed', end_reason: 'bot_hangup', to_number: null, from_number: null });
      expect(call.transcript.map((t) => [t.role, t.text])).toEqual([
        ['bot', 'Hello Sam, this is a test call.'],
        ['user', 'stop calling'],
        ['bot', 'Understood.'],
        ['bot', 'Goodbye Sam.'],
      ]);
      expect(events[0]).toEqual({ type: 'started', call_id: callId });
      const finals = events.filter((e) => e.type === 'transcript' && e.final).map((e) => [e.role, e.text]);
      expect(finals).toEqual(call.transcript.map((t) => [t.role, t.text]));
      expect(events[events.length - 1]).toEqual({ type: 'ended', reason: 'bot_hangup' });
      const rec = await readRecording(call.recording_key!);
      expect(rec.info.channels).toBe(2);
    } finally {
      if (speaking) clearInterval(speaking);
      await browser.disconnect().catch(() => undefined);
      await mic.close().catch(() => undefined);
    }
  });

  it('a browser that never joins: the call ends failed / not_started and the slot is free', async () => {
    const res = await widget({ 'X-API-Key': apiKey }, { bot_id: botId, variables: { customer_name: 'Sam' } });
    expect(res.status).toBe(201);
    // Claimed, the call counts as a test call in the heartbeat, and its reservation has left both sets.
    const beat = async () => JSON.parse((await w.redis.get(fleetWorkerKey(w.settings.WORKER_ID))) ?? '{}') as { test_calls?: number };
    await waitUntil(async () => w.worker.slots.testActive === 1 && (await beat()).test_calls === 1, { what: 'the browser call counted in the test share' });
    expect([await w.redis.zscore(FLEET_RESERVATIONS_KEY, res.body.call_id), await w.redis.zscore(FLEET_TEST_RESERVATIONS_KEY, res.body.call_id)]).toEqual([null, null]);
    const call = await callUntil(res.body.call_id, (c) => c.status === 'failed', 'failed', 40_000);
    expect(call).toMatchObject({ direction: 'web', end_reason: 'not_started', started_at: null });
    const health = (await (await fetch(`${w.url}/health`)).json()) as { active_calls: number };
    expect(health.active_calls).toBe(0);
  });

  it('a browser call beyond the test calls share (TEST_CALL_SHARE) is refused at creation: 503 fleet_at_capacity, no call queued', async () => {
    // Test calls hold their whole share of this worker (30 slots × 0.5); the other slots stay free, kept for dial-outs.
    const slots = w.worker.slots;
    const held = Array.from({ length: slots.testMax }, (_, i) => `held-test-call-${i}`);
    for (const id of held) expect(slots.tryAcquire(id, 'test')).toBe('ok');
    try {
      // The worker's heartbeat carries its test calls and share: what the backend decides by.
      const beat = async () => JSON.parse((await w.redis.get(fleetWorkerKey(w.settings.WORKER_ID))) ?? '{}') as { active_calls?: number; test_calls?: number; max_test_calls?: number };
      await waitUntil(async () => (await beat()).test_calls === held.length, { what: 'a heartbeat with the test share full' });
      expect(await beat()).toMatchObject({ active_calls: held.length, max_calls: slots.max, test_calls: held.length, max_test_calls: held.length });
      const res = await fetch(`${backendUrl()}/livekit/widget`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ bot_id: botId, variables: { customer_name: 'Sam' } }),
      });
      expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
        503,
        '5',
        { error: { code: 'fleet_at_capacity', message: 'test calls hold their share of every voice worker; the rest is kept for dial-outs', details: { live_workers: 1 } } },
      ]);
      expect(await w.redis.zcard(FLEET_TEST_RESERVATIONS_KEY)).toBe(0);
      expect([slots.active, slots.testActive]).toEqual([held.length, held.length]);
    } finally {
      for (const id of held) slots.release(id);
    }
  });
});
