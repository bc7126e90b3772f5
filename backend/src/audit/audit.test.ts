// The audit log (docs/design.md §12) on real FerretDB and Redis: each kind of change made through the API leaves
// exactly one entry (actor, action, resource, the changed fields before and after, secrets redacted, address,
// request id), written before the answer; a failed change leaves none; the list filters and pages newest first;
// owners and admins only; no operation changes or deletes an entry.
import { WEBHOOK_EVENT_TYPES } from '@voice-platform/schemas';
import { ADMIN, adminToken, bodyText, createBot, createTrunk, startHarness, useAdminHarness, type Harness } from '../../testing/harness.js';
import { login, userOfRole } from '../../testing/users.js';
import type { Context } from 'koa';
import { auditChanges, redact, requestActor } from './audit.js';

let h: Harness;
let auth: string;
let adminId: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]), { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });

interface Entry {
  id: string;
  at: string;
  actor: { type: string; id: string | null; label: string };
  action: string;
  resource: { type: string; id: string | null };
  changes: Record<string, [unknown, unknown]>;
  ip: string;
  request_id: string;
}

const list = async (query = ''): Promise<{ items: Entry[]; next_cursor: string | null }> =>
  (await h.http.get(`/api/v1/audit${query}`).set('Authorization', auth).expect(200)).body;
/** Every entry about one resource, newest first. */
const about = async (id: string): Promise<Entry[]> => (await list(`?resource_id=${encodeURIComponent(id)}&limit=100`)).items;
const me = () => ({ type: 'user', id: adminId, label: ADMIN.email });
const TIME = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);

beforeAll(async () => {
  adminId = (await h.http.get('/api/v1/auth/me').set('Authorization', auth).expect(200)).body.id as string;
});

