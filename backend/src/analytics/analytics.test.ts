// Call analytics (docs/design.md §12): calls made through the API and ended by worker events, counted into the
// rollups at their end (once, however often the end is applied) and read back per hour and per day with filters,
// empty buckets and totals that match counting the calls by hand; the boot backfill; 422s; who may read.
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { userOfRole } from '../../testing/users.js';
import { COLLECTIONS } from '../core/collections.js';
import { findCall, insertCall, queuedCall } from '../calls/store.js';
import { backfillRollups, COUNTED, histogramValue, recordCallEnd } from './rollup.js';
import { percentile } from './routes.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let key: string;
let botA: string;
let botB: string;
const worker = `Bearer ${WORKER_TOKEN}`;
/** 2026-11-20 10:00 UTC: the test's calls are placed from here on. */
const T = Date.UTC(2026, 10, 20, 10, 0, 0);
/** That day (UTC), its midnight to the next. */
const DAY1 = { from: new Date(Date.UTC(2026, 10, 20)).toISOString(), to: new Date(Date.UTC(2026, 10, 21)).toISOString() };
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  env = await startTestEnv(['redis']);
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '1000', JWT_EXPIRE_MINUTES: '10080' } });
  auth = await adminToken(h);
  await createTrunk(h, auth); // at the real time: LiveKit mirrors it
  key = (await createKey(h, auth)).key;
  botA = await createBot(h, auth);
  botB = await createBot(h, auth);
  // From here on the app's clock is the test's: a token issued now would be from its future.
  h.clock.ms = T;
  auth = await adminToken(h);
});
afterAll(async () => {
  await h.close();
  await env.stop();
});

const event = (id: string, body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body).expect(200);
/** A dial-out of `bot` placed at `at` (ms). */
async function dial(bot: string, at: number): Promise<string> {
  h.clock.ms = at;
  await heartbeat(h.redis, 'w1', { max_calls: 1000 }, at + 3_600_000);
  return (await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: bot, to_number: '+14155550100' }).expect(201)).body.call_id as string;
}
/** Answered at +10 s, ended `durationMs` later. */
async function answeredCall(id: string, at: number, durationMs: number, end: Record<string, unknown>, answered_by?: string): Promise<void> {
  await event(id, { status: 'in_progress', event_id: `${id}-a`, at: iso(at + 10_000), ...(answered_by ? { answered_by } : {}) });
  await event(id, { status: 'completed', event_id: `${id}-e`, at: iso(at + 10_000 + durationMs), ...end });
}
const analytics = (query: Record<string, string>, as = auth) => h.http.get('/api/v1/analytics/calls').query(query).set('Authorization', as);

const STATUSES0 = { completed: 0, failed: 0, busy: 0, no_answer: 0, canceled: 0 };
const AMD0 = { human: 0, machine: 0, fax: 0, unknown: 0, not_detected: 0 };
const NONE = { p50: null, p95: null };
const empty = (start: number) => ({ start: iso(start), total: 0, answered: 0, by_status: STATUSES0, by_end_reason: {}, answered_by: AMD0, duration_ms: NONE, turn_latency_ms: NONE });

const ids: Record<string, string> = {};

