// Outbound trunks against the suite's real LiveKit server: the admin API, the mirror in LiveKit (read
// back with LiveKit's own SipClient), the write-only password, and the trunk a dial-out picks.
import { SipClient } from 'livekit-server-sdk';
import { SIPTransport } from '@livekit/protocol';
import { CALL_JOBS_STREAM_KEY } from '@voice-platform/schemas';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, createKey, heartbeat, startHarness, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';
import { findCalls } from '../calls/store.js';

let env: TestEnv;
let h: Harness;
let auth: string;
const sip = () => new SipClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!);
const PASSWORD = 'pw-Zq8!never-shown-0192';

beforeAll(async () => {
  env = await startTestEnv(['redis']); // a private Redis: capacity is global
});
afterAll(() => env.stop());
beforeEach(async () => {
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '1000', DIALOUT_RATE_PER_SECOND: '1000' } });
  auth = await adminToken(h);
});
afterEach(async () => {
  // Leave LiveKit as we found it: every trunk this test made goes.
  for (const t of (await h.http.get('/api/v1/sip/outbound-trunks').set('Authorization', auth)).body.items as Array<{ id: string; default: boolean }>) {
    const doc = await h.db.collection(COLLECTIONS.trunks).findOne({ _id: t.id as never });
    if (doc) await sip().deleteSipTrunk(doc.livekit_trunk_id as string).catch(() => undefined);
  }
  await h.close();
});

const post = (body: unknown) => h.http.post('/api/v1/sip/outbound-trunks').set('Authorization', auth).send(body as object);
const patch = (id: string, body: unknown) => h.http.patch(`/api/v1/sip/outbound-trunks/${id}`).set('Authorization', auth).send(body as object);
const lkTrunk = async (id: string) => {
  const doc = await h.db.collection(COLLECTIONS.trunks).findOne({ _id: id as never });
  return (await sip().listSipOutboundTrunk()).find((t) => t.sipTrunkId === doc?.livekit_trunk_id);
};

