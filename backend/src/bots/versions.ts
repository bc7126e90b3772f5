// Bot versions (shared/DESIGN.md §17): every save of a bot's behaviour is an immutable snapshot in
// `bot_versions`, numbered 1, 2, 3… per bot. The bot document holds the latest version's fields (what the
// editor edits) and `published_version`, the one calls run; a call records the version it ran (`bot_version`)
// and the worker's config route serves that version's snapshot. Versions outlive their bot, so a past
// call's version stays readable.
import type { Db } from 'mongodb';
import { BOT_UNVERSIONED_FIELDS, type AuditActor, type BotConfigSnapshot, type BotVersion } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import type { SecretBox } from '../core/secretBox.js';
import { bots, readBot, type BotDoc } from './store.js';

/** A version as kept: the snapshot as JSON text (a tool's JSON Schema or a policy may hold any key, which BSON
 *  or FerretDB may refuse), tool header values sealed as on the bot. `_id` is `<bot id>:<version>`: reads by
 *  `_id` alone are the ones FerretDB serves from its index. */
export interface BotVersionDoc {
  _id: string;
  bot_id: string;
  version: number;
  config_json: string;
  created_by: AuditActor;
  created_at: Date;
}

/** The snapshot as kept: a bot's versioned fields, tools as on the bot document (header values sealed). */
export type StoredSnapshot = Omit<BotDoc, '_id' | 'created_at' | 'updated_at' | 'tool_secret_sealed' | 'version' | 'published_version' | (typeof BOT_UNVERSIONED_FIELDS)[number]>;

export const botVersions = (db: Db) => db.collection<BotVersionDoc>(COLLECTIONS.botVersions);
export const versionId = (botId: string, version: number) => `${botId}:${version}`;

/** The versioned fields of a bot (document or fields read with defaults). */
export function snapshotOf(bot: Omit<BotDoc, '_id' | 'created_at' | 'updated_at'> & Partial<Pick<BotDoc, '_id' | 'created_at' | 'updated_at'>>): StoredSnapshot {
  const { _id: _i, created_at: _c, updated_at: _u, tool_secret_sealed: _s, version: _v, published_version: _p, name: _n, active: _a, require_passing_tests: _r, ...rest } = bot as BotDoc;
  return rest;
}

/** JSON with keys in order, header values opened: two snapshots compare equal when they behave the same
 *  (sealing is randomised, so the sealed text of equal headers differs). */
function canonical(box: SecretBox, snap: StoredSnapshot): string {
  const tools = snap.tools.map(({ headers_sealed, ...t }) => ({ ...t, headers: headers_sealed ? box.open(headers_sealed) : null }));
  const mcp_servers = (snap.mcp_servers ?? []).map(({ headers_sealed, ...m }) => ({ ...m, headers: headers_sealed ? box.open(headers_sealed) : null }));
  const sort = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sort) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])])) : x;
  return JSON.stringify(sort({ ...snap, tools, mcp_servers }));
}

export const sameBehaviour = (box: SecretBox, a: StoredSnapshot, b: StoredSnapshot): boolean => canonical(box, a) === canonical(box, b);

const isDuplicate = (err: unknown) => (err as { code?: unknown }).code === 11000;

/**
 * Stores `snap` as the bot's next version after `latest` and answers its number. Callers hold the bot's lock
 * (locks.ts), so saves of one bot are serial; a number already taken (a version stored by a save whose bot
 * update never landed) is met by the unique `_id` and the next number is tried, so no two saves share a number
 * and none is lost.
 */
export async function insertVersion(db: Db, botId: string, latest: number, snap: StoredSnapshot, by: AuditActor, now: Date): Promise<number> {
  for (let version = latest + 1; ; version++) {
    try {
      await botVersions(db).insertOne({ _id: versionId(botId, version), bot_id: botId, version, config_json: JSON.stringify(snap), created_by: by, created_at: now });
      return version;
    } catch (err) {
      if (!isDuplicate(err) || version > latest + 100) throw err;
    }
  }
}

/** Version 1 of a new bot, published (before the bot is inserted: a bot never exists without its version). */
export async function insertFirstVersion(db: Db, bot: BotDoc, by: AuditActor): Promise<void> {
  await botVersions(db)
    .insertOne({ _id: versionId(bot._id, 1), bot_id: bot._id, version: 1, config_json: JSON.stringify(snapshotOf(bot)), created_by: by, created_at: bot.created_at })
    .catch((err: unknown) => {
      if (!isDuplicate(err)) throw err;
    });
}

