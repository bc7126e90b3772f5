// GET /api/v1/audit (owner, admin: the permissions table): the audit log, newest first, filtered and
// cursor-paginated like the other lists (`<at in ms>.<entry id>`). No route changes or deletes an entry.
import type { Filter } from 'mongodb';
import type { Router } from '@koa/router';
import { RESOURCE_ID_PATTERN } from '@voice-platform/schemas';
import type { Services } from '../core/deps.js';
import { pageQuery, parseDateTime, type FieldProblem } from '../core/validate.js';
import { requirePermission } from '../auth/admin.js';
import { auditLog, publicEntry, type AuditDoc } from './store.js';

export const AUDIT_FILTERS = ['actor_id', 'resource_type', 'resource_id', 'action', 'from', 'to'];
const SHORT_TEXT = /^[A-Za-z0-9_.:+@-]{1,200}$/;
const resourceId = new RegExp(RESOURCE_ID_PATTERN);

export function auditRoutes(router: Router, svc: Services): void {
  router.get('/api/v1/audit', requirePermission(svc), async (ctx) => {
    const { limit, after, values } = pageQuery(ctx.query, AUDIT_FILTERS, (v) => {
      const problems: FieldProblem[] = [];
      if (v.actor_id !== undefined && !resourceId.test(v.actor_id)) problems.push({ field: 'actor_id', message: `must match ${RESOURCE_ID_PATTERN}` });
      for (const name of ['resource_type', 'resource_id', 'action'] as const) {
        if (v[name] !== undefined && !SHORT_TEXT.test(v[name]!)) problems.push({ field: name, message: 'must be 1 to 200 of A-Z a-z 0-9 _ . : + @ -' });
      }
      for (const name of ['from', 'to'] as const) {
        if (v[name] !== undefined && !parseDateTime(v[name]!)) problems.push({ field: name, message: 'must be an RFC 3339 date-time' });
      }
      return problems;
    });
    const and: Filter<AuditDoc>[] = [];
    if (values.actor_id !== undefined) and.push({ 'actor.id': values.actor_id });
    if (values.resource_type !== undefined) and.push({ 'resource.type': values.resource_type });
    if (values.resource_id !== undefined) and.push({ 'resource.id': values.resource_id });
    if (values.action !== undefined) and.push({ action: values.action });
    if (values.from !== undefined) and.push({ at: { $gte: parseDateTime(values.from)! } });
    if (values.to !== undefined) and.push({ at: { $lt: parseDateTime(values.to)! } });
    if (after) and.push({ $or: [{ at: { $lt: after.t } }, { at: after.t, _id: { $lt: after.id } }] });
    const docs = await auditLog(svc.db).find(and.length ? { $and: and } : {}).sort({ at: -1, _id: -1 }).limit(limit + 1).toArray();
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.set('Cache-Control', 'private, no-store');
    ctx.body = { items: page.map(publicEntry), next_cursor: docs.length > limit && last ? `${last.at.getTime()}.${last._id}` : null };
  });
}
