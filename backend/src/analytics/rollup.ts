// Call analytics rollups (docs/design.md §12). The API never reads the calls: FerretDB v1 (SQLite) decodes every
// document of a collection for any filter but `_id` (calls/store.ts), so counting 100,000 calls means decoding
// 100,000 documents (tens of seconds here). Instead each call is counted once, when it ends, into a small
// pre-aggregated document, and the API reads those.
//
// - One rollup document per UTC day × bot × campaign × direction, its 24 hours' aggregates in ONE JSON string
//   field (`hours`): FerretDB's cost per document grows with its fields, not with a string's length, so a
//   month of a busy bot is a few dozen cheap documents. An hour's aggregate: the count, counts by status, end
//   reason and answering machine verdict, and histograms of the answered calls' durations and of every turn's
//   latency, each value kept to two significant digits (at most 5% off; percentiles are read from them).
// - Rollup documents live in one collection per month (`analytics_calls_YYYYMM`, by the calls' creation), so the
//   collection a call's end writes to stays small (an update by `_id` decodes the whole collection: ~30 µs a
//   document): a month of 5 bots is ~150 documents. A read asks the months its range touches.
// - A document is read, merged and replaced under a Redis lock of its own (locks.ts).
// - A call is counted once: its id is inserted into `analytics_counted` first (insert-only, its unique `_id`
//   answers a duplicate at once, whatever the collection's size); an end applied twice (a retried event, the
//   sweeper and the worker) finds it there and counts nothing. The insert comes before the count, so a crash in
//   between loses that call from the analytics rather than counting it twice.
// - Calls that ended before the rollups existed are counted by a boot migration (backfillRollups), once per
//   database (marked in `migrations`), in batches, through the same guard.
import type { Db, Document } from 'mongodb';
import type { Redis } from 'ioredis';
import { ANSWERED_BY, TERMINAL_CALL_STATUSES, type CallDirection, type CallStatus } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import { withDocLock } from '../core/locks.js';
import { callCollection, type CallDoc, type CallHome } from '../calls/store.js';

export const COUNTED = 'analytics_counted';
const MIGRATION = 'analytics_rollups_v1';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** One hour's aggregate (sparse: a count absent is 0). */
export interface HourAgg {
  n: number;
  /** answered (reached in_progress) */
  ans: number;
  s: Record<string, number>;
  r: Record<string, number>;
  a: Record<string, number>;
  /** duration histogram: value (two significant digits, ms) → count */
  d: Record<string, number>;
  /** turn latency histogram */
  l: Record<string, number>;
}

export interface RollupDoc {
  _id: string;
  day: Date;
  bot_id: string;
  campaign_id: string | null;
  direction: CallDirection;
  /** JSON of Record<hour "0".."23", HourAgg>. */
  hours: string;
  updated_at: Date;
}

/** `v` kept to two significant digits (values under 100: whole ms): at most 5% off. */
export function histogramValue(v: number): number {
  const x = Math.max(0, Math.round(v));
  if (x < 100) return x;
  const mag = 10 ** (Math.floor(Math.log10(x)) - 1);
  return Math.round(x / mag) * mag;
}

export const emptyAgg = (): HourAgg => ({ n: 0, ans: 0, s: {}, r: {}, a: {}, d: {}, l: {} });

const add = (m: Record<string, number>, k: string, by = 1) => {
  m[k] = (m[k] ?? 0) + by;
};

export function mergeAgg(into: HourAgg, from: HourAgg): HourAgg {
  into.n += from.n;
  into.ans += from.ans;
  for (const f of ['s', 'r', 'a', 'd', 'l'] as const) for (const [k, v] of Object.entries(from[f])) add(into[f], k, v);
  return into;
}

/** The fields of a call its count reads. */
export const CONTRIBUTION_FIELDS = { _id: 1, bot_id: 1, campaign_id: 1, direction: 1, status: 1, end_reason: 1, answered_by: 1, created_at: 1, started_at: 1, ended_at: 1, turn_latencies_ms: 1 } as const;
type CountedCall = Pick<CallDoc, '_id' | 'bot_id' | 'direction' | 'status' | 'end_reason' | 'created_at' | 'started_at' | 'ended_at' | 'answered_by' | 'campaign_id' | 'turn_latencies_ms'>;