it('each ended call is counted at its end into its hour: statuses, end reasons, verdicts, durations, turn latencies', async () => {
  // 10:05 bot A, answered by a person, 60 s, three turns.
  ids.c1 = await dial(botA, T + 5 * MIN);
  await answeredCall(ids.c1, T + 5 * MIN, 60_000, { end_reason: 'bot_hangup', turn_latencies_ms: [800, 1200, 900] }, 'human');
  // 10:20 bot A, not answered.
  ids.c2 = await dial(botA, T + 20 * MIN);
  await event(ids.c2, { status: 'no_answer', event_id: 'c2-e', at: iso(T + 21 * MIN), end_reason: 'no_answer' });
  // 10:40 bot B, a WebSocket call, 30 s, two turns.
  h.clock.ms = T + 40 * MIN;
  ids.c4 = (await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botB, direction: 'websocket' }).expect(201)).body.call_id as string;
  await answeredCall(ids.c4, T + 40 * MIN, 30_000, { end_reason: 'user_hangup', turn_latencies_ms: [700, 700] });
  // 10:50 bot A, still in progress: not counted.
  ids.c6 = await dial(botA, T + 50 * MIN);
  await event(ids.c6, { status: 'in_progress', event_id: 'c6-a', at: iso(T + 51 * MIN) });
  // 11:10 bot A, a campaign's call, busy.
  const c5 = queuedCall({ _id: 'c5aaaaaaaaaaaaaaaaaaaaaa', bot_id: botA, direction: 'outbound', to_number: '+14155550101', from_number: null, variables: {}, api_key_id: null, campaign_id: 'camp1' }, new Date(T + 70 * MIN));
  await insertCall(h.db, c5);
  ids.c5 = c5._id;
  await event(ids.c5, { status: 'busy', event_id: 'c5-e', at: iso(T + 71 * MIN), end_reason: 'busy', sip_status_code: 486 });
  // 12:30 bot A, an answering machine, 120 s, one slow turn (1234 ms: counted as 1200).
  ids.c3 = await dial(botA, T + 150 * MIN);
  await answeredCall(ids.c3, T + 150 * MIN, 120_000, { end_reason: 'voicemail', turn_latencies_ms: [1234] }, 'machine');
  // The next day 09:00 bot B, failed.
  ids.c7 = await dial(botB, T + 23 * 60 * MIN);
  await event(ids.c7, { status: 'failed', event_id: 'c7-e', at: iso(T + 23 * 60 * MIN + 5000), end_reason: 'sip_error' });

  // The latencies are kept on the call.
  expect((await findCall(h.db, ids.c1))?.turn_latencies_ms).toEqual([800, 1200, 900]);

  const res = await analytics({ from: iso(T), to: iso(T + 4 * 60 * MIN), interval: 'hour' }).expect(200);
  const b10 = {
    start: iso(T),
    total: 3,
    answered: 2,
    by_status: { ...STATUSES0, completed: 2, no_answer: 1 },
    by_end_reason: { bot_hangup: 1, no_answer: 1, user_hangup: 1 },
    answered_by: { ...AMD0, human: 1, not_detected: 2 },
    // durations 30 s, 60 s; latencies 700 700 800 900 1200
    duration_ms: { p50: 30_000, p95: 60_000 },
    turn_latency_ms: { p50: 800, p95: 1200 },
  };
  const b11 = { ...empty(T + 60 * MIN), total: 1, by_status: { ...STATUSES0, busy: 1 }, by_end_reason: { busy: 1 }, answered_by: { ...AMD0, not_detected: 1 } };
  const b12 = {
    ...empty(T + 120 * MIN),
    total: 1,
    answered: 1,
    by_status: { ...STATUSES0, completed: 1 },
    by_end_reason: { voicemail: 1 },
    answered_by: { ...AMD0, machine: 1 },
    duration_ms: { p50: 120_000, p95: 120_000 },
    turn_latency_ms: { p50: 1200, p95: 1200 },
  };
  expect(res.body).toEqual({
    interval: 'hour',
    from: iso(T),
    to: iso(T + 4 * 60 * MIN),
    buckets: [b10, b11, b12, empty(T + 180 * MIN)],
    totals: {
      start: iso(T),
      total: 5,
      answered: 3,
      by_status: { ...STATUSES0, completed: 3, no_answer: 1, busy: 1 },
      by_end_reason: { bot_hangup: 1, busy: 1, no_answer: 1, user_hangup: 1, voicemail: 1 },
      answered_by: { ...AMD0, human: 1, machine: 1, not_detected: 3 },
      duration_ms: { p50: 60_000, p95: 120_000 },
      turn_latency_ms: { p50: 800, p95: 1200 },
    },
  });

  // Per day, from and to rounded out to midnight: the first day, the second (c7), a third with nothing.
  const day = Date.UTC(2026, 10, 20);
  const days = await analytics({ from: iso(T + 30 * MIN), to: iso(day + 2 * 24 * 60 * MIN + 1), interval: 'day' }).expect(200);
  expect(days.body.from).toBe(iso(day));
  expect(days.body.to).toBe(iso(day + 3 * 24 * 60 * MIN));
  expect(days.body.buckets.map((b: { start: string; total: number }) => [b.start, b.total])).toEqual([
    [iso(day), 5],
    [iso(day + 24 * 60 * MIN), 1],
    [iso(day + 48 * 60 * MIN), 0],
  ]);
  expect(days.body.buckets[1]).toMatchObject({ by_status: { ...STATUSES0, failed: 1 }, by_end_reason: { sip_error: 1 }, duration_ms: NONE });
  expect(days.body.totals).toMatchObject({ total: 6, by_status: { ...STATUSES0, completed: 3, no_answer: 1, busy: 1, failed: 1 } });
});

