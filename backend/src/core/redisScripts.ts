// Lua scripts: each runs atomically in Redis, so every backend replica sees one consistent state.
import type { Redis } from 'ioredis';
import { FLEET_RESERVATIONS_KEY, FLEET_TEST_RESERVATIONS_KEY, FLEET_WORKER_KEY_PREFIX, FLEET_WORKERS_KEY } from '@voice-platform/schemas';

/**
 * Capacity reservation. Drops dead workers and expired reservations, then
 * free = Σ live non-draining min(max_calls − active_calls, admittable) − live reservations; reserves one slot if
 * free > 0. `admittable` is what a worker's load leaves room for (docs/design.md §15): a worker with free slots but
 * no room for another call's CPU admits nothing; one that does not report it (older) counts its free slots.
 * A test call (ARGV[5] = 1) also needs room in the workers' test-call share:
 * Σ min(max_calls − active_calls, max_test_calls − test_calls) − live test reservations > 0 (a worker that
 * does not report its share counts every free slot), and is reserved in both sets.
 * Returns {reserved 0|1, live workers, free slots left, 1 if refused for the test-call share}.
 */
const RESERVE = `
local now = tonumber(ARGV[1])
local test = ARGV[5] == '1'
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local free = 0
local testFree = 0
local live = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local raw = redis.call('GET', ARGV[4] .. id)
  if raw then
    local ok, hb = pcall(cjson.decode, raw)
    if ok and type(hb) == 'table' and hb.draining ~= true then
      live = live + 1
      local slots = (tonumber(hb.max_calls) or 0) - (tonumber(hb.active_calls) or 0)
      local admittable = tonumber(hb.admittable)
      if admittable then slots = math.min(slots, admittable) end
      if slots > 0 then
        free = free + slots
        local maxTest = tonumber(hb.max_test_calls)
        local testSlots = slots
        if maxTest then testSlots = math.min(slots, maxTest - (tonumber(hb.test_calls) or 0)) end
        if testSlots > 0 then testFree = testFree + testSlots end
      end
    end
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
free = free - redis.call('ZCARD', KEYS[2])
if free <= 0 then return {0, live, free, 0} end
if test then
  if testFree - redis.call('ZCARD', KEYS[3]) <= 0 then return {0, live, free, 1} end
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return {1, live, free - 1, 0}
`;

/** The free slots RESERVE would see, reserving nothing (campaign pacing asks before it claims a contact). */
const FREE_SLOTS = `
local now = tonumber(ARGV[1])
local free = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
  local raw = redis.call('GET', ARGV[2] .. id)
  if raw then
    local ok, hb = pcall(cjson.decode, raw)
    if ok and type(hb) == 'table' and hb.draining ~= true then
      local slots = (tonumber(hb.max_calls) or 0) - (tonumber(hb.active_calls) or 0)
      local admittable = tonumber(hb.admittable)
      if admittable then slots = math.min(slots, admittable) end
      if slots > 0 then free = free + slots end
    end
  end
end
return free - redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
`;

/** Token bucket as a Lua function (also part of cache.ts's view script): take_token(key, rate per second,
 *  burst, now ms) returns allowed 0|1, ms until a token. */
export const TAKE_TOKEN_FN = `
local function take_token(key, rate, burst, now)
  local b = redis.call('HMGET', key, 'tokens', 'ts')
  local tokens = tonumber(b[1])
  local ts = tonumber(b[2])
  if tokens == nil or ts == nil then tokens = burst; ts = now end
  if now > ts then
    tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
    ts = now
  end
  local allowed = 0
  local wait = 0
  if tokens >= 1 then
    tokens = tokens - 1
    allowed = 1
  else
    wait = math.ceil((1 - tokens) * 1000 / rate)
  end
  redis.call('HSET', key, 'tokens', tostring(tokens), 'ts', tostring(ts))
  redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
  return allowed, wait
end
`;

/** Token bucket: ARGV rate per second, burst, now ms. Returns {allowed 0|1, ms until a token}. */
const TOKEN_BUCKET = `${TAKE_TOKEN_FN}
local allowed, wait = take_token(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
return {allowed, wait}
`;

type ScriptRedis = Redis & {
  vpReserve(workersKey: string, reservationsKey: string, testReservationsKey: string, now: number, expiresAt: number, callId: string, prefix: string, test: 0 | 1): Promise<[number, number, number, number]>;
  vpTokenBucket(key: string, rate: number, burst: number, now: number): Promise<[number, number]>;
  vpFreeSlots(workersKey: string, reservationsKey: string, now: number, prefix: string): Promise<number>;
};

/** Lua commands by name: how many of their arguments are keys, and the script. */
export type LuaCommands = Record<string, { numberOfKeys: number; lua: string }>;

/** `redis` with `commands` defined on it; each is defined once per client (ioredis keeps it on the instance). */
export function withCommands<T extends Redis>(redis: Redis, commands: LuaCommands): T {
  for (const [name, command] of Object.entries(commands)) {
    if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') redis.defineCommand(name, command);
  }
  return redis as T;
}

const SCRIPTS: LuaCommands = {
  vpReserve: { numberOfKeys: 3, lua: RESERVE },
  vpTokenBucket: { numberOfKeys: 1, lua: TOKEN_BUCKET },
  vpFreeSlots: { numberOfKeys: 2, lua: FREE_SLOTS },
};
const scripts = (redis: Redis) => withCommands<ScriptRedis>(redis, SCRIPTS);

interface Reservation {
  reserved: boolean;
  liveWorkers: number;
  free: number;
  /** Refused although slots are free: test calls hold their share of every worker. */
  testShareFull: boolean;
}

/** Reserves a fleet slot for a call; `test` (a browser test call) also needs room in the workers' test-call share. */
export async function reserveSlot(redis: Redis, callId: string, now: number, ttlMs: number, kind: 'call' | 'test' = 'call'): Promise<Reservation> {
  const [reserved, liveWorkers, free, testShareFull] = await scripts(redis).vpReserve(
    FLEET_WORKERS_KEY,
    FLEET_RESERVATIONS_KEY,
    FLEET_TEST_RESERVATIONS_KEY,
    now,
    now + ttlMs,
    callId,
    FLEET_WORKER_KEY_PREFIX,
    kind === 'test' ? 1 : 0,
  );
  return { reserved: reserved === 1, liveWorkers, free, testShareFull: testShareFull === 1 };
}

/** Removes a call's reservation (a test call's from both sets); true only for the one caller that actually removed it. */
export async function releaseSlot(redis: Redis, callId: string): Promise<boolean> {
  const [removed] = await Promise.all([redis.zrem(FLEET_RESERVATIONS_KEY, callId), redis.zrem(FLEET_TEST_RESERVATIONS_KEY, callId)]);
  return removed === 1;
}

export interface BucketResult {
  allowed: boolean;
  retryAfterMs: number;
}

export async function takeToken(redis: Redis, key: string, ratePerSecond: number, burst: number, now: number): Promise<BucketResult> {
  const [allowed, wait] = await scripts(redis).vpTokenBucket(key, ratePerSecond, burst, now);
  return { allowed: allowed === 1, retryAfterMs: wait };
}

/** Free fleet slots now (live non-draining workers' room minus live reservations); may be negative. */
export function freeSlots(redis: Redis, now: number): Promise<number> {
  return scripts(redis).vpFreeSlots(FLEET_WORKERS_KEY, FLEET_RESERVATIONS_KEY, now, FLEET_WORKER_KEY_PREFIX);
}
