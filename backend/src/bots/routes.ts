// Admin API for bots. Templates may only name declared variables, so a call can never render a
// placeholder nobody is asked to provide.
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { Ajv } from 'ajv';
import { BotCreate, BotPublish, BotUpdate, VERSION_CURSOR_PATTERN, templateProblems, type AnalysisField, type AnalysisSettings, type BotCreate as BotCreateT, type BotMcpServer, type BotPolicy, type BotTool, type ToolType, isRedactionEntity, REDACTION_ENTITIES } from '@voice-platform/schemas';
import { AddressRefused, checkHost } from '@voice-platform/schemas/node';
import { generateWebhookSecret } from '../webhooks/store.js';
import { apiError } from '../core/errors.js';
import { e164Problem } from '../core/phoneInput.js';
import type { Services } from '../core/deps.js';
import { check, type FieldProblem } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { COLLECTIONS } from '../core/collections.js';
import { withDocLock } from '../core/locks.js';
import { requireAdmin } from '../auth/admin.js';
import { audited, AUDITED, requestActor, updateOrDeactivate } from '../audit/audit.js';
import { pageQuery } from '../core/validate.js';
import { bots, findBot, publicBot, readBot, sealMcpHeaders, sealToolHeaders, stored, toolSecretBox, turnDetection, withDefaults, type BotDoc } from './store.js';
import type { SecretBox } from '../core/secretBox.js';
import { botVersions, findVersion, insertFirstVersion, insertVersion, publicVersion, sameBehaviour, snapshotOf, versionId, versionPassed } from './versions.js';
import { checkFlow, checkHandoffBots } from './flow.js';

/** Deepest nesting a tool's `parameters` may have (a JSON Schema of a function's arguments needs a few levels). */
const MAX_TOOL_PARAMETERS_DEPTH = 32;

/** True when `v` nests objects or arrays more than `limit` levels deep; never walks below the limit. */
function tooDeep(v: unknown, limit: number, level = 1): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (level > limit) return true;
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (tooDeep(x, limit, level + 1)) return true;
  return false;
}

/** The fields of each tool type besides the common ones (name, description, type, parameters). */
const TYPE_FIELDS: Record<ToolType | 'none', readonly string[]> = {
  none: [],
  http: ['url', 'method', 'headers', 'timeout_ms', 'say_while_waiting', 'filler', 'filler_after_ms'],
  end_call: [],
  transfer_call: ['destinations', 'mode', 'announcement', 'whisper', 'on_failure'],
  send_dtmf: [],
};
const COMMON_FIELDS = new Set(['name', 'description', 'type', 'parameters']);
/** A JSON Schema compiler apart from the one that checks requests (a tool's schema may use any keyword). */
const schemaCompiler = new Ajv({ strict: false, allErrors: false, validateSchema: true });

/**
 * The rules of tools a schema cannot hold (docs/design.md §9); HTTP tool URLs are checked by checkToolUrls.
 * Answers the tools with each transfer destination's number as E.164 (docs/design.md §13): international
 * formats only, as a bot has no region to read a national number in.
 */
