// Users and roles (docs/design.md §12): a user created by an owner logs in with the one-time password, is held
// to the password change, then works; deactivation, role and password changes revoke the user's tokens on the
// very next request, also through a second backend process; the last owner stays one; the seeded admin of an
// older release is the first owner after the upgrade, and its old token still works.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ObjectId } from 'mongodb';
import { freePort, saveLogs, waitUntil } from '@voice-platform/tests/infra';
import jwt from 'jsonwebtoken';
import { User, UserCreated } from '@voice-platform/schemas';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ADMIN, JWT_SECRET, useAdminHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { hashPassword } from '../auth/password.js';
import { COLLECTIONS, prepareStores } from '../stores.js';
import { login, userOfRole } from '../../testing/users.js';

let h: Harness;
let owner: string;
useAdminHarness((harness, token) => ([h, owner] = [harness, token]));

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false }));
const isUser = ajv.compile(User);
const isCreated = ajv.compile(UserCreated);

const as = (auth: string) => ({
  get: (path: string) => h.http.get(path).set('Authorization', auth),
  post: (path: string, body: object) => h.http.post(path).set('Authorization', auth).send(body),
  patch: (path: string, body: object) => h.http.patch(path).set('Authorization', auth).send(body),
});
const code = (res: { body: { error?: { code?: string } } }) => res.body.error?.code;
const ownerId = async () => (await as(owner).get('/api/v1/auth/me').expect(200)).body.id as string;