it('filters: bot, campaign, direction', async () => {
  const range = { ...DAY1, interval: 'day' };
  const totals = async (q: Record<string, string>) => (await analytics({ ...range, ...q }).expect(200)).body.totals as { total: number; by_status: object };
  expect(await totals({ bot_id: botA })).toEqual(expect.objectContaining({ total: 4, by_status: { ...STATUSES0, completed: 2, no_answer: 1, busy: 1 } }));
  expect((await totals({ bot_id: botB })).total).toBe(1);
  expect(await totals({ campaign_id: 'camp1' })).toMatchObject({ total: 1, by_status: { busy: 1 } });
  expect(await totals({ direction: 'websocket' })).toMatchObject({ total: 1, by_status: { completed: 1 } });
  expect(await totals({ direction: 'outbound', bot_id: botA })).toMatchObject({ total: 4 });
  expect((await totals({ bot_id: 'nosuchbot' })).total).toBe(0);
});

it('an end applied twice is counted once (a retried event, a repeat with a new id, a direct second count)', async () => {
  const before = (await analytics({ from: iso(T), to: iso(T + 60 * MIN), interval: 'hour' }).expect(200)).body.totals.total as number;
  await event(ids.c1!, { status: 'completed', event_id: `${ids.c1!}-e`, at: iso(T + 5 * MIN + 70_000), end_reason: 'bot_hangup', turn_latencies_ms: [800, 1200, 900] });
  await event(ids.c1!, { status: 'completed', event_id: 'another', at: iso(T + 5 * MIN + 70_000), recording_key: 'recordings/x.wav' });
  const doc = (await findCall(h.db, ids.c1!))!;
  expect(await recordCallEnd(h.db, h.redis, doc)).toBe(false);
  const after = await analytics({ from: iso(T), to: iso(T + 60 * MIN), interval: 'hour' }).expect(200);
  expect(after.body.totals.total).toBe(before);
  expect(after.body.totals.turn_latency_ms).toEqual({ p50: 800, p95: 1200 });
  expect(await h.db.collection(COUNTED).countDocuments({ _id: ids.c1 as never })).toBe(1);
});

it('the boot backfill counts calls that ended before the rollups, once', async () => {
  // A call stored ended, never counted (as before the rollups): 2026-11-25 08:15, answered, 45 s.
  const at = Date.UTC(2026, 10, 25, 8, 15);
  const old = {
    ...queuedCall({ _id: 'oldaaaaaaaaaaaaaaaaaaaaa', bot_id: botB, direction: 'outbound', to_number: '+14155550102', from_number: null, variables: {}, api_key_id: null }, new Date(at)),
    status: 'completed' as const,
    started_at: new Date(at + 5000),
    ended_at: new Date(at + 50_000),
    end_reason: 'bot_hangup',
    turn_latencies_ms: [650],
  };
  await h.db.collection(COLLECTIONS.calls).insertOne(old as never);
  const range = { from: iso(Date.UTC(2026, 10, 25)), to: iso(Date.UTC(2026, 10, 26)), interval: 'day' };
  expect((await analytics(range).expect(200)).body.totals.total).toBe(0);
  // Marked done at the harness's boot: nothing more.
  expect(await backfillRollups(h.db, h.redis)).toBe(0);
  await h.db.collection(COLLECTIONS.migrations).deleteOne({ _id: 'analytics_rollups_v1' as never });
  // Only the old call: every other ended call is counted already.
  expect(await backfillRollups(h.db, h.redis, { batch: 2 })).toBe(1);
  const res = await analytics(range).expect(200);
  expect(res.body.totals).toMatchObject({ total: 1, answered: 1, duration_ms: { p50: 45_000, p95: 45_000 }, turn_latency_ms: { p50: 650, p95: 650 } });
  // Another such call into the same rollup document (merged into it), then nothing more to count.
  await h.db.collection(COLLECTIONS.calls).insertOne({ ...old, _id: 'old2aaaaaaaaaaaaaaaaaaaa', created_at: new Date(at + 60_000), status: 'no_answer', started_at: null, end_reason: 'no_answer', turn_latencies_ms: [] } as never);
  await h.db.collection(COLLECTIONS.migrations).deleteOne({ _id: 'analytics_rollups_v1' as never });
  expect(await backfillRollups(h.db, h.redis)).toBe(1);
  await h.db.collection(COLLECTIONS.migrations).deleteOne({ _id: 'analytics_rollups_v1' as never });
  expect(await backfillRollups(h.db, h.redis)).toBe(0);
  expect((await analytics(range).expect(200)).body.totals).toMatchObject({ total: 2, answered: 1, by_status: { completed: 1, no_answer: 1 }, duration_ms: { p50: 45_000, p95: 45_000 } });
  // The first day is as before.
  expect((await analytics(DAY1).expect(200)).body.totals.total).toBe(5);
});