const pad = (n: number) => String(n).padStart(2, '0');
const dayOf = (t: number) => new Date(Math.floor(t / DAY_MS) * DAY_MS);
export const monthCollection = (d: Date) => `analytics_calls_${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}`;
const docId = (day: Date, c: Pick<CountedCall, 'bot_id' | 'campaign_id' | 'direction'>) => `${day.toISOString().slice(0, 10)}|${c.bot_id}|${c.campaign_id ?? ''}|${c.direction}`;

/** A call's count: where it goes (collection, document, hour) and what it adds. */
export function contribution(c: CountedCall): { collection: string; key: RollupKey; hour: string; agg: HourAgg } {
  const created = c.created_at.getTime();
  const day = dayOf(created);
  const agg = emptyAgg();
  agg.n = 1;
  add(agg.s, c.status);
  add(agg.r, c.end_reason ?? 'none');
  add(agg.a, c.answered_by ?? 'not_detected');
  if (c.started_at) {
    agg.ans = 1;
    if (c.ended_at) add(agg.d, String(histogramValue(Math.max(0, c.ended_at.getTime() - c.started_at.getTime()))));
  }
  for (const ms of c.turn_latencies_ms ?? []) add(agg.l, String(histogramValue(ms)));
  return {
    collection: monthCollection(day),
    key: { _id: docId(day, c), day, bot_id: c.bot_id, campaign_id: c.campaign_id ?? null, direction: c.direction },
    hour: String(Math.floor((created - day.getTime()) / HOUR_MS)),
    agg,
  };
}

type RollupKey = Pick<RollupDoc, '_id' | 'day' | 'bot_id' | 'campaign_id' | 'direction'>;

/** Adds hours' aggregates to one rollup document (read, merge, replace under its lock). */
async function applyToRollup(db: Db, redis: Redis, collection: string, key: RollupKey, add: Record<string, HourAgg>, now: Date): Promise<void> {
  const coll = db.collection<RollupDoc>(collection);
  await withDocLock(
    redis,
    `analytics:${collection}:${key._id}`,
    async () => {
      const had = await coll.findOne({ _id: key._id }, { projection: { hours: 1 } });
      const hours = had ? (JSON.parse(had.hours) as Record<string, HourAgg>) : {};
      for (const [h, agg] of Object.entries(add)) hours[h] = mergeAgg(hours[h] ?? emptyAgg(), agg);
      const doc: RollupDoc = { ...key, hours: JSON.stringify(hours), updated_at: now };
      if (had) await coll.replaceOne({ _id: key._id }, doc);
      else await coll.insertOne(doc);
    },
    { waitMs: 10_000, ttlMs: 10_000 },
  );
}

const isDuplicate = (err: unknown) => (err as { code?: unknown }).code === 11000;

/**
 * Counts an ended call into its rollup, once: a call already counted (its id in `analytics_counted`) changes
 * nothing. A call not ended is not counted. True if this call counted it.
 */
export async function recordCallEnd(db: Db, redis: Redis, call: CountedCall, now = new Date()): Promise<boolean> {
  if (!TERMINAL_CALL_STATUSES.includes(call.status)) return false;
  try {
    await db.collection<{ _id: string; at: Date }>(COUNTED).insertOne({ _id: call._id, at: now });
  } catch (err) {
    if (isDuplicate(err)) return false;
    throw err;
  }
  const c = contribution(call);
  await applyToRollup(db, redis, c.collection, c.key, { [c.hour]: c.agg }, now);
  return true;
}

/**
 * Counts, once per database, the calls that ended before the rollups existed (every home; only terminal calls):
 * their ids go into `analytics_counted` `batch` at a time (those already there, counted by an end meanwhile, are
 * skipped) while their counts add up in memory (a few hundred documents' worth), then each rollup document is
 * written once: the new ones in one insert per month (one a live end made meanwhile: merged under its lock), the
 * others merged under their lock. A crash before the writes loses those calls from the analytics (as a crash
 * between a live end's guard and its count does); they are never counted twice. Returns how many it counted.
 */
