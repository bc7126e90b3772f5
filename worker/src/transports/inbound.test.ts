// Calls to one of our numbers: sipp as the caller (a user agent client) dials an inbound number through
// livekit-sip; LiveKit's dispatch rule puts it in a room of its own and tells the real backend in a
// signed webhook; the backend queues the call, a worker claims it and joins the room, which answers. At
// capacity the backend refuses the still-ringing call: the caller hears 486.
import path from 'node:path';
import { CALL_LEASES_KEY, FLEET_RESERVATIONS_KEY } from '@voice-platform/schemas';
import { callInbound, waitUntil, type InboundCallResult } from '@voice-platform/tests/infra';
import { Redis } from 'ioredis';
import { dispose } from '@livekit/rtc-node';
import { RoomServiceClient } from 'livekit-server-sdk';
import type { Call } from '@voice-platform/schemas';
import { recognise } from '../../testing/audio.js';
import { admin, callUntil, createPolicyBot } from '../../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../../testing/worker.js';
import { readRecording } from '../../testing/recordings.js';

const NUMBER = '+15550007001';
const CALLER = '+15557654321';
// One slot: a second caller while the first is on the line finds the fleet at capacity.
const telephony = () => telephonyEnv({ MAX_CONCURRENT_CALLS: '1' });

let botId: string;
let redis: Redis;
let w: TestWorker;
let run = 0;
beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  botId = await createPolicyBot({
    name: 'inbound reminder',
    greeting: 'Hello {{customer_name}}, this is your payment reminder.',
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 60,
  });
  const res = await admin('POST', '/api/v1/sip/inbound-numbers', { number: NUMBER, bot_id: botId, variables: { customer_name: 'Sam' } });
  if (res.status !== 201) throw new Error(`inbound number: ${res.status} ${JSON.stringify(res.body)}`);
  w = await startWorker(telephony());
});
afterAll(async () => {
  await w?.stop();
  redis.disconnect();
  await dispose();
});

const call = (phrase: string | null, holdMs?: number): Promise<InboundCallResult> =>
  callInbound({ dir: path.join(process.env.VP_TEST_DIR!, `inbound-caller-${++run}`), sipAddress: process.env.LIVEKIT_SIP_ADDRESS!, number: NUMBER, from: CALLER, phrase, holdMs });

/** The newest inbound call of the test bot created after `since`. */
async function inboundCall(since: number): Promise<Call> {
  let found: Call | undefined;
  await waitUntil(async () => {
    const res = await admin('GET', `/api/v1/calls?bot_id=${botId}&direction=inbound&created_after=${new Date(since).toISOString()}`);
    found = (res.body.items as Call[])[0];
    return found !== undefined;
  }, { what: 'the inbound call record', timeoutMs: 30_000 });
  return found!;
}

describe('a call to an inbound number', () => {
  it('is answered by the bot: greeting, the caller\'s phrase, the bot hangs up with a BYE; recorded as inbound', async () => {
    const since = Date.now() - 1000;
    const result = await call('stop calling');
    expect({ finalStatus: result.finalStatus, byeReceived: result.byeReceived, exitCode: result.exitCode }).toEqual({ finalStatus: 200, byeReceived: true, exitCode: 0 });
    const first = await inboundCall(since);
    const done = await callUntil(first.call_id, (c) => c.recording_key !== null || c.recording_error !== null || c.status === 'failed', 'the end and the recording', 30_000);
    expect(done).toMatchObject({ direction: 'inbound', bot_id: botId, from_number: CALLER, to_number: NUMBER, status: 'completed', end_reason: 'bot_hangup', variables: { customer_name: 'Sam' }, recording_error: null });
    expect(Object.keys(done.status_times).sort()).toEqual(['completed', 'in_progress', 'queued', 'ringing']);
    expect(done.transcript.map((e) => [e.role, e.text])).toEqual([
      ['bot', 'Hello Sam, this is your payment reminder.'],
      ['user', 'stop calling'],
      ['bot', 'Understood.'],
      ['bot', 'Goodbye Sam.'],
    ]);
    // The bot channel (right) opens with the greeting: the caller speaks only 4 s after the answer.
    const { right } = await readRecording(done.recording_key!);
    expect(recognise(right.subarray(0, 16000 * 3.5), 16000, ['hello sam this is your payment reminder', 'understood goodbye sam', 'stop calling'])).toBe('hello sam this is your payment reminder');
    await waitUntil(async () => (await redis.zscore(FLEET_RESERVATIONS_KEY, first.call_id)) === null && (await redis.zscore(CALL_LEASES_KEY, first.call_id)) === null && w.worker.slots.active === 0, {
      what: 'the slot back',
      timeoutMs: 15_000,
    });
    // The caller's room is gone with the call.
    const rooms = await new RoomServiceClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!).listRooms();
    expect(rooms.filter((r) => r.name.startsWith('in-'))).toEqual([]);
  });

  it('at capacity: a second caller while the first is on the line hears 486, and the call is recorded failed / fleet_at_capacity', async () => {
    const since = Date.now() - 1000;
    // The first caller stays on the line, silent (nothing a loaded recogniser could take for an ending
    // phrase), until it hangs up itself.
    const holding = call(null, 12_000);
    const first = await inboundCall(since);
    await callUntil(first.call_id, (c) => c.status === 'in_progress', 'the first call answered', 30_000);
    // The whole fleet is this one worker, and its one slot is taken.
    const totals = async () => ((await (await fetch(`${w.url}/health/fleet`)).json()) as { totals: Record<string, number> }).totals;
    await waitUntil(async () => (await totals()).free_slots === 0, { what: 'the fleet full', timeoutMs: 10_000 });
    expect(await totals()).toMatchObject({ workers: 1, active_calls: 1, max_calls: 1, free_slots: 0 });

    const secondSince = Date.now() - 200;
    const refused = await call('stop calling');
    expect({ finalStatus: refused.finalStatus, byeReceived: refused.byeReceived }).toEqual({ finalStatus: 486, byeReceived: false });
    const second = await inboundCall(secondSince);
    expect(second.call_id).not.toBe(first.call_id);
    expect(second).toMatchObject({ direction: 'inbound', from_number: CALLER, to_number: NUMBER, status: 'failed', end_reason: 'fleet_at_capacity', sip_status_code: 486, started_at: null });

    // The first call was never disturbed: it ends when its caller hangs up.
    const held = await holding;
    expect(held).toMatchObject({ finalStatus: 200, byeReceived: false });
    expect(await callUntil(first.call_id, (c) => c.status === 'completed', 'the first call to end', 30_000)).toMatchObject({ status: 'completed', end_reason: 'caller_hangup' });
  });
});
