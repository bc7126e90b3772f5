// Idempotency-Key handling on single-document atomic operations (no transactions, no TTL index):
// a unique (api_key_id, key) index elects one owner; expiry is checked in the query.
import { createHash } from 'node:crypto';
import { ObjectId, type Db } from 'mongodb';
import type { Redis } from 'ioredis';
import { withDocLock } from '../core/locks.js';
import { apiError } from '../core/errors.js';
import { COLLECTIONS } from '../core/collections.js';

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight claim older than this is taken over (its owner crashed mid-request). */
const IN_FLIGHT_LOCK_MS = 30_000;

interface IdempotencyDoc {
  _id: string;
  api_key_id: string;
  key: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  status?: number;
  response?: unknown;
  created_at: Date;
  expires_at: Date;
  locked_until: Date;
}

/** Canonical JSON (sorted keys) so that key order does not make two equal bodies differ. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const requestHash = (body: unknown) => createHash('sha256').update(canonicalJson(body)).digest('hex');

type Claim = { kind: 'owner'; id: string } | { kind: 'replay'; status: number; response: unknown };

export async function claim(db: Db, redis: Redis, apiKeyId: string, key: string, hash: string, now: number): Promise<Claim> {
  const col = db.collection<IdempotencyDoc>(COLLECTIONS.idempotency);
  const fresh = () => ({
    request_hash: hash,
    state: 'in_flight' as const,
    created_at: new Date(now),
    expires_at: new Date(now + IDEMPOTENCY_TTL_MS),
    locked_until: new Date(now + IN_FLIGHT_LOCK_MS),
  });
  for (let attempt = 0; attempt < 3; attempt++) {
    const id = new ObjectId().toHexString();
    try {
      await col.insertOne({ _id: id, api_key_id: apiKeyId, key, ...fresh() });
      return { kind: 'owner', id };
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
    const existing = await col.findOne({ api_key_id: apiKeyId, key });
    if (!existing) continue; // released meanwhile: try to insert again
    const expired = existing.expires_at.getTime() <= now;
    const stale = existing.state === 'in_flight' && existing.locked_until.getTime() <= now;
    if (expired || stale) {
      // Take over an expired record or a crashed owner's claim; the filter on the old values makes
      // this a compare-and-swap (under the document lock, so also on FerretDB): one taker wins.
      const took = await withDocLock(redis, `idempotency:${existing._id}`, async () => {
        const res = await col.updateOne(
          { _id: existing._id, state: existing.state, locked_until: existing.locked_until, expires_at: existing.expires_at },
          { $set: fresh(), $unset: { status: '', response: '' } },
        );
        return res.modifiedCount === 1;
      });
      if (took) return { kind: 'owner', id: existing._id };
      continue;
    }
    if (existing.request_hash !== hash) {
      throw apiError('idempotency_key_reused');
    }
    if (existing.state === 'done') return { kind: 'replay', status: existing.status ?? 201, response: existing.response };
    throw apiError('conflict', { message: 'a request with this Idempotency-Key is still in progress', headers: { 'Retry-After': '1' } });
  }
  throw apiError('conflict', { message: 'a request with this Idempotency-Key is still in progress', headers: { 'Retry-After': '1' } });
}

export async function complete(db: Db, id: string, status: number, response: unknown): Promise<void> {
  await db.collection<IdempotencyDoc>(COLLECTIONS.idempotency).updateOne({ _id: id }, { $set: { state: 'done', status, response } });
}

/** A request that failed places no call; the key is freed so the client may retry it. */
export async function release(db: Db, id: string): Promise<void> {
  await db.collection<IdempotencyDoc>(COLLECTIONS.idempotency).deleteOne({ _id: id, state: 'in_flight' });
}
