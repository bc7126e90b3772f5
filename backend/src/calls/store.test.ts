// Where a call's record is kept (calls/store.ts): in calls_live until it ends, in calls_ending until it is
// settled (no status event of it still due, no analysis pending), then in `calls`, so the work of a call in
// progress touches neither the ended calls waiting for their recording nor the collection of every ended call
// (FerretDB v1 reads all of a collection for a write by _id).
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { ObjectId, type CommandStartedEvent } from 'mongodb';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS, moveUnsettledCalls } from '../stores.js';
import { ENDED_PENDING_KEY } from '../webhooks/keys.js';
import { calls, endingCalls, findCall, insertCall, liveCalls, queuedCall, rehomeCall, type CallDoc } from './store.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let key: string;
let botId: string;
const worker = `Bearer ${WORKER_TOKEN}`;
/** Every MongoDB command the app's client sends: its name and collection. */
const commands: Array<{ name: string; collection: string }> = [];

beforeAll(async () => {
  env = await startTestEnv(['redis']);
  h = await startHarness({ redisUrl: env.env.REDIS_URL, monitorCommands: true, env: { DIALOUT_BURST: '1000' } });
  h.db.client.on('commandStarted', (e: CommandStartedEvent) => commands.push({ name: e.commandName, collection: String((e.command as Record<string, unknown>)[e.commandName]) }));
  auth = await adminToken(h);
  await createTrunk(h, auth);
  key = (await createKey(h, auth)).key;
  botId = await createBot(h, auth);
  await heartbeat(h.redis, 'w1', { max_calls: 1000 }, h.clock.ms + 3_600_000);
});
afterAll(async () => {
  await h.close();
  await env.stop();
});

const dial = async (): Promise<string> =>
  (await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+14155550100' }).expect(201)).body.call_id as string;
const event = (id: string, body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body);
const at = (s: number) => new Date(h.clock.ms + s * 1000).toISOString();
/** Which collections hold the call: [in calls_live, in calls_ending, in calls]. */
const where = async (id: string) => [!!(await liveCalls(h.db).findOne({ _id: id })), !!(await endingCalls(h.db).findOne({ _id: id })), !!(await calls(h.db).findOne({ _id: id }))];
const LIVE = [true, false, false];
const ENDING = [false, true, false];
const ENDED = [false, false, true];

it('a call in progress is read and written in calls_live only; settled at its end, it is inserted into calls once and leaves calls_live', async () => {
  const id = await dial();
  expect(await where(id)).toEqual(LIVE);
  commands.length = 0;
  await h.http.get('/api/v1/config').query({ bot_id: botId, call_id: id }).set('Authorization', worker).expect(200);
  await event(id, { status: 'dialing', event_id: 'e1', at: at(1) }).expect(200);
  await event(id, { status: 'ringing', event_id: 'e2', at: at(2) }).expect(200);
  await event(id, { status: 'in_progress', event_id: 'e3', at: at(3) }).expect(200);
  // Ended with its recording known: call.ended goes out at once, and nothing of the call is due any more.
  const done = await event(id, { status: 'completed', event_id: 'e4', at: at(9), end_reason: 'bot_hangup', recording_key: `recordings/${id}.wav` }).expect(200);
  expect(done.body).toMatchObject({ call_id: id, status: 'completed', recording_key: `recordings/${id}.wav` });
  expect(commands.filter((c) => c.collection === COLLECTIONS.calls)).toEqual([{ name: 'insert', collection: COLLECTIONS.calls }]);
  expect(commands.filter((c) => c.collection === COLLECTIONS.endingCalls)).toEqual([]);
  expect(commands.filter((c) => c.collection === COLLECTIONS.liveCalls).map((c) => c.name)).toContain('delete');
  expect(await where(id)).toEqual(ENDED);
  expect((await calls(h.db).findOne({ _id: id }))!).toMatchObject({ status: 'completed', webhook_due: [], event_ids: ['e1', 'e2', 'e3', 'e4'] });
  // Read where it is now; a retry of the end is still answered as applied.
  expect((await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200)).body).toMatchObject({ status: 'completed', started_at: at(3) });
  expect((await event(id, { status: 'completed', event_id: 'e4', at: at(9), end_reason: 'bot_hangup' }).expect(200)).body.status).toBe('completed');
  await event(id, { status: 'failed', at: at(10) }).expect(409);
});

