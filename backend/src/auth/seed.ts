// Creates the first user, an owner, from ADMIN_EMAIL / ADMIN_PASSWORD. Idempotent: an existing user of that
// email is never changed, and a concurrent run loses cleanly on the unique email index. (An admin seeded by a
// release before roles is made the first owner by migrateUsers, users/store.ts, at boot.)
import { ObjectId, type Db } from 'mongodb';
import { COLLECTIONS } from '../core/collections.js';
import { hashPassword } from './password.js';
import type { UserDoc } from './users.js';

type SeedResult = 'created' | 'exists';

export async function seedAdmin(db: Db, email: string, password: string, now = new Date()): Promise<SeedResult> {
  const users = db.collection<UserDoc>(COLLECTIONS.users);
  const normalized = email.trim().toLowerCase();
  if (await users.findOne({ email: normalized })) return 'exists';
  try {
    await users.insertOne({
      _id: new ObjectId().toHexString(),
      email: normalized,
      name: 'Admin',
      password_hash: await hashPassword(password),
      role: 'owner',
      active: true,
      must_change_password: false,
      token_version: 0,
      created_at: now,
      last_login_at: null,
    });
    return 'created';
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return 'exists';
    throw err;
  }
}
