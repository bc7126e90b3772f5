// The replica cache of bots, API keys and trunks (cache.ts): it is really used (a change made behind the
// API's back is not seen at once), and a change made through the API on one replica is seen by the very
// next request on every other replica — above all, a deactivated bot is never served again.
import { performance } from 'node:perf_hooks';
import { startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { FLEET_RESERVATIONS_KEY } from '@voice-platform/schemas';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from './collections.js';
import { CACHE_EPOCH_KEY, CACHE_PENDING_KEY, StoreCache } from './cache.js';
import { ApiError, apiError } from './errors.js';

type Http = Harness['http'];

let env: TestEnv;
let h: Harness;
let auth: string;
let key: string;

const BOT = { prompt: 'Remind {{customer_name}}.', greeting: 'Hello {{customer_name}}', variables: [{ name: 'customer_name', required: true, description: '' }] };
const dial = (http: Http, botId: string, k = key) =>
  http.post('/api/v1/sip/dialout').set('X-API-Key', k).send({ bot_id: botId, to_number: '+4915112345678', variables: { customer_name: 'Ada' } });
const config = (http: Http, botId: string) => http.get(`/api/v1/config?bot_id=${botId}`).set('Authorization', `Bearer ${WORKER_TOKEN}`);

beforeAll(async () => {
  // A Redis of this file's own: the cache epoch is one key per deployment, and other files' writes would move it.
  env = await startTestEnv(['redis']);
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '100000', DIALOUT_RATE_PER_SECOND: '100000' } });
  auth = await adminToken(h);
  await createTrunk(h, auth);
  key = (await createKey(h, auth)).key;
});
afterAll(async () => {
  await h.close();
  await env.stop();
});
beforeEach(async () => {
  await h.redis.del(FLEET_RESERVATIONS_KEY);
  await heartbeat(h.redis, 'w1', { max_calls: 1_000_000 }, h.clock.ms + 3_600_000);
});

describe('the replica cache', () => {
  it('serves a bot from memory: an edit behind the API is not seen, an edit through the API is, on every replica', async () => {
    const botId = await createBot(h, auth, BOT);
    const b = h.replica().http;
    expect((await config(b, botId).expect(200)).body.bot.name).toBe('Reminder');
    // Behind the API's back (no epoch change): replica B keeps its copy, so the cache is really in use.
    await h.db.collection(COLLECTIONS.bots).updateOne({ _id: botId as never }, { $set: { name: 'changed in the database' } });
    expect((await config(b, botId).expect(200)).body.bot.name).toBe('Reminder');
    // Through the API on replica A: B's very next request sees it.
    await h.http.patch(`/api/v1/bots/${botId}`).set('Authorization', auth).send({ name: 'Reminder 2' }).expect(200);
    expect((await config(b, botId).expect(200)).body.bot.name).toBe('Reminder 2');
  });

  it('never serves a deactivated bot: replica A deactivates, replica B refuses the very next dial-out and config read', async () => {
    const botId = await createBot(h, auth, BOT);
    const a = h.http;
    const b = h.replica().http;
    await dial(b, botId).expect(201); // B now holds the key, the bot and the trunk
    await config(b, botId).expect(200);

    await a.patch(`/api/v1/bots/${botId}`).set('Authorization', auth).send({ active: false }).expect(200);
    expect((await dial(b, botId).expect(409)).body.error.code).toBe('bot_inactive');
    expect((await config(b, botId).expect(409)).body.error.code).toBe('bot_inactive');
    expect((await dial(a, botId).expect(409)).body.error.code).toBe('bot_inactive');

    await a.patch(`/api/v1/bots/${botId}`).set('Authorization', auth).send({ active: true }).expect(200);
    await dial(b, botId).expect(201);
  });

  it('under load: of the dial-outs replica B receives while A deactivates the bot, none sent after A answered is placed', async () => {
    const botId = await createBot(h, auth, BOT);
    const b = h.replica().http;
    await dial(b, botId).expect(201);
    const outcomes: Array<{ sentAt: number; status: number; code?: string }> = [];
    let deactivatedAt = Infinity;
    let stop = false;
    // Four clients keep dialling through replica B, one request after another each.
    const clients = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const sentAt = performance.now();
        const res = await dial(b, botId);
        outcomes.push({ sentAt, status: res.status, code: res.body.error?.code as string | undefined });
      }
    });
    try {
      await waitUntil(() => outcomes.filter((o) => o.status === 201).length >= 20, { what: 'dial-outs placed before the deactivation', timeoutMs: 30_000, intervalMs: 10 });
      await h.http.patch(`/api/v1/bots/${botId}`).set('Authorization', auth).send({ active: false }).expect(200);
      deactivatedAt = performance.now();
      await waitUntil(() => outcomes.filter((o) => o.sentAt > deactivatedAt).length >= 20, { what: 'dial-outs after the deactivation', timeoutMs: 30_000, intervalMs: 10 });
    } finally {
      stop = true;
      await Promise.all(clients);
    }
    const after = outcomes.filter((o) => o.sentAt > deactivatedAt);
    expect(after.length).toBeGreaterThanOrEqual(20);
    expect(after.filter((o) => o.status !== 409 || o.code !== 'bot_inactive')).toEqual([]);
    expect(outcomes.filter((o) => o.status !== 201 && o.status !== 409)).toEqual([]);
  });

  it('refuses a key deactivated on another replica on its very next request, though that replica had kept it', async () => {
    const botId = await createBot(h, auth, BOT);
    const { id, key: k } = await createKey(h, auth);
    const b = h.replica().http;
    await dial(b, botId, k).expect(201);
    await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ is_active: false }).expect(200);
    expect((await dial(b, botId, k).expect(401)).body.error.code).toBe('api_key_inactive');
  });

  it('follows a new default trunk and a deleted trunk at once on every replica', async () => {
    const botId = await createBot(h, auth, BOT);
    const b = h.replica().http;
    const first = (await dial(b, botId).expect(201)).body.from_number as string;
    const other = await createTrunk(h, auth, { name: 'second', numbers: ['+15550002000'], default: true });
    expect((await dial(b, botId).expect(201)).body.from_number).toBe('+15550002000');
    // Through a number: B keeps that trunk until it is deleted.
    await b.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+4915112345678', from_number: '+15550002000', variables: { customer_name: 'Ada' } }).expect(201);
    const oldDefault = (await h.http.get('/api/v1/sip/outbound-trunks').set('Authorization', auth).expect(200)).body.items.find((t: { numbers: string[] }) => t.numbers.includes(first));
    await h.http.patch(`/api/v1/sip/outbound-trunks/${oldDefault.id}`).set('Authorization', auth).send({ default: true }).expect(200);
    await h.http.delete(`/api/v1/sip/outbound-trunks/${other.id}`).set('Authorization', auth).expect(204);
    const gone = await b.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+4915112345678', from_number: '+15550002000', variables: { customer_name: 'Ada' } });
    expect([gone.status, gone.body.error?.code]).toEqual([422, 'unknown_from_number']);
    expect((await dial(b, botId).expect(201)).body.from_number).toBe(first);
  });
});

