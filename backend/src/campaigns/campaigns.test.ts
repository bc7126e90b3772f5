// Campaigns (docs/design.md §8) on real stores: the admin API (create, contacts by JSON and CSV, the contacts
// list, start/pause/resume/cancel, do-not-call) and the dialler role. No worker runs here: a heartbeat
// written like a worker's gives the fleet room, and call outcomes are reported through the calls API the
// way a worker reports them.
import { startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { CALL_JOBS_STREAM_KEY, FLEET_RESERVATIONS_KEY, FLEET_WORKERS_KEY } from '@voice-platform/schemas';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';
import { findCalls, liveCalls as liveCallDocs } from '../calls/store.js';
import { WEBHOOK_EVENTS_STREAM } from '../webhooks/keys.js';
import { attemptCallId, rateWindow, type CampaignDialler } from './dialler.js';
import type { ContactDoc } from './store.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let botId: string;
let trunkNumber: string;

const BOT = { prompt: 'Remind {{customer_name}}.', variables: [{ name: 'customer_name', required: true, description: '' }, { name: 'plan', required: false, description: '' }] };
const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_MS = 86_400_000;

beforeAll(async () => {
  env = await startTestEnv(['redis']); // fleet keys are global: a Redis of this file's own
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { CAMPAIGN_LEASE_MS: '1000', CAMPAIGN_TICK_MS: '20', CAMPAIGN_FLEET_HEADROOM_SLOTS: '1', DIALOUT_BURST: '1000', DIALOUT_RATE_PER_SECOND: '1000' } });
  auth = await adminToken(h);
  trunkNumber = (await createTrunk(h, auth, { numbers: ['+15550002000'] })).numbers[0]!;
  botId = await createBot(h, auth, BOT);
});
afterAll(async () => {
  await h.close();
  await env.stop();
});
beforeEach(async () => {
  await h.redis.del(FLEET_WORKERS_KEY, FLEET_RESERVATIONS_KEY);
  await heartbeat(h.redis, 'w1', { max_calls: 100 }, h.clock.ms + 30 * DAY_MS);
});