export async function findVersion(db: Db, botId: string, version: number): Promise<BotVersionDoc | null> {
  return botVersions(db).findOne({ _id: versionId(botId, version) });
}

/** The bot as it behaves at `version`: that version's snapshot over the bot's unversioned fields (name,
 *  active, tool secret), defaults filled for fields newer than the snapshot. Null when there is no such version. */
export async function botAtVersion(db: Db, bot: BotDoc, version: number): Promise<BotDoc | null> {
  if (version === bot.version) return bot;
  const v = await findVersion(db, bot._id, version);
  return v && { ...readBot({ ...bot, ...(JSON.parse(v.config_json) as StoredSnapshot) }), version: bot.version, published_version: bot.published_version };
}

/** The public shape: tool and MCP server header values never leave (their names do). */
export function publicVersion(doc: BotVersionDoc, bot?: BotDoc | null): BotVersion {
  const snap = JSON.parse(doc.config_json) as StoredSnapshot;
  // Read with defaults (a snapshot older than a field shows its default), through readBot's tool decoding.
  const base = bot ?? ({ _id: doc.bot_id, name: '', active: true, require_passing_tests: false, created_at: doc.created_at, updated_at: doc.created_at } as unknown as BotDoc);
  const read = readBot({ ...base, ...snap } as BotDoc);
  const config = snapshotOf(read);
  return {
    bot_id: doc.bot_id,
    version: doc.version,
    config: { ...config, tools: config.tools.map(({ headers_sealed: _sealed, ...t }) => t), mcp_servers: config.mcp_servers.map(({ headers_sealed: _sealed, ...m }) => m) } as BotConfigSnapshot,
    created_by: doc.created_by,
    created_at: doc.created_at.toISOString(),
  };
}

/** The system as the author of versions made by a migration. */
export const SYSTEM_ACTOR: AuditActor = { type: 'system', id: null, label: 'system' };

/**
 * Bots stored before versions become version 1, published, once: the snapshot first (a duplicate: a replica
 * booting at the same time stored it), then the bot's numbers, only where it has none, so running it again
 * (every boot) changes nothing.
 */
export async function migrateBotVersions(db: Db): Promise<number> {
  const found = await bots(db).find({ version: { $exists: false } }).toArray();
  for (const doc of found) {
    const bot = readBot(doc);
    await insertFirstVersion(db, { ...bot, created_at: bot.updated_at }, SYSTEM_ACTOR);
    await bots(db).updateOne({ _id: doc._id, version: { $exists: false } }, { $set: { version: 1, published_version: 1 } });
  }
  return found.length;
}

/**
 * The newest test run of a bot's version is all green (shared/DESIGN.md §17): done, none failed, some passed.
 * The runs are written by the test runner (collection `test_runs`).
 */
export async function versionPassed(db: Db, botId: string, version: number): Promise<boolean> {
  const [last] = await db
    .collection<{ bot_id: string; version: number; status?: string; passed?: number; failed?: number; created_at?: Date }>(COLLECTIONS.testRuns)
    .find({ bot_id: botId, version })
    .sort({ created_at: -1, _id: -1 })
    .limit(1)
    .toArray();
  return Boolean(last && last.status === 'done' && last.failed === 0 && (last.passed ?? 0) > 0);
}

/** The most phrases a call's recogniser is given for the bots it may be handed to. */
const MAX_HANDOFF_PHRASES = 2000;

/**
 * The example phrases of the bots a call may be handed to (their published policy's and flow's intents), so the
 * offline recogniser's grammar, made once per call, hears what the other bot listens for after a handoff.
 */
export async function handoffPhrases(db: Db, botIds: readonly string[]): Promise<string[]> {
  if (!botIds.length) return [];
  const found = await bots(db)
    .find({ _id: { $in: [...botIds] } })
    .toArray();
  const phrases = new Set<string>();
  for (const doc of found) {
    const head = readBot(doc);
    const bot = (await botAtVersion(db, head, head.published_version)) ?? head;
    const intents = [...(bot.policy?.intents ?? []), ...Object.values(bot.flow?.nodes ?? {}).flatMap((n) => n.intents ?? [])];
    for (const intent of intents) for (const e of intent.examples ?? []) phrases.add(e);
  }
  return [...phrases].slice(0, MAX_HANDOFF_PHRASES);
}
