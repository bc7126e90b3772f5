// Bots as stored: the document, its public shape, reading with defaults (migrate on read), and the lookup
// dial-out, the worker config, inbound and call creation use. The admin routes are in routes.ts.
import type { Db } from 'mongodb';
import { BOT_DEFAULTS, DEFAULT_HANDOFF_FAILURE, policyWithExamples, type BotFlow, type AnalysisSettings, type Bot, type BotCreate, type BotMcpServer, type BotTool, type BotToolPublic, type TurnDetection } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import type { CacheTable, CacheView } from '../core/cacheTable.js';
import { SecretBox } from '../core/secretBox.js';

import type { BotDoc, DocMcpServer, DocTool } from '../core/documents.js';
export type { BotDoc, DocMcpServer, DocTool } from '../core/documents.js';

/** The box of tool header values and tool secrets (keyed from JWT_SECRET like trunk passwords). */
export const toolSecretBox = (jwtSecret: string) => new SecretBox(jwtSecret, 'bot-tool-secrets');

/**
 * The tools as written (headers in the clear) as they are kept: header values sealed. A tool written
 * without `headers` keeps the ones the same-named tool had (write-only values are never sent back, so an
 * edit that did not mean to change them does not send them); `headers: {}` removes them.
 */
export function sealToolHeaders(box: SecretBox | null, tools: BotTool[], before: DocTool[] = []): DocTool[] {
  return tools.map((t) => {
    const { headers, ...rest } = t;
    if (headers === undefined) {
      // Only to an http tool: a tool of another type under the same name has no headers to keep.
      const prior = t.type === 'http' ? before.find((b) => b.name === t.name) : undefined;
      return prior?.headers_sealed ? { ...rest, header_names: prior.header_names ?? [], headers_sealed: prior.headers_sealed } : rest;
    }
    const names = Object.keys(headers);
    if (names.length && !box) throw new Error('tool headers need a secret box');
    return names.length ? { ...rest, header_names: names, headers_sealed: box!.seal(JSON.stringify(headers)) } : rest;
  });
}

/** The tools as the worker needs them: header values opened (a box not ours reads as no headers). */
export function openToolHeaders(box: SecretBox, tools: DocTool[]): BotTool[] {
  return tools.map((t) => {
    const { headers_sealed, header_names, ...rest } = t;
    const opened = headers_sealed ? box.open(headers_sealed) : null;
    return opened ? { ...rest, headers: JSON.parse(opened) as Record<string, string> } : rest;
  });
}

/** MCP servers as kept: header values sealed like tools' (an edit without `headers` keeps the same-named server's). */
export function sealMcpHeaders(box: SecretBox | null, servers: BotMcpServer[], before: DocMcpServer[] = []): DocMcpServer[] {
  return servers.map((m) => {
    const { headers, ...rest } = m;
    if (headers === undefined) {
      const prior = before.find((b) => b.name === m.name);
      return prior?.headers_sealed ? { ...rest, header_names: prior.header_names ?? [], headers_sealed: prior.headers_sealed } : rest;
    }
    const names = Object.keys(headers);
    if (names.length && !box) throw new Error('MCP headers need a secret box');
    return names.length ? { ...rest, header_names: names, headers_sealed: box!.seal(JSON.stringify(headers)) } : rest;
  });
}

/** MCP servers as the worker needs them: header values opened. */
export function openMcpHeaders(box: SecretBox, servers: DocMcpServer[]): BotMcpServer[] {
  return servers.map((m) => {
    const { headers_sealed, header_names: _names, ...rest } = m;
    const opened = headers_sealed ? box.open(headers_sealed) : null;
    return opened ? { ...rest, headers: JSON.parse(opened) as Record<string, string> } : rest;
  });
}

export const bots = (db: Db) => db.collection<BotDoc>(COLLECTIONS.bots);

/** Every documented field, also for documents stored before a field existed: those read as its default
 *  (migrate on read; stores.ts migrateBots also writes them once at boot). */
export function readBot(doc: BotDoc): BotDoc {
  const { _id, created_at, updated_at, tool_secret_sealed, version, published_version, ...rest } = doc;
  const fields = withDefaults(rest as BotCreate);
  // A bot stored before versions is version 1, published (stores.ts migrateBotVersions stores that version at boot).
  return {
    _id,
    ...fields,
    tools: (fields.tools as StoredTool[]).map(openTool),
    mcp_servers: fields.mcp_servers as DocMcpServer[],
    tool_secret_sealed: tool_secret_sealed ?? null,
    version: version ?? 1,
    published_version: published_version ?? 1,
    created_at,
    updated_at: updated_at ?? created_at,
  };
}

type StoredTool = Omit<DocTool, 'parameters'> & { parameters?: Record<string, unknown>; parameters_json?: string };