function checkTools(tools: BotTool[]): BotTool[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  const out = tools.map((t) => (t.destinations ? { ...t, destinations: t.destinations.map((d) => ({ ...d })) } : t));
  out.forEach((t, i) => {
    const at = `tools.${i}`;
    if (seen.has(t.name)) problems.push({ field: `${at}.name`, message: `${t.name} names another tool already` });
    seen.add(t.name);
    if (t.parameters !== undefined && tooDeep(t.parameters, MAX_TOOL_PARAMETERS_DEPTH)) {
      problems.push({ field: `${at}.parameters`, message: `nests deeper than ${MAX_TOOL_PARAMETERS_DEPTH} levels` });
    } else if (t.parameters !== undefined) {
      if (t.parameters.type !== undefined && t.parameters.type !== 'object') problems.push({ field: `${at}.parameters`, message: 'must be a JSON Schema of an object (type "object")' });
      try {
        schemaCompiler.compile(t.parameters);
      } catch (err) {
        problems.push({ field: `${at}.parameters`, message: `is not a JSON Schema: ${err instanceof Error ? err.message.slice(0, 200) : 'invalid'}` });
      }
    }
    const own = TYPE_FIELDS[t.type ?? 'none'];
    for (const key of Object.keys(t)) {
      if (!COMMON_FIELDS.has(key) && !own.includes(key)) problems.push({ field: `${at}.${key}`, message: `is not a field of ${t.type ? `a ${t.type} tool` : 'a tool without a type'}` });
    }
    if (t.type === 'http' && t.url === undefined) problems.push({ field: `${at}.url`, message: 'is required for an http tool' });
    if (t.type === 'transfer_call') {
      if (!t.destinations) problems.push({ field: `${at}.destinations`, message: 'is required for a transfer_call tool' });
      t.destinations?.forEach((d, j) => {
        if ((d.number === undefined) === (d.sip_uri === undefined)) problems.push({ field: `${at}.destinations.${j}`, message: 'needs exactly one of number and sip_uri' });
        // Warm mode dials the person through the call's trunk, which takes a phone number.
        else if (t.mode === 'warm' && d.sip_uri !== undefined) problems.push({ field: `${at}.destinations.${j}.sip_uri`, message: 'a warm transfer dials a number (E.164) through the call\'s trunk: use number, or mode "cold" for a SIP URI' });
        if (d.number !== undefined) {
          const r = e164Problem(d.number, `${at}.destinations.${j}.number`);
          if ('e164' in r) d.number = r.e164;
          else problems.push(r);
        }
      });
      if (t.whisper !== undefined && t.mode !== 'warm') problems.push({ field: `${at}.whisper`, message: 'is said to the person taking the call in warm mode only (mode: "warm")' });
    }
  });
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
  return out;
}

