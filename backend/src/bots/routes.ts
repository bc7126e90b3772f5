// Admin API for bots. Templates may only name declared variables, so a call can never render a
// placeholder nobody is asked to provide.
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { BotCreate, BotUpdate, templateProblems, type BotCreate as BotCreateT, type BotTool } from '@voice-platform/schemas';
import { apiError } from '../errors.js';
import type { Services } from '../deps.js';
import { check, type FieldProblem } from '../validate.js';
import { jsonBody } from '../body.js';
import { withDocLock } from '../locks.js';
import { requireAdmin } from '../auth/admin.js';
import { bots, findBot, publicBot, readBot, stored, withDefaults, type BotDoc } from './store.js';

/** Deepest nesting a tool's `parameters` may have (a JSON Schema of a function's arguments needs a few levels). */
const MAX_TOOL_PARAMETERS_DEPTH = 32;

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
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** The shared template rules (schemas/src/templates.ts). */
function checkTemplates(bot: Omit<BotDoc, '_id' | 'created_at' | 'updated_at'>): void {
  const problems: FieldProblem[] = templateProblems(bot);
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** Builds a bot document (also used by the demo seed). */
export function newBotDoc(body: BotCreateT, now: Date, id = new ObjectId().toHexString()): BotDoc {
  const fields = withDefaults(check(BotCreate, body));
  checkTemplates(fields);
  checkTools(fields.tools);
  return { _id: id, ...fields, created_at: now, updated_at: now };
}

export function botRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);

  router.post('/api/v1/bots', admin, jsonBody(), async (ctx) => {
    const doc = newBotDoc(ctx.request.body as BotCreateT, svc.now());
    await bots(svc.db).insertOne(stored(doc));
    ctx.status = 201;
    ctx.set('Location', `/api/v1/bots/${doc._id}`);
    ctx.body = publicBot(doc);
  });

  router.get('/api/v1/bots', admin, async (ctx) => {
    const docs = await bots(svc.db).find({}).sort({ created_at: -1, _id: -1 }).limit(1000).toArray();
    ctx.body = { items: docs.map(publicBot) };
  });

  router.get('/api/v1/bots/:id', admin, async (ctx) => {
    const doc = await findBot(svc.db, ctx.params.id!);
    if (!doc) throw apiError('bot_not_found');
    ctx.body = publicBot(doc);
  });

  router.patch('/api/v1/bots/:id', admin, jsonBody(), async (ctx) => {
    const patch = check(BotUpdate, ctx.request.body);
    // The version guard below is a compare-and-set only if edits of one bot cannot interleave (locks.ts).
    await withDocLock(svc.redis, `bot:${ctx.params.id!}`, async () => {
      const existing = await bots(svc.db).findOne({ _id: ctx.params.id! });
      if (!existing) throw apiError('bot_not_found');
      const { _id, created_at, updated_at, ...current } = readBot(existing);
      const merged = withDefaults({ ...current, ...patch } as BotCreateT);
      checkTemplates(merged);
      checkTools(merged.tools);
      // Guarded by the version we read, so two concurrent edits cannot silently merge into an invalid bot.
      const now = svc.now();
      // Every replica's cached copy is dropped before this answers (cache.ts).
      const res = await svc.cache.write(() => bots(svc.db).updateOne({ _id, updated_at }, { $set: { ...stored(merged), updated_at: now } }));
      if (res.matchedCount === 0) throw apiError('conflict', 'the bot was changed concurrently; retry');
      ctx.body = publicBot({ _id, ...merged, created_at, updated_at: now });
    });
  });
}
