// API key scopes (docs/design.md §12): chosen at creation (default dialout + calls:read), validated, shown in every
// answer about the key, changed by PATCH; every operation of the OpenAPI document that takes an API key, called
// with a key of each scope, answers as the permissions table's `key` column says (its scope → the usual answer,
// another → 403 `forbidden` in the documented shape); keys stored before scopes get the legacy scopes at boot.
import { ObjectId } from 'mongodb';
import { API_KEY_SCOPES, LEGACY_API_KEY_SCOPES, type ApiKeyScope } from '@voice-platform/schemas';
import { createBot, createKey, createTrunk, heartbeat, useAdminHarness, type Harness } from '../../testing/harness.js';
import { PERMISSIONS } from '../auth/permissions.js';
import { generateApiKey, hashApiKey, keyPrefix } from './keys.js';
import { migrateApiKeys } from './store.js';

let h: Harness;
let auth: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

const NO_ID = '0123456789abcdef01234567';
const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;
const forbidden = { error: { code: 'forbidden', message: expect.any(String) } };

async function keyOperations(): Promise<Array<{ key: string; method: (typeof METHODS)[number]; path: string }>> {
  const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body as { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> };
  const out: Array<{ key: string; method: (typeof METHODS)[number]; path: string }> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      if (item[method]?.security?.some((s) => 'apiKey' in s)) out.push({ key: `${method.toUpperCase()} ${path}`, method, path });
    }
  }
  return out;
}

