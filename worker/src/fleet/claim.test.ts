// Dial-out jobs end to end: the real backend reserves a slot and XADDs the job; the worker claims it
// from the consumer group, drops the reservation, and dials through the real telephony plane (LiveKit,
// livekit-sip, the sipp test phone). The full spoken call is in transports/sip.test.ts.
import { Redis } from 'ioredis';
import { dispose } from '@livekit/rtc-node';
import { CALL_JOBS_CONSUMER_GROUP, CALL_JOBS_STREAM_KEY, FLEET_RESERVATIONS_KEY, streamEntries } from '@voice-platform/schemas';
import { answeringNumber, waitUntil } from '@voice-platform/tests/infra';
import { backendUrl, callUntil, createApiKey, createPolicyBot, ensureTrunk, workerToken } from '../../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../../testing/worker.js';
import { invitesTo } from '../../testing/phone.js';
import { PHONE_NUMBERS } from '@voice-platform/tests/infra';

let redis: Redis;
let apiKey: string;
let botId: string;
beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  apiKey = await createApiKey();
  await ensureTrunk();
  botId = await createPolicyBot({ name: 'dial-out' });
});
afterAll(async () => {
  redis.disconnect();
  // rtc-node's native client keeps the process alive until it is disposed (main.ts exits instead).
  await dispose();
});

async function dialout(to = '+4915112345678'): Promise<string> {
  const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ bot_id: botId, to_number: to, variables: { customer_name: 'Sam' } }),
  });
  const body = (await res.json()) as { call_id: string };
  if (res.status !== 201) throw new Error(`dial-out failed: ${res.status} ${JSON.stringify(body)}`);
  return body.call_id;
}

const pendingFor = async (consumer: string) => {
  const rows = (await redis.xpending(CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, '-', '+', 100, consumer)) as unknown[];
  return rows.length;
};

describe('dial-out claim loop', () => {
  let w: TestWorker | null = null;
  afterEach(async () => {
    await w?.stop();
    w = null;
  });

  it('claims the job, releases the reservation, and fails the call clearly when no telephony transport exists', async () => {
    w = await startWorker({ DIALOUT_ENABLED: 'true' });
    const callId = await dialout();
    const call = await callUntil(callId, (c) => c.status === 'failed', 'failed');
    expect(call.end_reason).toBe('no_telephony_transport');
    expect(Object.keys(call.status_times).sort()).toEqual(['failed', 'queued']);
    expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
    // Acked: nothing stays pending for this consumer.
    const id = w.settings.WORKER_ID;
    await waitUntil(async () => (await pendingFor(id)) === 0, { what: 'the job ack', timeoutMs: 10_000 });
    expect(await (await fetch(`${w.url}/metrics`)).text()).toContain('voice_worker_dialout_jobs_claimed_total 1');
  });

  it('acks a job when its call starts, so a call longer than the stale time is never claimed twice', async () => {
    const before = invitesTo(PHONE_NUMBERS.noAnswer);
    w = await startWorker(telephonyEnv({ RINGING_TIMEOUT_SECONDS: '6', DIALOUT_STALE_CLAIM_MS: '100' }));
    const callId = await dialout(PHONE_NUMBERS.noAnswer);
    await callUntil(callId, (c) => c.status === 'ringing', 'ringing');
    // Mid-call (the phone rings for seconds) the job is no longer pending anywhere, so no stale claim can take it again.
    await waitUntil(async () => (await redis.xpending(CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP))[0] === 0, { what: 'no pending job', timeoutMs: 10_000 });
    // The call holds one slot of the fleet, not two: its reservation became the worker's active call.
    expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
    const fleet = (await (await fetch(`${w.url}/health/fleet`)).json()) as { workers: Array<{ worker_id: string; active_calls: number }> };
    expect(fleet.workers.find((x) => x.worker_id === w!.settings.WORKER_ID)?.active_calls).toBe(1);
    await callUntil(callId, (c) => c.status === 'no_answer', 'no_answer', 30_000);
    expect(invitesTo(PHONE_NUMBERS.noAnswer) - before).toBe(1);
  });

  it('takes over a job that a crashed worker read but never started', async () => {
    // A live heartbeat (for the backend's capacity check) from a worker that claims nothing.
    const idle = await startWorker({ DIALOUT_ENABLED: 'false' });
    let callId: string;
    try {
      callId = await dialout();
      // The "crashed" worker reads the job and dies before acking it.
      const read = streamEntries(await redis.xreadgroup('GROUP', CALL_JOBS_CONSUMER_GROUP, 'crashed-worker', 'COUNT', 10, 'STREAMS', CALL_JOBS_STREAM_KEY, '>'));
      expect(read.map(([, f]) => f?.[f.indexOf('call_id') + 1])).toContain(callId);
    } finally {
      await idle.stop();
    }
    w = await startWorker({ DIALOUT_ENABLED: 'true', DIALOUT_STALE_CLAIM_MS: '100' });
    const call = await callUntil(callId, (c) => c.status === 'failed', 'failed');
    expect(call.end_reason).toBe('no_telephony_transport');
    expect(await pendingFor('crashed-worker')).toBe(0);
  });

  it('never dials a job whose call the backend already ended', async () => {
    const idle = await startWorker({ DIALOUT_ENABLED: 'false' });
    const to = answeringNumber(); // the phone answers it and talks
    let callId: string;
    try {
      callId = await dialout(to);
      // Ended before any worker claimed it (the dialler's not_claimed sweep does exactly this).
      const res = await fetch(`${backendUrl()}/api/v1/calls/${callId}/events`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${workerToken()}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ status: 'failed', end_reason: 'not_claimed' }),
      });
      expect(res.status).toBe(200);
    } finally {
      await idle.stop();
    }
    w = await startWorker(telephonyEnv({ RINGING_TIMEOUT_SECONDS: '6' }));
    const worker = w;
    await waitUntil(() => worker.logs.some((l) => l.includes('the backend refused the dialing move')), { what: 'the refused job', timeoutMs: 15_000 });
    expect(invitesTo(to)).toBe(0);
    const call = await callUntil(callId, () => true, 'call');
    expect([call.status, call.end_reason]).toEqual(['failed', 'not_claimed']);
  });
});
