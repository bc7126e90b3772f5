// Bot versions and publishing (shared/DESIGN.md §17), on the suite's FerretDB, Redis and LiveKit (the widget's
// browser test calls mint their token with its keys).
import { ObjectId } from 'mongodb';
import { heartbeat, useAdminHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';
import { StoreCache } from '../core/cache.js';
import { createLogger } from '../core/logger.js';
import { tracingOff } from '../core/tracing.js';
import type { Services } from '../core/deps.js';
import { joblessCloser, placeCall } from '../calls/place.js';
import { migrateBotVersions } from './versions.js';

let h: Harness;
let auth: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

const worker = `Bearer ${WORKER_TOKEN}`;
const create = async (body: object = {}) => (await h.http.post('/api/v1/bots').set('Authorization', auth).send({ name: 'Versioned', prompt: 'v1 prompt', ...body }).expect(201)).body;
const patch = (id: string, body: object) => h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send(body);
const publish = (id: string, body: unknown) => h.http.post(`/api/v1/bots/${id}/publish`).set('Authorization', auth).send(body as object);
const versions = async (id: string, query = '') => (await h.http.get(`/api/v1/bots/${id}/versions${query}`).set('Authorization', auth).expect(200)).body;
const version = async (id: string, n: number) => (await h.http.get(`/api/v1/bots/${id}/versions/${n}`).set('Authorization', auth).expect(200)).body;
const livePrompt = async (id: string, callId?: string) =>
  (await h.http.get('/api/v1/config').query({ bot_id: id, ...(callId ? { call_id: callId } : {}) }).set('Authorization', worker).expect(200)).body.bot.prompt as string;
const testRun = (botId: string, v: number, run: { status: string; passed: number; failed: number }, at: Date) =>
  h.db.collection(COLLECTIONS.testRuns).insertOne({ _id: new ObjectId().toHexString() as never, bot_id: botId, version: v, ...run, created_at: at });

describe('bot versions', () => {
  it('a new bot is version 1, published; a save of its behaviour is version 2, published at once; name, active and no-op saves make none', async () => {
    const bot = await create();
    expect(bot).toMatchObject({ version: 1, published_version: 1, require_passing_tests: false });
    const me = (await h.http.get('/api/v1/auth/me').set('Authorization', auth).expect(200)).body;

    const saved = (await patch(bot.id, { prompt: 'v2 prompt' }).expect(200)).body;
    expect(saved).toMatchObject({ version: 2, published_version: 2, prompt: 'v2 prompt' });
    expect(await livePrompt(bot.id)).toBe('v2 prompt');

    // Acting at once, or changing nothing: no version.
    expect((await patch(bot.id, { name: 'Renamed', active: true }).expect(200)).body).toMatchObject({ name: 'Renamed', version: 2, published_version: 2 });
    expect((await patch(bot.id, { prompt: 'v2 prompt', turn_detection: {} }).expect(200)).body).toMatchObject({ version: 2 });

    const list = await versions(bot.id);
    expect(list).toEqual({
      items: [
        { bot_id: bot.id, version: 2, created_by: { type: 'user', id: me.id, label: me.email }, created_at: expect.any(String) },
        { bot_id: bot.id, version: 1, created_by: { type: 'user', id: me.id, label: me.email }, created_at: bot.created_at },
      ],
      next_cursor: null,
    });
    const v1 = await version(bot.id, 1);
    expect(v1).toMatchObject({ bot_id: bot.id, version: 1, config: { prompt: 'v1 prompt', max_call_seconds: 300 } });
    // Exactly the versioned fields: not name, active, require_passing_tests, nor the document's bookkeeping.
    const VERSIONED = ['analysis', 'answering_machine', 'audio', 'dtmf', 'flow', 'greeting', 'handoff', 'interruption', 'knowledge_base_ids', 'language', 'llm', 'max_call_seconds', 'mcp_servers', 'policy', 'prompt', 'recording', 'redaction', 'stt', 'tools', 'turn_detection', 'variables', 'voice'];
    expect(Object.keys(v1.config).sort()).toEqual(VERSIONED);
    expect(Object.keys((await version(bot.id, 2)).config).sort()).toEqual(VERSIONED);

    // Paginated like the other lists.
    const page = await versions(bot.id, '?limit=1');
    expect(page.items.map((v: { version: number }) => v.version)).toEqual([2]);
    const next = await versions(bot.id, `?limit=1&cursor=${page.next_cursor as string}`);
    expect(next).toEqual({ items: [expect.objectContaining({ version: 1 })], next_cursor: null });
  });

  it('with require_passing_tests a save is a draft; publish is refused (409 tests_failing) until its last run is all green', async () => {
    const bot = await create();
    expect((await patch(bot.id, { require_passing_tests: true }).expect(200)).body).toMatchObject({ require_passing_tests: true, version: 1, published_version: 1 });
    const draft = (await patch(bot.id, { prompt: 'draft prompt' }).expect(200)).body;
    expect(draft).toMatchObject({ version: 2, published_version: 1, prompt: 'draft prompt' });
    // Calls run the published version meanwhile.
    expect(await livePrompt(bot.id)).toBe('v1 prompt');

    const refused = await publish(bot.id, { version: 2 }).expect(409);
    expect(refused.body.error).toEqual({ code: 'tests_failing', message: expect.any(String), details: { version: 2 } });
    const t0 = Date.now();
    await testRun(bot.id, 2, { status: 'done', passed: 3, failed: 1 }, new Date(t0));
    expect((await publish(bot.id, { version: 2 }).expect(409)).body.error.code).toBe('tests_failing');
    // A green run of another version does not count; nor does a run that is not done.
    await testRun(bot.id, 1, { status: 'done', passed: 3, failed: 0 }, new Date(t0 + 1000));
    await testRun(bot.id, 2, { status: 'running', passed: 3, failed: 0 }, new Date(t0 + 2000));
    expect((await publish(bot.id, { version: 2 }).expect(409)).body.error.code).toBe('tests_failing');
    await testRun(bot.id, 2, { status: 'done', passed: 0, failed: 0 }, new Date(t0 + 3000));
    expect((await publish(bot.id, { version: 2 }).expect(409)).body.error.code).toBe('tests_failing');
    expect(await livePrompt(bot.id)).toBe('v1 prompt');

    await testRun(bot.id, 2, { status: 'done', passed: 3, failed: 0 }, new Date(t0 + 4000));
    const published = (await publish(bot.id, { version: 2 }).expect(200)).body;
    expect(published).toMatchObject({ id: bot.id, version: 2, published_version: 2 });
    expect(await livePrompt(bot.id)).toBe('draft prompt');

    const audit = (await h.http.get('/api/v1/audit').query({ resource_id: bot.id, action: 'bot.publish' }).set('Authorization', auth).expect(200)).body;
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({ action: 'bot.publish', resource: { type: 'bot', id: bot.id }, changes: { published_version: [1, 2] } });
  });

  it('publishing an older version is the rollback: calls run it, the latest stays what the editor edits', async () => {
    const bot = await create();
    await patch(bot.id, { prompt: 'v2 prompt' }).expect(200);
    expect(await livePrompt(bot.id)).toBe('v2 prompt');
    const rolled = (await publish(bot.id, { version: 1 }).expect(200)).body;
    expect(rolled).toMatchObject({ version: 2, published_version: 1, prompt: 'v2 prompt' });
    expect(await livePrompt(bot.id)).toBe('v1 prompt');
    // The next save builds on the latest and publishes itself.
    expect((await patch(bot.id, { greeting: 'Hello' }).expect(200)).body).toMatchObject({ version: 3, published_version: 3, prompt: 'v2 prompt' });
    expect(await livePrompt(bot.id)).toBe('v2 prompt');
  });

  it('each call records the version it runs, and the worker is served that version, not a later draft', async () => {
    await heartbeat(h.redis, 'w-versions', { max_calls: 100 }, h.clock.ms + 3_600_000);
    const bot = await create({ require_passing_tests: true });
    const widget = async () => (await h.http.post('/livekit/widget').set('Authorization', auth).send({ bot_id: bot.id }).expect(201)).body.call_id as string;
    const first = await widget();
    await patch(bot.id, { prompt: 'v2 prompt' }).expect(200);
    const second = await widget(); // v2 is a draft: still version 1
    await testRun(bot.id, 2, { status: 'done', passed: 1, failed: 0 }, new Date());
    await publish(bot.id, { version: 2 }).expect(200);
    const third = await widget();
    await patch(bot.id, { prompt: 'v3 draft' }).expect(200);

    const call = async (id: string) => (await h.http.get(`/api/v1/calls/${id}`).set('Authorization', auth).expect(200)).body;
    expect((await call(first)).bot_version).toBe(1);
    expect((await call(second)).bot_version).toBe(1);
    expect((await call(third)).bot_version).toBe(2);
    expect(await livePrompt(bot.id, first)).toBe('v1 prompt');
    expect(await livePrompt(bot.id, third)).toBe('v2 prompt');

    // The test runner's option: a given version, drafts included.
    const svc = {
      settings: h.settings,
      db: h.db,
      redis: h.redis,
      logger: createLogger('error'),
      telephony: null,
      recordings: null,
      clock: h.clock.now,
      version: 'test',
      now: () => new Date(h.clock.ms),
      cache: new StoreCache(h.redis, 60_000),
      tracing: tracingOff,
    } as Services;
    const by = { apiKeyId: null, label: 'test-runner' };
    const view = await svc.cache.view();
    const drafted = await placeCall(svc, joblessCloser(svc), by, { direction: 'web', bot_id: bot.id, variables: {} }, 'req-1', view, { botVersion: 3 });
    expect((await call(drafted._id)).bot_version).toBe(3);
    expect(await livePrompt(bot.id, drafted._id)).toBe('v3 draft');
    await expect(placeCall(svc, joblessCloser(svc), by, { direction: 'web', bot_id: bot.id, variables: {} }, 'req-2', view, { botVersion: 9 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('concurrent saves each get a version of their own', async () => {
    const bot = await create();
    const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => patch(bot.id, { prompt: `concurrent ${i}` })));
    const saved = answers.filter((r) => r.status === 200);
    // The bot's lock waits up to 3 s; anything refused is a clean 409 conflict, never a lost or shared number.
    for (const r of answers) expect([200, 409]).toContain(r.status);
    expect(saved.length).toBeGreaterThan(0);
    const numbers = saved.map((r) => r.body.version as number);
    expect(new Set(numbers).size).toBe(numbers.length);
    const list = await versions(bot.id);
    expect(list.items.map((v: { version: number }) => v.version)).toEqual([...Array(saved.length + 1).keys()].map((i) => saved.length + 1 - i));
    for (const r of saved) expect((await version(bot.id, r.body.version)).config.prompt).toBe(r.body.prompt);
  });

  it('refuses bad input by field and unknown versions and bots by 404, changing nothing', async () => {
    const bot = await create();
    for (const body of [{ version: 0 }, { version: 'x' }, {}, { version: 1.5 }]) {
      const res = await publish(bot.id, body).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'version' })]);
    }
    expect((await publish(bot.id, { version: 1, extra: true }).expect(422)).body.error.details).toEqual([expect.objectContaining({ field: 'extra' })]);
    expect((await publish(bot.id, { version: 7 }).expect(404)).body.error).toEqual({ code: 'not_found', message: 'the bot has no version 7' });
    expect((await publish('no-such-bot', { version: 1 }).expect(404)).body.error.code).toBe('bot_not_found');
    for (const bad of ['x', '0', '-1', '1.5']) {
      const res = await h.http.get(`/api/v1/bots/${bot.id}/versions/${bad}`).set('Authorization', auth).expect(422);
      expect(res.body.error.details).toEqual([{ field: 'version', message: expect.any(String) }]);
    }
    expect((await h.http.get(`/api/v1/bots/${bot.id}/versions/2`).set('Authorization', auth).expect(404)).body.error.code).toBe('not_found');
    expect((await h.http.get('/api/v1/bots/no-such-bot/versions').set('Authorization', auth).expect(404)).body.error.code).toBe('bot_not_found');
    expect((await h.http.get('/api/v1/bots/no-such-bot/versions?cursor=0.1').set('Authorization', auth).expect(404)).body.error.code).toBe('bot_not_found');
    for (const cursor of ['5.abc', '0.0', '12']) {
      expect((await h.http.get(`/api/v1/bots/${bot.id}/versions?cursor=${cursor}`).set('Authorization', auth).expect(422)).body.error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
    }
    expect((await h.http.get(`/api/v1/bots/${bot.id}`).set('Authorization', auth).expect(200)).body).toMatchObject({ version: 1, published_version: 1 });
  });

  it('a bot stored before versions becomes version 1, published, once (the boot migration)', async () => {
    const id = new ObjectId().toHexString();
    const now = new Date();
    await h.db.collection(COLLECTIONS.bots).insertOne({ _id: id as never, name: 'Old', active: true, prompt: 'old prompt', tools: [], created_at: now, updated_at: now });
    expect(await migrateBotVersions(h.db)).toBe(1);
    expect(await migrateBotVersions(h.db)).toBe(0);
    const bot = (await h.http.get(`/api/v1/bots/${id}`).set('Authorization', auth).expect(200)).body;
    expect(bot).toMatchObject({ version: 1, published_version: 1, require_passing_tests: false });
    expect(await versions(id)).toEqual({ items: [{ bot_id: id, version: 1, created_by: { type: 'system', id: null, label: 'system' }, created_at: now.toISOString() }], next_cursor: null });
    const migrated = (await version(id, 1)).config;
    expect(migrated).toMatchObject({ prompt: 'old prompt', language: 'en-US' });
    expect(migrated).not.toHaveProperty('updated_at');
    expect(migrated).not.toHaveProperty('name');
    expect((await patch(id, { prompt: 'new prompt' }).expect(200)).body).toMatchObject({ version: 2, published_version: 2 });
  });

  it("versions outlive their bot: a past call's version stays readable", async () => {
    const bot = await create();
    await patch(bot.id, { prompt: 'v2 prompt' }).expect(200);
    await h.db.collection(COLLECTIONS.bots).deleteOne({ _id: bot.id });
    expect((await versions(bot.id)).items).toHaveLength(2);
    expect((await version(bot.id, 1)).config.prompt).toBe('v1 prompt');
  });
});
