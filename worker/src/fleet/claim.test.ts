// Dial-out jobs end to end: the real backend reserves a slot and XADDs the job; the worker claims it
// from the consumer group, drops the reservation, and drives the call through the telephony seam.
import { Redis } from 'ioredis';
import { DIALOUT_CONSUMER_GROUP, DIALOUT_STREAM_KEY, FLEET_RESERVATIONS_KEY } from '@voice-platform/schemas';
import { waitUntil } from '@voice-platform/tests/infra';
import { silence, speech } from '../testing/audio.js';
import { backendUrl, callUntil, createApiKey, createBot, ensureTrunk, TEST_POLICY, workerToken } from '../testing/backend.js';
import { startWorker, type TestWorker } from '../testing/worker.js';
import type { CallTransport, ServerMessage, TelephonyDialer, TransportHandlers } from '../transports/transport.js';

let redis: Redis;
let apiKey: string;
let botId: string;
beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  apiKey = await createApiKey();
  await ensureTrunk();
  botId = await createBot({
    name: 'dial-out',
    greeting: '',
    variables: [
      { name: 'customer_name', required: true, description: '' },
      { name: 'amount_due', required: false, description: '' },
    ],
    policy: TEST_POLICY,
    turn_detection: { end_of_turn_silence_ms: 500 },
  });
});
afterAll(() => redis.disconnect());

async function dialout(): Promise<string> {
  const res = await fetch(`${backendUrl()}/api/v1/sip/dialout`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ bot_id: botId, to_number: '+4915112345678', variables: { customer_name: 'Sam' } }),
  });
  const body = (await res.json()) as { call_id: string };
  if (res.status !== 201) throw new Error(`dial-out failed: ${res.status} ${JSON.stringify(body)}`);
  return body.call_id;
}

const pendingFor = async (consumer: string) => {
  const rows = (await redis.xpending(DIALOUT_STREAM_KEY, DIALOUT_CONSUMER_GROUP, '-', '+', 100, consumer)) as unknown[];
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

  it('drives a claimed call through the telephony seam: dialing → in_progress → completed', async () => {
    const sent: ServerMessage[] = [];
    let botFrames = 0;
    // The callee side of a phone line: speaks once the call is wired up.
    const dialer: TelephonyDialer = {
      name: 'test-line',
      async dial() {
        let handlers: TransportHandlers | null = null;
        const transport: CallTransport = {
          kind: 'sip',
          sendAudio: () => void botFrames++,
          sendMessage: (m) => void sent.push(m),
          attach: (h) => {
            handlers = h;
            void (async () => {
              const pcm = new Int16Array([...silence(300), ...speech('stop calling'), ...silence(900)]);
              const start = performance.now();
              for (let i = 0, k = 0; i < pcm.length && handlers; i += 320, k++) {
                handlers.onAudio(pcm.slice(i, i + 320));
                const wait = start + (k + 1) * 20 - performance.now();
                if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              }
            })();
          },
          close: () => void (handlers = null),
        };
        return transport;
      },
    };
    w = await startWorker({ DIALOUT_ENABLED: 'true' }, { dialer });
    const callId = await dialout();
    const call = await callUntil(callId, (c) => c.status === 'completed', 'completed');
    expect(call.end_reason).toBe('bot_hangup');
    expect(Object.keys(call.status_times).sort()).toEqual(['completed', 'dialing', 'in_progress', 'queued']);
    expect(sent.find((m) => m.type === 'transcript' && m.role === 'user')).toEqual({ type: 'transcript', role: 'user', text: 'stop calling', final: true });
    expect(botFrames).toBeGreaterThan(20);
    expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
  });

  it('acks a job when its call starts, so a call longer than the stale time is never claimed twice', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let dials = 0;
    const dialer: TelephonyDialer = {
      name: 'slow-line',
      async dial() {
        dials++;
        await answered; // the phone rings for as long as the test wants
        throw new Error('no answer');
      },
    };
    w = await startWorker({ DIALOUT_ENABLED: 'true', DIALOUT_STALE_CLAIM_MS: '100' }, { dialer });
    const callId = await dialout();
    await callUntil(callId, (c) => c.status === 'dialing', 'dialing');
    // Mid-call the job is no longer pending anywhere, so no worker's stale-claim can take it again.
    await waitUntil(async () => (await redis.xpending(DIALOUT_STREAM_KEY, DIALOUT_CONSUMER_GROUP))[0] === 0, { what: 'no pending job', timeoutMs: 10_000 });
    answer();
    await callUntil(callId, (c) => c.status === 'failed', 'failed');
    expect(dials).toBe(1);
  });

  it('takes over a job that a crashed worker read but never started', async () => {
    // A live heartbeat (for the backend's capacity check) from a worker that claims nothing.
    const idle = await startWorker({ DIALOUT_ENABLED: 'false' });
    let callId: string;
    try {
      callId = await dialout();
      // The "crashed" worker reads the job and dies before acking it.
      const read = (await redis.xreadgroup('GROUP', DIALOUT_CONSUMER_GROUP, 'crashed-worker', 'COUNT', 10, 'STREAMS', DIALOUT_STREAM_KEY, '>')) as Array<
        [string, Array<[string, string[]]>]
      >;
      expect(read[0]![1].map(([, f]) => f[f.indexOf('call_id') + 1])).toContain(callId);
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
    let callId: string;
    try {
      callId = await dialout();
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
    let dials = 0;
    const dialer: TelephonyDialer = {
      name: 'counting-line',
      dial: async () => {
        dials++;
        throw new Error('must not be called');
      },
    };
    w = await startWorker({ DIALOUT_ENABLED: 'true' }, { dialer });
    const worker = w;
    await waitUntil(() => worker.logs.some((l) => l.includes('the backend refused the dialing move')), { what: 'the refused job', timeoutMs: 15_000 });
    expect(dials).toBe(0);
    const call = await callUntil(callId, () => true, 'call');
    expect([call.status, call.end_reason]).toEqual(['failed', 'not_claimed']);
  });
});
