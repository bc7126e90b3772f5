// Creates the first admin from ADMIN_EMAIL / ADMIN_PASSWORD. Idempotent: an existing admin is never
// changed, and a concurrent run loses cleanly on the unique email index.
import { ObjectId, type Db } from 'mongodb';
import { COLLECTIONS } from '../stores.js';
import { hashPassword } from './password.js';
import type { UserDoc } from './admin.js';

type SeedResult = 'created' | 'exists';

export async function seedAdmin(db: Db, email: string, password: string, now = new Date()): Promise<SeedResult> {
  const users = db.collection<UserDoc>(COLLECTIONS.users);
  const normalized = email.trim().toLowerCase();
  if (await users.findOne({ email: normalized })) return 'exists';
  try {
    await users.insertOne({ _id: new ObjectId().toHexString(), email: normalized, password_hash: await hashPassword(password), role: 'admin', created_at: now });
    return 'created';
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return 'exists';
    throw err;
  }
}
