// Do-not-call list (admin JWT): numbers the dialler never dials. Checked right before each campaign dial
// (dialler.ts), so a number added while a campaign runs is skipped from then on.
import { ObjectId, type Db, type Filter } from 'mongodb';
import type { Router } from '@koa/router';
import { CURSOR_PATTERN, DncAdd, PHONE_NUMBER_PATTERN } from '@voice-platform/schemas';
import { apiError } from '../errors.js';
import type { Services } from '../deps.js';
import { check, type FieldProblem } from '../validate.js';
import { jsonBody } from '../body.js';
import { requireAdmin } from '../auth/admin.js';
import { COLLECTIONS } from '../stores.js';

interface DncDoc {
  _id: string;
  number: string;
  created_at: Date;
}

const dnc = (db: Db) => db.collection<DncDoc>(COLLECTIONS.dnc);
const phone = new RegExp(PHONE_NUMBER_PATTERN);
const cursorText = new RegExp(CURSOR_PATTERN);

export async function isDoNotCall(db: Db, number: string): Promise<boolean> {
  return (await dnc(db).findOne({ number }, { projection: { _id: 1 } })) !== null;
}

export function dncRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);

  router.post('/api/v1/dnc', admin, jsonBody(), async (ctx) => {
    const { numbers } = check(DncAdd, ctx.request.body);
    const unique = [...new Set(numbers)];
    const listed = new Set((await dnc(svc.db).find({ number: { $in: unique } }, { projection: { number: 1 } }).toArray()).map((d) => d.number));
    const now = svc.now();
    let added = 0;
    for (const number of unique.filter((n) => !listed.has(n))) {
      try {
        await dnc(svc.db).insertOne({ _id: new ObjectId().toHexString(), number, created_at: now });
        added++;
      } catch (err) {
        if ((err as { code?: unknown }).code !== 11000) throw err; // listed by a racing request: a duplicate
      }
    }
    svc.logger.info({ req_id: ctx.state.requestId, added, duplicates: numbers.length - added }, 'do-not-call numbers added');
    ctx.body = { added, duplicates: numbers.length - added };
  });

  router.get('/api/v1/dnc', admin, async (ctx) => {
    const problems: FieldProblem[] = [];
    const known = new Set(['number', 'limit', 'cursor']);
    for (const name of Object.keys(ctx.query)) if (!known.has(name)) problems.push({ field: name, message: 'is not a known parameter' });
    const one = (name: string): string | undefined => {
      const v = ctx.query[name];
      if (v === undefined) return undefined;
      if (typeof v !== 'string' || v === '') {
        problems.push({ field: name, message: 'must be given once, non-empty' });
        return undefined;
      }
      return v;
    };
    const number = one('number');
    if (number !== undefined && !phone.test(number)) problems.push({ field: 'number', message: `must match ${PHONE_NUMBER_PATTERN}` });
    const limitRaw = one('limit');
    const limit = limitRaw === undefined ? 50 : Number(limitRaw);
    if (limitRaw !== undefined && (!/^[0-9]+$/.test(limitRaw) || limit < 1 || limit > 100)) problems.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
    const cursor = one('cursor');
    if (cursor !== undefined && !cursorText.test(cursor)) problems.push({ field: 'cursor', message: 'is not a cursor from next_cursor' });
    if (problems.length) throw apiError('validation_failed', { details: problems });
    const and: Filter<DncDoc>[] = [];
    if (number !== undefined) and.push({ number });
    if (cursor) {
      const dot = cursor.indexOf('.');
      const t = new Date(Number(cursor.slice(0, dot)));
      const id = cursor.slice(dot + 1);
      and.push({ $or: [{ created_at: { $lt: t } }, { created_at: t, _id: { $lt: id } }] });
    }
    const docs = await dnc(svc.db).find(and.length ? { $and: and } : {}).sort({ created_at: -1, _id: -1 }).limit(limit + 1).toArray();
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = {
      items: page.map((d) => ({ number: d.number, created_at: d.created_at.toISOString() })),
      next_cursor: docs.length > limit && last ? `${last.created_at.getTime()}.${last._id}` : null,
    };
  });

  router.delete('/api/v1/dnc/:number', admin, async (ctx) => {
    const number = ctx.params.number!;
    if (!phone.test(number)) throw apiError('validation_failed', { details: [{ field: 'number', message: `must match ${PHONE_NUMBER_PATTERN}` }] });
    const res = await dnc(svc.db).deleteOne({ number });
    if (res.deletedCount === 0) throw apiError('not_found', 'the number is not on the do-not-call list');
    svc.logger.info({ req_id: ctx.state.requestId }, 'do-not-call number removed');
    ctx.status = 204;
  });
}
