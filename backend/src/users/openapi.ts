// The OpenAPI paths of users and of the password change, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { PasswordChange, User, UserCreate, UserCreated, UserList, UserUpdate, type ErrorCode } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'body' | 'idParam' | 'ADMIN' | 'BODY' | 'LoginResponse'>;

const ROLES =
  'Roles: `owner` (everything, manages users), `admin` (everything except changing an owner or making one), `editor` (bots, campaigns, ' +
  'contacts, DNC, test calls; reads the rest), `viewer` (read-only; never a secret). What each may call: docs/roles.md.';
const OWNERS: Partial<Record<ErrorCode, string>> = { forbidden: 'The role may not manage users, or an admin tried to change an owner or make one' };

export function userPaths(h: Helpers): Record<string, object> {
  const security = [{ adminJwt: [] }];
  return {
    '/api/v1/auth/password': {
      post: {
        operationId: 'changePassword',
        summary: "Change the signed-in user's password",
        description:
          'The only operation open to a user whose password must be changed (a new user\'s one-time password). A wrong `current_password` → ' +
          '422 `validation_failed` naming it (attempts limited as logins are: 429 `rate_limited`); the new one must differ. Every earlier token of ' +
          'the user is revoked; the answer carries a new one.',
        security,
        requestBody: h.body(PasswordChange),
        responses: { 200: h.ok('A new bearer JWT', h.LoginResponse), ...h.errors([...h.ADMIN, ...h.BODY, 'rate_limited', 'service_unavailable']) },
      },
    },
    '/api/v1/users': {
      get: { operationId: 'listUsers', summary: 'List users, oldest first', description: ROLES, security, responses: { 200: h.ok('The users', UserList), ...h.errors([...h.ADMIN]) } },
      post: {
        operationId: 'createUser',
        summary: 'Create a user; the one-time password is in this response only',
        description: `${ROLES} The user must change the password at first login (\`must_change_password\`). Only an owner may create an owner.`,
        security,
        requestBody: h.body(UserCreate),
        responses: { 201: h.ok('The user, with `password` shown this once', UserCreated), ...h.errors([...h.ADMIN, ...h.BODY, 'user_exists'], OWNERS) },
      },
    },
    '/api/v1/users/{id}': {
      parameters: [h.idParam('User id')],
      get: { operationId: 'getUser', summary: 'One user', security, responses: { 200: h.ok('The user', User), ...h.errors([...h.ADMIN, 'not_found']) } },
      patch: {
        operationId: 'updateUser',
        summary: 'Rename, change the role of, deactivate or reactivate a user',
        description:
          'Deactivation and a role change revoke every token of the user at once (on every replica). Only an owner may change an owner or make ' +
          'one (else 403 `forbidden`); the last active owner cannot be demoted or deactivated (409 `last_owner`). No hard delete.',
        security,
        requestBody: h.body(UserUpdate),
        responses: { 200: h.ok('The user', User), ...h.errors([...h.ADMIN, ...h.BODY, 'not_found', 'last_owner', 'conflict'], OWNERS) },
      },
    },
  };
}