/** An HTTP tool's (or MCP server's) URL: parsed, http(s), no credentials, and its host public unless WEBHOOK_ALLOW_PRIVATE (the webhooks' guard). */
async function checkToolUrls(svc: Services, tools: ReadonlyArray<{ type?: string; url?: string }>, prefix = 'tools'): Promise<void> {
  const problems: FieldProblem[] = [];
  for (const [i, t] of tools.entries()) {
    if (t.type !== 'http' || t.url === undefined) continue;
    const field = `${prefix}.${i}.url`;
    let parsed: URL;
    try {
      parsed = new URL(t.url);
    } catch {
      problems.push({ field, message: 'is not a valid URL' });
      continue;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') problems.push({ field, message: 'must be an http:// or https:// URL' });
    else if (parsed.username || parsed.password) problems.push({ field, message: 'must not contain a user name or password (use headers)' });
    else {
      try {
        await checkHost(parsed.hostname, svc.settings.WEBHOOK_ALLOW_PRIVATE);
      } catch (err) {
        if (!(err instanceof AddressRefused)) throw err;
        problems.push({ field, message: err.reason });
      }
    }
  }
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** MCP servers (shared/DESIGN.md §18): names unique, addresses guarded like HTTP tools'. */
async function checkMcpServers(svc: Services, servers: BotMcpServer[]): Promise<void> {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  servers.forEach((m, i) => {
    if (seen.has(m.name)) problems.push({ field: `mcp_servers.${i}.name`, message: `${m.name} names another MCP server already` });
    seen.add(m.name);
    m.allowed_tools?.forEach((t, j) => {
      if (m.allowed_tools!.indexOf(t) !== j) problems.push({ field: `mcp_servers.${i}.allowed_tools.${j}`, message: `${t} is listed twice` });
    });
  });
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
  await checkToolUrls(svc, servers.map((m) => ({ type: 'http', url: m.url })), 'mcp_servers');
}

/** Each knowledge base a bot names exists. */
async function checkKnowledgeBases(svc: Services, ids: string[]): Promise<void> {
  if (!ids.length) return;
  const found = new Set((await svc.db.collection<{ _id: string }>(COLLECTIONS.knowledgeBases).find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
  const problems = ids.flatMap((id, i) => (found.has(id) ? [] : [{ field: `knowledge_base_ids.${i}`, message: `${id} is not a knowledge base` }]));
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** Smart turn detection ends a complete utterance sooner than an incomplete one, never later. */
function checkTurnDetection(td: { min_silence_ms: number; end_of_turn_silence_ms: number }): void {
  if (td.min_silence_ms > td.end_of_turn_silence_ms) {
    throw apiError('validation_failed', { message: 'the bot is invalid', details: [{ field: 'turn_detection.min_silence_ms', message: `must be at most end_of_turn_silence_ms (${td.end_of_turn_silence_ms})` }] });
  }
}

/** Answering machine detection: leaving a message needs the message. */
function checkAnsweringMachine(am: { on_machine: string; message: string }): void {
  if (am.on_machine === 'leave_message' && !am.message.trim()) {
    throw apiError('validation_failed', { message: 'the bot is invalid', details: [{ field: 'answering_machine.message', message: 'is said to the machine: required for on_machine "leave_message"' }] });
  }
}

/**
 * Post-call analysis (docs/design.md §10), the rules a schema cannot hold: field names unique, `values` for enum
 * fields only and required there; each scripted intent's `sets` names analysis fields, with a value of the field's
 * type (an enum's one of its values).
 */
function checkAnalysis(analysis: AnalysisSettings, policy: BotPolicy | null): void {
  const problems: FieldProblem[] = [];
  const byName = new Map<string, AnalysisField>();
  analysis.fields.forEach((f, i) => {
    const at = `analysis.fields.${i}`;
    if (byName.has(f.name)) problems.push({ field: `${at}.name`, message: `${f.name} names another field already` });
    else byName.set(f.name, f);
    if (f.type === 'enum' && f.values === undefined) problems.push({ field: `${at}.values`, message: 'is required for an enum field: the values it may take' });
    if (f.type !== 'enum' && f.values !== undefined) problems.push({ field: `${at}.values`, message: `is for enum fields only (this one is a ${f.type})` });
    f.values?.forEach((v, j) => {
      if (f.values!.indexOf(v) !== j) problems.push({ field: `${at}.values.${j}`, message: `${JSON.stringify(v)} is listed twice` });
    });
  });
  policy?.intents.forEach((intent, i) => {
    for (const [name, value] of Object.entries(intent.sets ?? {})) {
      const field = `policy.intents.${i}.sets.${name}`;
      const f = byName.get(name);
      if (!f) problems.push({ field, message: `${name} is not one of the bot's analysis fields` });
      else if (f.type === 'enum' && !(typeof value === 'string' && (f.values ?? []).includes(value))) {
        problems.push({ field, message: `must be one of the enum field's values (${(f.values ?? []).map((v) => JSON.stringify(v)).join(', ')})` });
      } else if (f.type !== 'enum' && typeof value !== f.type) problems.push({ field, message: `must be a ${f.type}: the field's type` });
    }
  });
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** The tools a scripted intent may act with; hanging up is the intent's own `end_call`. */
const SCRIPTED_ACTION_TYPES: ReadonlySet<string> = new Set(['http', 'transfer_call', 'send_dtmf', 'handoff']);
/** The built-in handoff as a scripted intent's action sees it (a bot with handoff set). */
const handoffTool = (handoff: unknown) => (handoff ? [{ name: 'handoff', type: 'handoff' }] : []);

/**
 * The policy's rules a schema cannot hold: an intent is matched by examples or keys, and acts with a tool the bot has.
 * An MCP server's tools are known only at call start: an action may name one its allowed_tools lists, or any
 * tool when a server lists none (an unknown name then fails at call time like a tool that errs).
 */
function checkPolicy(policy: BotPolicy | null, tools: ReadonlyArray<{ name: string; type?: string }>, mcp: ReadonlyArray<{ allowed_tools?: string[] }> = []): void {
  const problems: FieldProblem[] = [];
  const mcpTool = (name: string) => mcp.some((m) => m.allowed_tools === undefined || m.allowed_tools.includes(name));
  policy?.intents.forEach((intent, i) => {
    if (intent.examples.length === 0 && intent.dtmf === undefined) problems.push({ field: `policy.intents.${i}.examples`, message: 'needs at least one example, or dtmf' });
    const tool = intent.action && tools.find((t) => t.name === intent.action!.tool);
    if (intent.action && !tool && mcpTool(intent.action.tool)) return;
    if (intent.action && !tool) problems.push({ field: `policy.intents.${i}.action.tool`, message: `${intent.action.tool} is not one of the bot's tools` });
    else if (tool && !SCRIPTED_ACTION_TYPES.has(tool.type ?? '')) problems.push({ field: `policy.intents.${i}.action.tool`, message: `${tool.name} is not an http, transfer_call or send_dtmf tool (to hang up, set end_call)` });
    if (intent.on_error_reply !== undefined && !intent.action) problems.push({ field: `policy.intents.${i}.on_error_reply`, message: 'is said when the action fails: it needs an action' });
  });
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** The shared template rules (schemas/src/templates.ts). */
function checkTemplates(bot: ReturnType<typeof withDefaults>): void {
  const problems: FieldProblem[] = templateProblems(bot);
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** Redaction entities the platform does not know, named (the schema's own error would only say "allowed values"); before the schema check. */
function checkRedactionEntities(body: unknown): void {
  const entities = (body as { redaction?: { entities?: unknown } } | null)?.redaction?.entities;
  if (!Array.isArray(entities)) return;
  const problems: FieldProblem[] = [];
  entities.forEach((e, i) => {
    if (!isRedactionEntity(e)) problems.push({ field: `redaction.entities.${i}`, message: `${JSON.stringify(e)} is not a redaction entity (one of ${REDACTION_ENTITIES.join(', ')})` });
  });
  if (problems.length) throw apiError('validation_failed', { message: `unknown redaction entities: ${problems.map((p) => p.message.split(' is ')[0]).join(', ')}`, details: problems });
}

/** Builds a bot document (also used by the demo seed): header values sealed in `box`. */
export function newBotDoc(body: BotCreateT, now: Date, box: SecretBox | null, id = new ObjectId().toHexString()): BotDoc {
  checkRedactionEntities(body);
  const fields = withDefaults(check(BotCreate, body));
  checkTemplates(fields);
  const tools = checkTools(fields.tools);
  checkPolicy(fields.policy, [...tools, ...handoffTool(fields.handoff)], fields.mcp_servers);
  checkFlow(fields.flow, tools, fields.handoff, fields.mcp_servers);
  checkTurnDetection(fields.turn_detection);
  checkAnsweringMachine(fields.answering_machine);
  checkAnalysis(fields.analysis, fields.policy);
  return { _id: id, ...fields, tools: sealToolHeaders(box, tools), mcp_servers: sealMcpHeaders(box, fields.mcp_servers), tool_secret_sealed: null, version: 1, published_version: 1, created_at: now, updated_at: now };
}

const VERSION_CURSOR = new RegExp(VERSION_CURSOR_PATTERN);

/** A version number in a path: a positive integer, else 422 naming `version`. */
function versionParam(raw: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw apiError('validation_failed', { details: [{ field: 'version', message: 'must be a version number (an integer from 1)' }] });
  return Number(raw);
}

export function botRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);
  const box = toolSecretBox(svc.settings.JWT_SECRET);

  router.post('/api/v1/bots', admin, audited(svc, 'bot.create', AUDITED.bot), jsonBody(), async (ctx) => {
    const doc = newBotDoc(ctx.request.body as BotCreateT, svc.now(), box);
    await checkToolUrls(svc, (ctx.request.body as BotCreateT).tools ?? []);
    await checkMcpServers(svc, (ctx.request.body as BotCreateT).mcp_servers ?? []);
    await checkKnowledgeBases(svc, doc.knowledge_base_ids);
    await checkHandoffBots(svc, doc.handoff, doc._id);
    // Version 1, published at creation (shared/DESIGN.md §17).
    await insertFirstVersion(svc.db, doc, requestActor(ctx));
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

  router.patch('/api/v1/bots/:id', admin, audited(svc, updateOrDeactivate('bot'), AUDITED.bot), jsonBody(), async (ctx) => {
    checkRedactionEntities(ctx.request.body);
    const patch = check(BotUpdate, ctx.request.body);
    // The version guard below is a compare-and-set only if edits of one bot cannot interleave (locks.ts).
    await withDocLock(svc.redis, `bot:${ctx.params.id!}`, async () => {
      const existing = await bots(svc.db).findOne({ _id: ctx.params.id! });
      if (!existing) throw apiError('bot_not_found');
      const { _id, created_at, updated_at, tool_secret_sealed, tools: currentTools, mcp_servers: currentMcp, ...current } = readBot(existing);
      const { tools: patchTools, mcp_servers: patchMcp, ...rest } = patch;
      const merged = withDefaults({
        ...current,
        ...rest,
        answering_machine: { ...current.answering_machine, ...rest.answering_machine },
        turn_detection: turnDetection(current.turn_detection, rest.turn_detection),
        interruption: { ...current.interruption, ...rest.interruption },
        audio: { ...current.audio, ...rest.audio },
        analysis: { ...current.analysis, ...rest.analysis },
        redaction: { ...current.redaction, ...rest.redaction },
        recording: { ...current.recording, ...rest.recording },
        tools: [],
        mcp_servers: [],
      } as BotCreateT);
      checkTemplates(merged);
      let tools = currentTools;
      if (patchTools !== undefined) {
        const checked = checkTools(patchTools);
        await checkToolUrls(svc, checked);
        tools = sealToolHeaders(box, checked.map((t) => ({ ...t, description: t.description ?? '' })), currentTools);
      }
      let mcp_servers = currentMcp;
      if (patchMcp !== undefined) {
        await checkMcpServers(svc, patchMcp);
        mcp_servers = sealMcpHeaders(box, patchMcp, currentMcp);
      }
      if (rest.knowledge_base_ids !== undefined) await checkKnowledgeBases(svc, merged.knowledge_base_ids);
      checkPolicy(merged.policy, [...tools, ...handoffTool(merged.handoff)], mcp_servers);
      checkFlow(merged.flow, tools, merged.handoff, mcp_servers);
      // Checked when set: a bot handed to that became inactive later does not block other edits (the call says on_failure).
      if (patch.handoff !== undefined) await checkHandoffBots(svc, merged.handoff, _id);
      checkTurnDetection(merged.turn_detection);
      checkAnsweringMachine(merged.answering_machine);
      checkAnalysis(merged.analysis, merged.policy);
      // Guarded by the version we read, so two concurrent edits cannot silently merge into an invalid bot.
      const now = svc.now();
      const before = snapshotOf({ ...current, tools: currentTools, mcp_servers: currentMcp, tool_secret_sealed });
      const after = snapshotOf({ ...merged, tools, mcp_servers, tool_secret_sealed, version: current.version, published_version: current.published_version });
      // A save of the behaviour is a new version (published at once unless the bot requires passing tests);
      // one that changes only name, active or require_passing_tests, or nothing, is none (those act at once).
      const changed = !sameBehaviour(box, before, after);
      let version = current.version;
      let published = current.published_version;
      if (changed) {
        version = await insertVersion(svc.db, _id, current.version, after, requestActor(ctx), now);
        if (!merged.require_passing_tests) published = version;
      }
      const doc: Omit<BotDoc, '_id' | 'created_at' | 'updated_at'> = changed
        ? { ...merged, tools, mcp_servers, tool_secret_sealed, version, published_version: published }
        : { ...current, tools: currentTools, mcp_servers: currentMcp, tool_secret_sealed, name: merged.name, active: merged.active, require_passing_tests: merged.require_passing_tests };
      // Every replica's cached copy is dropped before this answers (cache.ts).
      const res = await svc.cache.write(() => bots(svc.db).updateOne({ _id, updated_at }, { $set: { ...stored(doc), updated_at: now } }));
      if (res.matchedCount === 0) {
        // The version whose save did not land is no version of the bot.
        if (changed) await botVersions(svc.db).deleteOne({ _id: versionId(_id, version) }).catch(() => undefined);
        throw apiError('conflict', 'the bot was changed concurrently; retry');
      }
      ctx.body = publicBot({ _id, ...doc, created_at, updated_at: now });
    });
  });

  // Versions, newest first (cursor `<created_at ms>.<version>`); each with its snapshot by number.
  router.get('/api/v1/bots/:id/versions', admin, async (ctx) => {
    // The list's own cursor (`<ms>.<version>`), checked before pageQuery's general one.
    const rawCursor = ctx.query.cursor;
    if (typeof rawCursor === 'string' && rawCursor !== '' && !VERSION_CURSOR.test(rawCursor)) throw apiError('validation_failed', { details: [{ field: 'cursor', message: 'is not a cursor from next_cursor' }] });
    const { limit, after } = pageQuery(ctx.query);
    const bot = await findBot(svc.db, ctx.params.id!);
    // Versions outlive a bot (its calls' versions stay readable), so a bot gone is not yet "no versions".
    const filter = { bot_id: ctx.params.id!, ...(after ? { version: { $lt: Number(after.id) } } : {}) };
    const docs = await botVersions(svc.db).find(filter).sort({ version: -1 }).limit(limit + 1).toArray();
    if (!bot && docs.length === 0 && !(await botVersions(svc.db).findOne({ bot_id: ctx.params.id! }, { projection: { _id: 1 } }))) throw apiError('bot_not_found');
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = {
      items: page.map((d) => {
        const { config: _config, ...v } = publicVersion(d, bot);
        return v;
      }),
      next_cursor: docs.length > limit && last ? `${last.created_at.getTime()}.${last.version}` : null,
    };
  });

  router.get('/api/v1/bots/:id/versions/:version', admin, async (ctx) => {
    const version = versionParam(ctx.params.version!);
    const doc = await findVersion(svc.db, ctx.params.id!, version);
    if (!doc) {
      if (!(await findBot(svc.db, ctx.params.id!))) throw apiError('bot_not_found');
      throw apiError('not_found', `the bot has no version ${version}`);
    }
    ctx.body = publicVersion(doc, await findBot(svc.db, ctx.params.id!));
  });

  // Makes a version the one calls run; an older one is the rollback. A bot that requires passing tests
  // publishes only a version whose last test run is all green.
  router.post('/api/v1/bots/:id/publish', admin, audited(svc, 'bot.publish', AUDITED.bot), jsonBody(), async (ctx) => {
    const { version } = check(BotPublish, ctx.request.body);
    await withDocLock(svc.redis, `bot:${ctx.params.id!}`, async () => {
      const bot = await findBot(svc.db, ctx.params.id!);
      if (!bot) throw apiError('bot_not_found');
      if (!(await findVersion(svc.db, bot._id, version))) throw apiError('not_found', `the bot has no version ${version}`);
      if (bot.require_passing_tests && !(await versionPassed(svc.db, bot._id, version))) {
        throw apiError('tests_failing', { message: `version ${version}'s last test run is not all green; the bot requires passing tests to publish`, details: { version } });
      }
      const now = svc.now();
      if (bot.published_version !== version) {
        await svc.cache.write(() => bots(svc.db).updateOne({ _id: bot._id }, { $set: { published_version: version, updated_at: now } }));
        bot.published_version = version;
        bot.updated_at = now;
      }
      ctx.body = publicBot(bot);
    });
  });

  // Creates or rotates the secret HTTP tool requests are signed with; shown in this answer only.
  router.post('/api/v1/bots/:id/tool-secret', admin, audited(svc, 'bot.rotate_tool_secret', AUDITED.bot), async (ctx) => {
    const secret = generateWebhookSecret();
    await withDocLock(svc.redis, `bot:${ctx.params.id!}`, async () => {
      const res = await svc.cache.write(() => bots(svc.db).updateOne({ _id: ctx.params.id! }, { $set: { tool_secret_sealed: box.seal(secret), updated_at: svc.now() } }));
      if (res.matchedCount === 0) throw apiError('bot_not_found');
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { bot_id: ctx.params.id!, secret };
  });
}
