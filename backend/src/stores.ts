// Store preparation done at boot (and by tests): indexes, missing bot fields, the call-job stream's
// consumer group, and the Lua scripts. Each step is idempotent.
import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import { BOT_DEFAULTS, CALL_JOBS_CONSUMER_GROUP, CALL_JOBS_STREAM_KEY, TERMINAL_CALL_STATUSES } from '@voice-platform/schemas';
import { WEBHOOK_CONSUMER_GROUP, WEBHOOK_EVENTS_STREAM } from './webhooks/keys.js';
import { withDocLock } from './core/locks.js';
import { ApiError } from './core/errors.js';
import { migrateUsers } from './auth/users.js';
import { backfillRollups } from './analytics/rollup.js';
import { migrateApiKeys } from './apiKeys/store.js';
import { createAuditIndexes } from './audit/store.js';
import { migrateBotVersions } from './bots/versions.js';

// The collection names live in their own module (collections.ts), which imports nothing: stores that
// this module's boot migrations call can name collections without importing this module back.
export { COLLECTIONS } from './core/collections.js';
import { COLLECTIONS } from './core/collections.js';

export async function createIndexes(db: Db): Promise<void> {
  await db.collection(COLLECTIONS.users).createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
  await db.collection(COLLECTIONS.apiKeys).createIndex({ key_hash: 1 }, { unique: true, name: 'key_hash_unique' });
  await db
    .collection(COLLECTIONS.idempotency)
    .createIndex({ api_key_id: 1, key: 1 }, { unique: true, name: 'api_key_idempotency_key_unique' });
  // The calls list (filtered by bot and status, newest first, cursor) reads every call collection.
  for (const name of [COLLECTIONS.calls, COLLECTIONS.liveCalls, COLLECTIONS.endingCalls]) {
    await db.collection(name).createIndex({ bot_id: 1, status: 1, created_at: -1 }, { name: 'bot_status_created' });
    await db.collection(name).createIndex({ created_at: -1, _id: -1 }, { name: 'created_cursor' });
  }
  // The dialler's stale-call sweep: queued calls by age (bot_status_created leads with bot_id, so it cannot serve it).
  await db.collection(COLLECTIONS.liveCalls).createIndex({ status: 1, created_at: 1 }, { name: 'status_created' });
  // The deliverer's scan for status events still due (webhooks/outbox.ts: stranded by a process that died).
  for (const name of [COLLECTIONS.liveCalls, COLLECTIONS.endingCalls]) await db.collection(name).createIndex({ webhook_due: 1 }, { name: 'webhook_due' });
  await db.collection(COLLECTIONS.bots).createIndex({ created_at: -1, _id: -1 }, { name: 'created_cursor' });
  // A bot's versions: one document per number (the `_id` <bot>:<n> holds it too), listed newest first.
  await db.collection(COLLECTIONS.botVersions).createIndex({ bot_id: 1, version: -1 }, { unique: true, name: 'bot_version_unique' });
  await db.collection(COLLECTIONS.trunks).createIndex({ numbers: 1 }, { name: 'numbers' });
  // Webhooks (at most MAX_WEBHOOKS, no index needed): the deliverer's due scan, a webhook's deliveries log (newest first, cursor), and the retention prune.
  await db.collection(COLLECTIONS.webhookDeliveries).createIndex({ status: 1, next_attempt_at: 1 }, { name: 'status_due' });
  await db.collection(COLLECTIONS.webhookDeliveries).createIndex({ webhook_id: 1 }, { name: 'webhook' });
  await db.collection(COLLECTIONS.webhookDeliveries).createIndex({ updated_at: 1 }, { name: 'updated' });
  await db.collection(COLLECTIONS.webhookAttempts).createIndex({ webhook_id: 1, attempted_at: -1, _id: -1 }, { name: 'webhook_attempted_cursor' });
  await db.collection(COLLECTIONS.webhookAttempts).createIndex({ attempted_at: 1 }, { name: 'attempted' });
  // The deliverer drains the fallback outbox oldest first.
  await db.collection(COLLECTIONS.webhookOutbox).createIndex({ created_at: 1, _id: 1 }, { name: 'created' });
  // Campaigns: the list (newest first, cursor); a number once per campaign (duplicates); the dialler's due
  // scan and live count; the contacts list (upload order, cursor); do-not-call by number and its list.
  await db.collection(COLLECTIONS.campaigns).createIndex({ created_at: -1, _id: -1 }, { name: 'created_cursor' });
  await db.collection(COLLECTIONS.campaigns).createIndex({ status: 1 }, { name: 'status' });
  await db.collection(COLLECTIONS.campaignContacts).createIndex({ campaign_id: 1, to_number: 1 }, { unique: true, name: 'campaign_number_unique' });
  await db.collection(COLLECTIONS.campaignContacts).createIndex({ campaign_id: 1, status: 1, due_at: 1 }, { name: 'campaign_status_due' });
  await db.collection(COLLECTIONS.campaignContacts).createIndex({ campaign_id: 1, created_at: 1, _id: 1 }, { name: 'campaign_created_cursor' });
  await db.collection(COLLECTIONS.campaignContacts).createIndex({ status: 1 }, { name: 'status' });
  await db.collection(COLLECTIONS.dnc).createIndex({ number: 1 }, { unique: true, name: 'number_unique' });
  await db.collection(COLLECTIONS.dnc).createIndex({ created_at: -1, _id: -1 }, { name: 'created_cursor' });
  // Inbound numbers: a number is answered by one bot (the routes check first; this settles a race).
  await db.collection(COLLECTIONS.inboundNumbers).createIndex({ number: 1 }, { unique: true, name: 'number_unique' });
}

