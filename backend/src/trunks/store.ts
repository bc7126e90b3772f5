// Outbound trunks as stored: the document, its public shape, and the lookup dial-out uses to pick the
// trunk (and caller ID) that places a call. The password is kept sealed (secretBox.ts), never returned.
import type { Db } from 'mongodb';
import { phoneNumberRegion, type OutboundTrunk, type SipTransport } from '@voice-platform/schemas';
import { ApiError, apiError } from '../core/errors.js';
import { COLLECTIONS } from '../core/collections.js';
import type { CacheTable, CacheView } from '../core/cacheTable.js';

/** The trunks table's key of the default trunk (numbers start with +). */
const DEFAULT_TRUNK = 'default';

import type { TrunkDoc } from '../core/documents.js';
export type { TrunkDoc } from '../core/documents.js';

export const trunks = (db: Db) => db.collection<TrunkDoc>(COLLECTIONS.trunks);

export function publicTrunk(doc: TrunkDoc): OutboundTrunk {
  return {
    id: doc._id,
    name: doc.name,
    address: doc.address,
    transport: doc.transport,
    numbers: doc.numbers,
    auth_username: doc.auth_username,
    has_password: doc.auth_password_sealed !== null,
    default: doc.default,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

interface DialTrunk {
  trunk: TrunkDoc;
  fromNumber: string;
}

/**
 * The trunk that places a dial-out: the one owning `fromNumber` (else 422 `unknown_from_number`), or the
 * default trunk and its first number; no trunk at all → 409 `no_outbound_trunk`.
 */
export async function trunkForDialout(db: Db, fromNumber: string | undefined, cached?: { table: CacheTable<TrunkDoc>; view: CacheView }): Promise<DialTrunk> {
  // Through the replica's cache (cache.ts) when given one; only found trunks are kept.
  const lookup = (id: string, load: () => Promise<TrunkDoc | null>) => (cached ? cached.table.get(cached.view, id, load) : load());
  if (fromNumber !== undefined) {
    const trunk = await lookup(fromNumber, () => trunks(db).findOne({ numbers: fromNumber }));
    if (!trunk) {
      throw apiError('unknown_from_number', { details: [{ field: 'from_number', message: 'must be one of an outbound trunk\'s numbers' }] });
    }
    return { trunk, fromNumber };
  }
  // The default flag is kept on exactly one trunk; the oldest stands in should a write have been cut short.
  const trunk = await lookup(
    DEFAULT_TRUNK,
    async () => (await trunks(db).findOne({ default: true })) ?? (await trunks(db).find({}).sort({ created_at: 1, _id: 1 }).limit(1).next()),
  );
  if (!trunk) throw apiError('no_outbound_trunk');
  return { trunk, fromNumber: trunk.numbers[0]! };
}

/** The country of the caller ID a call from `fromNumber` (else the default trunk's first number) has; null when no trunk gives one. */
export async function callerRegion(db: Db, fromNumber: string | null | undefined): Promise<string | null> {
  try {
    return phoneNumberRegion((await trunkForDialout(db, fromNumber ?? undefined)).fromNumber);
  } catch (err) {
    if (err instanceof ApiError) return null;
    throw err;
  }
}
