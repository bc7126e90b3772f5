// Inbound numbers against the suite's real LiveKit server: the admin API, and its mirror in LiveKit (an
// inbound trunk and an `individual` dispatch rule per number), read back with LiveKit's own SipClient.
import { SipClient } from 'livekit-server-sdk';
import supertest from 'supertest';
import { createApp } from '../app.js';
import { createLogger } from '../core/logger.js';
import { telephonyFromSettings } from '../telephony/livekit.js';
import { TelephonyError, type Telephony } from '../core/telephony.js';
import { adminToken, createBot, startHarness, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';
import { findInboundNumber, INBOUND_ROOM_PREFIX } from './store.js';

let h: Harness;
let auth: string;
let botId: string;
const sip = () => new SipClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!);
const BOT = { variables: [{ name: 'customer_name', required: true, description: '' }, { name: 'plan', required: false, description: '' }] };
const URL = '/api/v1/sip/inbound-numbers';

beforeEach(async () => {
  h = await startHarness();
  auth = await adminToken(h);
  botId = await createBot(h, auth, BOT);
});
afterEach(async () => {
  // Leave LiveKit as we found it: every rule and trunk this test's numbers have there goes.
  for (const doc of await h.db.collection(COLLECTIONS.inboundNumbers).find({}).toArray()) {
    await sip().deleteSipDispatchRule(doc.livekit_rule_id as string).catch(() => undefined);
    await sip().deleteSipTrunk(doc.livekit_trunk_id as string).catch(() => undefined);
  }
  await h.close();
});

const post = (body: unknown) => h.http.post(URL).set('Authorization', auth).send(body as object);
const patch = (id: string, body: unknown) => h.http.patch(`${URL}/${id}`).set('Authorization', auth).send(body as object);
const stored = async (id: string) => (await findInboundNumber(h.db, id))!;
const lkTrunk = async (trunkId: string) => (await sip().listSipInboundTrunk()).find((t) => t.sipTrunkId === trunkId);
const lkRule = async (ruleId: string) => (await sip().listSipDispatchRule()).find((r) => r.sipDispatchRuleId === ruleId);
/** LiveKit's inbound trunks for a number (a leak check). */
const lkTrunksFor = async (number: string) => (await sip().listSipInboundTrunk()).filter((t) => t.numbers.includes(number));

/** The mirror as the inbound call handling relies on it. */
async function expectMirror(id: string, number: string, allowed: string[]): Promise<void> {
  const doc = await stored(id);
  const trunk = await lkTrunk(doc.livekit_trunk_id);
  expect(trunk).toMatchObject({ numbers: [number], allowedAddresses: allowed });
  const rule = await lkRule(doc.livekit_rule_id);
  expect(rule?.trunkIds).toEqual([doc.livekit_trunk_id]);
  expect(rule?.rule?.rule.case).toBe('dispatchRuleIndividual');
  expect(rule?.rule?.rule.value).toMatchObject({ roomPrefix: 'in-', pin: '' });
  expect(rule?.attributes).toEqual({ 'vp.inbound_number_id': id });
}

