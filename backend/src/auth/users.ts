// Users as stored (collection `users`). `token_version` is carried by every token issued (claim `tv`) and
// moved by each deactivation, role change and password change: every replica reads the user on every
// request (auth/admin.ts), so a token of an earlier version is refused on its very next request anywhere.
import type { Db } from 'mongodb';
import type { User, UserRole } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';

/** The Redis lock (locks.ts) every change of a user holds: one at a time, so the last-owner check and a
 *  version-conditional write each see the users as they are. Changes of users are rare. */
export const USERS_LOCK = 'users';

export interface UserDoc {
  _id: string;
  email: string;
  name: string;
  password_hash: string;
  role: UserRole;
  active: boolean;
  must_change_password: boolean;
  token_version: number;
  created_at: Date;
  last_login_at: Date | null;
  updated_at?: Date;
}

/** A user stored before users had roles (releases before issue 24): the seeded admin, all-powerful, and so
 *  the first owner. Such a document has no `active` field. */
type LegacyUserDoc = Pick<UserDoc, '_id' | 'email' | 'password_hash' | 'created_at'> & { role: 'admin' } & Partial<UserDoc>;

/** The stored document as today's code reads it: a legacy one (not migrated yet, e.g. read by a replica
 *  booted before migrateUsers ran) reads as what migrateUsers makes of it. */
export function readUser(doc: UserDoc | LegacyUserDoc | null): UserDoc | null {
  if (!doc) return null;
  if (doc.active !== undefined) return doc as UserDoc;
  return { ...LEGACY_DEFAULTS, ...doc, role: 'owner', active: true } as UserDoc;
}

const LEGACY_DEFAULTS = { name: 'Admin', must_change_password: false, token_version: 0, last_login_at: null };

/** Every legacy user becomes an active owner, once (only documents lacking `active` match: idempotent). */
export async function migrateUsers(db: Db): Promise<number> {
  const res = await db
    .collection(COLLECTIONS.users)
    .updateMany({ active: { $exists: false } }, { $set: { ...LEGACY_DEFAULTS, role: 'owner', active: true } });
  return res.modifiedCount;
}

export function publicUser(doc: UserDoc): User {
  return {
    id: doc._id,
    email: doc.email,
    name: doc.name,
    role: doc.role,
    active: doc.active,
    must_change_password: doc.must_change_password,
    created_at: doc.created_at.toISOString(),
    last_login_at: doc.last_login_at ? doc.last_login_at.toISOString() : null,
  };
}