describe('outbound trunks', () => {
  it('creates a trunk, mirrors it into LiveKit, and never returns or logs the password', async () => {
    const res = await post({ name: 'Carrier A', address: 'sip.carrier-a.example:5080', transport: 'tcp', numbers: ['+15550100001', '+15550100002'], auth_username: 'acct-1', auth_password: PASSWORD }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Carrier A',
      address: 'sip.carrier-a.example:5080',
      transport: 'tcp',
      numbers: ['+15550100001', '+15550100002'],
      auth_username: 'acct-1',
      has_password: true,
      default: true,
      created_at: new Date(h.clock.ms).toISOString(),
      updated_at: new Date(h.clock.ms).toISOString(),
    });
    expect(res.headers.location).toBe(`/api/v1/sip/outbound-trunks/${res.body.id}`);
    const mirror = await lkTrunk(res.body.id);
    expect(mirror).toMatchObject({ name: 'Carrier A', address: 'sip.carrier-a.example:5080', transport: SIPTransport.SIP_TRANSPORT_TCP, numbers: ['+15550100001', '+15550100002'], authUsername: 'acct-1' });

    const list = await h.http.get('/api/v1/sip/outbound-trunks').set('Authorization', auth).expect(200);
    const one = await h.http.get(`/api/v1/sip/outbound-trunks/${res.body.id}`).set('Authorization', auth).expect(200);
    expect(list.body.items).toEqual([res.body]);
    expect(one.body).toEqual(res.body);
    const stored = JSON.stringify(await h.db.collection(COLLECTIONS.trunks).findOne({ _id: res.body.id }));
    for (const text of [JSON.stringify(res.body), JSON.stringify(list.body), JSON.stringify(one.body), stored, h.logs.join('')]) expect(text).not.toContain(PASSWORD);
    expect(h.logs.join('')).toContain('outbound trunk created');
  });

  it('keeps exactly one default: the first trunk, until another is marked; the default goes last', async () => {
    const a = (await post({ name: 'A', address: '10.0.0.1', numbers: ['+15550100011'] }).expect(201)).body;
    const b = (await post({ name: 'B', address: '10.0.0.2', numbers: ['+15550100012'] }).expect(201)).body;
    expect([a.default, b.default]).toEqual([true, false]);
    const c = (await post({ name: 'C', address: '10.0.0.3', numbers: ['+15550100013'], default: true }).expect(201)).body;
    expect(c.default).toBe(true);
    const defaults = async () => ((await h.http.get('/api/v1/sip/outbound-trunks').set('Authorization', auth)).body.items as Array<{ name: string; default: boolean }>).filter((t) => t.default).map((t) => t.name);
    expect(await defaults()).toEqual(['C']);
    expect((await patch(b.id, { default: true }).expect(200)).body.default).toBe(true);
    expect(await defaults()).toEqual(['B']);
    expect((await patch(b.id, { default: false }).expect(422)).body.error.code).toBe('validation_failed');

    const refused = await h.http.delete(`/api/v1/sip/outbound-trunks/${b.id}`).set('Authorization', auth).expect(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('mark another trunk as default first') });
    const aMirror = await lkTrunk(a.id);
    await h.http.delete(`/api/v1/sip/outbound-trunks/${a.id}`).set('Authorization', auth).expect(204);
    expect((await sip().listSipOutboundTrunk()).some((t) => t.sipTrunkId === aMirror?.sipTrunkId)).toBe(false);
    await h.http.get(`/api/v1/sip/outbound-trunks/${a.id}`).set('Authorization', auth).expect(404);
    await h.http.delete(`/api/v1/sip/outbound-trunks/${c.id}`).set('Authorization', auth).expect(204);
    await h.http.delete(`/api/v1/sip/outbound-trunks/${b.id}`).set('Authorization', auth).expect(204); // the last one
  });

  it('updates the mirror; an omitted password is kept, null removes it, a username removal removes both', async () => {
    const t = (await post({ name: 'A', address: 'sip.a.example', numbers: ['+15550100021'], auth_username: 'u1', auth_password: PASSWORD }).expect(201)).body;
    const renamed = (await patch(t.id, { numbers: ['+15550100021', '+15550100022'], address: 'sip.b.example:5070' }).expect(200)).body;
    expect(renamed).toMatchObject({ numbers: ['+15550100021', '+15550100022'], address: 'sip.b.example:5070', has_password: true, auth_username: 'u1' });
    expect(renamed.updated_at).toBe(new Date(h.clock.ms).toISOString());
    expect(await lkTrunk(t.id)).toMatchObject({ numbers: ['+15550100021', '+15550100022'], address: 'sip.b.example:5070', authUsername: 'u1' });
    expect((await patch(t.id, { auth_password: null }).expect(200)).body).toMatchObject({ has_password: false, auth_username: 'u1' });
    expect((await patch(t.id, { auth_password: 'again-secret' }).expect(200)).body).toMatchObject({ has_password: true });
    expect((await patch(t.id, { auth_username: null }).expect(200)).body).toMatchObject({ has_password: false, auth_username: null });
    expect(await lkTrunk(t.id)).toMatchObject({ authUsername: '', authPassword: '' });
    await patch('nope', { name: 'x' }).expect(404);
  });

  it('refuses bad trunks with the field named, and stores nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', address: 'sip://carrier.example', numbers: ['+15550100031'] }, 'address'],
      [{ name: 'x', address: 'carrier.example:99999', numbers: ['+15550100031'] }, 'address'],
      [{ name: 'x', address: 'carrier.example', numbers: [] }, 'numbers'],
      [{ name: 'x', address: 'carrier.example', numbers: ['5550100031'] }, 'numbers.0'],
      [{ name: 'x', address: 'carrier.example', numbers: ['+15550100031'], transport: 'sctp' }, 'transport'],
      [{ name: 'x', address: 'carrier.example', numbers: ['+15550100031'], auth_password: 'lonely' }, 'auth_password'],
      [{ name: 'x', address: 'carrier.example', numbers: ['+15550100031'], extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    await post({ name: 'A', address: 'a.example', numbers: ['+15550100032'] }).expect(201);
    const dup = await post({ name: 'B', address: 'b.example', numbers: ['+15550100033', '+15550100032'] }).expect(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'numbers', message: expect.stringContaining('+15550100032 already belongs to trunk') }] });
    expect((await h.http.get('/api/v1/sip/outbound-trunks').set('Authorization', auth)).body.items).toHaveLength(1);
    await h.http.post('/api/v1/sip/outbound-trunks').send({}).expect(401);
  });

  it('answers 503 when the telephony plane is not configured or LiveKit is down, and stores nothing', async () => {
    const bare = await startHarness({ redisUrl: env.env.REDIS_URL, env: { LIVEKIT_URL: '', LIVEKIT_API_KEY: '', LIVEKIT_API_SECRET: '' } });
    const down = await startHarness({ redisUrl: env.env.REDIS_URL, env: { LIVEKIT_URL: 'ws://127.0.0.1:9', LIVEKIT_TIMEOUT_MS: '1000' } });
    try {
      for (const x of [bare, down]) {
        const a = await adminToken(x);
        const res = await x.http.post('/api/v1/sip/outbound-trunks').set('Authorization', a).send({ name: 'A', address: 'a.example', numbers: ['+15550100041'] }).expect(503);
        expect(res.body.error.code).toBe('service_unavailable');
        expect(res.headers['retry-after']).toBeDefined();
        expect(await x.db.collection(COLLECTIONS.trunks).countDocuments()).toBe(0);
      }
    } finally {
      await bare.close();
      await down.close();
    }
  });
});

