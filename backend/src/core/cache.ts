// Per-replica read-through cache of the documents every dial-out and config read needs (bots, API
// keys, the outbound trunks) — and never a stale one: writes change a shared epoch in Redis, which every
// request reads first, in one round trip that replaces the database reads.
//
// The protocol (all in Redis, the times are Redis's own clock, so replicas never disagree on them):
// - A writer calls `write(fn)`: before `fn` writes the database, BEGIN sets a new random epoch and adds
//   the write to a pending set with a deadline; after `fn`, END removes it and sets another new epoch.
// - A request calls `view()` first: one script returns the epoch, or nothing while any write is pending.
//   Entries are served and stored only under the view's epoch, and all entries are dropped when the
//   epoch moves; while a write is pending (or Redis cannot be asked) the request reads the database.
// So once a write has answered, every request on every replica that starts afterwards sees a new epoch
// and reads the database; an entry read just before a write is stored under the old epoch and dropped.
// A writer that dies (or whose END fails) between BEGIN and END leaves its pending mark until the
// deadline, which outlasts any database operation, so the entry a request might read in that window is
// never cached. A Redis that restarts empty has no epoch: the first view makes a fresh one, so no entry
// from before survives either. Entries also age out after ENTRY_MAX_AGE_MS: a bound for edits made by
// hand in the database, which bypass this protocol (the app's own writes never rely on it). The tables,
// that bound and a request's view are in cacheTable.ts.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from './errors.js';
import { TAKE_TOKEN_FN, withCommands, type BucketResult, type LuaCommands } from './redisScripts.js';
import { CacheTable, type CacheView } from './cacheTable.js';
import type { ApiKeyDoc, BotDoc, TrunkDoc } from './documents.js';

export const CACHE_EPOCH_KEY = 'vp:cache:epoch';
export const CACHE_PENDING_KEY = 'vp:cache:pending';

const NOW_MS = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** cache_view(epoch key, pending key, a fresh epoch used when Redis has none): the epoch, or false while a write is pending. */
const VIEW_FN = `
local function cache_view(epochKey, pendingKey, fresh)
  ${NOW_MS}
  if redis.call('ZCOUNT', pendingKey, '(' .. now, '+inf') > 0 then return false end
  local epoch = redis.call('GET', epochKey)
  if not epoch then
    epoch = fresh
    redis.call('SET', epochKey, epoch)
  end
  return epoch
end
`;

/** KEYS epoch, pending; ARGV a fresh epoch. Returns the epoch, or nil while a write is pending. */
const VIEW = `${VIEW_FN}
return cache_view(KEYS[1], KEYS[2], ARGV[1])
`;

/** The view and a dial-out's rate-limit token in one trip. KEYS epoch, pending, bucket; ARGV a fresh epoch,
 *  rate per second, burst, now ms. Returns {allowed 0|1, ms until a token, epoch or nil}. */
const VIEW_AND_TAKE = `${VIEW_FN}${TAKE_TOKEN_FN}
local allowed, wait = take_token(KEYS[3], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
return {allowed, wait, cache_view(KEYS[1], KEYS[2], ARGV[1])}
`;

/** KEYS epoch, pending; ARGV write id, pending deadline in ms from now, new epoch. */
const BEGIN = `
${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('SET', KEYS[1], ARGV[3])
return 1
`;

