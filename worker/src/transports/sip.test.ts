// Dial-outs that really ring a phone: the real backend queues the call, a worker claims it, joins the
// call's LiveKit room and dials the callee through livekit-sip; sipp (the suite's test phone) answers,
// busies, rings forever or hangs up, by number (tests/infra PHONE_NUMBERS). The phone says "stop
// calling" five seconds after it answers (VP_PHONE_PHRASE in jest.global-setup.js).
import path from 'node:path';
import { CALL_LEASES_KEY, FLEET_RESERVATIONS_KEY, fleetWorkerKey } from '@voice-platform/schemas';
import { answeringNumber, freePort, holdNumber, listenNumber, PHONE_NUMBERS, PhoneEar, startProcess, waitUntil } from '@voice-platform/tests/infra';
import { Redis } from 'ioredis';
import { dispose } from '@livekit/rtc-node';
import { RoomServiceClient } from 'livekit-server-sdk';
import { envelopeMatch, recognise } from '../../testing/audio.js';
import { adminAuth, backendUrl, callUntil, createApiKey, createBot, createPolicyBot, ensureTrunk } from '../../testing/backend.js';
import { startWorker, telephonyEnv, workerMain, workerProcessEnv, type TestWorker } from '../../testing/worker.js';
import { readRecording } from '../../testing/recordings.js';
import { invitesTo, phoneReceived } from '../../testing/phone.js';

const GREETING = 'Hello {{customer_name}}, this is your payment reminder.';
const telephony = () => telephonyEnv({ RINGING_TIMEOUT_SECONDS: '6' });

let apiKey: string;
let botId: string;
let redis: Redis;
let w: TestWorker;
beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  apiKey = await createApiKey();
  await ensureTrunk();
  botId = await createPolicyBot({
    name: 'sip reminder',
    greeting: GREETING,
    turn_detection: { end_of_turn_silence_ms: 600 },
    // Longer than the phone's own 60 s: a call whose phrase the recogniser missed ends as the phone
    // hangs up (callee_hangup), never in a race with max_duration.
    max_call_seconds: 90,
  });
  w = await startWorker(telephony());
});
afterAll(async () => {
  await w?.stop();
  redis.disconnect();
  // rtc-node's native client keeps the process alive until it is disposed (main.ts exits instead).
  await dispose();
});

/** A number the phone answers and talks on (tests/infra answeringNumber), random so its SIP messages can be told apart. */
const answering = answeringNumber;

async function dialout(to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ bot_id: botId, to_number: to, variables: { customer_name: 'Sam' }, ...extra }),
  });
  const body = (await res.json()) as { call_id: string };
  if (res.status !== 201) throw new Error(`dial-out failed: ${res.status} ${JSON.stringify(body)}`);
  return body.call_id;
}

const fleetOf = async (worker: TestWorker) => {
  const res = (await (await fetch(`${worker.url}/health/fleet`)).json()) as { workers: Array<{ worker_id: string; active_calls: number }> };
  return res.workers.find((x) => x.worker_id === worker.settings.WORKER_ID);
};
/** The call gave everything back: no reservation, the worker's slot free in /health/fleet, and the lease gone
 *  once the backend has taken the call's last event (the worker keeps it until then). */
async function slotFreed(callId: string, worker = w): Promise<void> {
  await waitUntil(async () => (await fleetOf(worker))?.active_calls === 0, { what: 'the slot back in /health/fleet', timeoutMs: 15_000 });
  expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
  await waitUntil(async () => (await redis.zscore(CALL_LEASES_KEY, callId)) === null, { what: 'the lease gone', timeoutMs: 15_000 });
}