it('422 validation_failed naming the field', async () => {
  const field = async (q: Record<string, string>) => ((await analytics(q).expect(422)).body.error as { code: string; details: Array<{ field: string }> });
  const fields = async (q: Record<string, string>) => {
    const e = await field(q);
    expect(e.code).toBe('validation_failed');
    return e.details.map((d) => d.field);
  };
  expect(await fields({ from: iso(T), to: iso(T) })).toEqual(['from']);
  expect(await fields({ from: iso(T + MIN), to: iso(T) })).toEqual(['from']);
  expect(await fields({ from: iso(T), to: iso(T + 32 * 24 * 60 * MIN), interval: 'hour' })).toEqual(['to']);
  expect(await fields({ from: iso(T), to: iso(T + 367 * 24 * 60 * MIN), interval: 'day' })).toEqual(['to']);
  expect(await fields({ interval: 'week' })).toEqual(['interval']);
  expect(await fields({ from: 'yesterday' })).toEqual(['from']);
  expect(await fields({ bot_id: 'a b', direction: 'sideways', campaign_id: '$x' })).toEqual(['bot_id', 'campaign_id', 'direction']);
  expect(await fields({ colour: 'red' })).toEqual(['colour']);
  // 31 days per hour and 366 per day are allowed.
  await analytics({ from: iso(T), to: iso(T + 31 * 24 * 60 * MIN), interval: 'hour' }).expect(200);
  const year = await analytics({ from: iso(Date.UTC(2026, 10, 20)), to: iso(Date.UTC(2026, 10, 20) + 366 * 24 * 60 * MIN), interval: 'day' }).expect(200);
  expect(year.body.buckets).toHaveLength(366);
});

it('who may read: every role, an API key with calls:read; a key without it 403, no credentials 401', async () => {
  const q = DAY1;
  for (const role of ['viewer', 'editor', 'admin'] as const) {
    const { auth: token } = await userOfRole(h, auth, role);
    expect((await analytics(q, token).expect(200)).body.totals.total).toBe(5);
  }
  const reader = (await createKey(h, auth, { name: 'reader', scopes: ['calls:read'] })).key;
  await h.http.get('/api/v1/analytics/calls').query(q).set('X-API-Key', reader).expect(200);
  const dialler = (await createKey(h, auth, { name: 'dialler', scopes: ['dialout'] })).key;
  const denied = await h.http.get('/api/v1/analytics/calls').query(q).set('X-API-Key', dialler).expect(403);
  expect(denied.body.error.code).toBe('forbidden');
  await h.http.get('/api/v1/analytics/calls').query(q).expect(401);
});

it('histogram values keep two significant digits; percentiles are nearest rank', () => {
  expect([0, 7, 99, 100, 104, 105, 1234, 1250, 59_999, 61_234].map(histogramValue)).toEqual([0, 7, 99, 100, 100, 110, 1200, 1300, 60_000, 61_000]);
  expect(percentile({ '700': 2, '800': 1, '900': 1, '1200': 1 }, 50)).toBe(800);
  expect(percentile({ '700': 2, '800': 1, '900': 1, '1200': 1 }, 95)).toBe(1200);
  expect(percentile({}, 50)).toBeNull();
  expect(percentile({ '5': 1 }, 95)).toBe(5);
});
