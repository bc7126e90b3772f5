// Test helpers: a user of a role, created by an owner, signed in and past the one-time password change.
import type { UserRole } from '@voice-platform/schemas';
import type { Harness } from './harness.js';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  /** `Bearer <token>`, after the password change. */
  auth: string;
}

let seq = 0;

export async function login(h: Harness, email: string, password: string): Promise<{ auth: string; must_change_password: boolean }> {
  const res = await h.http.post('/api/v1/auth/login').send({ email, password });
  if (res.status !== 200) throw new Error(`login of ${email} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { auth: `Bearer ${res.body.access_token as string}`, must_change_password: res.body.must_change_password as boolean };
}

export async function userOfRole(h: Harness, ownerAuth: string, role: UserRole, name = `${role} ${++seq}`): Promise<TestUser> {
  const email = `${role}-${seq}-${Date.now()}@example.com`;
  const created = await h.http.post('/api/v1/users').set('Authorization', ownerAuth).send({ email, name, role });
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const first = await login(h, email, created.body.password as string);
  const password = `new password of ${email}`;
  const changed = await h.http.post('/api/v1/auth/password').set('Authorization', first.auth).send({ current_password: created.body.password, new_password: password });
  if (changed.status !== 200) throw new Error(`password change failed: ${changed.status} ${JSON.stringify(changed.body)}`);
  return { id: created.body.id as string, email, password, auth: `Bearer ${changed.body.access_token as string}` };
}
