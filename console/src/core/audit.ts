// The audit page's words and requests (pages/audit-page.ts): an entry's changes as field: before → after,
// the filters as the API's query. Pure: unit-tested.
import type { AuditEntry } from '@voice-platform/schemas/audit.js';
import { parseLocalDate } from './dashboard.js';

/** The audit log's filters (GET /api/v1/audit); empty ones are left out. */
export interface AuditFilters {
  actor_id?: string;
  resource_type?: string;
  resource_id?: string;
  action?: string;
  from?: string;
  to?: string;
  cursor?: string;
  limit?: number;
}

/** What the page's filters hold (days as `YYYY-MM-DD` of date inputs, both included). */
export interface AuditFilterForm {
  actor_id: string;
  resource_type: string;
  action: string;
  fromDate: string;
  toDate: string;
}

export const EMPTY_AUDIT_FILTERS: AuditFilterForm = { actor_id: '', resource_type: '', action: '', fromDate: '', toDate: '' };

/** The resource types the API records (backend audit/audit.ts), in words. */
export const AUDIT_RESOURCE_TYPES: ReadonlyArray<[string, string]> = [
  ['api_key', 'API key'],
  ['bot', 'Bot'],
  ['campaign', 'Campaign'],
  ['dnc', 'Do-not-call'],
  ['inbound_number', 'Inbound number'],
  ['outbound_trunk', 'Outbound trunk'],
  ['user', 'User'],
  ['webhook', 'Webhook'],
];

/** Actions the API records (suggestions for the action filter; any action may be typed). */
export const AUDIT_ACTIONS: readonly string[] = [
  'api_key.create', 'api_key.update', 'api_key.deactivate',
  'auth.login', 'auth.login_failed',
  'bot.create', 'bot.update', 'bot.deactivate', 'bot.rotate_tool_secret',
  'campaign.create', 'campaign.add_contacts', 'campaign.start', 'campaign.pause', 'campaign.resume', 'campaign.cancel',
  'dnc.add', 'dnc.remove',
  'inbound_number.create', 'inbound_number.update', 'inbound_number.delete',
  'outbound_trunk.create', 'outbound_trunk.update', 'outbound_trunk.delete',
  'user.create', 'user.update', 'user.deactivate', 'user.change_password',
  'webhook.create', 'webhook.update', 'webhook.deactivate', 'webhook.delete',
];

export const resourceTypeLabel = (type: string): string => AUDIT_RESOURCE_TYPES.find(([t]) => t === type)?.[1] ?? type;

/** The filters as the API's query (a day's end: the next midnight, exclusive), or the problem with the days. */
export function auditQuery(f: AuditFilterForm): { filters: AuditFilters } | { error: string } {
  const filters: AuditFilters = {};
  if (f.actor_id) filters.actor_id = f.actor_id;
  if (f.resource_type) filters.resource_type = f.resource_type;
  const action = f.action.trim();
  if (action) {
    if (!/^[A-Za-z0-9_.:+@-]{1,200}$/.test(action)) return { error: 'An action reads like bot.update.' };
    filters.action = action;
  }
  const from = f.fromDate ? parseLocalDate(f.fromDate) : null;
  const last = f.toDate ? parseLocalDate(f.toDate) : null;
  if ((f.fromDate && !from) || (f.toDate && !last)) return { error: 'Enter a valid date.' };
  const to = last ? new Date(last.getFullYear(), last.getMonth(), last.getDate() + 1) : null;
  if (from && to && to <= from) return { error: 'The first day must not be after the last.' };
  if (from) filters.from = from.toISOString();
  if (to) filters.to = to.toISOString();
  return { filters };
}

/** A value of `changes` in words: `(none)` for null, strings as they are, anything else as JSON. */
export function changeValue(v: unknown): string {
  if (v === null || v === undefined) return '(none)';
  if (typeof v === 'string') return v === '' ? '""' : v;
  return JSON.stringify(v);
}

/** At most `max` characters (the rest as …): a long prompt stays readable in the list. */
export function clip(s: string, max = 160): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** An entry's changes, field by field in their order: [field, before, after] in words. */
export function changeRows(changes: AuditEntry['changes']): Array<[string, string, string]> {
  return Object.entries(changes).map(([k, [before, after]]) => [k, changeValue(before), changeValue(after)]);
}

/** The actor in words: the label and, for a key, that it is one; a failed login has no actor id. */
export function actorLabel(actor: AuditEntry['actor']): string {
  if (actor.type === 'api_key') return `${actor.label} (API key)`;
  if (actor.type === 'system') return actor.label ? `${actor.label} (system)` : 'System';
  return actor.label;
}