describe('inbound numbers', () => {
  it('creates a number and mirrors it into LiveKit: an inbound trunk for it and an individual dispatch rule naming it', async () => {
    const res = await post({ number: '+15550200001', bot_id: botId, variables: { customer_name: 'Ada' }, allowed_addresses: ['203.0.113.0/24', '2001:db8::1'] }).expect(201);
    const now = new Date(h.clock.ms).toISOString();
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      number: '+15550200001',
      bot_id: botId,
      variables: { customer_name: 'Ada' },
      allowed_addresses: ['203.0.113.0/24', '2001:db8::1'],
      created_at: now,
      updated_at: now,
    });
    expect(res.headers.location).toBe(`${URL}/${res.body.id}`);
    expect(INBOUND_ROOM_PREFIX).toBe('in-');
    const doc = await stored(res.body.id);
    expect(doc).toEqual({
      _id: res.body.id,
      number: '+15550200001',
      bot_id: botId,
      variables: { customer_name: 'Ada' },
      allowed_addresses: ['203.0.113.0/24', '2001:db8::1'],
      livekit_trunk_id: expect.stringMatching(/^ST_/),
      livekit_rule_id: expect.stringMatching(/^SDR_/),
      created_at: new Date(h.clock.ms),
      updated_at: new Date(h.clock.ms),
    });
    await expectMirror(res.body.id, '+15550200001', ['203.0.113.0/24', '2001:db8::1']);

    h.clock.advance(1000);
    const second = (await post({ number: '+15550200002', bot_id: botId, variables: { customer_name: 'Bob', plan: 'gold' } }).expect(201)).body;
    expect(second).toMatchObject({ allowed_addresses: [], variables: { customer_name: 'Bob', plan: 'gold' } });
    await expectMirror(second.id, '+15550200002', []);
    const list = await h.http.get(URL).set('Authorization', auth).expect(200);
    expect(list.body).toEqual({ items: [res.body, second] }); // oldest first
    expect((await h.http.get(`${URL}/${res.body.id}`).set('Authorization', auth).expect(200)).body).toEqual(res.body);
    expect(h.logs.join('')).toContain('inbound number created');
  });

  it('updates LiveKit before saving; a mirror LiveKit lost is made again', async () => {
    const n = (await post({ number: '+15550200011', bot_id: botId, variables: { customer_name: 'Ada' } }).expect(201)).body;
    const before = await stored(n.id);
    h.clock.advance(5000);
    const changed = (await patch(n.id, { number: '+15550200012', allowed_addresses: ['198.51.100.7'] }).expect(200)).body;
    expect(changed).toEqual({ ...n, number: '+15550200012', allowed_addresses: ['198.51.100.7'], updated_at: new Date(h.clock.ms).toISOString() });
    expect(await stored(n.id)).toMatchObject({ livekit_trunk_id: before.livekit_trunk_id, livekit_rule_id: before.livekit_rule_id });
    await expectMirror(n.id, '+15550200012', ['198.51.100.7']);
    expect(await lkTrunksFor('+15550200011')).toEqual([]);

    // Another bot: the stored variables are checked against it.
    const other = await createBot(h, auth, { variables: [{ name: 'account', required: true, description: '' }] });
    const mismatch = await patch(n.id, { bot_id: other }).expect(422);
    expect(mismatch.body.error).toMatchObject({ code: 'variables_mismatch', details: { missing: ['account'], unknown: ['customer_name'] } });
    expect((await patch(n.id, { bot_id: other, variables: { account: 'A-1' } }).expect(200)).body).toMatchObject({ bot_id: other, variables: { account: 'A-1' } });
    expect((await patch(n.id, { bot_id: 'no-such-bot' }).expect(404)).body.error.code).toBe('bot_not_found');
    expect((await patch('no-such-number', { allowed_addresses: [] }).expect(404)).body.error.code).toBe('not_found');
    expect((await patch(n.id, {}).expect(422)).body.error.code).toBe('validation_failed');

    // LiveKit's store was reset: the PATCH mirrors the number again, under new ids.
    await sip().deleteSipDispatchRule(before.livekit_rule_id);
    await sip().deleteSipTrunk(before.livekit_trunk_id);
    expect((await patch(n.id, { allowed_addresses: ['2001:db8::/32'] }).expect(200)).body.allowed_addresses).toEqual(['2001:db8::/32']);
    const again = await stored(n.id);
    expect(again.livekit_trunk_id).not.toBe(before.livekit_trunk_id);
    expect(again.livekit_rule_id).not.toBe(before.livekit_rule_id);
    await expectMirror(n.id, '+15550200012', ['2001:db8::/32']);
    expect(h.logs.join('')).toContain('inbound number updated');
  });

  it('deletes the number with its dispatch rule and trunk; already gone in LiveKit is fine', async () => {
    const a = (await post({ number: '+15550200021', bot_id: botId, variables: { customer_name: 'Ada' } }).expect(201)).body;
    const b = (await post({ number: '+15550200022', bot_id: botId, variables: { customer_name: 'Bob' } }).expect(201)).body;
    const docA = await stored(a.id);
    await h.http.delete(`${URL}/${a.id}`).set('Authorization', auth).expect(204);
    expect(await lkTrunk(docA.livekit_trunk_id)).toBeUndefined();
    expect(await lkRule(docA.livekit_rule_id)).toBeUndefined();
    await h.http.get(`${URL}/${a.id}`).set('Authorization', auth).expect(404);
    await h.http.delete(`${URL}/${a.id}`).set('Authorization', auth).expect(404);

    const docB = await stored(b.id);
    await sip().deleteSipDispatchRule(docB.livekit_rule_id);
    await sip().deleteSipTrunk(docB.livekit_trunk_id);
    await h.http.delete(`${URL}/${b.id}`).set('Authorization', auth).expect(204);
    expect((await h.http.get(URL).set('Authorization', auth).expect(200)).body).toEqual({ items: [] });
    expect(h.logs.join('')).toContain('inbound number deleted');
  });

  it('refuses a taken number (409), a missing bot (404), mismatched variables (422) and bad fields, and stores nothing', async () => {
    const ok = { number: '+15550200031', bot_id: botId, variables: { customer_name: 'Ada' } };
    const cases: Array<[unknown, string]> = [
      [{ ...ok, number: '5550200031' }, 'number'],
      [{ ...ok, number: undefined }, 'number'],
      [{ ...ok, bot_id: 'bad id!' }, 'bot_id'],
      [{ ...ok, allowed_addresses: ['203.0.113.0/33'] }, 'allowed_addresses.0'],
      [{ ...ok, allowed_addresses: ['10.0.0.1', '300.1.1.1'] }, 'allowed_addresses.1'],
      [{ ...ok, allowed_addresses: ['sip.carrier.example'] }, 'allowed_addresses.0'],
      [{ ...ok, allowed_addresses: ['2001:db8::/129'] }, 'allowed_addresses.0'],
      [{ ...ok, allowed_addresses: ['1::2::3'] }, 'allowed_addresses.0'],
      [{ ...ok, allowed_addresses: ['10.0.0.1', '10.0.0.1'] }, 'allowed_addresses'],
      [{ ...ok, allowed_addresses: Array.from({ length: 33 }, (_, i) => `10.0.0.${i}`) }, 'allowed_addresses'],
      [{ ...ok, variables: { customer_name: 7 } }, 'variables.customer_name'],
      [{ ...ok, extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    // 32 addresses is the limit, not over it.
    await post({ ...ok, allowed_addresses: Array.from({ length: 32 }, (_, i) => `10.0.${i}.0/24`) }).expect(201);
    const dup = await post({ ...ok, bot_id: botId }).expect(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'number', message: expect.stringContaining('+15550200031 is already inbound number') }] });
    expect((await post({ ...ok, number: '+15550200032', bot_id: 'no-such-bot' }).expect(404)).body.error.code).toBe('bot_not_found');
    const mismatch = await post({ number: '+15550200032', bot_id: botId, variables: { nope: 'x' } }).expect(422);
    expect(mismatch.body.error).toMatchObject({ code: 'variables_mismatch', details: { missing: ['customer_name'], unknown: ['nope'] } });
    expect((await h.http.get(URL).set('Authorization', auth)).body.items).toHaveLength(1);
    // The store settles a race the check above could lose.
    await expect(h.db.collection(COLLECTIONS.inboundNumbers).insertOne({ _id: 'racer' as never, number: '+15550200031' })).rejects.toMatchObject({ code: 11000 });
    expect(await lkTrunksFor('+15550200032')).toEqual([]);
    expect(await lkTrunksFor('+15550200031')).toHaveLength(1);
  });

  it('is for admins only', async () => {
    const n = (await post({ number: '+15550200041', bot_id: botId, variables: { customer_name: 'Ada' } }).expect(201)).body;
    const key = (await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'crm' }).expect(201)).body.key as string;
    for (const req of [
      () => h.http.post(URL).send({ number: '+15550200042', bot_id: botId }),
      () => h.http.get(URL),
      () => h.http.get(`${URL}/${n.id}`),
      () => h.http.patch(`${URL}/${n.id}`).send({ allowed_addresses: [] }),
      () => h.http.delete(`${URL}/${n.id}`),
    ]) {
      expect((await req().expect(401)).body.error.code).toBe('unauthorized');
      expect((await req().set('X-API-Key', key).expect(401)).body.error.code).toBe('unauthorized');
    }
    expect(await stored(n.id)).toMatchObject({ number: '+15550200041' });
  });

  it('answers 503 when the telephony plane is not configured or LiveKit is down, and stores nothing', async () => {
    const bare = await startHarness({ env: { LIVEKIT_URL: '', LIVEKIT_API_KEY: '', LIVEKIT_API_SECRET: '' } });
    const down = await startHarness({ env: { LIVEKIT_URL: 'ws://127.0.0.1:9', LIVEKIT_TIMEOUT_MS: '1000' } });
    try {
      for (const x of [bare, down]) {
        const a = await adminToken(x);
        const bot = await createBot(x, a, BOT);
        const res = await x.http.post(URL).set('Authorization', a).send({ number: '+15550200051', bot_id: bot, variables: { customer_name: 'Ada' } }).expect(503);
        expect(res.body.error.code).toBe('service_unavailable');
        expect(res.headers['retry-after']).toBeDefined();
        expect(await x.db.collection(COLLECTIONS.inboundNumbers).countDocuments()).toBe(0);
      }
    } finally {
      await bare.close();
      await down.close();
    }
  });

  it('takes back the LiveKit trunk when LiveKit fails midway (the dispatch rule), answers 503 and stores nothing', async () => {
    const real = telephonyFromSettings(h.settings)!;
    let madeTrunk = '';
    const flaky: Telephony = {
      ...real,
      createInboundTrunk: async (spec) => (madeTrunk = await real.createInboundTrunk(spec)),
      createDispatchRule: () => Promise.reject(new TelephonyError('creating the dispatch rule: LiveKit is unreachable')),
    };
    const app = createApp({ settings: h.settings, db: h.db, redis: h.redis, logger: createLogger('silent'), clock: h.clock.now, telephony: flaky });
    const res = await supertest(app.callback()).post(URL).set('Authorization', auth).send({ number: '+15550200061', bot_id: botId, variables: { customer_name: 'Ada' } }).expect(503);
    expect(res.body.error.code).toBe('service_unavailable');
    expect(madeTrunk).toMatch(/^ST_/);
    expect(await lkTrunk(madeTrunk)).toBeUndefined();
    expect(await lkTrunksFor('+15550200061')).toEqual([]);
    expect(await h.db.collection(COLLECTIONS.inboundNumbers).countDocuments()).toBe(0);
  });
});
