// The audit log's one writer (docs/design.md §12). `recordAudit` appends one entry: who (the admin user or API
// key of the request, else the system), what (`action`, the resource), the fields changed with their value
// before and after (`auditChanges`: secrets redacted by field name), the client address and the request id.
// Routes opt in with the `audited` middleware (the action and where the resource is stored): it reads the
// resource before the route runs and again after it succeeded, and writes the entry before the answer leaves.
// The entry is written in the request: if it cannot be (the store is down), the request fails as it would for
// its own write (503), so no successful change goes unrecorded. Logins are recorded by auth/admin.ts.
import { ObjectId } from 'mongodb';
import type { Context, Middleware } from 'koa';
import { AUDIT_REDACTED, type AuditActor } from '@voice-platform/schemas';
import type { Services } from '../core/deps.js';
import type { AdminPrincipal, KeyPrincipal } from '../core/principal.js';
import { COLLECTIONS } from '../core/collections.js';
import { auditLog, type AuditDoc } from './store.js';

/** Field names whose values are secrets, wherever they appear (any depth). */
const SECRET_NAMES = new Set(['password', 'secret', 'key', 'token', 'access_token', 'tool_secret', 'api_key', 'authorization', 'current_password', 'new_password']);
const SECRET_SUFFIXES = ['_hash', '_sealed', '_secret', '_password', '_token'];
/** Objects whose every value is a secret (an HTTP tool's headers: the names stay, the values do not). */
const SECRET_VALUED = new Set(['headers']);
/** Bookkeeping, not a change anyone made: left out of `changes`. */
const IGNORED = new Set(['_id', 'created_at', 'updated_at', 'last_used_at']);

/** Names that look like a secret's and are not (flags about one). */
const NOT_SECRET = new Set(['must_change_password', 'has_password', 'has_tool_secret']);

export const isSecretField = (name: string): boolean => {
  const n = name.toLowerCase();
  if (NOT_SECRET.has(n)) return false;
  return SECRET_NAMES.has(n) || SECRET_SUFFIXES.some((s) => n.endsWith(s));
};

/** A stored value as JSON would show it (dates as RFC 3339, ids as strings). */
function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value instanceof ObjectId) return value.toHexString();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value === undefined ? null : value;
}

/** `value` as it may appear in the log: every secret within it (by field name) as "[redacted]". */
export function redact(value: unknown, name?: string): unknown {
  if (name !== undefined && isSecretField(name)) return value === null || value === undefined ? null : AUDIT_REDACTED;
  if (name !== undefined && SECRET_VALUED.has(name.toLowerCase()) && value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.keys(value).map((k) => [k, AUDIT_REDACTED]));
  }
  if (value instanceof Date || value instanceof ObjectId) return plain(value);
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  return value === undefined ? null : value;
}

/** A stored secret's field name as the API knows it: `secret_sealed` → `secret`, `auth_password_sealed` → `auth_password`. */
const shownName = (field: string) => (field.endsWith('_sealed') ? field.slice(0, -'_sealed'.length) : field);

/** JSON with keys in order, so that equal values compare equal whatever order their fields were stored in. */
function canonical(value: unknown): string {
  const v = plain(value);
  const sort = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sort) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])])) : x;
  return JSON.stringify(sort(v));
}

/** Each top-level field that differs between `before` and `after` (null: no resource): [before, after], redacted. */
export function auditChanges(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Record<string, [unknown, unknown]> {
  const out: Record<string, [unknown, unknown]> = {};
  const fields = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const field of [...fields].sort()) {
    if (IGNORED.has(field)) continue;
    const b = before?.[field] ?? null;
    const a = after?.[field] ?? null;
    if (canonical(b) === canonical(a)) continue;
    out[shownName(field)] = [redact(b, field), redact(a, field)];
  }
  return out;
}

/** Who made the request: its admin user, else its API key, else the system. */
export function requestActor(ctx: Context): AuditActor {
  const admin = ctx.state.admin as AdminPrincipal | undefined;
  if (admin) return { type: 'user', id: admin.id, label: admin.email };
  const key = ctx.state.apiKey as KeyPrincipal | undefined;
  if (key) return { type: 'api_key', id: key.id, label: `${key.name} (${key.prefix})` };
  return { type: 'system', id: null, label: 'system' };
}

export interface AuditRecord {
  action: string;
  resource: { type: string; id: string | null };
  /** The resource before and after the change (stored documents or answers); `changes` is computed from them. */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  /** Else the request's (requestActor). */
  actor?: AuditActor;
}