describe('dial-out through a trunk', () => {
  const BOT = { variables: [{ name: 'customer_name', required: false, description: '' }] };
  const dial = (key: string, body: Record<string, unknown>) => h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send(body);

  it('no trunk → 409 no_outbound_trunk, after the variables check and before capacity', async () => {
    const key = (await createKey(h, auth)).key;
    const botId = await createBot(h, auth, BOT);
    // No live worker at all: capacity would say 503, but the missing trunk is checked first.
    const res = await dial(key, { bot_id: botId, to_number: '+15550109999' }).expect(409);
    expect(res.body.error.code).toBe('no_outbound_trunk');
    expect((await dial(key, { bot_id: botId, to_number: '+15550109999', variables: { nope: 'x' } }).expect(422)).body.error.code).toBe('variables_mismatch');
    expect(await findCalls(h.db, {})).toEqual([]);
  });

  it('from_number picks the trunk that owns it; without it the default trunk and its first number; unknown → 422', async () => {
    await h.redis.del(CALL_JOBS_STREAM_KEY);
    await heartbeat(h.redis, 'w1', { max_calls: 100 }, h.clock.ms + 3_600_000);
    const key = (await createKey(h, auth)).key;
    const botId = await createBot(h, auth, BOT);
    const a = (await post({ name: 'A', address: 'a.example', numbers: ['+15550100051', '+15550100052'] }).expect(201)).body;
    const b = (await post({ name: 'B', address: 'b.example', numbers: ['+15550100061'] }).expect(201)).body;
    const lkA = (await lkTrunk(a.id))!.sipTrunkId;
    const lkB = (await lkTrunk(b.id))!.sipTrunkId;

    const viaDefault = await dial(key, { bot_id: botId, to_number: '+15550109999' }).expect(201);
    expect(viaDefault.body.from_number).toBe('+15550100051');
    const viaB = await dial(key, { bot_id: botId, to_number: '+15550109999', from_number: '+15550100061' }).expect(201);
    expect(viaB.body.from_number).toBe('+15550100061');
    const call = await h.http.get(`/api/v1/calls/${viaB.body.call_id}`).set('X-API-Key', key).expect(200);
    expect(call.body).toMatchObject({ from_number: '+15550100061', sip_status_code: null, transcript: [], direction: 'outbound' });

    const jobs = (await h.redis.xrange(CALL_JOBS_STREAM_KEY, '-', '+')).map(([, f]) => Object.fromEntries(f.reduce<string[][]>((acc, v, i) => (i % 2 ? acc[acc.length - 1]!.push(v) : acc.push([v]), acc), [])));
    expect(jobs.map((j) => [j.call_id, j.sip_trunk_id, j.from_number])).toEqual([
      [viaDefault.body.call_id, lkA, '+15550100051'],
      [viaB.body.call_id, lkB, '+15550100061'],
    ]);

    const unknown = await dial(key, { bot_id: botId, to_number: '+15550109999', from_number: '+15550100099' }).expect(422);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_from_number', details: [{ field: 'from_number' }] });
    const bad = await dial(key, { bot_id: botId, to_number: '+15550109999', from_number: '0049' }).expect(422);
    expect(bad.body.error).toMatchObject({ code: 'invalid_phone_number', details: [{ field: 'from_number' }] });
  });
});
