// Admin API for campaigns (docs/design.md §8): create (draft), list/get with counts, contacts by JSON or CSV
// (bad rows reported, good rows kept, duplicates counted), the contacts list, and start/pause/resume/cancel.
// The dialling itself is the dialler role's (dialler.ts). Status changes and uploads hold the campaign's
// lock, so they cannot interleave with each other or with the dialler completing the campaign.
import { ObjectId, type Filter } from 'mongodb';
import type { Context, Next } from 'koa';
import type { Router } from '@koa/router';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { check, compiled, fieldProblems, pageQuery, type FieldProblem } from '../core/validate.js';
import { encodingProblem, jsonBody, readRaw } from '../core/body.js';
import { withDocLock } from '../core/locks.js';
import { requireAdmin } from '../auth/admin.js';
import { audited, AUDITED } from '../audit/audit.js';
import { findBot } from '../bots/store.js';
import { trunkForDialout } from '../trunks/store.js';
import { e164Input, e164Problem } from '../core/phoneInput.js';
import { callerRegion } from '../trunks/store.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { parseCsv } from './csv.js';
import { contactsCsv } from './export.js';
import { isTimeZone, minutesOf } from './windows.js';
import {
  CampaignCreate,
  CONTACT_STATUSES,
  RESOURCE_ID_PATTERN,
  ContactInput,
  ContactsUpload,
  MAX_CSV_BYTES,
  type CampaignStatus,
  type ContactsResult,
  type ContactStatus,
} from '@voice-platform/schemas';
import { campaignDetail, campaignLock, campaigns, contacts, draftLifecycle, publicCampaign, publicContact, type CampaignDoc, type ContactDoc } from './store.js';
import type { BotDoc } from '../bots/store.js';

const invalid = (problems: FieldProblem[]) => apiError('validation_failed', { details: problems });
const resourceId = new RegExp(RESOURCE_ID_PATTERN);

/** The rules of a campaign the schema cannot hold: a zone Intl knows, windows that end after they start. */
function checkCampaignRules(body: CampaignCreate): void {
  const problems: FieldProblem[] = [];
  if (!isTimeZone(body.timezone)) problems.push({ field: 'timezone', message: 'is not an IANA time zone this server knows' });
  body.windows.forEach((w, i) => {
    if (minutesOf(w.end) <= minutesOf(w.start)) problems.push({ field: `windows.${i}.end`, message: 'must be after start' });
  });
  if (problems.length) throw invalid(problems);
}

/** The body of a contacts upload: JSON (the 64 KiB limit of every JSON body) or text/csv (up to MAX_CSV_BYTES). */
function contactsBody() {
  const json = jsonBody();
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.request.is('application/json')) return json(ctx, next);
    if (!ctx.request.is('text/csv')) throw apiError('unsupported_media_type', 'the body must be application/json or text/csv');
    const problem = encodingProblem(ctx);
    if (problem) throw apiError('unsupported_media_type', problem);
    // As a JSON body: too large or too slow closes the connection after the answer (body.ts).
    ctx.state.csv = (await readRaw(ctx, MAX_CSV_BYTES, `a CSV body is at most ${MAX_CSV_BYTES} bytes`)).toString('utf8');
    await next();
  };
}

interface Row {
  row: number;
  value: unknown;
}

/** CSV → rows of the JSON shape: `to_number` and optional `timezone` columns, every other column a variable
 *  (an empty cell is no value). Header problems refuse the upload; row problems are the row's. */
function csvRows(text: string): Row[] {
  const records = parseCsv(text);
  const header = records[0];
  if (!header) throw invalid([{ field: 'csv', message: 'is empty: the first line must be a header with a to_number column' }]);
  const names = header.map((h) => h.trim());
  const problems: FieldProblem[] = [];
  if (!names.includes('to_number')) problems.push({ field: 'csv.header', message: 'must have a to_number column' });
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (!n) problems.push({ field: `csv.header.${i}`, message: 'is an empty column name' });
    else if (seen.has(n)) problems.push({ field: `csv.header.${i}`, message: `repeats the column ${n}` });
    seen.add(n);
  });
  if (problems.length) throw invalid(problems);
  return records.slice(1).map((cells, i) => {
    const value: Record<string, unknown> = {};
    const variables: Record<string, string> = {};
    if (cells.length !== names.length) return { row: i + 1, value: { __width: cells.length } };
    names.forEach((n, j) => {
      const cell = cells[j]!;
      if (n === 'to_number') value.to_number = cell.trim();
      else if (n === 'timezone') {
        if (cell.trim()) value.timezone = cell.trim();
      } else if (cell !== '') variables[n] = cell;
    });
    value.variables = variables;
    return { row: i + 1, value };
  });
}