async function createStream(redis: Redis): Promise<void> {
  // The webhook outbox from its start ('0'): an event written before the group existed is still delivered.
  for (const [key, group, start] of [[CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, '$'], [WEBHOOK_EVENTS_STREAM, WEBHOOK_CONSUMER_GROUP, '0']] as const) {
    try {
      await redis.xgroup('CREATE', key, group, start, 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error && err.message.includes('BUSYGROUP'))) throw err;
    }
  }
}

/** The job stream's name before it carried browser and inbound calls too (releases before 2026-11-25). */
export const LEGACY_JOBS_STREAM_KEY = 'vp:jobs:dialout';
/**
 * Moves the jobs of the old stream that no worker has read yet (after its group's last-delivered id) to
 * the call-job stream, in one Lua script per batch, so replicas booting at once never move a job twice.
 * Jobs an old worker already holds stay where they are (should that worker die, the sweeper ends their
 * calls). Returns how many moved.
 */
const MOVE_LEGACY_JOBS = `
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
local last = '0-0'
for _, g in ipairs(groups) do
  local f = {}
  for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
  if f['name'] == ARGV[1] then last = f['last-delivered-id'] end
end
local entries = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 100)
for _, e in ipairs(entries) do
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', '100000', '*', unpack(e[2]))
  redis.call('XDEL', KEYS[1], e[1])
end
return #entries`;

export async function migrateLegacyJobs(redis: Redis): Promise<number> {
  if (!(await redis.exists(LEGACY_JOBS_STREAM_KEY))) return 0;
  let moved = 0;
  for (;;) {
    const n = (await redis.eval(MOVE_LEGACY_JOBS, 2, LEGACY_JOBS_STREAM_KEY, CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP)) as number;
    moved += n;
    if (n === 0) return moved;
  }
}

export async function prepareStores(db: Db, redis: Redis): Promise<void> {
  await createIndexes(db);
  await createAuditIndexes(db);
  await migrateBots(db);
  await migrateBotVersions(db);
  await migrateUsers(db);
  await migrateApiKeys(db);
  await moveUnsettledCalls(db, redis);
  await backfillRollups(db, redis);
  await createStream(redis);
  await migrateLegacyJobs(redis);
}

/** Bots stored before a field existed get its default, once: only documents lacking the field match, so
 *  running it again (every boot) changes nothing. Reads fill defaults too (bots/store.ts readBot). */
export async function migrateBots(db: Db): Promise<void> {
  const bots = db.collection(COLLECTIONS.bots);
  for (const [field, value] of Object.entries(BOT_DEFAULTS)) {
    await bots.updateMany({ [field]: { $exists: false } }, { $set: { [field]: value } });
    // A settings object that gained fields (turn_detection's mode): the missing ones, each once.
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, subValue] of Object.entries(value)) {
        await bots.updateMany({ [field]: { $type: 'object' }, [`${field}.${sub}`]: { $exists: false } }, { $set: { [`${field}.${sub}`]: subValue } });
      }
    }
  }
}

/**
 * Calls stored in `calls` while not settled (before calls in progress had their own collections, calls/store.ts)
 * move to `calls_live` (not ended) or `calls_ending` (ended, an event still due), once per database (the
 * `migrations` mark): the sweeper and the outbox look for them there only. Each under the call's lock, read
 * again there (a move of it may land meanwhile): insert (a duplicate: moved by a replica booting at the same
 * time), then delete.
 */
export async function moveUnsettledCalls(db: Db, redis: Redis): Promise<number> {
  const done = db.collection<{ _id: string; at: Date }>(COLLECTIONS.migrations);
  const name = 'calls_live_split';
  if (await done.findOne({ _id: name })) return 0;
  const ended = db.collection<{ _id: string; status?: string }>(COLLECTIONS.calls);
  const homes = { live: db.collection<{ _id: string; status?: string }>(COLLECTIONS.liveCalls), ending: db.collection<{ _id: string; status?: string }>(COLLECTIONS.endingCalls) };
  const unsettled = { $or: [{ status: { $nin: [...TERMINAL_CALL_STATUSES] } }, { webhook_due: { $in: ['call.ringing', 'call.in_progress', 'call.ended'] } }] };
  const found = await ended.find(unsettled, { projection: { _id: 1 } }).toArray();
  let left = 0;
  for (const { _id: id } of found) {
    // A call whose lock stays taken (a move of it in progress elsewhere) is left for the next boot.
    const moved = await withDocLock(redis, `call:${id}`, async () => {
      const doc = await ended.findOne({ _id: id });
      if (!doc) return;
      const over = (TERMINAL_CALL_STATUSES as readonly string[]).includes(doc.status ?? '');
      await (over ? homes.ending : homes.live).insertOne(doc).catch((err: unknown) => {
        if ((err as { code?: unknown }).code !== 11000) throw err;
      });
      await ended.deleteOne({ _id: id });
    }).then(() => true, (err: unknown) => {
      if (!(err instanceof ApiError && err.code === 'conflict')) throw err;
      return false;
    });
    if (!moved) left++;
  }
  if (left) return found.length - left;
  await done.insertOne({ _id: name, at: new Date() }).catch((err: unknown) => {
    if ((err as { code?: unknown }).code !== 11000) throw err;
  });
  return found.length;
}