it('an answered call whose recording is still to come waits in calls_ending until its call.ended is sent, out of the way of calls in progress; the list and the record read every collection', async () => {
  const ended = await dial();
  await event(ended, { status: 'failed', end_reason: 'sip_error', at: at(1) }).expect(200); // unanswered: call.ended at once
  const id = await dial();
  await event(id, { status: 'in_progress', at: at(2) }).expect(200);
  await event(id, { status: 'completed', end_reason: 'bot_hangup', at: at(5) }).expect(200);
  expect(await h.redis.zscore(ENDED_PENDING_KEY, id)).not.toBeNull();
  expect(await where(id)).toEqual(ENDING);
  expect((await endingCalls(h.db).findOne({ _id: id }))!.webhook_due).toEqual(['call.ended']);
  expect(await where(ended)).toEqual(ENDED);
  // Another call's work meanwhile reads and writes calls_live only.
  const next = await dial();
  commands.length = 0;
  await h.http.get('/api/v1/config').query({ bot_id: botId, call_id: next }).set('Authorization', worker).expect(200);
  await event(next, { status: 'ringing', at: at(6) }).expect(200);
  await event(next, { status: 'in_progress', at: at(7) }).expect(200);
  expect(commands.filter((c) => c.collection !== COLLECTIONS.liveCalls && /^(find|update|insert|delete)$/.test(c.name))).toEqual([]);
  const list = await h.http.get('/api/v1/calls').query({ bot_id: botId, limit: '1' }).set('Authorization', auth).expect(200);
  expect(list.body.items.map((c: { call_id: string }) => c.call_id)).toEqual([next]);
  const rest = await h.http.get('/api/v1/calls').query({ bot_id: botId, limit: '2', cursor: list.body.next_cursor }).set('Authorization', auth).expect(200);
  expect(rest.body.items.map((c: { call_id: string }) => c.call_id)).toEqual([id, ended]);
  // The recording's report sends call.ended: settled, the call moves.
  await event(id, { status: 'completed', recording_key: `recordings/${id}.wav` }).expect(200);
  expect(await where(id)).toEqual(ENDED);
  expect(await findCall(h.db, id)).toMatchObject({ status: 'completed', recording_key: `recordings/${id}.wav`, webhook_due: [] });
  // A late report of a settled call fills its record where it is.
  await event(ended, { status: 'failed', recording_error: 'no media' }).expect(200);
  expect(await findCall(h.db, ended)).toMatchObject({ status: 'failed', recording_error: 'no media' });
  expect(await where(ended)).toEqual(ENDED);
});

it("the deliverer sends a held call.ended after the recording's wait and the call moves to calls", async () => {
  const id = await dial();
  await event(id, { status: 'in_progress', at: at(1) }).expect(200);
  await event(id, { status: 'completed', end_reason: 'callee_hangup', at: at(4) }).expect(200);
  expect(await where(id)).toEqual(ENDING);
  h.clock.advance((h.settings.WEBHOOK_RECORDING_WAIT_SECONDS + 1) * 1000);
  const d = h.deliverer();
  try {
    await d.runOnce();
  } finally {
    await d.stop();
  }
  expect(await h.redis.zscore(ENDED_PENDING_KEY, id)).toBeNull();
  expect(await where(id)).toEqual(ENDED);
  expect(await findCall(h.db, id)).toMatchObject({ status: 'completed', webhook_due: [] });
});

