// Calls: read (API key or admin), list (admin), create and lifecycle events (worker). The lifecycle rules
// (forward-only, timestamps, lock, exactly-once slot release) live in lifecycle.ts, shared with the dialler.
import { ObjectId, type Filter } from 'mongodb';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { CALL_DIRECTIONS, CALL_STATUSES, CallCreate, CallEvent, CURSOR_PATTERN, RESOURCE_ID_PATTERN, type CallDirection, type CallStatus } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { check, parseDateTime, queryValues } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { requireAdmin } from '../auth/admin.js';
import { requireWorker } from '../auth/worker.js';
import { botAtVersion } from '../bots/versions.js';
import { findBot } from '../bots/store.js';
import { COLLECTIONS } from '../core/collections.js';
import { checkVariables } from './variables.js';
import { applyCallMove } from './lifecycle.js';
import { announceQueued } from './events.js';
import { readableCall, recordingRoutes } from './recording.js';
import { controlRoutes } from './control.js';
import { listenRoutes } from './listen.js';
import { findCalls, insertCall, publicCall, queuedCall, type CallDoc } from './store.js';

interface Cursor {
  t: number;
  id: string;
}
const resourceId = new RegExp(RESOURCE_ID_PATTERN);
const cursorText = new RegExp(CURSOR_PATTERN);
/** `<ms>.<id>` (CURSOR_PATTERN): every text of that shape is a position a Date can hold (at most 15 digits). */
const encodeCursor = (c: Cursor) => `${c.t}.${c.id}`;
function decodeCursor(raw: string): Cursor {
  if (cursorText.test(raw)) {
    const dot = raw.indexOf('.');
    return { t: Number(raw.slice(0, dot)), id: raw.slice(dot + 1) };
  }
  throw apiError('validation_failed', { details: [{ field: 'cursor', message: 'is not a cursor from next_cursor' }] });
}

function listFilter(ctx: Context): { filter: Filter<CallDoc>; limit: number } {
  const q = ctx.query;
  const problems: Array<{ field: string; message: string }> = [];
  const values = queryValues(q, ['bot_id', 'status', 'direction', 'created_after', 'created_before', 'limit', 'cursor'], problems, 'is not a known filter');
  const one = (name: string): string | undefined => values[name];
  const and: Filter<CallDoc>[] = [];
  const botId = one('bot_id');
  if (botId && !resourceId.test(botId)) problems.push({ field: 'bot_id', message: `must match ${RESOURCE_ID_PATTERN}` });
  else if (botId) and.push({ bot_id: botId });
  const status = one('status');
  if (status && !(CALL_STATUSES as readonly string[]).includes(status)) problems.push({ field: 'status', message: `must be one of ${CALL_STATUSES.join(', ')}` });
  else if (status) and.push({ status: status as CallStatus });
  const direction = one('direction');
  if (direction && !(CALL_DIRECTIONS as readonly string[]).includes(direction)) problems.push({ field: 'direction', message: `must be one of ${CALL_DIRECTIONS.join(', ')}` });
  else if (direction) and.push({ direction: direction as CallDirection });
  for (const [name, op] of [['created_after', '$gt'], ['created_before', '$lt']] as const) {
    const v = one(name);
    if (v === undefined) continue;
    const d = parseDateTime(v);
    if (!d) problems.push({ field: name, message: 'must be an RFC 3339 date-time' });
    else and.push({ created_at: { [op]: d } });
  }
  const limitRaw = one('limit');
  const limit = limitRaw === undefined ? 50 : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) problems.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  const cursorRaw = one('cursor');
  if (problems.length) throw apiError('validation_failed', { details: problems });
  if (cursorRaw) {
    const c = decodeCursor(cursorRaw);
    const t = new Date(c.t);
    and.push({ $or: [{ created_at: { $lt: t } }, { created_at: t, _id: { $lt: c.id } }] });
  }
  return { filter: and.length ? { $and: and } : {}, limit };
}

export function callRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const worker = requireWorker(svc);

  router.get('/api/v1/calls/:id', async (ctx) => {
    ctx.body = publicCall(await readableCall(svc, metrics, ctx));
  });
  recordingRoutes(router, svc, metrics);
  controlRoutes(router, svc, metrics);
  listenRoutes(router, svc, metrics);

  router.get('/api/v1/calls', requireAdmin(svc), async (ctx) => {
    const { filter, limit } = listFilter(ctx);
    const docs = await findCalls(svc.db, filter, { sort: { created_at: -1, _id: -1 }, limit: limit + 1 });
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = {
      items: page.map(publicCall),
      next_cursor: docs.length > limit && last ? encodeCursor({ t: last.created_at.getTime(), id: last._id }) : null,
    };
  });

  router.post('/api/v1/calls', worker, jsonBody(), async (ctx) => {
    const body = check(CallCreate, ctx.request.body);
    const head = await findBot(svc.db, body.bot_id);
    if (!head) throw apiError('bot_not_found');
    if (!head.active) throw apiError('bot_inactive');
    // The published version runs (shared/DESIGN.md §17), as for every other call; a bot test's call, the version
    // its run tests (a draft included).
    const run = body.test ? await svc.db.collection<{ _id: string; version: number }>(COLLECTIONS.testRuns).findOne({ _id: body.test.run_id }, { projection: { version: 1 } }) : null;
    if (body.test && !run) throw apiError('validation_failed', { details: [{ field: 'test.run_id', message: 'no such test run' }] });
    const version = run?.version ?? head.published_version;
    const bot = (await botAtVersion(svc.db, head, version)) ?? head;
    const variables = body.variables ?? {};
    checkVariables(bot.variables, variables);
    const now = svc.now();
    const doc = queuedCall({ _id: new ObjectId().toHexString(), bot_id: bot._id, direction: body.direction, to_number: null, from_number: null, variables, api_key_id: null, bot_version: version, ...(body.test ? { test: body.test } : {}) }, now);
    await insertCall(svc.db, doc);
    await announceQueued({ ...svc, metrics }, doc);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/calls/${doc._id}`);
    ctx.body = publicCall(doc);
  });

  router.post('/api/v1/calls/:id/events', worker, jsonBody(), async (ctx) => {
    const ev = check(CallEvent, ctx.request.body);
    const { at, transcript, ...rest } = ev;
    const move = { ...rest, at: at ? new Date(at) : svc.now(), ...(transcript ? { transcript: transcript.map((t) => ({ ...t, at: new Date(t.at) })) } : {}) };
    const result = await applyCallMove(svc, metrics, ctx.params.id!, move, { logContext: { req_id: ctx.state.requestId } });
    if (result.released !== null) ctx.set('X-Slot-Released', String(result.released));
    ctx.body = publicCall(result.doc);
  });
}