describe('API key scopes', () => {
  it('defaults to dialout and calls:read, takes the scopes chosen at creation, and shows them in every answer', async () => {
    const plain = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'default' }).expect(201);
    expect(plain.body.scopes).toEqual(['dialout', 'calls:read']);
    const chosen = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'tests', scopes: ['test_calls', 'campaigns'] }).expect(201);
    expect(chosen.body.scopes).toEqual(['test_calls', 'campaigns']);
    expect((await h.http.get(`/api/v1/api-keys/${chosen.body.id}`).set('Authorization', auth).expect(200)).body.scopes).toEqual(['test_calls', 'campaigns']);
    const list = (await h.http.get('/api/v1/api-keys').set('Authorization', auth).expect(200)).body.items as Array<{ id: string; scopes: string[] }>;
    expect(list.find((k) => k.id === plain.body.id)?.scopes).toEqual(['dialout', 'calls:read']);
  });

  it('refuses unknown scopes, a scope twice and no scope at all (422 naming scopes), storing nothing', async () => {
    const before = await h.db.collection('api_keys').countDocuments();
    for (const scopes of [['dialout', 'admin'], ['dialout', 'dialout'], [], 'dialout', [1]]) {
      const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'bad', scopes }).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(res.body.error.details)).toContain('scopes');
    }
    expect(await h.db.collection('api_keys').countDocuments()).toBe(before);
  });

  it('PATCH replaces the scopes, and the very next request is held to them', async () => {
    const { id, key } = await createKey(h, auth, { name: 'crm', scopes: ['calls:read'] });
    const dial = () => h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({});
    expect((await dial().expect(403)).body).toEqual(forbidden);
    const patched = await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ scopes: ['dialout'] }).expect(200);
    expect(patched.body.scopes).toEqual(['dialout']);
    expect((await dial().expect(422)).body.error.code).toBe('validation_failed'); // in scope: the body is checked
    await h.http.get(`/api/v1/calls/${NO_ID}`).set('X-API-Key', key).expect(403);
    await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ scopes: [] }).expect(422);
    await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ is_active: false }).expect(200);
    expect((await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ scopes: ['dialout', 'calls:read'] }).expect(409)).body.error.code).toBe('api_key_revoked');
  });

  it('a key with only calls:read cannot dial out (403), a dialout key can (201) and reads its call only with calls:read', async () => {
    await createTrunk(h, auth, { numbers: ['+15550001000'] });
    await heartbeat(h.redis, 'scopes-w1', { max_calls: 100 }, Date.now() + 3_600_000);
    const bot = await createBot(h, auth);
    const body = { bot_id: bot, to_number: '+15005550100' };
    const reader = await createKey(h, auth, { name: 'reader', scopes: ['calls:read'] });
    const res = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', reader.key).send(body).expect(403);
    expect(res.body).toEqual(forbidden);
    const dialler = await createKey(h, auth, { name: 'dialler', scopes: ['dialout'] });
    const call = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', dialler.key).send(body).expect(201);
    expect((await h.http.get(`/api/v1/calls/${call.body.call_id}`).set('X-API-Key', dialler.key).expect(403)).body).toEqual(forbidden);
    const both = await createKey(h, auth, { name: 'both' });
    const mine = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', both.key).send({ ...body, to_number: '+15005550101' }).expect(201);
    expect((await h.http.get(`/api/v1/calls/${mine.body.call_id}`).set('X-API-Key', both.key).expect(200)).body.call_id).toBe(mine.body.call_id);
  });

  it('each scope against each operation that takes an API key: its scope → the usual answer, another → 403 forbidden', async () => {
    const keys = {} as Record<ApiKeyScope, string>;
    for (const scope of API_KEY_SCOPES) keys[scope] = (await createKey(h, auth, { name: `only ${scope}`, scopes: [scope] })).key;
    const ops = await keyOperations();
    expect(ops.length).toBeGreaterThan(0);
    const seen: string[] = [];
    for (const op of ops) {
      const needs = PERMISSIONS[op.key]?.key;
      expect([op.key, needs]).toEqual([op.key, expect.any(String)]);
      for (const scope of API_KEY_SCOPES) {
        let req = h.http[op.method](op.path.replace('{id}', NO_ID)).set('X-API-Key', keys[scope]);
        // An empty body: an allowed write is refused by its schema (422) and changes nothing.
        if (op.method === 'post' || op.method === 'patch') req = req.send({});
        const res = await req;
        const what = `${scope} ${op.key} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
        if (scope === needs) expect([what, res.status !== 403 && res.status !== 401 && res.status < 500]).toEqual([what, true]);
        else expect([what, res.status, res.body]).toEqual([what, 403, forbidden]);
        seen.push(what);
      }
    }
    expect(seen.length).toBe(ops.length * API_KEY_SCOPES.length);
  });

  it('a key stored before scopes works as before (dial-outs, calls, test calls) and gets the legacy scopes at boot', async () => {
    const key = generateApiKey();
    const id = new ObjectId().toHexString();
    await h.db.collection('api_keys').insertOne({
      _id: id as never, name: 'legacy CRM', key_hash: hashApiKey(key), prefix: keyPrefix(key), is_active: true, expires_at: null,
      created_at: new Date(), created_by: 'admin@example.com', last_used_at: null, deactivated_at: null, deactivated_by: null,
    });
    expect((await h.http.get(`/api/v1/api-keys/${id}`).set('Authorization', auth).expect(200)).body.scopes).toEqual([...LEGACY_API_KEY_SCOPES]);
    expect((await h.http.get(`/api/v1/calls/${NO_ID}`).set('X-API-Key', key).expect(404)).body.error.code).toBe('call_not_found');
    expect((await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({}).expect(422)).body.error.code).toBe('validation_failed');
    expect((await h.http.post('/api/v1/test-calls/token').set('X-API-Key', key).send({}).expect(422)).body.error.code).toBe('validation_failed');
    await migrateApiKeys(h.db);
    await migrateApiKeys(h.db); // idempotent
    expect((await h.db.collection('api_keys').findOne({ _id: id as never }))?.scopes).toEqual(['dialout', 'calls:read', 'test_calls']);
    expect(await h.db.collection('api_keys').countDocuments({ scopes: { $exists: false } })).toBe(0);
  });
});
