// API keys as the admin API accepts and returns them. The full key appears only in ApiKeyCreated.
import { Type, type Static } from '@sinclair/typebox';
import { API_KEY_PATTERN } from './formats.js';

/** A new expiry: a real RFC 3339 time (no leap second `:60`, no Feb 30) that lies in the future. */
const newExpiry = () =>
  Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'RFC 3339; must lie in the future (else 422 validation_failed); null: never expires',
    }),
  );

const API_KEY_STATUSES = ['active', 'inactive', 'expired'] as const;
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number];

/** What a key may do (docs/roles.md, the permissions table's `key` column names the scope each operation needs). */
export const API_KEY_SCOPES = ['dialout', 'calls:read', 'test_calls', 'campaigns', 'calls:control'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
/** The scopes of a key created without `scopes`. */
export const DEFAULT_API_KEY_SCOPES: readonly ApiKeyScope[] = ['dialout', 'calls:read'];
/** The scopes of a key created before keys had scopes: everything a key could call then (dial-outs, its calls and
 *  their recordings, test calls), so that existing integrations keep working; not `campaigns`, which no key could use. */
export const LEGACY_API_KEY_SCOPES: readonly ApiKeyScope[] = ['dialout', 'calls:read', 'test_calls'];

const scopes = (description: string) =>
  Type.Array(Type.Union(API_KEY_SCOPES.map((s) => Type.Literal(s))), { minItems: 1, maxItems: API_KEY_SCOPES.length, uniqueItems: true, description });

export const ApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    expires_at: newExpiry(),
    scopes: Type.Optional(scopes('What the key may do, each scope once, at least one; default `["dialout", "calls:read"]`')),
  },
  { additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

export const ApiKeyUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** Only `false` (deactivate) changes anything; deactivation is final. */
    is_active: Type.Optional(Type.Boolean()),
    expires_at: newExpiry(),
    /** Replaces the key's scopes (a live key only: an inactive or expired one → 409 api_key_revoked). */
    scopes: Type.Optional(scopes("The key's new scopes (replacing the old ones), each once, at least one")),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ApiKeyUpdate = Static<typeof ApiKeyUpdate>;

const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const ApiKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    /** `vx_` and the key's next 4 characters: enough to recognise it, useless to an attacker. */
    prefix: Type.String(),
    is_active: Type.Boolean(),
    expires_at: nullableTime,
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: nullableTime,
    status: Type.Union(API_KEY_STATUSES.map((s) => Type.Literal(s))),
    deactivated_at: nullableTime,
    deactivated_by: Type.Union([Type.String(), Type.Null()]),
    created_by: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Type.Union(API_KEY_SCOPES.map((s) => Type.Literal(s))), { description: 'What the key may do: `dialout`, `calls:read`, `test_calls`, `campaigns`, `calls:control`' }),
  },
  { additionalProperties: false },
);
export type ApiKey = Static<typeof ApiKey>;

export const ApiKeyCreated = Type.Object(
  { ...ApiKey.properties, key: Type.String({ pattern: API_KEY_PATTERN }) },
  { additionalProperties: false },
);
export type ApiKeyCreated = Static<typeof ApiKeyCreated>;
