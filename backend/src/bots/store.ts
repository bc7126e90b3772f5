// Bots as stored: the document, its public shape, reading with defaults (migrate on read), and the lookup
// dial-out, the worker config, inbound and call creation use. The admin routes are in routes.ts.
import type { Db } from 'mongodb';
import { BOT_DEFAULTS, type Bot, type BotCreate, type BotTool } from '@voice-platform/schemas';
import { COLLECTIONS } from '../stores.js';
import type { CacheTable, CacheView } from '../cacheTable.js';

export type BotDoc = Omit<Bot, 'id' | 'created_at' | 'updated_at'> & { _id: string; created_at: Date; updated_at: Date };

export const bots = (db: Db) => db.collection<BotDoc>(COLLECTIONS.bots);

/** Every documented field, also for documents stored before a field existed: those read as its default
 *  (migrate on read; stores.ts migrateBots also writes them once at boot). */
export function readBot(doc: BotDoc): BotDoc {
  const { _id, created_at, updated_at, ...rest } = doc;
  const fields = withDefaults(rest);
  return { _id, ...fields, tools: fields.tools.map(openTool), created_at, updated_at: updated_at ?? created_at };
}

type StoredTool = Omit<BotTool, 'parameters'> & { parameters?: Record<string, unknown>; parameters_json?: string };

/** A tool's `parameters` is the user's JSON Schema: stored as JSON text, so any key ($ref, dots, NUL) survives BSON. */
function sealTool(t: BotTool): StoredTool {
  const { parameters, ...rest } = t;
  return parameters === undefined ? rest : { ...rest, parameters_json: JSON.stringify(parameters) };
}

function openTool(t: StoredTool): BotTool {
  const { parameters_json, ...rest } = t;
  return parameters_json === undefined ? (rest as BotTool) : { ...rest, parameters: JSON.parse(parameters_json) as Record<string, unknown> };
}

/** The document as stored (see sealTool). */
export function stored<T extends { tools: BotTool[] }>(doc: T): T {
  return { ...doc, tools: doc.tools.map(sealTool) as unknown as BotTool[] };
}

/** One bot by id, in the documented shape (see readBot), or null. */
export async function findBot(db: Db, id: string): Promise<BotDoc | null> {
  const doc = await bots(db).findOne({ _id: id });
  return doc && readBot(doc);
}

/** findBot through this replica's cache (cache.ts), under the request's view. */
export function cachedBot(svc: { db: Db; cache: { bots: CacheTable<BotDoc> } }, view: CacheView, id: string): Promise<BotDoc | null> {
  return svc.cache.bots.get(view, id, () => findBot(svc.db, id));
}

export function publicBot(doc: BotDoc): Bot {
  const { _id, created_at, updated_at, ...rest } = readBot(doc);
  return { id: _id, ...rest, created_at: created_at.toISOString(), updated_at: updated_at.toISOString() };
}

/** The body's fields with every default filled in. */
export function withDefaults(body: BotCreate) {
  const variables = (body.variables ?? BOT_DEFAULTS.variables).map((v) => ({ name: v.name, required: v.required ?? false, description: v.description ?? '' }));
  return {
    name: body.name,
    active: body.active ?? BOT_DEFAULTS.active,
    language: body.language ?? BOT_DEFAULTS.language,
    prompt: body.prompt ?? BOT_DEFAULTS.prompt,
    greeting: body.greeting ?? BOT_DEFAULTS.greeting,
    variables,
    voice: body.voice ?? BOT_DEFAULTS.voice,
    stt: body.stt ?? BOT_DEFAULTS.stt,
    llm: body.llm ?? BOT_DEFAULTS.llm,
    tools: (body.tools ?? BOT_DEFAULTS.tools).map((t) => ({ ...t, description: t.description ?? '' })),
    policy: body.policy ?? BOT_DEFAULTS.policy,
    turn_detection: body.turn_detection ?? BOT_DEFAULTS.turn_detection,
    max_call_seconds: body.max_call_seconds ?? BOT_DEFAULTS.max_call_seconds,
  };
}
