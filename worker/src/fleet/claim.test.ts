// Dial-out jobs end to end: the real backend reserves a slot and XADDs the job; the worker claims it
// from the consumer group, drops the reservation, and drives the call through the telephony seam.
import { Redis } from 'ioredis';
import { DIALOUT_CONSUMER_GROUP, DIALOUT_STREAM_KEY, FLEET_RESERVATIONS_KEY } from '@voice-platform/schemas';
import { waitUntil } from '@voice-platform/tests/infra';
import { silence, speech } from '../testing/audio.js';
import { backendUrl, callUntil, createApiKey, createBot, TEST_POLICY } from '../testing/backend.js';
import { startWorker, type TestWorker } from '../testing/worker.js';
import type { CallTransport, ServerMessage, TelephonyDialer, TransportHandlers } from '../transports/transport.js';

let redis: Redis;
let apiKey: string;
let botId: string;
beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  apiKey = await createApiKey();
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
    // Acked after the call's last event: nothing stays pending for this consumer.
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
    expect(call.end_reason).toBe('policy_end_call');
    expect(Object.keys(call.status_times).sort()).toEqual(['completed', 'dialing', 'in_progress', 'queued']);
    expect(sent.find((m) => m.type === 'transcript' && m.role === 'user')).toEqual({ type: 'transcript', role: 'user', text: 'stop calling', final: true });
    expect(botFrames).toBeGreaterThan(20);
    expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
  });
});