/** Appends one entry. Throws if it cannot (the request then fails: errors.ts answers a store outage 503). */
export async function recordAudit(svc: Services, ctx: Context, r: AuditRecord): Promise<void> {
  const doc: AuditDoc = {
    _id: new ObjectId().toHexString(),
    at: svc.now(),
    actor: r.actor ?? requestActor(ctx),
    action: r.action,
    resource: r.resource,
    changes_json: JSON.stringify(auditChanges(r.before ?? null, r.after ?? null)),
    ip: ctx.ip,
    request_id: String(ctx.state.requestId ?? ''),
  };
  await auditLog(svc.db).insertOne(doc);
}

export interface AuditTarget {
  /** The resource's type in the entry (`bot`, `api_key`, …). */
  type: string;
  /** Where the resource is stored (by `_id`: the path's `:id`, else the answer's `id`): read before and after. */
  collection?: string;
  /** The resource's id where neither the path nor the answer has it (the signed-in user's own record). */
  id?: (ctx: Context) => string | null;
  /** Instead of a stored document: the resource's id and what the change did, from the request and its answer. */
  describe?: (ctx: Context) => { id: string | null; after: Record<string, unknown> };
}

/**
 * The audit middleware of a route that changes something: put it after the route's authentication. `action`,
 * or a function of the (parsed) request that names it (`bot.update` or `bot.deactivate`). Nothing is recorded
 * for a request that fails.
 */
export function audited(svc: Services, action: string | ((ctx: Context) => string), target: AuditTarget): Middleware {
  const load = async (id: string | null): Promise<Record<string, unknown> | null> =>
    id && target.collection ? ((await svc.db.collection(target.collection).findOne({ _id: id as never })) as Record<string, unknown> | null) : null;
  return async (ctx, next) => {
    const pathId = target.id ? target.id(ctx) : typeof ctx.params?.id === 'string' ? (ctx.params.id as string) : null;
    const before = target.describe ? null : await load(pathId);
    await next();
    if (ctx.status >= 400) return;
    const name = typeof action === 'string' ? action : action(ctx);
    if (target.describe) {
      const d = target.describe(ctx);
      await recordAudit(svc, ctx, { action: name, resource: { type: target.type, id: d.id }, before: null, after: d.after });
      return;
    }
    const answered = ctx.body && typeof ctx.body === 'object' && typeof (ctx.body as { id?: unknown }).id === 'string' ? (ctx.body as { id: string }).id : null;
    const id = pathId ?? answered;
    await recordAudit(svc, ctx, { action: name, resource: { type: target.type, id }, before, after: await load(id) });
  };
}

/** `<type>.deactivate` when the request's body turns the resource off (`is_active` or `active` false), else `<type>.update`. */
export const updateOrDeactivate = (type: string) => (ctx: Context): string => {
  const body = ctx.request.body as { is_active?: unknown; active?: unknown } | undefined;
  return body && (body.is_active === false || body.active === false) ? `${type}.deactivate` : `${type}.update`;
};

/** The resources the routes record changes of, and where each is stored. */
export const AUDITED = {
  apiKey: { type: 'api_key', collection: COLLECTIONS.apiKeys },
  bot: { type: 'bot', collection: COLLECTIONS.bots },
  user: { type: 'user', collection: COLLECTIONS.users },
  /** The signed-in user's own record (a password change). */
  self: { type: 'user', collection: COLLECTIONS.users, id: (ctx: Context) => (ctx.state.admin as AdminPrincipal | undefined)?.id ?? null },
  trunk: { type: 'outbound_trunk', collection: COLLECTIONS.trunks },
  inboundNumber: { type: 'inbound_number', collection: COLLECTIONS.inboundNumbers },
  webhook: { type: 'webhook', collection: COLLECTIONS.webhooks },
  campaign: { type: 'campaign', collection: COLLECTIONS.campaigns },
  /** Contacts added to a campaign: the counts the answer gives. */
  campaignContacts: {
    type: 'campaign',
    describe: (ctx: Context) => {
      const r = ctx.body as { added?: unknown; duplicates?: unknown; rejected?: unknown[] };
      return { id: ctx.params.id as string, after: { contacts_added: r.added ?? null, contacts_duplicates: r.duplicates ?? null, contacts_rejected: Array.isArray(r.rejected) ? r.rejected.length : null } };
    },
  },
  /** Numbers added to the do-not-call list: those asked for, and how many were new. */
  dncAdd: {
    type: 'dnc',
    describe: (ctx: Context) => {
      const asked = (ctx.request.body as { numbers?: unknown }).numbers;
      const r = ctx.body as { added?: unknown; duplicates?: unknown };
      return { id: null, after: { numbers: Array.isArray(asked) ? asked : null, added: r.added ?? null, duplicates: r.duplicates ?? null } };
    },
  },
  /** A number taken off the do-not-call list. */
  dncRemove: {
    type: 'dnc',
    describe: (ctx: Context) => ({ id: ctx.params.number as string, after: { number: ctx.params.number ?? null } }),
  },
} satisfies Record<string, AuditTarget>;