export function campaignRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const admin = requireAdmin(svc);
  const load = async (id: string): Promise<CampaignDoc> => {
    const doc = resourceId.test(id) ? await campaigns(svc.db).findOne({ _id: id }) : null;
    if (!doc) throw apiError('not_found', 'campaign not found');
    return doc;
  };
  const emitDeps = { ...svc, metrics };

  router.post('/api/v1/campaigns', admin, audited(svc, 'campaign.create', AUDITED.campaign), jsonBody(), async (ctx) => {
    const body = check(CampaignCreate, ctx.request.body);
    checkCampaignRules(body);
    const bot = await findBot(svc.db, body.bot_id);
    if (!bot) throw apiError('bot_not_found');
    const fromNumber = body.from_number === undefined ? undefined : e164Input(body.from_number, 'from_number');
    if (fromNumber !== undefined) await trunkForDialout(svc.db, fromNumber);
    const now = svc.now();
    const doc: CampaignDoc = {
      _id: new ObjectId().toHexString(),
      name: body.name,
      bot_id: body.bot_id,
      from_number: fromNumber ?? null,
      default_region: body.default_region ?? null,
      timezone: body.timezone,
      windows: body.windows,
      max_concurrency: body.max_concurrency,
      calls_per_second: body.calls_per_second,
      retry: body.retry,
      answering_machine: body.answering_machine ?? null,
      ...draftLifecycle(now),
    };
    await campaigns(svc.db).insertOne(doc);
    svc.logger.info({ req_id: ctx.state.requestId, campaign_id: doc._id, bot_id: doc.bot_id }, 'campaign created');
    ctx.status = 201;
    ctx.set('Location', `/api/v1/campaigns/${doc._id}`);
    ctx.body = await campaignDetail(svc.db, doc);
  });

  router.get('/api/v1/campaigns', admin, async (ctx) => {
    const { limit, after, values } = pageQuery(ctx.query, ['status']);
    const and: Filter<CampaignDoc>[] = [];
    if (values.status !== undefined) {
      if (!['draft', 'running', 'paused', 'completed', 'canceled'].includes(values.status)) throw invalid([{ field: 'status', message: 'must be one of draft, running, paused, completed, canceled' }]);
      and.push({ status: values.status as CampaignStatus });
    }
    if (after) and.push({ $or: [{ created_at: { $lt: after.t } }, { created_at: after.t, _id: { $lt: after.id } }] });
    const docs = await campaigns(svc.db).find(and.length ? { $and: and } : {}).sort({ created_at: -1, _id: -1 }).limit(limit + 1).toArray();
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = { items: page.map(publicCampaign), next_cursor: docs.length > limit && last ? `${last.created_at.getTime()}.${last._id}` : null };
  });

  router.get('/api/v1/campaigns/:id', admin, async (ctx) => {
    ctx.body = await campaignDetail(svc.db, await load(ctx.params.id!));
  });

  router.post('/api/v1/campaigns/:id/contacts', admin, audited(svc, 'campaign.add_contacts', AUDITED.campaignContacts), contactsBody(), async (ctx) => {
    const id = ctx.params.id!;
    await load(id);
    let rows: Row[];
    if (typeof ctx.state.csv === 'string') rows = csvRows(ctx.state.csv as string);
    else rows = check(ContactsUpload, ctx.request.body).contacts.map((value, i) => ({ row: i + 1, value }));
    const result = await withDocLock(
      svc.redis,
      campaignLock(id),
      async () => {
        const campaign = await load(id);
        if (campaign.status === 'completed' || campaign.status === 'canceled') {
          throw apiError('conflict', { message: `contacts cannot be added to a ${campaign.status} campaign`, details: { status: campaign.status } });
        }
        const bot = await findBot(svc.db, campaign.bot_id);
        return addContacts(svc, campaign, bot, rows);
      },
      { ttlMs: 60_000, waitMs: 10_000 },
    );
    svc.logger.info({ req_id: ctx.state.requestId, campaign_id: id, added: result.added, duplicates: result.duplicates, rejected: result.rejected.length }, 'campaign contacts added');
    ctx.body = result;
  });

  router.get('/api/v1/campaigns/:id/contacts', admin, async (ctx) => {
    const id = ctx.params.id!;
    await load(id);
    const { limit, after, values } = pageQuery(ctx.query, ['status']);
    const and: Filter<ContactDoc>[] = [{ campaign_id: id }];
    if (values.status !== undefined) {
      if (!(CONTACT_STATUSES as readonly string[]).includes(values.status)) throw invalid([{ field: 'status', message: `must be one of ${CONTACT_STATUSES.join(', ')}` }]);
      and.push({ status: values.status as ContactStatus });
    }
    // Upload order: oldest first; the cursor is the last item's position.
    if (after) and.push({ $or: [{ created_at: { $gt: after.t } }, { created_at: after.t, _id: { $gt: after.id } }] });
    const docs = await contacts(svc.db).find({ $and: and }).sort({ created_at: 1, _id: 1 }).limit(limit + 1).toArray();
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = { items: page.map(publicContact), next_cursor: docs.length > limit && last ? `${last.created_at.getTime()}.${last._id}` : null };
  });

  // The same contacts as the list above (its `status` filter, its order), all of them, as CSV (export.ts).
  router.get('/api/v1/campaigns/:id/contacts.csv', admin, async (ctx) => {
    const campaign = await load(ctx.params.id!);
    const { values } = pageQuery(ctx.query, ['status'], (v) =>
      [
        ...['limit', 'cursor'].filter((n) => v[n] !== undefined).map((field) => ({ field, message: 'is not a parameter of the CSV export (it has every contact)' })),
        ...(v.status !== undefined && !(CONTACT_STATUSES as readonly string[]).includes(v.status) ? [{ field: 'status', message: `must be one of ${CONTACT_STATUSES.join(', ')}` }] : []),
      ],
    );
    const filter: Filter<ContactDoc> = values.status === undefined ? { campaign_id: campaign._id } : { campaign_id: campaign._id, status: values.status as ContactStatus };
    const body = await contactsCsv(svc.db, await findBot(svc.db, campaign.bot_id), filter);
    // Once the first line is out, a store failure can only cut the file short (the chunked answer ends without its last chunk).
    body.once('error', (err) => svc.logger.warn({ req_id: ctx.state.requestId, campaign_id: campaign._id, err: err.message }, 'campaign CSV export broke off'));
    ctx.body = body;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set({ 'Content-Disposition': `attachment; filename="campaign-${campaign._id}-contacts.csv"`, 'Cache-Control': 'private, no-store' });
  });

  /** One status change, checked and written under the campaign's lock. */
  const transition = (action: 'start' | 'pause' | 'resume' | 'cancel', from: CampaignStatus[], to: CampaignStatus) => {
    router.post(`/api/v1/campaigns/:id/${action}`, admin, audited(svc, `campaign.${action}`, AUDITED.campaign), async (ctx) => {
      const id = ctx.params.id!;
      await load(id);
      const doc = await withDocLock(svc.redis, campaignLock(id), async () => {
        const current = await load(id);
        if (!from.includes(current.status)) {
          throw apiError('conflict', { message: `a ${current.status} campaign cannot ${action}`, details: { status: current.status, allowed_from: from } });
        }
        if (action === 'start' || action === 'resume') {
          // What every dial would refuse anyway: say it now, not one contact at a time.
          const bot = await findBot(svc.db, current.bot_id);
          if (!bot) throw apiError('bot_not_found', 'the campaign\'s bot no longer exists');
          if (!bot.active) throw apiError('bot_inactive', 'the campaign\'s bot is not active');
          await trunkForDialout(svc.db, current.from_number ?? undefined);
        }
        const now = svc.now();
        const set: Partial<CampaignDoc> = { status: to, updated_at: now, paused_reason: null };
        if (action === 'start') set.started_at = now;
        if (action === 'cancel') set.canceled_at = now;
        await campaigns(svc.db).updateOne({ _id: id }, { $set: set });
        if (action === 'cancel') {
          // Contacts not dialled yet are done; live calls finish and settle without a retry.
          await contacts(svc.db).updateMany({ campaign_id: id, status: { $in: ['pending', 'retry_scheduled'] } }, { $set: { status: 'canceled', due_at: null, next_attempt_at: null, updated_at: now } });
        }
        return { ...current, ...set } as CampaignDoc;
      });
      const detail = await campaignDetail(svc.db, doc);
      if (action === 'start') await emitWebhookEvent(emitDeps, 'campaign.started', detail);
      svc.logger.info({ req_id: ctx.state.requestId, campaign_id: id, status: to }, `campaign ${action}`);
      ctx.body = detail;
    });
  };
  transition('start', ['draft'], 'running');
  transition('pause', ['running'], 'paused');
  transition('resume', ['paused'], 'running');
  transition('cancel', ['draft', 'running', 'paused'], 'canceled');
}