export async function backfillRollups(db: Db, redis: Redis, opts: { batch?: number; now?: () => Date } = {}): Promise<number> {
  const done = db.collection<{ _id: string; at: Date }>(COLLECTIONS.migrations);
  if (await done.findOne({ _id: MIGRATION })) return 0;
  const now = opts.now ?? (() => new Date());
  const batchSize = opts.batch ?? 5000;
  let counted = 0;
  /** collection → document id → the key and the hours' counts to add */
  const pending = new Map<string, Map<string, { key: RollupKey; hours: Record<string, HourAgg> }>>();
  const guard = async (batch: CountedCall[]) => {
    if (!batch.length) return;
    const dup = new Set<number>();
    try {
      await db.collection<{ _id: string; at: Date }>(COUNTED).insertMany(batch.map((c) => ({ _id: c._id, at: now() })), { ordered: false });
    } catch (err) {
      const errs = (err as { writeErrors?: Array<{ index: number; code: number }> | { index: number; code: number } }).writeErrors;
      const list = Array.isArray(errs) ? errs : errs ? [errs] : [];
      if (!list.length) throw err;
      for (const e of list) {
        if (e.code !== 11000) throw err;
        dup.add(e.index);
      }
    }
    batch.forEach((call, i) => {
      if (dup.has(i)) return;
      const c = contribution(call);
      const docs = pending.get(c.collection) ?? new Map<string, { key: RollupKey; hours: Record<string, HourAgg> }>();
      pending.set(c.collection, docs);
      const entry = docs.get(c.key._id) ?? { key: c.key, hours: {} };
      docs.set(c.key._id, entry);
      entry.hours[c.hour] = mergeAgg(entry.hours[c.hour] ?? emptyAgg(), c.agg);
      counted++;
    });
  };
  const seen = new Set<string>();
  for (const home of ['live', 'ending', 'ended'] as CallHome[]) {
    const cursor = callCollection(db, home)
      .find({ status: { $in: [...TERMINAL_CALL_STATUSES] as CallStatus[] } }, { projection: CONTRIBUTION_FIELDS as Document, batchSize: 1000 });
    let batch: CountedCall[] = [];
    for await (const doc of cursor) {
      if (seen.has(doc._id)) continue; // in two homes (a move cut short): once
      seen.add(doc._id);
      batch.push(doc as CountedCall);
      if (batch.length >= batchSize) await guard(batch), (batch = []);
    }
    await guard(batch);
  }
  for (const [collection, docs] of pending) {
    const coll = db.collection<RollupDoc>(collection);
    const existing = new Set((await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
    const fresh = [...docs.values()].filter((e) => !existing.has(e.key._id));
    const merge = [...docs.values()].filter((e) => existing.has(e.key._id));
    if (fresh.length) {
      const at = now();
      try {
        await coll.insertMany(fresh.map((e) => ({ ...e.key, hours: JSON.stringify(e.hours), updated_at: at })), { ordered: false });
      } catch (err) {
        const errs = (err as { writeErrors?: Array<{ index: number; code: number }> | { index: number; code: number } }).writeErrors;
        const list = Array.isArray(errs) ? errs : errs ? [errs] : [];
        if (!list.length || list.some((e) => e.code !== 11000)) throw err;
        for (const e of list) merge.push(fresh[e.index]!); // made by a live end meanwhile
      }
    }
    for (const e of merge) await applyToRollup(db, redis, collection, e.key, e.hours, now());
  }
  await done.insertOne({ _id: MIGRATION, at: now() }).catch((err: unknown) => {
    if (!isDuplicate(err)) throw err;
  });
  return counted;
}

/** Every answering machine verdict a bucket lists (with 0). */
export const ANSWERED_BY_KEYS = [...ANSWERED_BY, 'not_detected'] as const;

/** The rollup documents of days [fromDay, toDay) matching the filters, from every month collection they touch. */
export async function readRollups(
  db: Db,
  range: { from: Date; to: Date },
  filter: { bot_id?: string; campaign_id?: string; direction?: CallDirection },
): Promise<RollupDoc[]> {
  const months: string[] = [];
  const d = new Date(Date.UTC(range.from.getUTCFullYear(), range.from.getUTCMonth(), 1));
  while (d < range.to) {
    months.push(monthCollection(d));
    d.setUTCMonth(d.getUTCMonth() + 1);
  }
  const q: Record<string, unknown> = { day: { $gte: dayOf(range.from.getTime()), $lt: range.to } };
  if (filter.bot_id) q.bot_id = filter.bot_id;
  if (filter.campaign_id) q.campaign_id = filter.campaign_id;
  if (filter.direction) q.direction = filter.direction;
  const found = await Promise.all(months.map((m) => db.collection<RollupDoc>(m).find(q).toArray()));
  return found.flat();
}
