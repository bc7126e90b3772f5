import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, createTrunk, createKey, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { findCall } from './store.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let key: string;
let botId: string;
let otherBotId: string;
const worker = `Bearer ${WORKER_TOKEN}`;

beforeAll(async () => {
  env = await startTestEnv(['redis']);
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '1000' } });
  auth = await adminToken(h);
  await createTrunk(h, auth);
  key = (await createKey(h, auth)).key;
  botId = await createBot(h, auth, { variables: [{ name: 'customer_name', required: false, description: '' }] });
  otherBotId = await createBot(h, auth);
  await heartbeat(h.redis, 'w1', { max_calls: 1000 }, h.clock.ms + 3_600_000);
});
afterAll(async () => {
  await h.close();
  await env.stop();
});

const dial = async (bot = botId, k = key): Promise<string> =>
  (await h.http.post('/api/v1/sip/dialout').set('X-API-Key', k).send({ bot_id: bot, to_number: '+14155550100' }).expect(201)).body.call_id as string;
const event = (id: string, body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body);

describe('call lifecycle events', () => {
  it('moves forward only, timestamps every move, and keeps terminal states final', async () => {
    const id = await dial();
    const t0 = h.clock.ms;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await event(id, { status: 'dialing', at: at(1) }).expect(200);
    await event(id, { status: 'in_progress', at: at(3) }).expect(200); // skipping ringing is a forward move
    const back = await event(id, { status: 'ringing', at: at(4) }).expect(409);
    expect(back.body.error).toEqual({ code: 'conflict', message: expect.any(String), details: { from: 'in_progress', to: 'ringing' } });
    const same = await event(id, { status: 'in_progress', at: at(5) }).expect(200);
    expect(same.body.started_at).toBe(at(3)); // a repeat changes nothing
    const transcript = [
      { role: 'bot', text: 'Hello, this is a reminder.', at: at(3) },
      { role: 'user', text: 'stop calling', at: at(6) },
    ];
    const done = await event(id, { status: 'completed', at: at(9), end_reason: 'bot_hangup', transcript }).expect(200);
    expect(done.body).toEqual({
      call_id: id,
      bot_id: botId,
      direction: 'outbound',
      to_number: '+14155550100',
      from_number: '+15550001000',
      status: 'completed',
      variables: {},
      bot_version: 1,
      created_at: new Date(t0).toISOString(),
      started_at: at(3),
      ended_at: at(9),
      end_reason: 'bot_hangup',
      recording_key: null,
      recording_error: null,
      sip_status_code: null,
      transcript,
      status_times: { queued: new Date(t0).toISOString(), dialing: at(1), in_progress: at(3), completed: at(9) },
      actions: [],
      transfer: null,
      answered_by: null,
      amd_ms: null,
      analysis: null,
    });
    for (const status of ['failed', 'queued', 'in_progress']) {
      expect((await event(id, { status }).expect(409)).body.error.code).toBe('conflict');
    }
    // The recording arrives after the end: a repeat of the terminal status may add it.
    const rec = await event(id, { status: 'completed', recording_key: `recordings/2025/01/01/${id}.wav` }).expect(200);
    expect(rec.body).toMatchObject({ status: 'completed', ended_at: at(9), recording_key: `recordings/2025/01/01/${id}.wav` });
  });

  it('appends the actions events carry (mid-call and with the end), each event once however often it is sent', async () => {
    const id = await dial();
    const at = (s: number) => new Date(h.clock.ms + s * 1000).toISOString();
    await event(id, { status: 'in_progress', at: at(1), event_id: 'w1-1' }).expect(200);
    // Arguments are the model's: any keys and nesting (nested arrays, '', dots, $) come back as sent.
    const tool = { type: 'tool', name: 'record_promise', at: at(2), duration_ms: 120, status: 'ok', arguments: { amount: 42, '': [[1, [2]], null], 'a.b': { $x: [] } }, result: '{"reference":"PTP-1"}', error: null };
    const mid = { status: 'in_progress', event_id: 'w1-2', actions: [tool] };
    await event(id, mid).expect(200);
    await event(id, mid).expect(200); // the worker's retry of an event whose answer it lost
    const keys = { type: 'dtmf_out', name: 'send_dtmf', at: at(3), duration_ms: 500, status: 'ok', arguments: { digits: '12#' } };
    const transfer = { mode: 'cold', target: 'tel:+15005553000', status: 'failed', sip_status_code: 603, at: at(4) };
    const transcript = [{ role: 'user', text: '12', at: at(2), dtmf: true }, { role: 'bot', text: 'Thanks.', at: at(3) }];
    const end = { status: 'completed', end_reason: 'bot_hangup', at: at(5), event_id: 'w1-3', actions: [keys], transfer, transcript };
    const done = await event(id, end).expect(200);
    await event(id, end).expect(200);
    expect(done.body.actions).toEqual([tool, { ...keys }]);
    expect(done.body.transfer).toEqual(transfer);
    const read = (await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200)).body;
    expect(read.actions).toEqual([tool, keys]);
    expect(read.transfer).toEqual(transfer);
    expect(read.transcript).toEqual(transcript); // keys pressed keep their dtmf mark
    // A bad action is a 422 naming it, and nothing is stored.
    const bad = await event(id, { status: 'completed', event_id: 'w1-4', actions: [{ ...tool, type: 'magic' }] }).expect(422);
    expect(bad.body.error.code).toBe('validation_failed');
    expect((await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200)).body.actions).toHaveLength(2);
  });

  it('refuses event times that are no real time or lie before the call, allowing 60 s of clock skew, and stores nothing then', async () => {
    const id = await dial();
    const t0 = h.clock.ms;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const fields = (res: { body: { error?: { code: string; details?: Array<{ field: string }> } } }) => [res.body.error?.code, res.body.error?.details?.map((d) => d.field)];
    const stored = async () => (await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200)).body;
    const untouched = await stored();

    for (const bad of ['2099-12-31T23:59:60Z', '2030-02-30T00:00:00Z', '2030-13-01T00:00:00Z']) {
      const res = await event(id, { status: 'in_progress', at: bad });
      expect([bad, res.status, ...fields(res)]).toEqual([bad, 422, 'validation_failed', ['at']]);
      const tr = await event(id, { status: 'in_progress', transcript: [{ role: 'bot', text: 'Hello.', at: bad }] });
      expect([bad, tr.status, ...fields(tr)]).toEqual([bad, 422, 'validation_failed', ['transcript.0.at']]);
    }
    // Before the call was created (beyond the skew allowance): an impossible time.
    const early = await event(id, { status: 'in_progress', at: at(-61) });
    expect([early.status, ...fields(early)]).toEqual([422, 'validation_failed', ['at']]);
    expect(early.body.error.details[0].message).toMatch(/created/);
    const earlyLine = await event(id, { status: 'in_progress', at: at(1), transcript: [{ role: 'bot', text: 'Hello.', at: at(-3600) }] });
    expect([earlyLine.status, ...fields(earlyLine)]).toEqual([422, 'validation_failed', ['transcript.0.at']]);
    expect(await stored()).toEqual(untouched);

    // A worker's clock a little behind the backend's still reports its call.
    await event(id, { status: 'in_progress', at: at(-30) }).expect(200);
    // An end long before the call went live: refused; within the allowance: accepted.
    const back = await event(id, { status: 'completed', at: at(-95) });
    expect([back.status, ...fields(back)]).toEqual([422, 'validation_failed', ['at']]);
    expect((await stored()).status).toBe('in_progress');
    const done = await event(id, { status: 'completed', at: at(20), end_reason: 'bot_hangup' }).expect(200);
    expect(done.body).toMatchObject({ status: 'completed', started_at: at(-30), ended_at: at(20) });
  });

  it('stores the SIP status of a call the carrier refused, and refuses impossible ones', async () => {
    const id = await dial();
    await event(id, { status: 'dialing' }).expect(200);
    expect((await event(id, { status: 'busy', sip_status_code: 99 }).expect(422)).body.error.details[0].field).toBe('sip_status_code');
    const busy = await event(id, { status: 'busy', end_reason: 'busy', sip_status_code: 486 }).expect(200);
    expect(busy.body).toMatchObject({ status: 'busy', end_reason: 'busy', sip_status_code: 486, transcript: [] });
  });

  it('lets only one of racing terminal events win, and stores what it reported', async () => {
    const terminal = ['completed', 'failed', 'busy', 'no_answer', 'canceled'];
    const ids = await Promise.all(Array.from({ length: 20 }, () => dial()));
    // All events of all calls at once: FerretDB alone would let several conditional writes land.
    const results = await Promise.all(ids.map((id) => Promise.all(terminal.map((status) => event(id, { status })))));
    for (const [i, id] of ids.entries()) {
      const won = results[i]!.filter((r) => r.status === 200);
      expect(won.length).toBe(1);
      expect(results[i]!.filter((r) => r.status === 409).length).toBe(4);
      expect(results[i]!.filter((r) => r.headers['x-slot-released'] === 'true').length).toBe(1);
      const stored = (await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200)).body;
      expect(stored.status).toBe(won[0]!.body.status);
      expect(Object.keys(stored.status_times).filter((s) => terminal.includes(s))).toEqual([stored.status]);
    }
  });

  it("keeps the end event's turns and returns them; a call ended without them has none; a bad turn is 422 and changes nothing", async () => {
    const id = await dial();
    const t0 = h.clock.ms;
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const turn = {
      index: 1,
      user_text: 'how much',
      user_end_at: at(5_000),
      decided_at: at(5_700),
      stt_ms: 4,
      llm_first_token_ms: 1,
      tts_first_audio_ms: 60,
      tool_ms: 0,
      latency_ms: 770,
      preemptive: false,
      interrupted: true,
    };
    await event(id, { status: 'in_progress', at: at(1000) }).expect(200);
    const bad = await event(id, { status: 'completed', at: at(9000), turns: [{ ...turn, stt_ms: -1 }] }).expect(422);
    expect(bad.body.error.code).toBe('validation_failed');
    expect((await findCall(h.db, id))?.status).toBe('in_progress');
    await event(id, { status: 'completed', at: at(9000), end_reason: 'bot_hangup', turn_latencies_ms: [770], turns: [turn] }).expect(200);
    expect((await h.http.get(`/api/v1/calls/${id}`).set('Authorization', auth).expect(200)).body.turns).toEqual([turn]);

    const before = await dial();
    await event(before, { status: 'completed', at: new Date(h.clock.ms + 2000).toISOString(), end_reason: 'bot_hangup', turn_latencies_ms: [500] }).expect(200);
    expect((await h.http.get(`/api/v1/calls/${before}`).set('Authorization', auth).expect(200)).body).not.toHaveProperty('turns');
  });

  it('a listen token joins the call\'s room hidden and may only subscribe; none for a call not in progress or without a room', async () => {
    const id = await dial();
    const token = (callId: string) => h.http.post(`/api/v1/calls/${callId}/listen-token`).set('Authorization', auth);
    const early = await token(id).expect(409);
    expect(early.body.error).toMatchObject({ code: 'call_not_active', details: { status: 'queued' } });
    await event(id, { status: 'in_progress', at: new Date(h.clock.ms + 1000).toISOString() }).expect(200);
    const res = await token(id).expect(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ call_id: id, room_name: id, livekit_url: process.env.LIVEKIT_URL });
    const claims = JSON.parse(Buffer.from((res.body.access_token as string).split('.')[1]!, 'base64url').toString()) as { sub: string; video: Record<string, unknown> };
    expect(claims.sub).toMatch(/^listener-/);
    expect(claims.video).toEqual({ room: id, roomJoin: true, canSubscribe: true, canPublish: false, canPublishData: false, hidden: true });
    await token('0123456789abcdef01234567').expect(404);

    const ws = (await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket' }).expect(201)).body.call_id as string;
    await event(ws, { status: 'in_progress', at: new Date(h.clock.ms + 1000).toISOString() }).expect(200);
    const noRoom = await token(ws).expect(409);
    expect(noRoom.body.error.message).toContain('GET /api/v1/calls/{id}/listen');
  });

  it('needs the worker token and a known call and a valid body', async () => {
    const id = await dial();
    expect((await h.http.post(`/api/v1/calls/${id}/events`).send({ status: 'dialing' }).expect(401)).body.error.code).toBe('unauthorized');
    expect((await h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', auth).send({ status: 'dialing' }).expect(401)).body.error.code).toBe('unauthorized');
    expect((await event('nope', { status: 'dialing' }).expect(404)).body.error.code).toBe('call_not_found');
    expect((await event(id, { status: 'ringing_twice' }).expect(422)).body.error.code).toBe('validation_failed');
  });

  it('creates WebSocket and web test calls for workers', async () => {
    const res = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket', variables: { customer_name: 'Ada' } }).expect(201);
    expect(res.body).toMatchObject({ bot_id: botId, direction: 'websocket', to_number: null, status: 'queued', variables: { customer_name: 'Ada' } });
    const mismatch = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'web', variables: { x: '1' } }).expect(422);
    expect(mismatch.body.error).toMatchObject({ code: 'variables_mismatch', details: { missing: [], unknown: ['x'] } });
    expect((await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: 'nope', direction: 'web' }).expect(404)).body.error.code).toBe('bot_not_found');
    expect((await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'outbound' }).expect(422)).body.error.code).toBe('validation_failed');
  });
});