describe('users', () => {
  it('the seeded admin is the first owner', async () => {
    const me = await as(owner).get('/api/v1/auth/me').expect(200);
    expect(me.body).toMatchObject({ email: ADMIN.email, role: 'owner', active: true, must_change_password: false });
    const list = await as(owner).get('/api/v1/users').expect(200);
    expect(list.body.items).toEqual([me.body]);
  });

  it('a new user gets a one-time password once, must change it, then works with the rights of the role', async () => {
    const email = 'Ed.Itor@Example.com';
    const created = await as(owner).post('/api/v1/users', { email, name: 'Ed', role: 'editor' }).expect(201);
    expect(isCreated(created.body)).toBe(true);
    expect(created.body).toMatchObject({ email: 'ed.itor@example.com', name: 'Ed', role: 'editor', active: true, must_change_password: true, last_login_at: null });
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.headers.location).toBe(`/api/v1/users/${created.body.id}`);
    const password = created.body.password as string;
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    // Never again: not in the user's answers, not stored in clear, not logged.
    const one = await as(owner).get(`/api/v1/users/${created.body.id}`).expect(200);
    expect(isUser(one.body)).toBe(true);
    expect(one.body).not.toHaveProperty('password');
    expect(JSON.stringify(await h.db.collection(COLLECTIONS.users).findOne({ _id: created.body.id }))).not.toContain(password);
    expect(h.logs.join('')).not.toContain(password);

    const first = await login(h, email, password);
    expect(first.must_change_password).toBe(true);
    for (const path of ['/api/v1/bots', '/api/v1/auth/me', '/api/v1/users', '/api/v1/calls']) {
      const res = await as(first.auth).get(path).expect(403);
      expect(code(res)).toBe('password_change_required');
    }
    expect(code(await as(first.auth).post('/api/v1/bots', { name: 'x' }).expect(403))).toBe('password_change_required');
    // The change: the current password must be right, the new one new and long enough.
    const change = (body: object) => as(first.auth).post('/api/v1/auth/password', body);
    const wrong = await change({ current_password: 'not it', new_password: 'a brand new password' }).expect(422);
    expect(wrong.body.error.details).toEqual([{ field: 'current_password', message: 'is wrong' }]);
    expect(code(await change({ current_password: password, new_password: password }).expect(422))).toBe('validation_failed');
    expect(code(await change({ current_password: password, new_password: 'short' }).expect(422))).toBe('validation_failed');
    const changed = await change({ current_password: password, new_password: 'a brand new password' }).expect(200);
    expect(changed.body).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: expect.any(Number), must_change_password: false });
    // The token of the one-time password is revoked; the new one works, within the role.
    expect(code(await as(first.auth).get('/api/v1/bots').expect(401))).toBe('unauthorized');
    const auth = `Bearer ${changed.body.access_token as string}`;
    await as(auth).get('/api/v1/bots').expect(200);
    await as(auth).post('/api/v1/bots', { name: 'By the editor' }).expect(201);
    const forbidden = await as(auth).post('/api/v1/api-keys', { name: 'k' }).expect(403);
    expect(forbidden.body).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
    expect(code(await as(auth).get('/api/v1/users').expect(403))).toBe('forbidden');
    // The old password no longer logs in; the new one does, without a change to make.
    await h.http.post('/api/v1/auth/login').send({ email, password }).expect(401);
    expect((await login(h, email, 'a brand new password')).must_change_password).toBe(false);
    const me = await as(auth).get('/api/v1/auth/me').expect(200);
    expect(me.body).toMatchObject({ role: 'editor', must_change_password: false, last_login_at: expect.any(String) });
  });

  it('deactivation refuses the same token on the very next request, on every replica; reactivation lets the user log in again', async () => {
    const user = await userOfRole(h, owner, 'viewer');
    const replica = h.replica();
    await replica.http.get('/api/v1/bots').set('Authorization', user.auth).expect(200);
    await h.http.get('/api/v1/bots').set('Authorization', user.auth).expect(200);
    const off = await as(owner).patch(`/api/v1/users/${user.id}`, { active: false }).expect(200);
    expect(off.body).toMatchObject({ id: user.id, active: false });
    expect(code(await replica.http.get('/api/v1/bots').set('Authorization', user.auth).expect(401))).toBe('unauthorized');
    expect(code(await h.http.get('/api/v1/bots').set('Authorization', user.auth).expect(401))).toBe('unauthorized');
    expect(code(await h.http.post('/api/v1/auth/login').send({ email: user.email, password: user.password }).expect(401))).toBe('invalid_credentials');
    await as(owner).patch(`/api/v1/users/${user.id}`, { active: true }).expect(200);
    await h.http.get('/api/v1/bots').set('Authorization', user.auth).expect(401); // still revoked
    const again = await login(h, user.email, user.password);
    await replica.http.get('/api/v1/bots').set('Authorization', again.auth).expect(200);
  });

  it('a role change revokes the tokens; the next login has the new role', async () => {
    const user = await userOfRole(h, owner, 'viewer');
    const replica = h.replica();
    expect(code(await as(user.auth).post('/api/v1/bots', { name: 'v' }).expect(403))).toBe('forbidden');
    await as(owner).patch(`/api/v1/users/${user.id}`, { role: 'editor' }).expect(200);
    expect(code(await replica.http.get('/api/v1/bots').set('Authorization', user.auth).expect(401))).toBe('unauthorized');
    const again = await login(h, user.email, user.password);
    await replica.http.post('/api/v1/bots').set('Authorization', again.auth).send({ name: 'by a promoted user' }).expect(201);
    // A rename changes no rights: the token stays good.
    await as(owner).patch(`/api/v1/users/${user.id}`, { name: 'Renamed' }).expect(200);
    await as(again.auth).get('/api/v1/bots').expect(200);
  });

  it('a password change revokes the other tokens of the user, on every replica', async () => {
    const user = await userOfRole(h, owner, 'editor');
    const other = await login(h, user.email, user.password);
    const replica = h.replica();
    const changed = await as(user.auth).post('/api/v1/auth/password', { current_password: user.password, new_password: 'yet another new password' }).expect(200);
    for (const auth of [user.auth, other.auth]) await replica.http.get('/api/v1/bots').set('Authorization', auth).expect(401);
    await replica.http.get('/api/v1/bots').set('Authorization', `Bearer ${changed.body.access_token as string}`).expect(200);
  });

  it('only an owner changes an owner or makes one; the last active owner cannot be demoted or deactivated', async () => {
    const me = await ownerId();
    expect(code(await as(owner).patch(`/api/v1/users/${me}`, { role: 'admin' }).expect(409))).toBe('last_owner');
    expect(code(await as(owner).patch(`/api/v1/users/${me}`, { active: false }).expect(409))).toBe('last_owner');
    expect((await as(owner).get(`/api/v1/users/${me}`).expect(200)).body).toMatchObject({ role: 'owner', active: true });

    const admin = await userOfRole(h, owner, 'admin');
    expect(code(await as(admin.auth).post('/api/v1/users', { email: 'o2@example.com', name: 'O', role: 'owner' }).expect(403))).toBe('forbidden');
    expect(code(await as(admin.auth).patch(`/api/v1/users/${me}`, { name: 'Mallory was here' }).expect(403))).toBe('forbidden');
    expect(code(await as(admin.auth).patch(`/api/v1/users/${admin.id}`, { role: 'owner' }).expect(403))).toBe('forbidden');
    // An admin manages the roles below owner.
    const editor = await userOfRole(h, admin.auth, 'editor');
    await as(admin.auth).patch(`/api/v1/users/${editor.id}`, { role: 'viewer' }).expect(200);

    // A second owner: now the first may step down, and the second is then the last.
    const second = await userOfRole(h, owner, 'owner');
    await as(owner).patch(`/api/v1/users/${me}`, { role: 'admin' }).expect(200);
    await as(owner).get('/api/v1/bots').expect(401); // the role change revoked the first owner's token too
    expect(code(await as(second.auth).patch(`/api/v1/users/${second.id}`, { active: false }).expect(409))).toBe('last_owner');
    await as(second.auth).patch(`/api/v1/users/${me}`, { role: 'owner' }).expect(200);
    owner = (await login(h, ADMIN.email, ADMIN.password)).auth;
    await as(owner).get('/api/v1/bots').expect(200);
  });

  it('two owners demoting each other at once: one wins, the other is the last owner', async () => {
    const a = await userOfRole(h, owner, 'owner');
    const b = await userOfRole(h, owner, 'owner');
    const me = await ownerId();
    // a and b become the only owners.
    for (const other of await h.db.collection(COLLECTIONS.users).find({ role: 'owner', active: true, _id: { $nin: [a.id, b.id] } as never }).toArray()) {
      await as(a.auth).patch(`/api/v1/users/${String(other._id)}`, { role: 'admin' }).expect(200);
    }
    const answers = await Promise.all([
      as(a.auth).patch(`/api/v1/users/${b.id}`, { role: 'editor' }),
      as(b.auth).patch(`/api/v1/users/${a.id}`, { active: false }),
    ]);
    const statuses = answers.map((r) => (r.status === 200 ? 'ok' : code(r) === 'last_owner' ? 'last_owner' : r.status === 401 ? 'revoked' : `${r.status} ${code(r)}`)).sort();
    // The loser was either refused as the last owner, or its own token was revoked by the winner first.
    expect(statuses.filter((x) => x === 'ok')).toHaveLength(1);
    expect(statuses.every((x) => ['ok', 'last_owner', 'revoked'].includes(x))).toBe(true);
    const owners = (await h.db.collection(COLLECTIONS.users).find({ role: 'owner', active: true }).toArray()).map((u) => String(u._id));
    expect(owners).toHaveLength(1);
    // Put things back: the remaining owner makes the seeded admin an owner again.
    const survivor = owners[0] === a.id ? a : b;
    await as(survivor.auth).patch(`/api/v1/users/${me}`, { role: 'owner' }).expect(200);
    owner = (await login(h, ADMIN.email, ADMIN.password)).auth;
  });

  it('refuses a second user of an email, a role that is none, an unknown user, and a hard delete', async () => {
    await as(owner).post('/api/v1/users', { email: 'twice@example.com', name: 'A', role: 'viewer' }).expect(201);
    expect(code(await as(owner).post('/api/v1/users', { email: 'TWICE@example.com', name: 'B', role: 'viewer' }).expect(409))).toBe('user_exists');
    expect(code(await as(owner).post('/api/v1/users', { email: 'r@example.com', name: 'B', role: 'root' }).expect(422))).toBe('validation_failed');
    expect(code(await as(owner).post('/api/v1/users', { email: 'r@example.com', name: 'B', role: 'viewer', password: 'mine' }).expect(422))).toBe('validation_failed');
    expect(code(await as(owner).patch('/api/v1/users/0123456789abcdef01234567', { name: 'x' }).expect(404))).toBe('not_found');
    expect(code(await as(owner).patch(`/api/v1/users/${await ownerId()}`, {}).expect(422))).toBe('validation_failed');
    await h.http.delete(`/api/v1/users/${await ownerId()}`).set('Authorization', owner).expect(405);
  });

  it('an email must be an address (422 naming email; found by schema fuzzing); a user stored before the check still logs in', async () => {
    const count = await h.db.collection(COLLECTIONS.users).countDocuments();
    for (const email of ['0@0', '𣊗@󺛁', 'ana@localhost', 'ana@example..com', 'ana example@example.com', '@example.com']) {
      const res = await as(owner).post('/api/v1/users', { email, name: 'N', role: 'viewer' }).expect(422);
      expect({ email, error: res.body.error }).toEqual({ email, error: { code: 'validation_failed', message: expect.any(String), details: [{ field: 'email', message: 'must match format "email"' }] } });
    }
    expect(await h.db.collection(COLLECTIONS.users).countDocuments()).toBe(count);
    await as(owner).post('/api/v1/users', { email: "O'Brien+ops@mail.Example.co.uk", name: 'O', role: 'viewer' }).expect(201);
    // Stored as an older release let it be: listed as it is, and its login works (a bad address at login is a plain 401).
    const id = new ObjectId().toHexString();
    const user = { email: '0@0', name: 'Old', password_hash: await hashPassword('an old password'), role: 'viewer', active: true, must_change_password: false, token_version: 0, created_at: new Date(), last_login_at: null };
    await h.db.collection(COLLECTIONS.users).insertOne({ _id: id as unknown as ObjectId, ...user });
    expect((await as(owner).get('/api/v1/users').expect(200)).body.items).toContainEqual(expect.objectContaining({ id, email: '0@0' }));
    await login(h, '0@0', 'an old password');
    expect(code(await h.http.post('/api/v1/auth/login').send({ email: '1@1', password: 'an old password' }).expect(401))).toBe('invalid_credentials');
  });
});