describe('a dial-out to a real SIP phone', () => {
  it('rings, is answered, greets, hears the callee, hangs up with a BYE, and is recorded', async () => {
    const to = answering();
    const callId = await dialout(to);
    // The recording is reported after the end, once uploaded.
    const call = await callUntil(callId, (c) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup', direction: 'outbound', to_number: to, from_number: '+15550001111', sip_status_code: null, recording_error: null });
    expect(Object.keys(call.status_times).sort()).toEqual(['completed', 'dialing', 'in_progress', 'queued', 'ringing']);
    const t = call.status_times as Record<string, string>;
    const order = ['queued', 'dialing', 'ringing', 'in_progress', 'completed'].map((s) => Date.parse(t[s]!));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // What was said, a bot sentence an entry: the greeting first, then the callee's phrase, then the goodbye.
    expect(call.transcript.map((e) => [e.role, e.text])).toEqual([
      ['bot', 'Hello Sam, this is your payment reminder.'],
      ['user', 'stop calling'],
      ['bot', 'Understood.'],
      ['bot', 'Goodbye Sam.'],
    ]);
    // The turn on the record (docs/design.md §16): its words, and stages that sum to its latency within a frame.
    expect(call.turns).toHaveLength(1);
    const turn = call.turns![0]!;
    expect(turn).toMatchObject({ index: 1, user_text: 'stop calling', interrupted: false });
    for (const k of ['stt_ms', 'llm_first_token_ms', 'tts_first_audio_ms', 'tool_ms', 'latency_ms'] as const) expect(Number.isInteger(turn[k]) && turn[k] >= 0).toBe(true);
    const decidedMs = Date.parse(turn.decided_at) - Date.parse(turn.user_end_at);
    expect(Math.abs(decidedMs + turn.stt_ms + turn.llm_first_token_ms + turn.tool_ms + turn.tts_first_audio_ms - turn.latency_ms)).toBeLessThanOrEqual(20);
    expect(Date.parse(turn.user_end_at)).toBeGreaterThan(Date.parse(t.in_progress!));
    // The phone got the bot's BYE (and nothing it did not expect).
    await waitUntil(() => phoneReceived(to).includes('BYE'), { what: 'the BYE at the phone', timeoutMs: 10_000 });
    expect(phoneReceived(to)).toEqual(['INVITE', 'ACK', 'BYE']);

    // The recording: stereo, callee left, bot right; the bot channel holds the greeting.
    expect(call.recording_key).toMatch(new RegExp(`^recordings/\\d{4}/\\d{2}/\\d{2}/${callId}\\.wav$`));
    const { info, left, right } = await readRecording(call.recording_key!);
    expect(info).toMatchObject({ sampleRate: 16000, channels: 2, bitsPerSample: 16 });
    const greetingEnd = 16000 * 4.5; // the phone speaks after 5 s: before that, the bot channel is the greeting alone
    expect(recognise(right.subarray(0, greetingEnd), 16000, ['hello sam this is your payment reminder', 'understood goodbye sam', 'stop calling'])).toBe('hello sam this is your payment reminder');
    // The callee's channel: quiet until the phone speaks, then its phrase.
    expect(Math.max(...left.subarray(16000, greetingEnd).map(Math.abs))).toBeLessThan(2000);
    expect(recognise(left.subarray(greetingEnd), 16000, ['stop calling', 'how much', 'goodbye'])).toBe('stop calling');
    // The call's room is gone (deleting it is how the worker hung up).
    expect(await new RoomServiceClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!).listRooms([callId])).toEqual([]);
    await slotFreed(callId);
  });

  it('reaches the callee: the phone line carries the greeting, intelligible after LiveKit, livekit-sip and G.711', async () => {
    // The phone answers this number with its media address at the ear, listens for 6 s, and hangs up.
    const ear = await PhoneEar.open(Number(process.env.SIP_PHONE_EAR_PORT));
    try {
      const callId = await dialout(listenNumber(6));
      const call = await callUntil(callId, (c) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null, 'the end of the call and its recording', 30_000);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'callee_hangup', recording_error: null });
      expect(call.transcript.map((e) => [e.role, e.text])).toEqual([['bot', 'Hello Sam, this is your payment reminder.']]);
      const streams = ear.heard();
      expect(streams).toHaveLength(1); // one RTP stream: the call's
      const line = streams[0]!.pcm;
      // What the phone heard follows what the bot said, as its recording has it (the bot channel), word
      // for word in loudness; pocketsphinx's wideband model cannot be asked directly about 8 kHz G.711.
      const { right } = await readRecording(call.recording_key!);
      const match = envelopeMatch(line, 8000, right, 16000);
      // 0.9 and more on a quiet machine; a loaded one (the suites run side by side) jitters the line a little.
      expect(match.correlation).toBeGreaterThan(0.85);
      // Speech, not a stream of noise: loud while the greeting plays, quiet after it.
      const loudAt = (pcm: Int16Array) => pcm.findIndex((v) => Math.abs(v) > 3000);
      expect(loudAt(line)).toBeGreaterThanOrEqual(0);
      const lastLoud = line.length - 1 - loudAt(line.slice().reverse());
      expect(Math.max(...line.subarray(lastLoud + 8000).map(Math.abs))).toBeLessThan(500);
      await slotFreed(callId);
    } finally {
      await ear.close();
    }
  });

  it("a supervisor's say is heard on the phone line at once and is in the transcript; end hangs the phone up", async () => {
    const ear = await PhoneEar.open(Number(process.env.SIP_PHONE_EAR_PORT));
    try {
      const callId = await dialout(listenNumber(20));
      await callUntil(callId, (c) => c.status === 'in_progress', 'the answer', 30_000);
      await waitUntil(() => ear.lines().length > 0, { what: 'the line at the ear', timeoutMs: 10_000 });
      const line = ear.lines()[0]!;
      const loudSince = (t: number) => line.arrivals.some((a) => a.at > t && a.rms > 1000);
      // The greeting is over: nothing loud for a second.
      await waitUntil(() => loudSince(0) && !loudSince(performance.now() - 1000), { what: 'the end of the greeting', timeoutMs: 15_000 });
      const askedAt = performance.now();
      const auth = { Authorization: await adminAuth(), 'Content-Type': 'application/json' };
      const say = await fetch(`${backendUrl()}/api/v1/calls/${callId}/control`, { method: 'POST', headers: auth, body: JSON.stringify({ type: 'say', text: 'A supervisor joined the call.' }) });
      expect(say.status).toBe(202);
      // The phone hears it: speech on the line after the control, well before the call would say anything else.
      await waitUntil(() => loudSince(askedAt), { what: "the supervisor's words at the phone", timeoutMs: 5000 });
      const end = await fetch(`${backendUrl()}/api/v1/calls/${callId}/control`, { method: 'POST', headers: auth, body: JSON.stringify({ type: 'end' }) });
      expect(end.status).toBe(202);
      const call = await callUntil(callId, (c) => c.status === 'completed' && (c.recording_key !== null || c.recording_error !== null), 'the end', 30_000);
      expect(call.end_reason).toBe('supervisor_ended');
      expect(call.transcript.filter((e) => e.role === 'bot').map((e) => e.text)).toEqual(['Hello Sam, this is your payment reminder.', 'A supervisor joined the call.']);
      expect(call.actions.filter((a) => a.type === 'control').map((a) => a.name)).toEqual(['say', 'end']);
      await slotFreed(callId);
    } finally {
      await ear.close();
    }
  });

  it('barge-in: the callee speaking into the greeting stops the bot within moments', async () => {
    const callId = await dialout(PHONE_NUMBERS.interrupts);
    const call = await callUntil(callId, (c) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null, 'the end and the recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(call.transcript.filter((e) => e.role === 'user').map((e) => e.text)).toEqual(['stop calling']);
    const { left, right } = await readRecording(call.recording_key!);
    const ms = (n: number) => Math.round((n * 16000) / 1000);
    // The callee starts speaking about 1.5 s in, while the 3-second greeting plays; from 400 ms later the
    // bot is silent until its reply (end of turn + 600 ms of silence), where without barge-in the greeting would go on.
    const onset = left.findIndex((v, i) => i > ms(500) && Math.abs(v) > 2000);
    expect(onset).toBeGreaterThan(ms(1000));
    expect(Math.max(...right.subarray(ms(300), onset).map(Math.abs))).toBeGreaterThan(3000); // the greeting was playing
    expect(Math.max(...right.subarray(onset + ms(400), onset + ms(1000)).map(Math.abs))).toBeLessThan(500);
    await slotFreed(callId);
  });

  it('busy (486) → busy, with the SIP status', async () => {
    const callId = await dialout(PHONE_NUMBERS.busy);
    const call = await callUntil(callId, (c) => !['queued', 'dialing', 'ringing'].includes(c.status), 'the outcome', 30_000);
    expect(call).toMatchObject({ status: 'busy', end_reason: 'busy', sip_status_code: 486, started_at: null, recording_key: null });
    await slotFreed(callId);
  });

  it('no answer → no_answer within the ringing timeout; the phone got the CANCEL', async () => {
    const callId = await dialout(PHONE_NUMBERS.noAnswer);
    await callUntil(callId, (c) => c.status === 'ringing', 'ringing', 15_000);
    const call = await callUntil(callId, (c) => c.status !== 'ringing', 'the outcome', 30_000);
    expect(call).toMatchObject({ status: 'no_answer', end_reason: 'no_answer', started_at: null });
    const rang = Date.parse(call.ended_at!) - Date.parse(call.status_times.dialing!);
    expect(rang).toBeGreaterThanOrEqual(5_000); // RINGING_TIMEOUT_SECONDS=6, less the INVITE's way
    await waitUntil(() => phoneReceived(PHONE_NUMBERS.noAnswer).includes('CANCEL'), { what: 'the CANCEL at the phone', timeoutMs: 10_000 });
    await slotFreed(callId);
  });

  it('a number that does not exist (404) → failed / invalid_number', async () => {
    const callId = await dialout(PHONE_NUMBERS.notFound);
    const call = await callUntil(callId, (c) => !['queued', 'dialing', 'ringing'].includes(c.status), 'the outcome', 30_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'invalid_number', sip_status_code: 404 });
    await slotFreed(callId);
  });

  it('a carrier failure (503) → failed / sip_error', async () => {
    const callId = await dialout(PHONE_NUMBERS.unavailable);
    const call = await callUntil(callId, (c) => !['queued', 'dialing', 'ringing'].includes(c.status), 'the outcome', 30_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'sip_error', sip_status_code: 503 });
    await slotFreed(callId);
  });

  it('the callee hanging up mid-greeting → completed / callee_hangup', async () => {
    const callId = await dialout(PHONE_NUMBERS.hangsUp);
    const call = await callUntil(callId, (c) => ['completed', 'failed'].includes(c.status), 'the end of the call', 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
    expect(Object.keys(call.status_times)).toContain('in_progress');
    await slotFreed(callId);
  });

  it('a callee holding the line (the phone\'s +15005559SSS numbers) stays on for SSS seconds, then hangs up', async () => {
    const callId = await dialout(holdNumber(4));
    const call = await callUntil(callId, (c) => ['completed', 'failed'].includes(c.status), 'the end of the call', 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
    // Silence from the phone: the bot greets, and hears nothing to answer.
    expect(call.transcript.map((t) => t.role)).toEqual(['bot']);
    const heldMs = Date.parse(call.ended_at!) - Date.parse(call.status_times.in_progress!);
    expect(heldMs).toBeGreaterThanOrEqual(3500);
    await slotFreed(callId);
  });

  it('10 concurrent dial-outs all complete', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, () => dialout(answering())));
    // Each ends when the bot hears the phrase, or when the phone gives up after 60 s should the
    // recogniser have missed it on a loaded machine: either way the call completes.
    const calls = await Promise.all(ids.map((id) => callUntil(id, (c) => !['queued', 'dialing', 'ringing', 'in_progress'].includes(c.status), 'the end', 120_000)));
    expect(calls.map((c) => c.status)).toEqual(ids.map(() => 'completed'));
    for (const c of calls) {
      expect(['bot_hangup', 'callee_hangup']).toContain(c.end_reason);
      expect(c.transcript[0]).toMatchObject({ role: 'bot', text: 'Hello Sam, this is your payment reminder.' });
    }
    expect(calls.filter((c) => c.end_reason === 'bot_hangup').length).toBeGreaterThanOrEqual(8);
    for (const id of ids) await slotFreed(id);
  }, 150_000);
});