/** Checks each row (schema, time zone, the bot's variables), drops numbers already in the campaign or
 *  earlier in the upload, and inserts the rest. Runs under the campaign's lock (one upload at a time);
 *  the unique (campaign, number) index stays the last word. */
async function addContacts(svc: Services, campaign: CampaignDoc, bot: BotDoc | null, rows: Row[]): Promise<ContactsResult> {
  const validate = compiled(ContactInput);
  const rejected: ContactsResult['rejected'] = [];
  const good: Array<{ row: number; to_number: string; variables: Record<string, string>; timezone: string | null }> = [];
  const declared = new Map((bot?.variables ?? []).map((v) => [v.name, v]));
  // National numbers are read in the campaign's default_region, else the country of its caller ID.
  const region = campaign.default_region ?? (await callerRegion(svc.db, campaign.from_number));
  for (const { row, value } of rows) {
    const problems: FieldProblem[] = [];
    if (value && typeof value === 'object' && '__width' in value) {
      problems.push({ field: '(row)', message: `has ${(value as { __width: number }).__width} cells; the header has a different number` });
    } else if (!validate(value)) problems.push(...fieldProblems(validate.errors).map((p) => (p.field === '(body)' ? { ...p, field: '(row)' } : p)));
    else {
      const v = value as { to_number: string; variables?: Record<string, string>; timezone?: string };
      const number = e164Problem(v.to_number, 'to_number', region);
      if (!('e164' in number)) problems.push(number);
      if (v.timezone !== undefined && !isTimeZone(v.timezone)) problems.push({ field: 'timezone', message: 'is not an IANA time zone this server knows' });
      const vars = v.variables ?? {};
      for (const d of declared.values()) if (d.required && !Object.hasOwn(vars, d.name)) problems.push({ field: `variables.${d.name}`, message: 'is required by the bot' });
      for (const name of Object.keys(vars)) if (!declared.has(name)) problems.push({ field: `variables.${name}`, message: 'is not a declared variable of the bot' });
      if (!problems.length && 'e164' in number) good.push({ row, to_number: number.e164, variables: vars, timezone: v.timezone ?? null });
    }
    for (const p of problems) rejected.push({ row, field: p.field, message: p.message });
  }
  const inUpload = new Set<string>();
  let duplicates = 0;
  const fresh = good.filter((g) => {
    if (inUpload.has(g.to_number)) {
      duplicates++;
      return false;
    }
    inUpload.add(g.to_number);
    return true;
  });
  const existing = new Set<string>();
  for (let i = 0; i < fresh.length; i += 1000) {
    const numbers = fresh.slice(i, i + 1000).map((g) => g.to_number);
    for (const d of await contacts(svc.db).find({ campaign_id: campaign._id, to_number: { $in: numbers } }, { projection: { to_number: 1 } }).toArray()) existing.add(d.to_number);
  }
  const now = svc.now();
  const docs: ContactDoc[] = fresh
    .filter((g) => (existing.has(g.to_number) ? (duplicates++, false) : true))
    .map((g) => ({
      _id: new ObjectId().toHexString(),
      campaign_id: campaign._id,
      to_number: g.to_number,
      variables: g.variables,
      timezone: g.timezone,
      status: 'pending',
      attempts: [],
      current_call_id: null,
      next_attempt_at: null,
      due_at: now,
      error: null,
      created_at: now,
      updated_at: now,
    }));
  let added = 0;
  for (let i = 0; i < docs.length; i += 500) {
    const batch = docs.slice(i, i + 500);
    try {
      added += (await contacts(svc.db).insertMany(batch, { ordered: false })).insertedCount;
    } catch (err) {
      // Only duplicate numbers (written by hand, or a store without the lock's protection) are forgiven.
      const e = err as { code?: number; writeErrors?: Array<{ code?: number }> | { code?: number }; insertedCount?: number; result?: { insertedCount?: number } };
      const writeErrors = Array.isArray(e.writeErrors) ? e.writeErrors : e.writeErrors ? [e.writeErrors] : e.code === 11000 ? [{ code: 11000 }] : [];
      if (!writeErrors.length || writeErrors.some((w) => w.code !== 11000)) throw err;
      duplicates += writeErrors.length;
      added += batch.length - writeErrors.length;
    }
  }
  rejected.sort((a, b) => a.row - b.row);
  return { added, duplicates, rejected };
}