describe('a second backend process', () => {
  const mainJs = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
  let child: ChildProcess | undefined;
  let log = '';
  afterAll(() => {
    child?.kill('SIGKILL');
    saveLogs('backend-users-process', log);
  });

  it('refuses a deactivated user\'s token on its very next request', async () => {
    // The real entry point (dist/main.js, built by `tsc -b` before jest runs) on the harness's stores.
    const port = await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      MONGODB_URI: process.env.MONGODB_URI!,
      MONGODB_DB: h.db.databaseName,
      REDIS_URL: process.env.REDIS_URL!,
      JWT_SECRET,
      WORKER_AUTH_TOKEN: WORKER_TOKEN,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    };
    child = spawn(process.execPath, [mainJs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    await waitUntil(async () => (await fetch(`${base}/health`)).status === 200, { what: 'second backend process', timeoutMs: 90_000 });
    const other = (path: string, auth: string) => fetch(`${base}${path}`, { headers: { Authorization: auth } });

    const user = await userOfRole(h, owner, 'editor');
    expect((await other('/api/v1/bots', user.auth)).status).toBe(200);
    await as(owner).patch(`/api/v1/users/${user.id}`, { active: false }).expect(200);
    const refused = await other('/api/v1/bots', user.auth);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    // The owner's token, untouched, still works there; the one-time password never reached its log either.
    expect((await other('/api/v1/bots', owner)).status).toBe(200);
    expect(log).not.toContain(user.password);
  });
});

describe('upgrade from a release without roles', () => {
  it('the seeded admin becomes the first owner, and its login and its old tokens keep working', async () => {
    // A database as an older release left it: its one user, the seeded admin, with role admin and no other field.
    const db = h.db.client.db(`${h.db.databaseName}_legacy`);
    try {
      const id = new ObjectId().toHexString();
      await db.collection(COLLECTIONS.users).insertOne({ _id: id as unknown as ObjectId, email: 'old@example.com', password_hash: await hashPassword('an old password'), role: 'admin', created_at: new Date() });
      // A token the older release issued (no version claim).
      const now = Math.floor(h.clock.ms / 1000);
      const oldToken = jwt.sign({ sub: id, email: 'old@example.com', role: 'admin', iat: now, exp: now + 600 }, JWT_SECRET);
      await prepareStores(db, h.redis);
      await prepareStores(db, h.redis); // idempotent
      expect(await db.collection(COLLECTIONS.users).findOne({ _id: id as unknown as ObjectId })).toMatchObject({ role: 'owner', active: true, must_change_password: false, token_version: 0 });
      const { createApp } = await import('../app.js');
      const supertest = (await import('supertest')).default;
      const { createLogger } = await import('../core/logger.js');
      const app = createApp({ settings: h.settings, db, redis: h.redis, logger: createLogger('silent'), clock: h.clock.now, telephony: null });
      const http = supertest(app.callback());
      const me = await http.get('/api/v1/auth/me').set('Authorization', `Bearer ${oldToken}`).expect(200);
      expect(me.body).toMatchObject({ id, email: 'old@example.com', role: 'owner' });
      const res = await http.post('/api/v1/auth/login').send({ email: 'old@example.com', password: 'an old password' }).expect(200);
      await http.post('/api/v1/users').set('Authorization', `Bearer ${res.body.access_token as string}`).send({ email: 'new@example.com', name: 'N', role: 'admin' }).expect(201);
    } finally {
      await db.dropDatabase();
    }
  });
});