const admin = () => ({ Authorization: auth });
const campaignBody = (over: Record<string, unknown> = {}) => ({
  name: 'October reminders',
  bot_id: botId,
  timezone: 'Europe/Berlin',
  windows: [],
  max_concurrency: 5,
  calls_per_second: 10,
  retry: { max_attempts: 1, delay_seconds: 60, on: [] },
  ...over,
});
async function createCampaign(over: Record<string, unknown> = {}): Promise<string> {
  const res = await h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody(over));
  if (res.status !== 201) throw new Error(`campaign create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
let numberSeq = 4_915_100_000_000;
const freshNumber = () => `+${numberSeq++}`;
async function addContacts(id: string, rows: Array<Record<string, unknown>>) {
  return (await h.http.post(`/api/v1/campaigns/${id}/contacts`).set(admin()).send({ contacts: rows }).expect(200)).body as { added: number; duplicates: number; rejected: unknown[] };
}
const someContacts = (n: number, extra: Record<string, unknown> = {}) => Array.from({ length: n }, () => ({ to_number: freshNumber(), variables: { customer_name: 'Ada' }, ...extra }));
const action = (id: string, what: string) => h.http.post(`/api/v1/campaigns/${id}/${what}`).set(admin());
const detail = async (id: string) => (await h.http.get(`/api/v1/campaigns/${id}`).set(admin()).expect(200)).body;
const contactDocs = (id: string) => h.db.collection<ContactDoc>(COLLECTIONS.campaignContacts).find({ campaign_id: id }).sort({ created_at: 1, _id: 1 }).toArray();
const campaignCalls = (id: string) => findCalls(h.db, { campaign_id: id });
const liveCalls = async (id: string) => (await campaignCalls(id)).filter((c) => !['completed', 'failed', 'busy', 'no_answer', 'canceled'].includes(c.status));
/** A worker's report of a call's end, through the calls API. */
const report = (callId: string, status: string, end_reason: string, extra: Record<string, unknown> = {}) =>
  h.http.post(`/api/v1/calls/${callId}/events`).set('Authorization', `Bearer ${WORKER_TOKEN}`).send({ status, end_reason, ...extra }).expect(200);
async function outboxEvents(type: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const entries = (await h.redis.xrange(WEBHOOK_EVENTS_STREAM, '-', '+')) as Array<[string, string[]]>;
  return entries
    .map(([, f]) => JSON.parse(f[f.indexOf('body') + 1]!) as { type: string; data: Record<string, unknown> })
    .filter((e) => e.type === type);
}
const ZERO = { pending: 0, dialing: 0, completed: 0, busy: 0, no_answer: 0, failed: 0, retry_scheduled: 0, skipped_dnc: 0, canceled: 0 };
/** A contacts upload's answer; `rejected` as [row, field, message] rows. */
const uploadResult = (added: number, duplicates: number, rejected: Array<[number, string, string]>) => ({
  added,
  duplicates,
  rejected: rejected.map(([row, field, message]) => ({ row, field, message })),
});
const REQUIRED_BY_BOT = 'is required by the bot';

describe('campaign API', () => {
  it('creates a draft with every field, lists it and reads it with counts', async () => {
    const body = campaignBody({ from_number: trunkNumber, windows: [{ days: ['mon', 'fri'], start: '09:00', end: '17:30' }], retry: { max_attempts: 3, delay_seconds: 300, on: ['busy', 'no_answer'] } });
    const res = await h.http.post('/api/v1/campaigns').set(admin()).send(body).expect(201);
    const now = new Date(h.clock.ms).toISOString();
    const expected = {
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'October reminders',
      bot_id: botId,
      from_number: trunkNumber,
      default_region: null,
      timezone: 'Europe/Berlin',
      windows: [{ days: ['mon', 'fri'], start: '09:00', end: '17:30' }],
      max_concurrency: 5,
      calls_per_second: 10,
      retry: { max_attempts: 3, delay_seconds: 300, on: ['busy', 'no_answer'] },
      answering_machine: null,
      status: 'draft',
      paused_reason: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      completed_at: null,
      canceled_at: null,
    };
    expect(res.body).toEqual({ ...expected, counts: ZERO });
    expect(res.headers.location).toBe(`/api/v1/campaigns/${res.body.id}`);
    expect(await detail(res.body.id)).toEqual({ ...expected, counts: ZERO });
    const list = await h.http.get('/api/v1/campaigns').query({ status: 'draft', limit: 100 }).set(admin()).expect(200);
    expect(list.body.items).toContainEqual(expected);
    expect((await h.http.get('/api/v1/campaigns/0123456789abcdef01234567').set(admin()).expect(404)).body.error.code).toBe('not_found');
    await h.http.get('/api/v1/campaigns').expect(401);
  });

  it('refuses bad campaigns with the field named', async () => {
    const post = (over: Record<string, unknown>) => h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody(over));
    const problems = async (over: Record<string, unknown>) => {
      const res = await post(over).expect(422);
      return [res.body.error.code, res.body.error.details];
    };
    expect(await problems({ timezone: 'Mars/Olympus_Mons' })).toEqual(['validation_failed', [{ field: 'timezone', message: 'is not an IANA time zone this server knows' }]]);
    expect(await problems({ windows: [{ days: ['mon'], start: '17:00', end: '09:00' }] })).toEqual(['validation_failed', [{ field: 'windows.0.end', message: 'must be after start' }]]);
    expect((await problems({ max_concurrency: 0 }))[1]).toEqual([{ field: 'max_concurrency', message: 'must be >= 1' }]);
    expect((await problems({ calls_per_second: 11 }))[1]).toEqual([{ field: 'calls_per_second', message: 'must be <= 10' }]);
    expect((await problems({ retry: { max_attempts: 11, delay_seconds: 10, on: ['busy', 'busy'] } }))[1]).toEqual(
      expect.arrayContaining([
        { field: 'retry.max_attempts', message: 'must be <= 10' },
        { field: 'retry.delay_seconds', message: 'must be >= 30' },
      ]),
    );
    expect((await problems({ windows: [{ days: ['someday'], start: '9:00', end: '25:00' }] }))[1].map((p: { field: string }) => p.field)).toEqual(
      expect.arrayContaining(['windows.0.days.0', 'windows.0.start', 'windows.0.end']),
    );
    expect(await problems({ from_number: '+15559999999' })).toEqual(['unknown_from_number', [{ field: 'from_number', message: "must be one of an outbound trunk's numbers" }]]);
    expect((await post({ bot_id: 'no-such-bot' }).expect(404)).body.error.code).toBe('bot_not_found');
  });

  it('adds contacts by JSON: bad rows reported by row and field, good rows kept, duplicates counted', async () => {
    const id = await createCampaign();
    const [a, b] = [freshNumber(), freshNumber()];
    const res = await h.http
      .post(`/api/v1/campaigns/${id}/contacts`)
      .set(admin())
      .send({
        contacts: [
          { to_number: a, variables: { customer_name: 'Ada', plan: 'gold' }, timezone: 'America/New_York' },
          { to_number: '12345', variables: { customer_name: 'Bob' } },
          { to_number: b, variables: {} },
          { to_number: freshNumber(), variables: { customer_name: 'Cy', pet: 'cat' } },
          { to_number: a, variables: { customer_name: 'Ada again' } },
          { to_number: freshNumber(), variables: { customer_name: 'Di' }, timezone: 'Nowhere/City' },
          'not an object',
          { to_number: b, variables: { customer_name: 'Bea' } },
        ],
      })
      .expect(200);
    expect(res.body).toEqual(
      uploadResult(2, 1, [
        [2, 'to_number', 'too short'], // 12345, read in the caller ID's country (US)
        [3, 'variables.customer_name', REQUIRED_BY_BOT],
        [4, 'variables.pet', 'is not a declared variable of the bot'],
        [6, 'timezone', 'is not an IANA time zone this server knows'],
        [7, '(row)', 'must be object'],
      ]),
    );
    // A second upload: the numbers already in the campaign are duplicates.
    expect(await addContacts(id, [{ to_number: a, variables: { customer_name: 'Ada' } }])).toEqual({ added: 0, duplicates: 1, rejected: [] });
    const list = await h.http.get(`/api/v1/campaigns/${id}/contacts`).set(admin()).expect(200);
    expect(list.body).toEqual({
      items: [
        {
          id: expect.any(String),
          campaign_id: id,
          to_number: a,
          variables: { customer_name: 'Ada', plan: 'gold' },
          timezone: 'America/New_York',
          status: 'pending',
          attempts: [],
          next_attempt_at: null,
          error: null,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
        expect.objectContaining({ to_number: b, variables: { customer_name: 'Bea' }, timezone: null, status: 'pending' }),
      ],
      next_cursor: null,
    });
    expect((await detail(id)).counts).toEqual({ ...ZERO, pending: 2 });
    // Whole-request problems are the request's: an empty list, an unknown field, too many rows.
    const refuse = async (body: unknown) => (await h.http.post(`/api/v1/campaigns/${id}/contacts`).set(admin()).send(body as object).expect(422)).body.error.details;
    expect(await refuse({ contacts: [] })).toEqual([{ field: 'contacts', message: 'must NOT have fewer than 1 items' }]);
    expect(await refuse({ contacts: [{}], extra: 1 })).toEqual([{ field: 'extra', message: 'is not allowed' }]);
    expect(await refuse({ contacts: Array.from({ length: 5001 }, () => 0) })).toEqual([{ field: 'contacts', message: 'must NOT have more than 5000 items' }]);
  });

  it('adds contacts by CSV (quoted cells, empty cells, a timezone column) and reports bad rows', async () => {
    const id = await createCampaign();
    const [a, b, c] = [freshNumber(), freshNumber(), freshNumber()];
    const csv = [
      'to_number,customer_name,plan,timezone',
      `${a},"Lovelace, Ada","say ""hi""",Asia/Tokyo`,
      `${b},Bob,,`,
      `not-a-number,Cy,,`,
      `${c},,gold,`,
      `${a},Ada,,`,
      `${freshNumber()},Di,,`,
      `${freshNumber()},Ed`,
      '',
    ].join('\r\n');
    const res = await h.http.post(`/api/v1/campaigns/${id}/contacts`).set(admin()).set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(res.body).toEqual(uploadResult(3, 1, [[3, 'to_number', 'not a number'], [4, 'variables.customer_name', REQUIRED_BY_BOT], [7, '(row)', 'has 2 cells; the header has a different number']]));
    const items = (await h.http.get(`/api/v1/campaigns/${id}/contacts`).query({ limit: 2 }).set(admin()).expect(200)).body;
    expect(items.items.map((i: { to_number: string; variables: unknown; timezone: unknown }) => [i.to_number, i.variables, i.timezone])).toEqual([
      [a, { customer_name: 'Lovelace, Ada', plan: 'say "hi"' }, 'Asia/Tokyo'],
      [b, { customer_name: 'Bob' }, null],
    ]);
    const next = (await h.http.get(`/api/v1/campaigns/${id}/contacts`).query({ limit: 2, cursor: items.next_cursor }).set(admin()).expect(200)).body;
    expect([next.items.length, next.next_cursor]).toEqual([1, null]);
    const upload = (body: string, type = 'text/csv') => h.http.post(`/api/v1/campaigns/${id}/contacts`).set(admin()).set('Content-Type', type).send(body);
    expect((await upload('name,customer_name\nx,y').expect(422)).body.error.details).toEqual([{ field: 'csv.header', message: 'must have a to_number column' }]);
    expect((await upload(`to_number,customer_name\n${freshNumber()},"${'x'.repeat(5000)}"`).expect(422)).body.error.details).toEqual([{ field: 'csv.row.1', message: 'is longer than 4096 characters' }]);
    expect((await upload('to_number\n+4915100000001', 'text/plain').expect(415)).body.error.code).toBe('unsupported_media_type');
    expect((await upload(`to_number\n${'+4915100000001\n'.repeat(80_000)}`).expect(413)).body.error.code).toBe('payload_too_large');
  });

  it('moves draft → running ⇄ paused → canceled, refuses other moves with 409, and emits campaign.started', async () => {
    const id = await createCampaign();
    await addContacts(id, someContacts(2));
    expect((await action(id, 'pause').expect(409)).body.error).toEqual({ code: 'conflict', message: 'a draft campaign cannot pause', details: { status: 'draft', allowed_from: ['running'] } });
    const started = (await action(id, 'start').expect(200)).body;
    expect(started).toMatchObject({ id, status: 'running', started_at: new Date(h.clock.ms).toISOString(), counts: { ...ZERO, pending: 2 } });
    expect((await outboxEvents('campaign.started')).find((e) => e.data.id === id)?.data).toEqual(started);
    await action(id, 'start').expect(409);
    expect((await action(id, 'pause').expect(200)).body.status).toBe('paused');
    expect((await action(id, 'resume').expect(200)).body.status).toBe('running');
    const canceled = (await action(id, 'cancel').expect(200)).body;
    expect(canceled).toMatchObject({ status: 'canceled', canceled_at: new Date(h.clock.ms).toISOString(), counts: { ...ZERO, canceled: 2 } });
    await action(id, 'resume').expect(409);
    expect((await h.http.post(`/api/v1/campaigns/${id}/contacts`).set(admin()).send({ contacts: someContacts(1) }).expect(409)).body.error.code).toBe('conflict');
  });

  it('keeps a do-not-call list: add (duplicates counted), look up, list, delete', async () => {
    const [a, b] = [freshNumber(), freshNumber()];
    expect((await h.http.post('/api/v1/dnc').set(admin()).send({ numbers: [a, b, a] }).expect(200)).body).toEqual({ added: 2, duplicates: 1 });
    expect((await h.http.post('/api/v1/dnc').set(admin()).send({ numbers: [a] }).expect(200)).body).toEqual({ added: 0, duplicates: 1 });
    expect((await h.http.post('/api/v1/dnc').set(admin()).send({ numbers: ['555'] }).expect(422)).body.error.details).toEqual([{ field: 'numbers.0', message: 'invalid country calling code' }]);
    expect((await h.http.get('/api/v1/dnc').query({ number: a }).set(admin()).expect(200)).body).toEqual({ items: [{ number: a, created_at: new Date(h.clock.ms).toISOString() }], next_cursor: null });
    const page = (await h.http.get('/api/v1/dnc').query({ limit: 1 }).set(admin()).expect(200)).body;
    expect([page.items.length, typeof page.next_cursor]).toEqual([1, 'string']);
    await h.http.delete(`/api/v1/dnc/${encodeURIComponent(a)}`).set(admin()).expect(204);
    expect((await h.http.delete(`/api/v1/dnc/${encodeURIComponent(a)}`).set(admin()).expect(404)).body.error.code).toBe('not_found');
    expect((await h.http.get('/api/v1/dnc').query({ number: a }).set(admin()).expect(200)).body.items).toEqual([]);
    await h.http.delete(`/api/v1/dnc/${encodeURIComponent(b)}`).set(admin()).expect(204);
  });
});

describe('campaign dialler', () => {
  it('never has more than max_concurrency calls live, records attempts with call ids, and completes the campaign', async () => {
    const id = await createCampaign({ max_concurrency: 2 });
    await addContacts(id, someContacts(5));
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    const maxLive: number[] = [];
    for (let round = 0; round < 10 && (await detail(id)).status === 'running'; round++) {
      await dialler.runOnce();
      const live = await liveCalls(id);
      maxLive.push(live.length);
      for (const call of live.slice(0, 1)) await report(call._id, 'completed', 'callee_hangup');
    }
    expect(Math.max(...maxLive)).toBe(2);
    await dialler.runOnce();
    const d = await detail(id);
    expect([d.status, d.counts]).toEqual(['completed', { ...ZERO, completed: 5 }]);
    const calls = await campaignCalls(id);
    expect(calls).toHaveLength(5);
    const list = (await h.http.get(`/api/v1/campaigns/${id}/contacts`).set(admin()).expect(200)).body.items as Array<{ id: string; attempts: Array<Record<string, unknown>>; status: string }>;
    for (const c of list) {
      expect(c.attempts).toEqual([{ call_id: attemptCallId(c.id, 1), status: 'completed', end_reason: 'callee_hangup', at: expect.any(String) }]);
      expect(calls.find((k) => k._id === c.attempts[0]!.call_id)).toMatchObject({ campaign_id: id, campaign_contact_id: c.id, campaign_attempt: 1, direction: 'outbound', from_number: trunkNumber, bot_id: botId });
    }
    const completed = (await outboxEvents('campaign.completed')).filter((e) => e.data.id === id);
    expect(completed.map((e) => [e.data.status, e.data.counts])).toEqual([['completed', { ...ZERO, completed: 5 }]]);
    // call.ended carries the campaign.
    const ended = (await outboxEvents('call.ended')).filter((e) => e.data.campaign_id === id);
    expect(ended).toHaveLength(5);
  });

  it('retries busy after delay_seconds up to max_attempts, then ends busy; never retries invalid_number', async () => {
    const id = await createCampaign({ retry: { max_attempts: 3, delay_seconds: 60, on: ['busy', 'failed'] } });
    const [busy, invalid] = someContacts(2);
    await addContacts(id, [busy!, invalid!]);
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    const contactOf = async (n: string) => (await contactDocs(id)).find((c) => c.to_number === n)!;
    await dialler.runOnce();
    const first = await contactOf(invalid!.to_number as string);
    await report(first.current_call_id!, 'failed', 'invalid_number', { sip_status_code: 404 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) {
        await dialler.runOnce(); // not due yet: no dial
        expect((await contactOf(busy!.to_number as string)).status).toBe('retry_scheduled');
        h.clock.advance(60_000);
        await dialler.runOnce();
      }
      const c = await contactOf(busy!.to_number as string);
      expect([c.status, c.attempts?.length]).toEqual(['dialing', attempt]);
      await report(c.current_call_id!, 'busy', 'busy', { sip_status_code: 486 });
      const after = (await h.http.get(`/api/v1/campaigns/${id}/contacts`).query({ status: attempt < 3 ? 'retry_scheduled' : 'busy' }).set(admin()).expect(200)).body.items;
      expect(after).toHaveLength(1);
      expect(after[0].next_attempt_at).toBe(attempt < 3 ? new Date(h.clock.ms + 60_000).toISOString() : null);
    }
    const final = await contactOf(busy!.to_number as string);
    expect(final.attempts!.map((a) => [a.call_id, a.status, a.end_reason])).toEqual([1, 2, 3].map((n) => [attemptCallId(final._id, n), 'busy', 'busy']));
    const inv = await contactOf(invalid!.to_number as string);
    expect([inv.status, inv.attempts!.length, inv.attempts![0]!.end_reason]).toEqual(['failed', 1, 'invalid_number']);
    await dialler.runOnce();
    expect((await detail(id)).status).toBe('completed');
    expect((await detail(id)).counts).toEqual({ ...ZERO, busy: 1, failed: 1 });
  });

  it('retries a contact a machine answered (voicemail) when the rule says so, not one it left a message on or a person took', async () => {
    const id = await createCampaign({ retry: { max_attempts: 2, delay_seconds: 60, on: ['voicemail'] }, answering_machine: { detect: true } });
    expect((await detail(id)).answering_machine).toEqual({ detect: true });
    const [machine, left, person] = someContacts(3);
    await addContacts(id, [machine!, left!, person!]);
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    const contactOf = async (n: string) => (await contactDocs(id)).find((c) => c.to_number === n)!;
    await dialler.runOnce();
    await report((await contactOf(machine!.to_number as string)).current_call_id!, 'completed', 'voicemail');
    await report((await contactOf(left!.to_number as string)).current_call_id!, 'completed', 'voicemail_left');
    await report((await contactOf(person!.to_number as string)).current_call_id!, 'completed', 'bot_hangup');
    expect((await contactDocs(id)).map((c) => [c.to_number, c.status])).toEqual([
      [machine!.to_number, 'retry_scheduled'],
      [left!.to_number, 'completed'],
      [person!.to_number, 'completed'],
    ]);
    h.clock.advance(60_000);
    await dialler.runOnce();
    const again = await contactOf(machine!.to_number as string);
    expect([again.status, again.attempts?.length]).toEqual(['dialing', 2]);
    // The second machine answer is the last attempt: completed (a machine answered), not retried again.
    await report(again.current_call_id!, 'completed', 'voicemail');
    expect((await contactOf(machine!.to_number as string)).status).toBe('completed');
  });

  it('skips numbers on the do-not-call list, checked right before the dial', async () => {
    const id = await createCampaign();
    const [listed, free] = someContacts(2);
    await addContacts(id, [listed!, free!]);
    await action(id, 'start').expect(200);
    // Listed after the upload and the start: the dial-time check still catches it.
    await h.http.post('/api/v1/dnc').set(admin()).send({ numbers: [listed!.to_number] }).expect(200);
    await h.campaignDialler().runOnce();
    const docs = await contactDocs(id);
    expect(docs.map((c) => [c.to_number, c.status, c.attempts?.length ?? 0])).toEqual([
      [listed!.to_number, 'skipped_dnc', 0],
      [free!.to_number, 'dialing', 1],
    ]);
    expect((await campaignCalls(id)).map((c) => c.to_number)).toEqual([free!.to_number]);
    expect((await detail(id)).counts).toEqual({ ...ZERO, skipped_dnc: 1, dialing: 1 });
  });

  it("dials a contact only inside the windows of its own time zone, else the campaign's", async () => {
    // 03:00 UTC (the next one): 12:00 in Tokyo, 03:00 in UTC, 22:00 or 23:00 the day before in New York.
    const t0 = Math.ceil((h.clock.ms - 3 * 3_600_000) / DAY_MS) * DAY_MS + 3 * 3_600_000;
    h.clock.ms = t0;
    auth = await adminToken(h); // a token of the new time
    await heartbeat(h.redis, 'w1', { max_calls: 100 }, t0 + 30 * DAY_MS);
    const id = await createCampaign({ timezone: 'UTC', windows: [{ days: ALL_DAYS, start: '09:00', end: '17:00' }] });
    const [tokyo, utc, newYork] = someContacts(3);
    await addContacts(id, [{ ...tokyo, timezone: 'Asia/Tokyo' }, utc!, { ...newYork, timezone: 'America/New_York' }]);
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    const dialled = async () => (await campaignCalls(id)).map((c) => c.to_number).sort();
    await dialler.runOnce();
    expect(await dialled()).toEqual([tokyo!.to_number]);
    h.clock.ms = t0 + 6 * 3_600_000 - 60_000; // 08:59 UTC: still closed
    await dialler.runOnce();
    expect(await dialled()).toEqual([tokyo!.to_number]);
    h.clock.ms = t0 + 6 * 3_600_000; // 09:00 UTC; 04:00 or 05:00 in New York
    await dialler.runOnce();
    expect(await dialled()).toEqual([tokyo!.to_number, utc!.to_number].sort());
    h.clock.ms = t0 + 14 * 3_600_000; // 17:00 UTC (closed there); 12:00 or 13:00 in New York
    auth = await adminToken(h);
    await dialler.runOnce();
    expect(await dialled()).toEqual([tokyo!.to_number, utc!.to_number, newYork!.to_number].sort());
  });

  it('pause stops new dials and resume continues; cancel stops them and lets live calls finish', async () => {
    const id = await createCampaign({ max_concurrency: 1, retry: { max_attempts: 3, delay_seconds: 30, on: ['no_answer'] } });
    await addContacts(id, someContacts(3));
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    await dialler.runOnce();
    const [first] = await liveCalls(id);
    await action(id, 'pause').expect(200);
    await report(first!._id, 'completed', 'bot_hangup'); // the live call went on and ends
    await dialler.runOnce();
    expect(await liveCalls(id)).toEqual([]);
    expect((await detail(id)).counts).toEqual({ ...ZERO, completed: 1, pending: 2 });
    await action(id, 'resume').expect(200);
    await dialler.runOnce();
    const [second] = await liveCalls(id);
    expect(second).toBeDefined();
    await action(id, 'cancel').expect(200);
    expect((await detail(id)).counts).toEqual({ ...ZERO, completed: 1, dialing: 1, canceled: 1 });
    await dialler.runOnce();
    expect((await liveCalls(id)).map((c) => c._id)).toEqual([second!._id]); // not cut, nothing new
    await report(second!._id, 'no_answer', 'no_answer'); // a retried outcome, but the campaign is canceled
    await dialler.runOnce();
    const d = await detail(id);
    expect([d.status, d.counts]).toEqual(['canceled', { ...ZERO, completed: 1, no_answer: 1, canceled: 1 }]);
    expect(await campaignCalls(id)).toHaveLength(2);
  });

  it('leaves fleet room for API dial-outs and keeps contacts pending (no attempt) while the fleet is full', async () => {
    await heartbeat(h.redis, 'w1', { max_calls: 3 }, h.clock.ms + 30 * DAY_MS);
    const id = await createCampaign({ max_concurrency: 10 });
    await addContacts(id, someContacts(5));
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    await dialler.runOnce();
    expect(await liveCalls(id)).toHaveLength(2); // 3 slots, 1 kept free (CAMPAIGN_FLEET_HEADROOM_SLOTS)
    const key = (await createKey(h, auth)).key;
    await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: freshNumber(), variables: { customer_name: 'Zed' } }).expect(201);
    await dialler.runOnce();
    expect(await liveCalls(id)).toHaveLength(2);
    const docs = await contactDocs(id);
    expect(docs.filter((c) => c.status === 'pending').map((c) => c.attempts?.length ?? 0)).toEqual([0, 0, 0]);
    await action(id, 'cancel').expect(200);
  });

  it("paces within what the workers' load admits, not their free slots (admittable, docs/design.md §15)", async () => {
    // 100 slots, but room for 3 more calls by the worker's load: 2 dialled, 1 kept for API dial-outs.
    await heartbeat(h.redis, 'w1', { max_calls: 100, load: 0.55, admittable: 3 }, h.clock.ms + 30 * DAY_MS);
    const id = await createCampaign({ max_concurrency: 10 });
    await addContacts(id, someContacts(5));
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    await dialler.runOnce();
    expect(await liveCalls(id)).toHaveLength(2);
    // The load rose: no room at all; nothing more is dialled and the rest stay pending with no attempt.
    await heartbeat(h.redis, 'w1', { max_calls: 100, active_calls: 2, load: 0.8, admittable: 0 }, h.clock.ms + 30 * DAY_MS);
    await dialler.runOnce();
    expect(await liveCalls(id)).toHaveLength(2);
    const docs = await contactDocs(id);
    expect(docs.filter((c) => c.status === 'pending').map((c) => c.attempts?.length ?? 0)).toEqual([0, 0, 0]);
    await action(id, 'cancel').expect(200);
    await heartbeat(h.redis, 'w1', { max_calls: 100 }, h.clock.ms + 30 * DAY_MS);
  });

  it('settles a contact from its ended call when the contact update was lost (dialler reconcile)', async () => {
    const id = await createCampaign();
    await addContacts(id, someContacts(1));
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    await dialler.runOnce();
    const [call] = await liveCalls(id);
    // The call's end written as the lifecycle writes it, and then a crash before the contact was touched.
    const ended = new Date(h.clock.ms);
    await liveCallDocs(h.db).updateOne({ _id: call!._id }, { $set: { status: 'no_answer', end_reason: 'no_answer', ended_at: ended, 'status_times.no_answer': ended } });
    expect((await contactDocs(id))[0]!.status).toBe('dialing');
    await dialler.runOnce();
    const [contact] = await contactDocs(id);
    expect([contact!.status, contact!.attempts!.map((a) => [a.call_id, a.status, a.end_reason])]).toEqual(['no_answer', [[call!._id, 'no_answer', 'no_answer']]]);
    expect((await detail(id)).status).toBe('completed');
  });

  it('never dials more than calls_per_second in any second, by the times the dial-out jobs were queued', async () => {
    expect([rateWindow(10), rateWindow(2.5), rateWindow(0.5)]).toEqual([{ windowMs: 1000, limit: 10 }, { windowMs: 1000, limit: 2 }, { windowMs: 2000, limit: 1 }]);
    const id = await createCampaign({ max_concurrency: 10, calls_per_second: 2 });
    await addContacts(id, someContacts(5));
    await action(id, 'start').expect(200);
    const dialler = h.campaignDialler();
    dialler.start();
    try {
      await waitUntil(async () => (await campaignCalls(id)).length === 5, { what: 'five dials', timeoutMs: 60_000 });
    } finally {
      await dialler.stop();
    }
    const ids = new Set((await campaignCalls(id)).map((c) => c._id));
    const jobs = (await h.redis.xrange(CALL_JOBS_STREAM_KEY, '-', '+')) as Array<[string, string[]]>;
    // Stream ids are Redis's clock in ms when each job was queued (just after its rate check).
    const times = jobs.filter(([, f]) => ids.has(f[f.indexOf('call_id') + 1]!)).map(([jobId]) => Number(jobId.split('-')[0]));
    expect(times).toHaveLength(5);
    for (let i = 0; i + 2 < times.length; i++) expect(times[i + 2]! - times[i]!).toBeGreaterThanOrEqual(900); // no third dial within a second (less queueing jitter)
    await action(id, 'cancel').expect(200);
  }, 120_000);

  it('dials each attempt once with two dialler replicas at once and after diallers die mid-run; none is lost', async () => {
    const id = await createCampaign({ max_concurrency: 30, calls_per_second: 10 });
    await addContacts(id, someContacts(24));
    await action(id, 'start').expect(200);
    const order = (await contactDocs(id)).map((c) => c._id);
    // One dies right after claiming the 3rd contact (nothing dialled), one right after placing the 6th
    // (dialled, not recorded on the contact).
    const claimedCrash = h.campaignDialler({ crashAfter: (step, c) => step === 'claimed' && c === order[2] });
    await claimedCrash.runOnce().catch(() => undefined);
    expect(claimedCrash.crashed).toBe(true);
    const placedCrash = h.campaignDialler({ crashAfter: (step, c) => step === 'placed' && c === order[5] });
    await waitUntil(async () => (await placedCrash.runOnce().catch(() => undefined), placedCrash.crashed), { what: 'the second dialler to crash', timeoutMs: 60_000 });
    expect((await contactDocs(id)).find((c) => c._id === order[5])?.attempts ?? []).toEqual([]); // placed, not recorded
    // Two healthy replicas side by side take over once the dead ones' lease and claims expire.
    const replicas: CampaignDialler[] = [h.campaignDialler(), h.campaignDialler()];
    for (const r of replicas) r.start();
    try {
      await waitUntil(async () => (await contactDocs(id)).every((c) => c.status === 'dialing'), { what: 'every contact dialled', timeoutMs: 90_000 });
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
    const calls = await campaignCalls(id);
    const docs = await contactDocs(id);
    expect(calls).toHaveLength(24);
    expect(new Set(calls.map((c) => c.campaign_contact_id)).size).toBe(24);
    for (const c of docs) expect([c._id, c.attempts!.map((a) => a.call_id)]).toEqual([c._id, [attemptCallId(c._id, 1)]]);
    await action(id, 'cancel').expect(200);
  }, 180_000);
});