describe('reading calls', () => {
  it('an API key reads only the calls it placed; an admin reads any', async () => {
    const id = await dial();
    const other = (await createKey(h, auth)).key;
    await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', key).expect(200);
    expect((await h.http.get(`/api/v1/calls/${id}`).set('X-API-Key', other).expect(404)).body.error.code).toBe('call_not_found');
    expect((await h.http.get(`/api/v1/calls/${id}`).set('Authorization', auth).expect(200)).body.call_id).toBe(id);
    expect((await h.http.get(`/api/v1/calls/${id}`).set('Authorization', 'Bearer nonsense').expect(401)).body.error.code).toBe('unauthorized');
  });

  it('lists with filters and cursor pagination over (created_at, id)', async () => {
    const bot = await createBot(h, auth, { name: 'paging' });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      h.clock.advance(i === 3 ? 0 : 1000); // two calls share one created_at: the id breaks the tie
      ids.push(await dial(bot));
    }
    await event(ids[0]!, { status: 'failed' }).expect(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: Record<string, string> = { bot_id: bot, limit: '3', ...(cursor ? { cursor } : {}) };
      const res = await h.http.get('/api/v1/calls').query(q).set('Authorization', auth).expect(200);
      seen.push(...res.body.items.map((c: { call_id: string }) => c.call_id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const failed = await h.http.get('/api/v1/calls').query({ bot_id: bot, status: 'failed' }).set('Authorization', auth).expect(200);
    expect(failed.body.items.map((c: { call_id: string }) => c.call_id)).toEqual([ids[0]]);
    const created = await findCall(h.db, ids[4]!);
    const window = await h.http
      .get('/api/v1/calls')
      .query({ bot_id: bot, created_after: new Date(created!.created_at.getTime() - 1).toISOString(), created_before: new Date(created!.created_at.getTime() + 1).toISOString() })
      .set('Authorization', auth)
      .expect(200);
    expect(window.body.items.map((c: { call_id: string }) => c.call_id)).toEqual([ids[4]]);
    const ws = await h.http.get('/api/v1/calls').query({ bot_id: bot, direction: 'websocket' }).set('Authorization', auth).expect(200);
    expect(ws.body).toEqual({ items: [], next_cursor: null });
    const other = await h.http.get('/api/v1/calls').query({ bot_id: otherBotId }).set('Authorization', auth).expect(200);
    expect(other.body.items).toEqual([]);
  });

  it('refuses bad filters by name and requires an admin', async () => {
    const res = await h.http
      .get('/api/v1/calls')
      .query({ limit: '101', status: 'x', created_after: 'yesterday', created_before: '2030-02-30T00:00:00Z', color: 'red' })
      .set('Authorization', auth)
      .expect(422);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['color', 'created_after', 'created_before', 'limit', 'status']);
    expect((await h.http.get('/api/v1/calls').query({ cursor: 'garbage' }).set('Authorization', auth).expect(422)).body.error.details[0].field).toBe('cursor');
    expect((await h.http.get('/api/v1/calls').set('X-API-Key', key).expect(401)).body.error.code).toBe('unauthorized');
  });

  it('takes every cursor of the documented shape `<ms>.<id>` and only those', async () => {
    const bot = await createBot(h, auth, { name: 'cursors' });
    const first = await dial(bot);
    h.clock.advance(1000);
    const second = await dial(bot);
    const page = await h.http.get('/api/v1/calls').query({ bot_id: bot, limit: '1' }).set('Authorization', auth).expect(200);
    expect(page.body.next_cursor).toMatch(/^(?:0|[1-9][0-9]{0,14})\.[A-Za-z0-9_-]{1,128}$/);
    expect(page.body.items.map((c: { call_id: string }) => c.call_id)).toEqual([second]);
    // A cursor the client wrote itself names a position too: after (t, id), newest first.
    const created = (await findCall(h.db, second))!.created_at.getTime();
    const made = await h.http.get('/api/v1/calls').query({ bot_id: bot, cursor: `${created}.${second}` }).set('Authorization', auth).expect(200);
    expect(made.body.items.map((c: { call_id: string }) => c.call_id)).toEqual([first]);
    expect((await h.http.get('/api/v1/calls').query({ bot_id: bot, cursor: '0.x' }).set('Authorization', auth).expect(200)).body.items).toEqual([]);
    // Not of that shape (an empty one, one past what a Date holds, the old base64 JSON): 422 naming cursor.
    const old = Buffer.from(JSON.stringify({ t: 1e20, id: 'x' })).toString('base64url');
    for (const cursor of ['', '9999999999999999.x', '1.', '.x', '1.a.b', old]) {
      const res = await h.http.get('/api/v1/calls').query({ cursor }).set('Authorization', auth);
      expect([cursor, res.status, res.body.error?.details?.[0]?.field]).toEqual([cursor, 422, 'cursor']);
    }
  });

  it('refuses a bot_id filter that is no id, and a time with a space for T (RFC 3339 has none)', async () => {
    for (const query of [{ bot_id: 'no such/id' }, { bot_id: 'a'.repeat(129) }, { created_before: '2030-01-01 00:00:00Z' }, { created_after: '9999-12-31T23:59:59-23:59' }]) {
      const res = await h.http.get('/api/v1/calls').query(query).set('Authorization', auth);
      expect([query, res.status, res.body.error?.details?.map((d: { field: string }) => d.field)]).toEqual([query, 422, Object.keys(query)]);
    }
  });
});