describe('the audit log', () => {
  it("changing a bot's prompt leaves exactly one entry: actor, action, resource, the field before and after, address, request id", async () => {
    const bot = await createBot(h, auth, { prompt: 'Remind {{customer_name}}', variables: [{ name: 'customer_name', required: true, description: '' }] } as object);
    const [created] = await about(bot);
    expect(created).toMatchObject({ action: 'bot.create', actor: me(), resource: { type: 'bot', id: bot } });
    expect(created!.changes.prompt).toEqual([null, 'Remind {{customer_name}}']);

    const res = await h.http.patch(`/api/v1/bots/${bot}`).set('Authorization', auth).set('X-Request-Id', 'audit-bot-update-1').send({ prompt: 'Remind {{customer_name}} kindly' }).expect(200);
    expect(res.headers['x-request-id']).toBe('audit-bot-update-1');
    const entries = await about(bot);
    expect(entries.map((e) => e.action)).toEqual(['bot.update', 'bot.create']);
    expect(entries[0]).toEqual({
      id: expect.any(String),
      at: TIME,
      actor: me(),
      action: 'bot.update',
      resource: { type: 'bot', id: bot },
      // The save is the bot's version 2, published at once (shared/DESIGN.md §17).
      changes: { prompt: ['Remind {{customer_name}}', 'Remind {{customer_name}} kindly'], version: [1, 2], published_version: [1, 2] },
      ip: expect.stringMatching(/127\.0\.0\.1|::1/),
      request_id: 'audit-bot-update-1',
    });

    // A refused change (422) and a read leave nothing.
    await h.http.patch(`/api/v1/bots/${bot}`).set('Authorization', auth).send({ max_call_seconds: -1 }).expect(422);
    await h.http.get(`/api/v1/bots/${bot}`).set('Authorization', auth).expect(200);
    expect((await about(bot)).length).toBe(2);

    await h.http.patch(`/api/v1/bots/${bot}`).set('Authorization', auth).send({ active: false }).expect(200);
    expect((await about(bot))[0]).toMatchObject({ action: 'bot.deactivate', changes: { active: [true, false] } });
  });

  it('redacts secrets: tool header values, a rotated tool secret, a webhook secret, a key, passwords; none appears anywhere', async () => {
    const HEADER = 'Bearer crm-token-for-the-audit-test';
    const tool = { name: 'crm', description: 'CRM', type: 'http', url: 'https://93.184.216.34/x', headers: { Authorization: HEADER }, parameters: { type: 'object', properties: {} } };
    const bot = await createBot(h, auth, { tools: [tool] } as object);
    const toolSecret = (await h.http.post(`/api/v1/bots/${bot}/tool-secret`).set('Authorization', auth).expect(200)).body.secret as string;
    const rotated = (await about(bot))[0]!;
    expect(rotated).toMatchObject({ action: 'bot.rotate_tool_secret', actor: me(), changes: { tool_secret: [null, '[redacted]'] } });
    await h.http.post(`/api/v1/bots/${bot}/tool-secret`).set('Authorization', auth).expect(200);
    expect((await about(bot))[0]!.changes).toEqual({ tool_secret: ['[redacted]', '[redacted]'] });
    const createdTools = (await about(bot)).find((e) => e.action === 'bot.create')!.changes.tools![1] as Array<{ headers?: unknown; headers_sealed?: unknown }>;
    expect(createdTools[0]!.headers ?? createdTools[0]!.headers_sealed).toEqual(expect.anything());
    expect(JSON.stringify(createdTools)).not.toContain('crm-token');

    const webhook = (await h.http.post('/api/v1/webhooks').set('Authorization', auth).send({ url: 'http://127.0.0.1:9/hook', events: [WEBHOOK_EVENT_TYPES[0]] }).expect(201)).body as { id: string; secret: string };
    const [hookEntry] = await about(webhook.id);
    expect(hookEntry).toMatchObject({ action: 'webhook.create', resource: { type: 'webhook', id: webhook.id } });
    expect(hookEntry!.changes.secret).toEqual([null, '[redacted]']);
    expect(hookEntry!.changes.url).toEqual([null, 'http://127.0.0.1:9/hook']);

    const key = (await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'audited' }).expect(201)).body as { id: string; key: string };
    const [keyEntry] = await about(key.id);
    expect(keyEntry).toMatchObject({ action: 'api_key.create', resource: { type: 'api_key', id: key.id } });
    expect(keyEntry!.changes).toMatchObject({ name: [null, 'audited'], key_hash: [null, '[redacted]'], scopes: [null, ['dialout', 'calls:read']], is_active: [null, true] });

    const user = await userOfRole(h, auth, 'viewer');
    const all = await list('?limit=100');
    const text = bodyText({ body: all });
    for (const secret of [HEADER, toolSecret, webhook.secret, key.key, key.key.slice(7), user.password]) expect(text).not.toContain(secret);
    const userEntries = await about(user.id);
    expect(userEntries.map((e) => e.action)).toEqual(['user.change_password', 'auth.login', 'user.create']);
    expect(userEntries[2]!.changes).toMatchObject({ email: [null, user.email], role: [null, 'viewer'], password_hash: [null, '[redacted]'], must_change_password: [null, true] });
    expect(userEntries[0]).toMatchObject({
      actor: { type: 'user', id: user.id, label: user.email },
      resource: { type: 'user', id: user.id },
      changes: { password_hash: ['[redacted]', '[redacted]'], must_change_password: [true, false], token_version: [0, 1] },
    });
  });

  it('deactivating a key, starting and pausing a campaign, contacts and do-not-call numbers each leave one entry', async () => {
    const key = (await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'to deactivate' }).expect(201)).body as { id: string };
    await h.http.patch(`/api/v1/api-keys/${key.id}`).set('Authorization', auth).send({ is_active: false }).expect(200);
    const [deactivated, ...rest] = await about(key.id);
    expect(rest.map((e) => e.action)).toEqual(['api_key.create']);
    expect(deactivated).toEqual({
      id: expect.any(String), at: TIME, actor: me(), action: 'api_key.deactivate', resource: { type: 'api_key', id: key.id },
      changes: { is_active: [true, false], deactivated_at: [null, TIME], deactivated_by: [null, ADMIN.email] },
      ip: expect.any(String), request_id: expect.any(String),
    });

    await createTrunk(h, auth, { numbers: ['+15550002000'] });
    const bot = await createBot(h, auth);
    const campaign = (await h.http.post('/api/v1/campaigns').set('Authorization', auth)
      .send({ name: 'audited', bot_id: bot, timezone: 'Europe/Berlin', windows: [], max_concurrency: 1, calls_per_second: 1, retry: { max_attempts: 1, delay_seconds: 60, on: [] } }).expect(201)).body as { id: string };
    await h.http.post(`/api/v1/campaigns/${campaign.id}/contacts`).set('Authorization', auth).send({ contacts: [{ to_number: '+15005550106' }] }).expect(200);
    await h.http.post(`/api/v1/campaigns/${campaign.id}/start`).set('Authorization', auth).expect(200);
    await h.http.post(`/api/v1/campaigns/${campaign.id}/pause`).set('Authorization', auth).expect(200);
    await h.http.post(`/api/v1/campaigns/${campaign.id}/pause`).set('Authorization', auth).expect(409); // refused: nothing recorded
    const entries = await about(campaign.id);
    expect(entries.map((e) => e.action)).toEqual(['campaign.pause', 'campaign.start', 'campaign.add_contacts', 'campaign.create']);
    expect(entries[1]!.changes.status).toEqual(['draft', 'running']);
    expect(entries[1]!.changes.started_at).toEqual([null, TIME]);
    expect(entries[0]!.changes.status).toEqual(['running', 'paused']);
    expect(entries[2]!.changes).toEqual({ contacts_added: [null, 1], contacts_duplicates: [null, 0], contacts_rejected: [null, 0] });

    await h.http.post('/api/v1/dnc').set('Authorization', auth).send({ numbers: ['+15005550199'] }).expect(200);
    await h.http.delete(`/api/v1/dnc/${encodeURIComponent('+15005550199')}`).set('Authorization', auth).expect(204);
    const dnc = (await list('?resource_type=dnc')).items;
    expect(dnc.map((e) => [e.action, e.changes])).toEqual([
      ['dnc.remove', { number: [null, '+15005550199'] }],
      ['dnc.add', { numbers: [null, ['+15005550199']], added: [null, 1], duplicates: [null, 0] }],
    ]);
  });

  it('records logins and failed logins with the email tried', async () => {
    await h.http.post('/api/v1/auth/login').set('X-Request-Id', 'audit-login-fail-1').send({ email: 'Nobody@Example.com', password: 'wrong password' }).expect(401);
    await h.http.post('/api/v1/auth/login').send({ email: ADMIN.email, password: 'not the password' }).expect(401);
    await login(h, ADMIN.email, ADMIN.password);
    const [ok, wrong, unknown] = (await list('?resource_type=user&limit=3')).items;
    expect(ok).toMatchObject({ action: 'auth.login', actor: me(), resource: { type: 'user', id: adminId }, changes: {} });
    expect(wrong).toMatchObject({ action: 'auth.login_failed', actor: { type: 'user', id: null, label: ADMIN.email }, resource: { type: 'user', id: adminId }, changes: {} });
    expect(unknown).toEqual({
      id: expect.any(String), at: TIME, actor: { type: 'user', id: null, label: 'nobody@example.com' }, action: 'auth.login_failed',
      resource: { type: 'user', id: null }, changes: {}, ip: expect.any(String), request_id: 'audit-login-fail-1',
    });
    const failed = (await list('?action=auth.login_failed')).items;
    expect(failed.every((e) => e.action === 'auth.login_failed')).toBe(true);
  });

  it('filters by actor, resource, action and time, pages newest first with a cursor, and refuses unknown parameters', async () => {
    const editor = await userOfRole(h, auth, 'editor');
    const bot = await createBot(h, editor.auth);
    for (let i = 0; i < 4; i++) await h.http.patch(`/api/v1/bots/${bot}`).set('Authorization', editor.auth).send({ name: `name ${i}` }).expect(200);
    const mine = (await list(`?actor_id=${editor.id}&resource_type=bot&limit=100`)).items;
    expect(mine.map((e) => e.action)).toEqual(['bot.update', 'bot.update', 'bot.update', 'bot.update', 'bot.create']);
    expect(mine.every((e) => e.actor.id === editor.id && e.actor.label === editor.email)).toBe(true);
    expect(mine.map((e) => e.changes.name?.[1])).toEqual(['name 3', 'name 2', 'name 1', 'name 0', 'Reminder']);
    expect((await list(`?resource_id=${bot}&action=bot.create`)).items.map((e) => e.action)).toEqual(['bot.create']);

    // Pages of 2 walk the same entries, in the same order, once each.
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Entry[]; next_cursor: string | null } = await list(`?resource_id=${bot}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      walked.push(...page.items.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(walked).toEqual(mine.map((e) => e.id));

    const times = mine.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const after = new Date(times[0]! + 1).toISOString();
    expect((await list(`?resource_id=${bot}&from=${encodeURIComponent(after)}`)).items).toEqual([]);
    expect((await list(`?resource_id=${bot}&to=${encodeURIComponent(after)}`)).items.length).toBe(5);
    expect((await list(`?resource_id=${bot}&from=${encodeURIComponent(new Date(times[4]!).toISOString())}`)).items.length).toBe(5);

    for (const q of ['?nope=1', '?from=yesterday', '?limit=0', '?limit=101', '?cursor=abc', '?actor_id=x%20y', '?action=a&action=b']) {
      const res = await h.http.get(`/api/v1/audit${q}`).set('Authorization', auth).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('is for owners and admins only (403 forbidden for editors and viewers), and no operation changes or deletes an entry', async () => {
    const admin = await userOfRole(h, auth, 'admin');
    await h.http.get('/api/v1/audit').set('Authorization', admin.auth).expect(200);
    for (const role of ['editor', 'viewer'] as const) {
      const u = await userOfRole(h, auth, role);
      expect((await h.http.get('/api/v1/audit').set('Authorization', u.auth).expect(403)).body).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
    }
    await h.http.get('/api/v1/audit').expect(401);

    const [entry] = (await list('?limit=1')).items;
    const count = await h.db.collection('audit_log').countDocuments();
    for (const method of ['put', 'patch', 'delete', 'post'] as const) {
      const res = await h.http[method]('/api/v1/audit').set('Authorization', auth).send({});
      expect([method, res.status, res.body.error?.code]).toEqual([method, 405, 'method_not_allowed']);
      const one = await h.http[method](`/api/v1/audit/${entry!.id}`).set('Authorization', auth).send({});
      expect([method, one.status]).toEqual([method, 404]);
    }
    expect(await h.db.collection('audit_log').countDocuments()).toBe(count);
    expect((await list('?limit=1')).items[0]).toEqual(entry);
  });

  it('an entry that cannot be written fails the request: no change answers success without its entry', async () => {
    // A database of its own, whose log refuses a second entry of one request id: the bot's write lands, its entry cannot.
    const own = await startHarness({ dbName: `audit_durability_${Date.now()}` });
    try {
      const ownAuth = await adminToken(own);
      await own.db.collection('audit_log').createIndex({ request_id: 1 }, { unique: true, name: 'test_request_once' });
      const bot = await createBot(own, ownAuth);
      const patch = (name: string) => own.http.patch(`/api/v1/bots/${bot}`).set('Authorization', ownAuth).set('X-Request-Id', 'audit-once').send({ name });
      await patch('first').expect(200);
      const refused = await patch('second');
      expect(refused.status).toBeGreaterThanOrEqual(500);
      expect(refused.body.error.code).toEqual(expect.any(String));
      expect(await own.db.collection('audit_log').countDocuments({ request_id: 'audit-once' })).toBe(1);
    } finally {
      await own.db.dropDatabase();
      await own.close();
    }
  });

  it('computes changes field by field, with secrets redacted at any depth', () => {
    const before = { _id: 'x', name: 'a', updated_at: new Date(1), nested: { password: 'p', keep: 1 }, tools: [{ headers: { A: 'v' } }], secret_sealed: 's1' };
    const after = { _id: 'x', name: 'b', updated_at: new Date(2), nested: { password: 'q', keep: 1 }, tools: [{ headers: { A: 'w' } }], secret_sealed: 's2', added: [1] };
    expect(auditChanges(before, after)).toEqual({
      name: ['a', 'b'],
      nested: [{ password: '[redacted]', keep: 1 }, { password: '[redacted]', keep: 1 }],
      tools: [[{ headers: { A: '[redacted]' } }], [{ headers: { A: '[redacted]' } }]],
      secret: ['[redacted]', '[redacted]'],
      added: [null, [1]],
    });
    expect(redact({ token: null, access_token: 'x', auth_password: 'y', when: new Date(0) })).toEqual({ token: null, access_token: '[redacted]', auth_password: '[redacted]', when: '1970-01-01T00:00:00.000Z' });
  });

  it('names the actor: the admin user, else the API key (name and prefix), else the system', () => {
    const ctx = (state: Record<string, unknown>) => ({ state }) as unknown as Context;
    expect(requestActor(ctx({ admin: { id: 'u1', email: 'a@example.com', role: 'owner' } }))).toEqual({ type: 'user', id: 'u1', label: 'a@example.com' });
    expect(requestActor(ctx({ apiKey: { id: 'k1', prefix: 'vx_AbCd', name: 'CRM' } }))).toEqual({ type: 'api_key', id: 'k1', label: 'CRM (vx_AbCd)' });
    expect(requestActor(ctx({}))).toEqual({ type: 'system', id: null, label: 'system' });
  });
});
