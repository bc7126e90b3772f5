// Admin API for bots. Templates may only name declared variables, so a call can never render a
// placeholder nobody is asked to provide.
import { ObjectId, type Db } from 'mongodb';
import type { Router } from '@koa/router';
import { BOT_DEFAULTS, BotCreate, BotUpdate, type Bot, type BotCreate as BotCreateT, type BotTool } from '@voice-platform/schemas';
import { ApiError } from '../errors.js';
import type { Services } from '../deps.js';
import type { CacheView } from '../cache.js';
import { check, type FieldProblem } from '../validate.js';
import { jsonBody } from '../body.js';
import { COLLECTIONS } from '../stores.js';
import { withDocLock } from '../locks.js';
import { requireAdmin } from '../auth/admin.js';
import { placeholders, templateFields } from './templates.js';

export type BotDoc = Omit<Bot, 'id' | 'created_at' | 'updated_at'> & { _id: string; created_at: Date; updated_at: Date };

/** Every documented field, also for documents stored before a field existed: those read as its default
 *  (migrate on read; stores.ts migrateBots also writes them once at boot). */
export function readBot(doc: BotDoc): BotDoc {
  const { _id, created_at, updated_at, ...rest } = doc;
  const fields = withDefaults(rest);
  return { _id, ...fields, tools: fields.tools.map(openTool), created_at, updated_at: updated_at ?? created_at };
}

/** Deepest nesting a tool's `parameters` may have (a JSON Schema of a function's arguments needs a few levels). */
export const MAX_TOOL_PARAMETERS_DEPTH = 32;

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

/** True when `v` nests objects or arrays more than `limit` levels deep; never walks below the limit. */
function tooDeep(v: unknown, limit: number, level = 1): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (level > limit) return true;
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (tooDeep(x, limit, level + 1)) return true;
  return false;
}

function checkTools(tools: BotTool[]): void {
  const problems: FieldProblem[] = [];
  tools.forEach((t, i) => {
    if (t.parameters !== undefined && tooDeep(t.parameters, MAX_TOOL_PARAMETERS_DEPTH)) {
      problems.push({ field: `tools.${i}.parameters`, message: `nests deeper than ${MAX_TOOL_PARAMETERS_DEPTH} levels` });
    }
  });
  if (problems.length) throw new ApiError(422, 'validation_failed', 'the bot is invalid', problems);
}

/** One bot by id, in the documented shape (see readBot), or null. */
export async function findBot(db: Db, id: string): Promise<BotDoc | null> {
  const doc = await db.collection<BotDoc>(COLLECTIONS.bots).findOne({ _id: id });
  return doc && readBot(doc);
}

/** findBot through this replica's cache (cache.ts), under the request's view. */
export function cachedBot(svc: Services, view: CacheView, id: string): Promise<BotDoc | null> {
  return svc.cache.bots.get(view, id, () => findBot(svc.db, id));
}

export function publicBot(doc: BotDoc): Bot {
  const { _id, created_at, updated_at, ...rest } = readBot(doc);
  return { id: _id, ...rest, created_at: created_at.toISOString(), updated_at: updated_at.toISOString() };
}

function checkTemplates(bot: Omit<BotDoc, '_id' | 'created_at' | 'updated_at'>): void {
  const problems: FieldProblem[] = [];
  const declared = new Set<string>();
  bot.variables.forEach((v, i) => {
    if (declared.has(v.name)) problems.push({ field: `variables.${i}.name`, message: `${v.name} is declared twice` });
    declared.add(v.name);
  });
  for (const [field, text] of templateFields(bot)) {
    for (const name of placeholders(text)) {
      if (!declared.has(name)) problems.push({ field, message: `{{${name}}} is not a declared variable` });
    }
  }
  if (problems.length) throw new ApiError(422, 'validation_failed', 'the bot is invalid', problems);
}

function withDefaults(body: BotCreateT) {
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

/** Builds a bot document (also used by the demo seed). */
export function newBotDoc(body: BotCreateT, now: Date, id = new ObjectId().toHexString()): BotDoc {
  const fields = withDefaults(check(BotCreate, body));
  checkTemplates(fields);
  checkTools(fields.tools);
  return { _id: id, ...fields, created_at: now, updated_at: now };
}

export function botRoutes(router: Router, svc: Services): void {
  const bots = () => svc.db.collection<BotDoc>(COLLECTIONS.bots);
  const admin = requireAdmin(svc);

  router.post('/api/v1/bots', admin, jsonBody(), async (ctx) => {
    const doc = newBotDoc(ctx.request.body as BotCreateT, svc.now());
    await bots().insertOne(stored(doc));
    ctx.status = 201;
    ctx.set('Location', `/api/v1/bots/${doc._id}`);
    ctx.body = publicBot(doc);
  });

  router.get('/api/v1/bots', admin, async (ctx) => {
    const docs = await bots().find({}).sort({ created_at: -1, _id: -1 }).limit(1000).toArray();
    ctx.body = { items: docs.map(publicBot) };
  });

  router.get('/api/v1/bots/:id', admin, async (ctx) => {
    const doc = await findBot(svc.db, ctx.params.id!);
    if (!doc) throw new ApiError(404, 'bot_not_found', 'bot not found');
    ctx.body = publicBot(doc);
  });

  router.patch('/api/v1/bots/:id', admin, jsonBody(), async (ctx) => {
    const patch = check(BotUpdate, ctx.request.body);
    // The version guard below is a compare-and-set only if edits of one bot cannot interleave (locks.ts).
    await withDocLock(svc.redis, `bot:${ctx.params.id!}`, async () => {
      const existing = await bots().findOne({ _id: ctx.params.id! });
      if (!existing) throw new ApiError(404, 'bot_not_found', 'bot not found');
      const { _id, created_at, updated_at, ...current } = readBot(existing);
      const merged = withDefaults({ ...current, ...patch } as BotCreateT);
      checkTemplates(merged);
      checkTools(merged.tools);
      // Guarded by the version we read, so two concurrent edits cannot silently merge into an invalid bot.
      const now = svc.now();
      // Every replica's cached copy is dropped before this answers (cache.ts).
      const res = await svc.cache.write(() => bots().updateOne({ _id, updated_at }, { $set: { ...stored(merged), updated_at: now } }));
      if (res.matchedCount === 0) throw new ApiError(409, 'conflict', 'the bot was changed concurrently; retry');
      ctx.body = publicBot({ _id, ...merged, created_at, updated_at: now });
    });
  });
}