describe('a bot this worker cannot run', () => {
  it('never rings the phone: failed / provider_unavailable before the INVITE, and the slot is free', async () => {
    // Deepgram needs DEEPGRAM_API_KEY, which the suite's worker does not have.
    const cloudBot = await createBot({ name: 'needs deepgram', greeting: 'Hello.', stt: { provider: 'deepgram', model: 'nova-2', language: 'en-US' } });
    const to = answering();
    const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ bot_id: cloudBot, to_number: to }),
    });
    expect(res.status).toBe(201);
    const { call_id: callId } = (await res.json()) as { call_id: string };
    const call = await callUntil(callId, (c) => !['queued', 'dialing', 'ringing'].includes(c.status), 'the outcome', 30_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'provider_unavailable', started_at: null });
    expect(invitesTo(to)).toBe(0);
    await slotFreed(callId);
  });
});

describe('a trunk whose address answers nothing', () => {
  it('→ failed with a code, and the slot is free', async () => {
    const dead = await freePort();
    const auth = await adminAuth();
    const res = await fetch(`${backendUrl()}/api/v1/sip/outbound-trunks`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'nowhere', address: `127.0.0.1:${dead}`, numbers: ['+15550002222'] }),
    });
    expect(res.status).toBe(201);
    const callId = await dialout(answering(), { from_number: '+15550002222' });
    const call = await callUntil(callId, (c) => !['queued', 'dialing', 'ringing'].includes(c.status), 'the outcome', 60_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'sip_error', sip_status_code: null, started_at: null });
    expect(Object.keys(call.status_times).sort()).toEqual(['dialing', 'failed', 'queued']);
    await slotFreed(callId);
  });
});

