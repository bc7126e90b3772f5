// API keys as stored. Only the key's hash is kept (keys.ts hashes and checks keys; routes.ts is the admin API).
import type { Db } from 'mongodb';
import { LEGACY_API_KEY_SCOPES, type ApiKeyScope } from '@voice-platform/schemas';

import type { ApiKeyDoc } from '../core/documents.js';
export type { ApiKeyDoc } from '../core/documents.js';

/** A key's scopes; a key from before scopes keeps what every key could do then. */
export const keyScopes = (doc: Pick<ApiKeyDoc, 'scopes'>): readonly ApiKeyScope[] => doc.scopes ?? LEGACY_API_KEY_SCOPES;

/** Keys stored before scopes existed get the legacy scopes, once (only keys lacking the field match: every boot is a no-op after). */
export async function migrateApiKeys(db: Db): Promise<void> {
  await db.collection<ApiKeyDoc>('api_keys').updateMany({ scopes: { $exists: false } }, { $set: { scopes: [...LEGACY_API_KEY_SCOPES] } });
}