/** A tool's `parameters` is the user's JSON Schema: stored as JSON text, so any key ($ref, dots, NUL) survives BSON. */
function sealTool(t: DocTool): StoredTool {
  const { parameters, ...rest } = t;
  return parameters === undefined ? rest : { ...rest, parameters_json: JSON.stringify(parameters) };
}

function openTool(t: StoredTool): DocTool {
  const { parameters_json, ...rest } = t;
  return parameters_json === undefined ? (rest as DocTool) : { ...rest, parameters: JSON.parse(parameters_json) as Record<string, unknown> };
}

/** The document as stored (see sealTool). */
export function stored<T extends { tools: DocTool[] }>(doc: T): T {
  return { ...doc, tools: doc.tools.map(sealTool) as unknown as DocTool[] };
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
  const { _id, created_at, updated_at, tool_secret_sealed, tools, mcp_servers, ...rest } = readBot(doc);
  return {
    id: _id,
    ...rest,
    tools: tools.map(({ headers_sealed: _sealed, ...t }) => t),
    mcp_servers: mcp_servers.map(({ headers_sealed: _sealed, ...m }) => m),
    has_tool_secret: Boolean(tool_secret_sealed),
    created_at: created_at.toISOString(),
    updated_at: updated_at.toISOString(),
  };
}

/** Post-call analysis settings with their defaults (a field's description ''). */
function withAnalysisDefaults(a: Partial<AnalysisSettings> | undefined): AnalysisSettings {
  const d = BOT_DEFAULTS.analysis;
  return {
    summary: a?.summary ?? d.summary,
    fields: (a?.fields ?? d.fields).map((f) => ({ ...f, description: f.description ?? '' })),
    success: a?.success ?? d.success,
  };
}

/**
 * Turn detection over `base`: a maximum set below the minimum it keeps lowers the minimum with it (a client that
 * shortens the end-of-turn silence need not know the smart mode's minimum); a minimum given above the maximum is
 * the bot's own error (422).
 */
export function turnDetection(base: TurnDetection, set: Partial<TurnDetection> | undefined): TurnDetection {
  const merged = { ...base, ...set };
  if (set?.min_silence_ms === undefined) merged.min_silence_ms = Math.min(merged.min_silence_ms, merged.end_of_turn_silence_ms);
  return merged;
}

/** A flow as stored: its defaults filled in, each node intent with its `examples` (none for keys alone). */
function withFlowDefaults(flow: BotFlow): BotFlow {
  const nodes = Object.fromEntries(Object.entries(flow.nodes).map(([id, n]) => [id, n.intents ? { ...n, intents: n.intents.map((i) => ({ ...i, examples: i.examples ?? [] })) } : n]));
  return { start: flow.start, nodes, global_nodes: flow.global_nodes ?? [], context: flow.context ?? 'append' };
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
    mcp_servers: body.mcp_servers ?? BOT_DEFAULTS.mcp_servers,
    knowledge_base_ids: [...new Set(body.knowledge_base_ids ?? BOT_DEFAULTS.knowledge_base_ids)],
    policy: body.policy ? policyWithExamples(body.policy) : BOT_DEFAULTS.policy,
    turn_detection: turnDetection(BOT_DEFAULTS.turn_detection, body.turn_detection),
    interruption: { ...BOT_DEFAULTS.interruption, ...body.interruption },
    dtmf: body.dtmf ?? BOT_DEFAULTS.dtmf,
    answering_machine: { ...BOT_DEFAULTS.answering_machine, ...body.answering_machine },
    audio: { ...BOT_DEFAULTS.audio, ...body.audio },
    analysis: withAnalysisDefaults(body.analysis),
    // Bots stored before these settings have none: no redaction, recorded.
    // Entities once each (Kubernetes refuses uniqueItems in the Bot CRD, so a list may repeat one).
    redaction: { ...BOT_DEFAULTS.redaction, ...body.redaction, entities: [...new Set(body.redaction?.entities ?? BOT_DEFAULTS.redaction.entities)] },
    recording: { ...BOT_DEFAULTS.recording, ...body.recording },
    max_call_seconds: body.max_call_seconds ?? BOT_DEFAULTS.max_call_seconds,
    require_passing_tests: body.require_passing_tests ?? BOT_DEFAULTS.require_passing_tests,
    // Bots stored before flows and handoffs have neither.
    flow: body.flow ? withFlowDefaults(body.flow) : BOT_DEFAULTS.flow,
    handoff: body.handoff ? { bots: body.handoff.bots, greeting: body.handoff.greeting ?? true, on_failure: body.handoff.on_failure ?? DEFAULT_HANDOFF_FAILURE } : BOT_DEFAULTS.handoff,
  };
}
