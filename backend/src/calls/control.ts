// Live supervision (docs/design.md §16): a supervisor (an editor or more, or an API key with `calls:control`)
// has the bot say something now, gives the model an instruction, transfers the call or ends it. The backend
// publishes the control on the call's channel; the worker running the call listens there while the call lasts,
// acts at once and puts the control on the call's timeline. Nobody listening: the call is not live anywhere.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { CallControl, callControlChannel, type CallControlAccepted, type CallControlMessage } from '@voice-platform/schemas';
import { authenticateAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { recordAudit } from '../audit/audit.js';
import { jsonBody } from '../body.js';
import type { Services } from '../deps.js';
import { apiError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { check } from '../validate.js';
import { findCall } from './store.js';

/** The control's own rules beyond its schema: which fields each type takes. */
function problemsOf(c: CallControl): Array<{ field: string; message: string }> {
  const needs = { say: 'text', instruct: 'text', transfer: 'to', end: null }[c.type];
  const problems: Array<{ field: string; message: string }> = [];
  for (const field of ['text', 'to'] as const) {
    if (field === needs && c[field] === undefined) problems.push({ field, message: `is required for ${c.type}` });
    if (field !== needs && c[field] !== undefined) problems.push({ field, message: `is not taken by ${c.type}` });
  }
  return problems;
}

export function controlRoutes(router: Router, svc: Services, metrics: Metrics): void {
  router.post('/api/v1/calls/:id/control', jsonBody(), async (ctx: Context) => {
    // An admin token, else the key (its scope from the permissions table); a key controls only the calls it placed.
    if (ctx.headers.authorization !== undefined && ctx.headers['x-api-key'] === undefined) ctx.state.admin = await authenticateAdmin(svc, ctx);
    else ctx.state.apiKey = await authenticateKey(svc, metrics, ctx);
    const id = ctx.params.id!;
    const doc = await findCall(svc.db, id, { _id: 1, status: 1, api_key_id: 1 });
    if (!doc || (ctx.state.apiKey && doc.api_key_id !== ctx.state.apiKey.id)) throw apiError('call_not_found');
    const control = check(CallControl, ctx.request.body);
    const problems = problemsOf(control);
    if (problems.length) throw apiError('validation_failed', { details: problems });
    if (doc.status !== 'in_progress') throw apiError('call_not_active', { details: { status: doc.status } });
    const at = svc.now().toISOString();
    const by = ctx.state.admin ? `user:${ctx.state.admin.email}` : `key:${ctx.state.apiKey.id}`;
    const message: CallControlMessage = { ...control, by, at };
    // PUBLISH answers how many heard it: the worker running the call listens while it lasts.
    const heard = await svc.redis.publish(callControlChannel(id), JSON.stringify(message));
    if (heard === 0) throw apiError('call_not_active', { message: 'no worker is running this call', details: { status: doc.status } });
    await recordAudit(svc, ctx, { action: `call.control.${control.type}`, resource: { type: 'call', id }, after: { ...control } });
    const body: CallControlAccepted = { call_id: id, type: control.type, at };
    ctx.status = 202;
    ctx.body = body;
  });
}
