// POST /livekit/webhook: LiveKit's signed events, against the suite's real LiveKit server (the rooms a
// refused caller rings in are real and must be gone) and real FerretDB and Redis. The end-to-end path
// (sipp calling through livekit-sip, a worker answering) is worker/src/transports/inbound.test.ts.
import { createHash } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { ParticipantInfo_Kind, WebhookEvent } from '@livekit/protocol';
import { CALL_JOBS_STREAM_KEY } from '@voice-platform/schemas';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, heartbeat, startHarness, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';
import { INBOUND_NUMBER_ID_ATTRIBUTE, type InboundNumberDoc } from '../inbound/store.js';
import { findCalls } from '../calls/store.js';

let env: TestEnv;
let h: Harness;
let auth: string;
const rooms = () => new RoomServiceClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!);
const NUMBER = '+15550107000';
const CALLER = '+15557650000';

beforeAll(async () => {
  env = await startTestEnv(['redis']); // a private Redis: capacity is global
});
afterAll(() => env.stop());
beforeEach(async () => {
  h = await startHarness({ redisUrl: env.env.REDIS_URL });
  auth = await adminToken(h);
  await h.redis.flushdb();
});
afterEach(() => h.close());

/** An inbound number as the admin API stores it (the LiveKit side is not needed to receive events). */
async function inboundNumber(botId: string, variables: Record<string, string> = {}): Promise<string> {
  const id = new ObjectId().toHexString();
  const now = new Date(h.clock.ms);
  await h.db.collection<InboundNumberDoc>(COLLECTIONS.inboundNumbers).insertOne({
    _id: id, number: NUMBER, bot_id: botId, variables, allowed_addresses: [], livekit_trunk_id: 'ST_test', livekit_rule_id: 'SDR_test', created_at: now, updated_at: now,
  });
  return id;
}

/** The event livekit-server posts when a SIP caller joins a room of a dispatch rule. */
function joined(room: string, attributes: Record<string, string>, kind = ParticipantInfo_Kind.SIP): string {
  return new WebhookEvent({
    event: 'participant_joined',
    id: `EV_${new ObjectId().toHexString()}`,
    createdAt: BigInt(Math.floor(Date.now() / 1000)),
    room: { name: room, sid: `RM_${room}` },
    participant: { identity: `sip_${CALLER}`, sid: 'PA_1', kind, attributes: { 'sip.phoneNumber': CALLER, 'sip.trunkPhoneNumber': NUMBER, ...attributes } },
  }).toJsonString();
}

/** Signed as livekit-server signs: a JWT by the API key whose sha256 claim is the body's hash. */
async function signed(body: string, secret = process.env.LIVEKIT_API_SECRET!): Promise<string> {
  const at = new AccessToken(process.env.LIVEKIT_API_KEY!, secret);
  at.sha256 = createHash('sha256').update(body).digest('base64');
  return at.toJwt();
}

const post = async (body: string, authorization?: string) => {
  const req = h.http.post('/livekit/webhook').set('Content-Type', 'application/webhook+json');
  return (authorization ? req.set('Authorization', authorization) : req).send(body);
};
const calls = () => findCalls(h.db, {});

