// Users of the admin API and console (docs/design.md §12): each has one role. The one-time password of a new
// user appears only in UserCreated; a password is never returned otherwise.
import { Type, type Static } from '@sinclair/typebox';

/** From most to least powerful. `owner`: everything, manages users (owners included); `admin`: everything
 *  except changing an owner or making one; `editor`: bots, campaigns, contacts, DNC, test calls, reads the
 *  rest that is not a secret; `viewer`: read-only, never a secret. What each may call: backend/src/auth/permissions.ts. */
export const USER_ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** At least this long; at most 1024 (hashing cost). */
export const MIN_PASSWORD_LENGTH = 12;

const Role = Type.Union(USER_ROLES.map((r) => Type.Literal(r)), { description: 'owner, admin, editor or viewer (docs/roles.md)' });
/** ajv-formats' `email` (RFC 5321's ASCII form, a domain of dotted labels): `0@0` or `𣊗@󺛁` is no address
 *  anyone can be reached at. Users stored before this check keep their addresses. */
const Email = Type.String({ minLength: 3, maxLength: 320, format: 'email', description: 'an email address, e.g. ana@example.com; stored lower-cased; unique' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const User = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: Role,
    active: Type.Boolean(),
    must_change_password: Type.Boolean({ description: 'until changed (POST /api/v1/auth/password), every other route answers 403 password_change_required' }),
    created_at: Type.String({ format: 'date-time' }),
    last_login_at: nullableTime,
  },
  { additionalProperties: false },
);
export type User = Static<typeof User>;

export const UserCreate = Type.Object({ email: Email, name: Name, role: Role }, { additionalProperties: false });
export type UserCreate = Static<typeof UserCreate>;

export const UserCreated = Type.Object(
  { ...User.properties, password: Type.String({ minLength: MIN_PASSWORD_LENGTH, description: 'the one-time password: in this response only, ever; to be changed at first login' }) },
  { additionalProperties: false },
);
export type UserCreated = Static<typeof UserCreated>;

export const UserUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    role: Type.Optional(Role),
    /** false: deactivate (the user's tokens stop working at once); true: reactivate (they log in again). */
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UserUpdate = Static<typeof UserUpdate>;

export const UserList = Type.Object({ items: Type.Array(User) }, { additionalProperties: false });
export type UserList = Static<typeof UserList>;

export const PasswordChange = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, description: `at least ${MIN_PASSWORD_LENGTH} characters; not the current one` }),
  },
  { additionalProperties: false },
);
export type PasswordChange = Static<typeof PasswordChange>;
