// API key material: generation with unbiased sampling, SHA-256 hashing, status derivation and the
// X-API-Key middleware. No cache: every request reads the key's record, so a deactivated or expired
// key is refused on its very next request on every replica (one indexed lookup by hash).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { API_KEY_PATTERN, type ApiKey, type ApiKeyStatus } from '@voice-platform/schemas';
import { ApiError } from '../errors.js';
import type { Services } from '../deps.js';
import type { Metrics } from '../metrics.js';
import { COLLECTIONS } from '../stores.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_BODY_LENGTH = 32;
// Bytes ≥ 248 (= 4 × 62) are rejected so that `byte % 62` is uniform.
const SAMPLE_LIMIT = 256 - (256 % ALPHABET.length);
const keyPattern = new RegExp(API_KEY_PATTERN);

export function generateApiKey(): string {
  let out = 'vx_';
  while (out.length < 3 + KEY_BODY_LENGTH) {
    for (const byte of randomBytes(48)) {
      if (byte < SAMPLE_LIMIT && out.length < 3 + KEY_BODY_LENGTH) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');
export const keyPrefix = (key: string): string => key.slice(0, 7);

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
}

export function keyStatus(doc: Pick<ApiKeyDoc, 'is_active' | 'expires_at'>, now: number): ApiKeyStatus {
  if (!doc.is_active) return 'inactive';
  if (doc.expires_at && doc.expires_at.getTime() <= now) return 'expired';
  return 'active';
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function publicKey(doc: ApiKeyDoc, now: number): ApiKey {
  return {
    id: doc._id,
    name: doc.name,
    prefix: doc.prefix,
    is_active: doc.is_active,
    expires_at: iso(doc.expires_at),
    created_at: doc.created_at.toISOString(),
    last_used_at: iso(doc.last_used_at),
    status: keyStatus(doc, now),
    deactivated_at: iso(doc.deactivated_at),
    deactivated_by: doc.deactivated_by,
    created_by: doc.created_by,
  };
}

export interface KeyPrincipal {
  id: string;
  prefix: string;
}

const LAST_USED_GRANULARITY_MS = 60_000;

/** Checks X-API-Key; throws the documented 401 codes; returns the key's principal. */
export async function authenticateKey(svc: Services, metrics: Metrics, ctx: Context): Promise<KeyPrincipal> {
  const fail = (code: string, message: string): never => {
    metrics.keyAuthFailures.inc({ reason: code });
    throw new ApiError(401, code, message);
  };
  const key = ctx.get('X-API-Key');
  if (!key) return fail('missing_api_key', 'the X-API-Key header is required');
  if (!keyPattern.test(key)) return fail('invalid_api_key', 'the API key is not valid');
  const hash = hashApiKey(key);
  const doc = await svc.db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys).findOne({ key_hash: hash });
  // The lookup matched by hash; the constant-time compare keeps that guarantee explicit.
  if (!doc || !timingSafeEqual(Buffer.from(doc.key_hash, 'hex'), Buffer.from(hash, 'hex'))) {
    return fail('invalid_api_key', 'the API key is not valid');
  }
  const now = svc.clock();
  const status = keyStatus(doc, now);
  if (status === 'inactive') return fail('api_key_inactive', 'the API key has been deactivated');
  if (status === 'expired') return fail('api_key_expired', 'the API key has expired');
  if (!doc.last_used_at || doc.last_used_at.getTime() <= now - LAST_USED_GRANULARITY_MS) {
    // Conditional: of concurrent requests, at most one write per minute lands.
    await svc.db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys).updateOne(
      { _id: doc._id, $or: [{ last_used_at: null }, { last_used_at: { $lte: new Date(now - LAST_USED_GRANULARITY_MS) } }] },
      { $set: { last_used_at: new Date(now) } },
    );
  }
  return { id: doc._id, prefix: doc.prefix };
}

export function requireApiKey(svc: Services, metrics: Metrics) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.state.apiKey = await authenticateKey(svc, metrics, ctx);
    await next();
  };
}
