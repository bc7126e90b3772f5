import { API_KEY_PATTERN } from '@voice-platform/schemas';
import { bodyText, createBot, createKey, useAdminHarness, type Harness } from '../../testing/harness.js';
import { hashApiKey } from './keys.js';

let h: Harness;
let auth: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

// Any authenticated call with a key; /api/v1/calls/{unknown} answers 404 once the key is accepted.
const probe = (http: Harness['http'], key: string) => http.get('/api/v1/calls/000000000000000000000000').set('X-API-Key', key);

describe('API keys', () => {
  it('shows the full key once, stores only its SHA-256, and masks it everywhere else', async () => {
    const created = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'CRM prod' }).expect(201);
    const key = created.body.key as string;
    expect(key).toMatch(new RegExp(API_KEY_PATTERN));
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'CRM prod',
      key,
      prefix: key.slice(0, 7),
      is_active: true,
      expires_at: null,
      created_at: expect.any(String),
      last_used_at: null,
      status: 'active',
      deactivated_at: null,
      deactivated_by: null,
      created_by: 'admin@example.com',
      scopes: ['dialout', 'calls:read'],
    });
    expect(created.headers.location).toBe(`/api/v1/api-keys/${created.body.id}`);

    const list = await h.http.get('/api/v1/api-keys').set('Authorization', auth).expect(200);
    const one = await h.http.get(`/api/v1/api-keys/${created.body.id}`).set('Authorization', auth).expect(200);
    const patched = await h.http.patch(`/api/v1/api-keys/${created.body.id}`).set('Authorization', auth).send({ name: 'CRM' }).expect(200);
    for (const res of [list, one, patched]) {
      expect(bodyText(res)).not.toContain(key);
      expect(bodyText(res)).not.toContain(key.slice(7));
    }
    expect(one.body).not.toHaveProperty('key');
    expect(one.body.prefix).toBe(key.slice(0, 7));
    expect(list.body.items.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(patched.body.name).toBe('CRM');

    const doc = await h.db.collection('api_keys').findOne({ _id: created.body.id });
    expect(doc?.key_hash).toBe(hashApiKey(key));
    expect(JSON.stringify(doc)).not.toContain(key.slice(7));
  });

  it('generates distinct keys of exactly vx_ + 32 alphanumerics', async () => {
    const keys = await Promise.all([1, 2, 3, 4, 5].map(() => createKey(h, auth)));
    expect(new Set(keys.map((k) => k.key)).size).toBe(5);
    for (const { key } of keys) expect(key).toMatch(/^vx_[A-Za-z0-9]{32}$/);
  });

  it('refuses every kind of bad key with its own code', async () => {
    expect((await h.http.get('/api/v1/calls/x').expect(401)).body.error.code).toBe('missing_api_key');
    expect((await probe(h.http, 'vx_short').expect(401)).body.error.code).toBe('invalid_api_key');
    expect((await probe(h.http, `vx_${'A'.repeat(32)}`).expect(401)).body.error.code).toBe('invalid_api_key');
    const { key } = await createKey(h, auth);
    expect((await probe(h.http, key).expect(404)).body.error.code).toBe('call_not_found');
  });

  it('deactivation is final, audited, and refused on the very next request on every replica', async () => {
    const { id, key } = await createKey(h, auth);
    const a = h.http;
    const b = h.replica().http;
    await probe(a, key).expect(404);
    await probe(b, key).expect(404);

    const res = await b.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ is_active: false }).expect(200);
    expect(res.body).toMatchObject({ is_active: false, status: 'inactive', deactivated_by: 'admin@example.com' });
    expect(res.body.deactivated_at).toEqual(new Date(h.clock.ms).toISOString());

    // Replica A never saw the deactivation request: it must refuse the key at once anyway.
    expect((await probe(a, key).expect(401)).body.error.code).toBe('api_key_inactive');
    expect((await probe(b, key).expect(401)).body.error.code).toBe('api_key_inactive');

    const again = await a.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ is_active: true }).expect(409);
    expect(again.body.error.code).toBe('api_key_revoked');
    const later = new Date(h.clock.ms + 86_400_000).toISOString();
    expect((await a.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ expires_at: later }).expect(409)).body.error.code).toBe('api_key_revoked');
    // A second deactivation keeps the first audit record.
    h.clock.advance(5000);
    const second = await a.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ is_active: false }).expect(200);
    expect(second.body.deactivated_at).toBe(res.body.deactivated_at);
    await a.get(`/api/v1/api-keys/${id}`).set('Authorization', auth).expect(200);
  });

  it('an expiring key works until expires_at and is refused from then on, on every replica', async () => {
    const expiresAt = new Date(h.clock.ms + 60_000).toISOString();
    const { id, key } = await createKey(h, auth, { name: 'pilot', expires_at: expiresAt });
    const b = h.replica().http;
    await probe(h.http, key).expect(404);
    await probe(b, key).expect(404);
    h.clock.advance(60_000);
    expect((await probe(h.http, key).expect(401)).body.error.code).toBe('api_key_expired');
    expect((await probe(b, key).expect(401)).body.error.code).toBe('api_key_expired');
    const shown = await h.http.get(`/api/v1/api-keys/${id}`).set('Authorization', auth).expect(200);
    expect(shown.body).toMatchObject({ status: 'expired', is_active: true, expires_at: expiresAt });
    const revive = await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ is_active: true }).expect(409);
    expect(revive.body.error.code).toBe('api_key_revoked');
  });

  it('refuses an expires_at in the past at creation and in a PATCH', async () => {
    const past = new Date(h.clock.ms - 1000).toISOString();
    const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'x', expires_at: past }).expect(422);
    expect(res.body.error).toEqual({ code: 'validation_failed', message: expect.any(String), details: [{ field: 'expires_at', message: 'must be in the future' }] });
    const { id } = await createKey(h, auth);
    await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ expires_at: past }).expect(422);
    const future = new Date(h.clock.ms + 3_600_000).toISOString();
    const ok = await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ expires_at: future }).expect(200);
    expect(ok.body).toMatchObject({ expires_at: future, status: 'active' });
  });

  it('refuses an expires_at that is no real time (leap second, month 13, Feb 30, hour 24) and stores nothing', async () => {
    const bad = ['2099-12-31T23:59:60Z', '2099-13-01T00:00:00Z', '2099-02-30T12:00:00Z', '2099-04-31T00:00:00Z', '2099-12-31T24:00:00Z'];
    const before = await h.db.collection('api_keys').countDocuments();
    for (const expires_at of bad) {
      const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'leap', expires_at });
      expect([expires_at, res.status, res.body.error?.code, res.body.error?.details?.map((d: { field: string }) => d.field)]).toEqual([expires_at, 422, 'validation_failed', ['expires_at']]);
    }
    expect(await h.db.collection('api_keys').countDocuments()).toBe(before);

    const future = new Date(h.clock.ms + 3_600_000).toISOString();
    const { id, key } = await createKey(h, auth, { name: 'live', expires_at: future });
    for (const expires_at of bad) {
      const res = await h.http.patch(`/api/v1/api-keys/${id}`).set('Authorization', auth).send({ name: 'renamed', expires_at });
      expect([expires_at, res.status, res.body.error?.code, res.body.error?.details?.map((d: { field: string }) => d.field)]).toEqual([expires_at, 422, 'validation_failed', ['expires_at']]);
    }
    const after = await h.http.get(`/api/v1/api-keys/${id}`).set('Authorization', auth).expect(200);
    expect(after.body).toMatchObject({ name: 'live', expires_at: future, status: 'active' });
    await probe(h.http, key).expect(404); // still accepted
    // Real times in any RFC 3339 spelling still work: an offset, fractions, the last second of a year.
    const ok = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'ok', expires_at: '2099-12-31T23:59:59.5+01:00' }).expect(201);
    expect(ok.body.expires_at).toBe('2099-12-31T22:59:59.500Z');
  });

  it('refuses times it could not write back as RFC 3339 (year 10000 in UTC) and a space for T', async () => {
    // 9999-12-31T23:59:59-23:59 is in year 10000 in UTC: it was stored and listed as `+010000-01-01T23:58:59.000Z`.
    for (const expires_at of ['9999-12-31T23:59:59-23:59', '9999-12-31T00:00:00-00:01', '2099-12-31 12:00:00Z']) {
      const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'far', expires_at });
      expect([expires_at, res.status, res.body.error?.details?.map((d: { field: string }) => d.field)]).toEqual([expires_at, 422, ['expires_at']]);
    }
    const last = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'last', expires_at: '9998-12-31T23:59:59-23:59' }).expect(201);
    expect(last.body.expires_at).toBe('9999-01-01T23:58:59.000Z');
    // Year 9999 itself is a date-time ("never", as clients write it), up to its last second in UTC.
    for (const [expires_at, stored] of [['9999-01-01T00:00:00Z', '9999-01-01T00:00:00.000Z'], ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'], ['9999-12-31T23:59:59+23:59', '9999-12-31T00:00:59.000Z']]) {
      const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'never', expires_at }).expect(201);
      expect([expires_at, res.body.expires_at]).toEqual([expires_at, stored]);
    }
  });

  it('writes last_used_at at most once a minute', async () => {
    const { id, key } = await createKey(h, auth);
    const first = h.clock.ms;
    await probe(h.http, key).expect(404);
    const read = async () => (await h.http.get(`/api/v1/api-keys/${id}`).set('Authorization', auth).expect(200)).body.last_used_at;
    expect(await read()).toBe(new Date(first).toISOString());
    h.clock.advance(30_000);
    await probe(h.http, key).expect(404);
    expect(await read()).toBe(new Date(first).toISOString());
    h.clock.advance(30_000);
    await probe(h.http, key).expect(404);
    expect(await read()).toBe(new Date(first + 60_000).toISOString());
  });

  it('requires an admin token for key management', async () => {
    expect((await h.http.get('/api/v1/api-keys').expect(401)).body.error.code).toBe('unauthorized');
    const { key } = await createKey(h, auth);
    expect((await h.http.get('/api/v1/api-keys').set('X-API-Key', key).expect(401)).body.error.code).toBe('unauthorized');
    await createBot(h, auth); // the same admin token keeps working across areas
  });
});
