// API key material: generation with unbiased sampling, SHA-256 hashing, status derivation and the
// X-API-Key middleware. The key's record comes through the replica's cache (cache.ts), whose epoch
// every request reads first and every key change moves: a deactivated key is refused on its very next
// request on every replica; expiry is checked against the clock on every request; the key's scopes against the
// permissions table (auth/permissions.ts) for the route being served.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { API_KEY_PATTERN, type ApiKey, type ApiKeyScope, type ApiKeyStatus } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { COLLECTIONS } from '../core/collections.js';
import { requestView, type CacheView } from '../core/cacheTable.js';
import type { BucketResult } from '../core/redisScripts.js';
import { permissionFor, keyMay } from '../auth/permissions.js';
import { keyScopes, type ApiKeyDoc } from './store.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_BODY_LENGTH = 32;
// Bytes ≥ 248 (= 4 × 62) are rejected so that `byte % 62` is uniform.
const SAMPLE_LIMIT = 256 - (256 % ALPHABET.length);
const keyPattern = new RegExp(API_KEY_PATTERN);

/** `length` characters of [A-Za-z0-9] from crypto.randomBytes, each equally likely. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(48)) {
      if (byte < SAMPLE_LIMIT && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

export function generateApiKey(): string {
  return 'vx_' + randomAlphanumeric(KEY_BODY_LENGTH);
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');
export const keyPrefix = (key: string): string => key.slice(0, 7);

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
    scopes: [...keyScopes(doc)],
  };
}

export type { KeyPrincipal } from '../core/principal.js';
import type { KeyPrincipal } from '../core/principal.js';

const LAST_USED_GRANULARITY_MS = 60_000;

/** A rate-limit bucket of a key (see `authenticateKey`). */
export type KeyBucket = (keyId: string) => { key: string; rate: number; burst: number; now: number };

/** A token `authenticateKey` took in the same round trip as the cache view, for the key `keyId`. */
export interface PrefetchedToken {
  keyId: string;
  result: BucketResult;
}

/**
 * Checks X-API-Key; throws the documented 401 codes; returns the key's principal. With `bucket`, a key
 * this replica has kept also has its rate-limit token taken in the cache view's round trip
 * (ctx.state.rateToken, a PrefetchedToken): the limiter then uses it instead of asking Redis again.
 */
export async function authenticateKey(svc: Services, metrics: Metrics, ctx: Context, bucket?: KeyBucket, opts: KeyCheckOptions = {}): Promise<KeyPrincipal & { scopes: readonly ApiKeyScope[] }> {
  const fail = (code: 'missing_api_key' | 'invalid_api_key' | 'api_key_inactive' | 'api_key_expired'): never => {
    metrics.keyAuthFailures.inc({ reason: code });
    throw apiError(code);
  };
  const key = opts.key ?? ctx.get('X-API-Key');
  if (!key) return fail('missing_api_key');
  if (!keyPattern.test(key)) return fail('invalid_api_key');
  const hash = hashApiKey(key);
  let view: CacheView;
  const guess = bucket && !ctx.state.cacheView ? svc.cache.apiKeys.peek(hash) : undefined;
  if (guess && keyStatus(guess, svc.clock()) === 'active') {
    const r = await svc.cache.viewAndTake(bucket!(guess._id));
    view = ctx.state.cacheView = r.view;
    if (r.token) ctx.state.rateToken = { keyId: guess._id, result: r.token } satisfies PrefetchedToken;
  } else {
    view = await requestView(svc.cache, ctx.state);
  }
  const doc = await svc.cache.apiKeys.get(view, hash, () => svc.db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys).findOne({ key_hash: hash }));
  // The lookup matched by hash; the constant-time compare keeps that guarantee explicit.
  if (!doc || !timingSafeEqual(Buffer.from(doc.key_hash, 'hex'), Buffer.from(hash, 'hex'))) {
    return fail('invalid_api_key');
  }
  const now = svc.clock();
  const status = keyStatus(doc, now);
  if (status === 'inactive') return fail('api_key_inactive');
  if (status === 'expired') return fail('api_key_expired');
  // The scope the permissions table (auth/permissions.ts, column `key`) names for the route being served: the one
  // place every route that takes a key is checked. A route the table gives no key scope takes no key.
  const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : '';
  const permission = permissionFor(ctx.method, route);
  if (!opts.scopesChecked && !keyMay(keyScopes(doc), permission)) {
    throw apiError('forbidden', permission?.key ? `the API key lacks the scope ${permission.key}` : 'an API key may not do this');
  }
  if (!doc.last_used_at || doc.last_used_at.getTime() <= now - LAST_USED_GRANULARITY_MS) {
    // Conditional: of concurrent requests, at most one write per minute lands.
    await svc.db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys).updateOne(
      { _id: doc._id, $or: [{ last_used_at: null }, { last_used_at: { $lte: new Date(now - LAST_USED_GRANULARITY_MS) } }] },
      { $set: { last_used_at: new Date(now) } },
    );
    // This replica's copy, so it does not try again within the minute (a field auth does not depend on).
    svc.cache.apiKeys.update(view, hash, { ...doc, last_used_at: new Date(now) });
  }
  return { id: doc._id, prefix: doc.prefix, name: doc.name, scopes: keyScopes(doc) };
}

/** `key`: the key as sent another way (the MCP endpoint's Bearer); `scopesChecked`: the caller checks scopes per operation (each MCP tool). */
export interface KeyCheckOptions {
  key?: string;
  scopesChecked?: boolean;
}

export function requireApiKey(svc: Services, metrics: Metrics, bucket?: KeyBucket) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.state.apiKey = await authenticateKey(svc, metrics, ctx, bucket);
    await next();
  };
}