describe('POST /livekit/webhook', () => {
  it('refuses events that LiveKit did not sign, or whose body was changed, and stores nothing', async () => {
    const bot = await createBot(h, auth);
    const body = joined('in-unsigned', { [INBOUND_NUMBER_ID_ATTRIBUTE]: await inboundNumber(bot) });
    for (const authorization of [undefined, 'not-a-jwt', await signed(body, 'another-secret-0123456789abcdef-0123456789')]) {
      const res = await post(body, authorization);
      expect({ status: res.status, error: res.body.error?.code }).toEqual({ status: 401, error: 'unauthorized' });
    }
    const tampered = await post(body.replace(CALLER, '+15550000000'), await signed(body));
    expect(tampered.status).toBe(401);
    expect(await calls()).toEqual([]);
  });

  it('queues a SIP caller in an inbound number\'s room as an inbound call, once, whatever LiveKit retries', async () => {
    const bot = await createBot(h, auth, { variables: [{ name: 'customer_name', required: true, description: '' }], greeting: 'Hello {{customer_name}}.' });
    await heartbeat(h.redis, 'w1', { max_calls: 2 }, Date.now() + 60_000);
    const id = await inboundNumber(bot, { customer_name: 'caller' });
    const body = joined('in-abc123', { [INBOUND_NUMBER_ID_ATTRIBUTE]: id });
    expect((await post(body, await signed(body))).status).toBe(204);
    expect((await post(body, await signed(body))).status).toBe(204); // a retry
    const stored = await calls();
    expect(stored).toHaveLength(1);
    const call = stored[0]!;
    expect(call).toMatchObject({ bot_id: bot, direction: 'inbound', from_number: CALLER, to_number: NUMBER, status: 'queued', variables: { customer_name: 'caller' }, room_name: 'in-abc123', api_key_id: null });
    const api = await h.http.get(`/api/v1/calls/${call._id}`).set('Authorization', auth).expect(200);
    expect(api.body).toMatchObject({ call_id: call._id, direction: 'inbound', from_number: CALLER, to_number: NUMBER, status: 'queued' });
    const jobs = await h.redis.xrange(CALL_JOBS_STREAM_KEY, '-', '+');
    expect(jobs).toHaveLength(1);
    const f = Object.fromEntries(jobs[0]![1].reduce<string[][]>((acc, v, i, all) => (i % 2 ? acc : [...acc, [v, all[i + 1]!]]), []));
    expect(f).toEqual({ call_id: call._id, bot_id: bot, variables: '{"customer_name":"caller"}', direction: 'inbound', room_name: 'in-abc123', from_number: CALLER });
  });

  it('at capacity: deletes the ringing caller\'s room (the caller hears 486) and records the call failed / fleet_at_capacity', async () => {
    const bot = await createBot(h, auth);
    const id = await inboundNumber(bot);
    await heartbeat(h.redis, 'w1', { max_calls: 1, active_calls: 1 }, Date.now() + 60_000);
    const room = `in-full-${Date.now()}`;
    await rooms().createRoom({ name: room });
    const body = joined(room, { [INBOUND_NUMBER_ID_ATTRIBUTE]: id });
    expect((await post(body, await signed(body))).status).toBe(204);
    const [call] = await calls();
    expect(call).toMatchObject({ direction: 'inbound', status: 'failed', end_reason: 'fleet_at_capacity', sip_status_code: 486, started_at: null, from_number: CALLER });
    expect(await rooms().listRooms([room])).toEqual([]);
    expect(await h.redis.xlen(CALL_JOBS_STREAM_KEY)).toBe(0);
  });

  it('an inactive bot\'s number refuses callers too (bot_inactive)', async () => {
    const bot = await createBot(h, auth);
    await h.http.patch(`/api/v1/bots/${bot}`).set('Authorization', auth).send({ active: false }).expect(200);
    await heartbeat(h.redis, 'w1', { max_calls: 2 }, Date.now() + 60_000);
    const body = joined('in-inactive', { [INBOUND_NUMBER_ID_ATTRIBUTE]: await inboundNumber(bot) });
    expect((await post(body, await signed(body))).status).toBe(204);
    expect(await calls()).toEqual([expect.objectContaining({ status: 'failed', end_reason: 'bot_inactive' })]);
  });

  it('acknowledges and ignores everything else: browsers, rooms of other rules, unknown numbers\' callers are refused without a record', async () => {
    const bot = await createBot(h, auth);
    await heartbeat(h.redis, 'w1', { max_calls: 2 }, Date.now() + 60_000);
    const id = await inboundNumber(bot);
    const events = [
      joined('in-browser', { [INBOUND_NUMBER_ID_ATTRIBUTE]: id }, ParticipantInfo_Kind.STANDARD), // not a phone
      joined(new ObjectId().toHexString(), { [INBOUND_NUMBER_ID_ATTRIBUTE]: id }), // a dial-out's room
      joined('in-foreign', {}), // a dispatch rule that is not ours
      joined('in-gone', { [INBOUND_NUMBER_ID_ATTRIBUTE]: new ObjectId().toHexString() }), // a number deleted meanwhile
      new WebhookEvent({ event: 'room_started', id: 'EV_x', room: { name: 'in-x' } }).toJsonString(),
    ];
    for (const body of events) expect((await post(body, await signed(body))).status).toBe(204);
    expect(await calls()).toEqual([]);
    expect(await h.redis.xlen(CALL_JOBS_STREAM_KEY)).toBe(0);
  });
});