describe('the cache protocol (two replicas on one Redis)', () => {
  const load = (value: string) => async () => value;

  it('reads the database while a write is under way, and drops what it kept once the write is done', async () => {
    const reader = new StoreCache(h.redis, 60_000);
    const writer = new StoreCache(h.redis, 60_000);
    const v1 = await reader.view();
    expect(await reader.bots.get(v1, 'x', load('v1') as never)).toBe('v1');
    expect(await reader.bots.get(await reader.view(), 'x', load('unused') as never)).toBe('v1'); // kept

    await writer.write(async () => {
      const during = await reader.view();
      expect(during.epoch).toBeNull(); // a write is pending: no entry is served or stored
      expect(await reader.bots.get(during, 'x', load('v2') as never)).toBe('v2');
      expect(await reader.bots.get(await reader.view(), 'x', load('v3') as never)).toBe('v3');
    });
    const after = await reader.view();
    expect(after.epoch).not.toBeNull();
    expect(after.epoch).not.toBe(v1.epoch);
    expect(await reader.bots.get(after, 'x', load('v4') as never)).toBe('v4');
  });

  it('keeps every replica on the database until the deadline when a writer fails mid-write, and after Redis loses the epoch', async () => {
    const reader = new StoreCache(h.redis, 60_000);
    const writer = new StoreCache(h.redis, 300); // a short deadline, so the test can see it pass
    const v1 = await reader.view();
    await reader.bots.get(v1, 'y', load('v1') as never);

    // A store failure inside the write: the database may still apply it, so the pending mark stays.
    await expect(writer.write(async () => Promise.reject(new Error('socket closed')))).rejects.toThrow('socket closed');
    expect((await reader.view()).epoch).toBeNull();
    await waitUntil(async () => (await reader.view()).epoch !== null, { what: 'the pending mark to pass its deadline', timeoutMs: 10_000, intervalMs: 20 });
    expect(await reader.bots.get(await reader.view(), 'y', load('v2') as never)).toBe('v2'); // v1 was dropped

    // An ordinary refusal (ApiError) inside the write: nothing is pending afterwards.
    await expect(writer.write(async () => Promise.reject(apiError('conflict', 'x')))).rejects.toThrow('x');
    expect(await h.redis.zcard(CACHE_PENDING_KEY)).toBe(0);

    // Redis restarted empty: the first view makes a new epoch, so nothing kept before is served.
    const kept = await reader.view();
    await reader.bots.get(kept, 'z', load('old') as never);
    await h.redis.del(CACHE_EPOCH_KEY);
    expect(await reader.bots.get(await reader.view(), 'z', load('new') as never)).toBe('new');
  });
});