it('the sweeper moves on an ended call left in calls_live and a settled one left in calls_ending (closed outside a move, or a move cut short)', async () => {
  const now = new Date(h.clock.ms);
  const doc: CallDoc = { ...queuedCall({ _id: new ObjectId().toHexString(), bot_id: botId, direction: 'outbound', to_number: '+14155550100', from_number: null, variables: {}, api_key_id: null }, now) };
  await liveCalls(h.db).insertOne({ ...doc, status: 'failed', end_reason: 'enqueue_failed', ended_at: now, status_times: { queued: now, failed: now } });
  const due = { ...doc, _id: new ObjectId().toHexString() };
  await liveCalls(h.db).insertOne({ ...due, status: 'failed', ended_at: now, status_times: { queued: now, failed: now }, webhook_due: ['call.ended'] });
  const settled = { ...doc, _id: new ObjectId().toHexString() };
  await endingCalls(h.db).insertOne({ ...settled, status: 'no_answer', ended_at: now, status_times: { queued: now, no_answer: now }, webhook_due: [] });
  await h.sweeper().runOnce();
  expect(await where(doc._id)).toEqual(ENDED);
  expect(await where(due._id)).toEqual(ENDING); // its event is the outbox's to send first
  expect(await where(settled._id)).toEqual(ENDED);
});

it("a caller-chosen id (a campaign attempt's) is placed once, also after its call moved to calls", async () => {
  const now = new Date(h.clock.ms);
  const id = new ObjectId().toHexString();
  const doc = queuedCall({ _id: id, bot_id: botId, direction: 'outbound', to_number: '+14155550100', from_number: null, variables: {}, api_key_id: null, campaign_id: 'c1', campaign_contact_id: 'k1', campaign_attempt: 1 }, now);
  await insertCall(h.db, doc, { chosenId: true });
  await expect(insertCall(h.db, doc, { chosenId: true })).rejects.toMatchObject({ code: 11000 });
  expect(await rehomeCall(h.db, { ...doc, status: 'no_answer', ended_at: now }, 'live')).toBe(true);
  expect(await where(id)).toEqual(ENDED);
  await expect(insertCall(h.db, doc, { chosenId: true })).rejects.toMatchObject({ code: 11000 });
  expect(await where(id)).toEqual(ENDED); // the second record was taken back
  expect(await findCall(h.db, id)).toMatchObject({ status: 'no_answer' });
  // A dial-out's id is new every time: no record of it is kept.
  expect(await h.db.collection(COLLECTIONS.chosenCallIds).countDocuments({})).toBe(1);
});

it('calls stored in calls before the split that are not settled move to calls_live or calls_ending at boot, once', async () => {
  const now = new Date(h.clock.ms);
  const make = (status: CallDoc['status'], due: CallDoc['webhook_due'] = []): CallDoc => ({
    ...queuedCall({ _id: new ObjectId().toHexString(), bot_id: botId, direction: 'outbound', to_number: '+14155550100', from_number: null, variables: {}, api_key_id: null }, now),
    status,
    webhook_due: due,
  });
  const [queued, live, held, settled, busy] = [make('queued'), make('in_progress', ['call.in_progress']), make('completed', ['call.ended']), make('completed'), make('ringing')];
  await calls(h.db).insertMany([queued, live, held, settled, busy]);
  await h.db.collection(COLLECTIONS.migrations).deleteMany({});
  // A call whose lock stays taken (a move of it elsewhere) is left, and so is the mark: the next boot moves it.
  await h.redis.set(`vp:lock:call:${busy._id}`, 'elsewhere', 'PX', 10_000);
  expect(await moveUnsettledCalls(h.db, h.redis)).toBe(3);
  expect(await where(busy._id)).toEqual(ENDED);
  await h.redis.del(`vp:lock:call:${busy._id}`);
  expect(await moveUnsettledCalls(h.db, h.redis)).toBe(1);
  for (const d of [queued, live, busy]) expect(await where(d._id)).toEqual(LIVE);
  expect(await where(held._id)).toEqual(ENDING);
  expect(await where(settled._id)).toEqual(ENDED);
  expect(await liveCalls(h.db).findOne({ _id: live._id })).toEqual(live);
  // Marked done: a later boot reads nothing of calls.
  const late = make('queued');
  await calls(h.db).insertOne(late);
  expect(await moveUnsettledCalls(h.db, h.redis)).toBe(0);
  expect(await where(late._id)).toEqual(ENDED);
});
