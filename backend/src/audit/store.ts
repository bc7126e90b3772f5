// The audit log as stored: one document per entry in `audit_log`, written once (audit.ts) and never updated
// or deleted by the API. Indexed for the list's filters, each newest first with the cursor's tie-break.
import type { Db } from 'mongodb';
import type { AuditActor, AuditEntry } from '@voice-platform/schemas';

export const AUDIT_COLLECTION = 'audit_log';

export interface AuditDoc {
  _id: string;
  at: Date;
  actor: AuditActor;
  action: string;
  resource: { type: string; id: string | null };
  /** `changes` as JSON text: its values may hold arrays within arrays, which FerretDB does not store. */
  changes_json: string;
  ip: string;
  request_id: string;
}

export const auditLog = (db: Db) => db.collection<AuditDoc>(AUDIT_COLLECTION);

export function publicEntry(doc: AuditDoc): AuditEntry {
  return {
    id: doc._id,
    at: doc.at.toISOString(),
    actor: doc.actor,
    action: doc.action,
    resource: doc.resource,
    changes: JSON.parse(doc.changes_json) as Record<string, [unknown, unknown]>,
    ip: doc.ip,
    request_id: doc.request_id,
  };
}

/** The list (newest first, cursor) and each of its filters (actor, resource, action), each with the time range. */
export async function createAuditIndexes(db: Db): Promise<void> {
  const col = auditLog(db);
  await col.createIndex({ at: -1, _id: -1 }, { name: 'at_cursor' });
  await col.createIndex({ 'actor.id': 1, at: -1, _id: -1 }, { name: 'actor_at' });
  await col.createIndex({ 'resource.id': 1, at: -1, _id: -1 }, { name: 'resource_id_at' });
  await col.createIndex({ 'resource.type': 1, at: -1, _id: -1 }, { name: 'resource_type_at' });
  await col.createIndex({ action: 1, at: -1, _id: -1 }, { name: 'action_at' });
}
