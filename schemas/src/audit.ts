// The audit log (docs/design.md §12): one entry per change made through the API, logins and failed logins
// included. Append-only: entries are only ever listed (GET /api/v1/audit), never changed or deleted.
import { Type, type Static } from '@sinclair/typebox';
import { CURSOR_PATTERN } from './formats.js';

export const AUDIT_ACTOR_TYPES = ['user', 'api_key', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/** What a secret's value reads as in `changes` (before and after). */
export const AUDIT_REDACTED = '[redacted]';

export const AuditActor = Type.Object(
  {
    type: Type.Union(AUDIT_ACTOR_TYPES.map((t) => Type.Literal(t)), { description: '`user` (admin token or a login), `api_key` (X-API-Key) or `system`' }),
    id: Type.Union([Type.String(), Type.Null()], { description: "the user's or key's id; null for a failed login (no user signed in)" }),
    label: Type.String({ description: "the user's email (for a failed login: the email tried), the key's name and prefix" }),
  },
  { additionalProperties: false },
);
export type AuditActor = Static<typeof AuditActor>;

export const AuditEntry = Type.Object(
  {
    id: Type.String(),
    at: Type.String({ format: 'date-time' }),
    actor: AuditActor,
    action: Type.String({ description: '`<resource>.<verb>`, e.g. `bot.update`, `api_key.deactivate`, `campaign.start`, `auth.login_failed`' }),
    resource: Type.Object(
      { type: Type.String({ description: 'e.g. `bot`, `api_key`, `user`, `campaign`' }), id: Type.Union([Type.String(), Type.Null()]) },
      { additionalProperties: false },
    ),
    changes: Type.Record(Type.String(), Type.Array(Type.Unknown(), { minItems: 2, maxItems: 2, description: '[before, after]' }), {
      description: `Each changed field: [before, after] (null where there was none). Secrets (passwords, keys, tokens, signing secrets, tool header values) read "${AUDIT_REDACTED}"`,
    }),
    ip: Type.String({ description: 'the client address' }),
    request_id: Type.String({ description: "the request's X-Request-Id" }),
  },
  { additionalProperties: false },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditPage = Type.Object(
  { items: Type.Array(AuditEntry), next_cursor: Type.Union([Type.String({ pattern: CURSOR_PATTERN }), Type.Null()]) },
  { additionalProperties: false },
);
export type AuditPage = Static<typeof AuditPage>;
