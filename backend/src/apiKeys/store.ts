// API keys as stored. Only the key's hash is kept (keys.ts hashes and checks keys; routes.ts is the admin API).
import type { Db } from 'mongodb';
import { LEGACY_API_KEY_SCOPES, type ApiKeyScope } from '@voice-platform/schemas';

export interface ApiKeyDoc {
  _id: string;
  name: string;
  key_hash: string;
  prefix: string;
  is_active: boolean;
  expires_at: Date | null;
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
  deactivated_at: Date | null;
  deactivated_by: string | null;
  /** Absent on keys stored before scopes existed: read as LEGACY_API_KEY_SCOPES (and migrated to them at boot). */
  scopes?: ApiKeyScope[];
}

/** A key's scopes; a key from before scopes keeps what every key could do then. */
export const keyScopes = (doc: Pick<ApiKeyDoc, 'scopes'>): readonly ApiKeyScope[] => doc.scopes ?? LEGACY_API_KEY_SCOPES;

/** Keys stored before scopes existed get the legacy scopes, once (only keys lacking the field match: every boot is a no-op after). */
export async function migrateApiKeys(db: Db): Promise<void> {
  await db.collection<ApiKeyDoc>('api_keys').updateMany({ scopes: { $exists: false } }, { $set: { scopes: [...LEGACY_API_KEY_SCOPES] } });
}