/** KEYS epoch, pending; ARGV write id, new epoch, 1 to clear the pending mark (0: leave it to its deadline). */
const END = `
if ARGV[3] == '1' then redis.call('ZREM', KEYS[2], ARGV[1]) end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

type CacheRedis = Redis & {
  vpCacheView(epochKey: string, pendingKey: string, fresh: string): Promise<string | null>;
  vpCacheViewAndTake(epochKey: string, pendingKey: string, bucketKey: string, fresh: string, rate: number, burst: number, now: number): Promise<[number, number, string | null]>;
  vpCacheBegin(epochKey: string, pendingKey: string, writeId: string, pendingMs: number, epoch: string): Promise<number>;
  vpCacheEnd(epochKey: string, pendingKey: string, writeId: string, epoch: string, clear: '0' | '1'): Promise<number>;
};

const SCRIPTS: LuaCommands = {
  vpCacheView: { numberOfKeys: 2, lua: VIEW },
  vpCacheViewAndTake: { numberOfKeys: 3, lua: VIEW_AND_TAKE },
  vpCacheBegin: { numberOfKeys: 2, lua: BEGIN },
  vpCacheEnd: { numberOfKeys: 2, lua: END },
};
const scripts = (redis: Redis) => withCommands<CacheRedis>(redis, SCRIPTS);

const token = () => randomBytes(12).toString('hex');

/** The raw view script, one round trip (the bench issues it as part of a request's store operations). */
export function readCacheEpoch(redis: Redis): Promise<string | null> {
  return scripts(redis).vpCacheView(CACHE_EPOCH_KEY, CACHE_PENDING_KEY, token());
}

/** The raw view-and-token script, one round trip (the bench's copy of a dial-out's store operations). */
export function readCacheEpochAndTakeToken(redis: Redis, bucketKey: string, rate: number, burst: number, now: number): Promise<[number, number, string | null]> {
  return scripts(redis).vpCacheViewAndTake(CACHE_EPOCH_KEY, CACHE_PENDING_KEY, bucketKey, token(), rate, burst, now);
}

export class StoreCache {
  /** The epoch the entries were read under. */
  epoch: string | null = null;
  readonly #tables: Array<CacheTable<unknown>> = [];
  /** Bots by id, in readBot's shape. Callers must not change what they get. */
  readonly bots: CacheTable<BotDoc>;
  /** API keys by key hash. */
  readonly apiKeys: CacheTable<ApiKeyDoc>;
  /** The trunk a dial-out uses: by caller number, and under DEFAULT_TRUNK (trunks/store.ts) the default one. */
  readonly trunks: CacheTable<TrunkDoc>;

  /** @param pendingMs how long a write's pending mark outlives a writer that never ends it: longer than any database operation. */
  constructor(
    private readonly redis: Redis,
    private readonly pendingMs: number,
  ) {
    this.bots = this.table<BotDoc>();
    this.apiKeys = this.table<ApiKeyDoc>();
    this.trunks = this.table<TrunkDoc>();
  }

  private table<T>(): CacheTable<T> {
    const t = new CacheTable<T>(this);
    this.#tables.push(t as CacheTable<unknown>);
    return t;
  }

  private drop(epoch: string | null): void {
    this.epoch = epoch;
    for (const t of this.#tables) t.clear();
  }

  /** One Redis round trip at the start of a request. Redis unreachable: no cache (the request reads the database). */
  async view(): Promise<CacheView> {
    let epoch: string | null;
    try {
      epoch = await readCacheEpoch(this.redis);
    } catch {
      this.drop(null);
      return { epoch: null };
    }
    return this.adopt(epoch);
  }

  /**
   * view() and a rate-limit token in one round trip: for a dial-out whose key this replica has kept, the
   * bucket (named by the key's id, which never changes for a key) is known before the key is confirmed.
   * Should the view show that the key changed, the key is read again and the token stands only for a key
   * still allowed (a refused key's bucket is never used again: refusal is final). Redis failing: no view
   * and no token (the caller takes its token the ordinary way, and fails as it would have).
   */
  async viewAndTake(bucket: { key: string; rate: number; burst: number; now: number }): Promise<{ view: CacheView; token: BucketResult | null }> {
    let reply: [number, number, string | null];
    try {
      reply = await scripts(this.redis).vpCacheViewAndTake(CACHE_EPOCH_KEY, CACHE_PENDING_KEY, bucket.key, token(), bucket.rate, bucket.burst, bucket.now);
    } catch {
      this.drop(null);
      return { view: { epoch: null }, token: null };
    }
    const [allowed, wait, epoch] = reply;
    return { view: this.adopt(epoch ?? null), token: { allowed: allowed === 1, retryAfterMs: wait } };
  }

  private adopt(epoch: string | null): CacheView {
    if (epoch !== null && epoch !== this.epoch) this.drop(epoch);
    return { epoch };
  }

  /**
   * Runs `fn`, which writes cached documents, between BEGIN and END (see the top of this file). BEGIN
   * failing fails the write before the database is touched. After an unexpected error (a store failure)
   * the pending mark is left to its deadline: the database may still apply the write.
   */
  async write<T>(fn: () => Promise<T>): Promise<T> {
    const id = token();
    const s = scripts(this.redis);
    await s.vpCacheBegin(CACHE_EPOCH_KEY, CACHE_PENDING_KEY, id, this.pendingMs, token());
    this.drop(null);
    let clean = false;
    try {
      const out = await fn();
      clean = true;
      return out;
    } catch (err) {
      clean = err instanceof ApiError;
      throw err;
    } finally {
      this.drop(null);
      // END failing leaves the pending mark, which keeps every replica reading the database until its deadline.
      await s.vpCacheEnd(CACHE_EPOCH_KEY, CACHE_PENDING_KEY, id, token(), clean ? '1' : '0').catch(() => undefined);
    }
  }
}