describe('a worker killed mid-call (SIGKILL)', () => {
  it('ends the call failed / worker_lost, hangs up the phone, and frees the slot; nothing waits for a restart', async () => {
    // This test's worker is a real process (the one to kill); the in-process one stays out of its way.
    await w.stop();
    const port = await freePort();
    const workerId = `sigkill-${port}`;
    const proc = startProcess('worker', process.execPath, [workerMain], {
      env: workerProcessEnv(port, { ...telephony(), WORKER_ID: workerId, STORAGE_BUCKET: 'recordings' }),
      logFile: path.join(process.env.VP_TEST_DIR!, `worker-${port}.log`),
    });
    try {
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200, { what: 'the worker process', proc });
      const to = answering();
      const callId = await dialout(to);
      await callUntil(callId, (c) => c.status === 'in_progress', 'in_progress', 30_000);
      process.kill(proc.pid, 'SIGKILL');
      const killedAt = Date.now();
      const call = await callUntil(callId, (c) => c.status !== 'in_progress', 'the dialler to end the call', 60_000);
      expect(call).toMatchObject({ status: 'failed', end_reason: 'worker_lost' });
      expect(Date.now() - killedAt).toBeLessThan(60_000); // the reservation TTL
      await waitUntil(() => phoneReceived(to).includes('BYE'), { what: 'the BYE at the phone', timeoutMs: 15_000 });
      // The dead worker's capacity left the fleet with its heartbeat; no reservation or lease is left.
      await waitUntil(async () => (await redis.zscore(CALL_LEASES_KEY, callId)) === null && (await redis.get(fleetWorkerKey(workerId))) === null, {
        what: 'lease and heartbeat gone',
        timeoutMs: 15_000,
      });
      expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
    } finally {
      await proc.stop(1000);
      w = await startWorker(telephony());
    }
    // A new call goes through at once, on the fleet that is left.
    const again = await dialout(PHONE_NUMBERS.busy);
    expect((await callUntil(again, (c) => c.status === 'busy', 'busy', 30_000)).status).toBe('busy');
  });
});
