// Do-not-call list (admin JWT): numbers the dialler never dials. Checked right before each campaign dial
// (dialler.ts), so a number added while a campaign runs is skipped from then on.
import { ObjectId, type Db, type Filter } from 'mongodb';
import type { Router } from '@koa/router';
import { DncAdd } from '@voice-platform/schemas';
import { e164Input, e164List, e164Problem } from '../core/phoneInput.js';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check, pageQuery } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { requireAdmin } from '../auth/admin.js';
import { audited, AUDITED } from '../audit/audit.js';
import { COLLECTIONS } from '../core/collections.js';

interface DncDoc {
  _id: string;
  number: string;
  created_at: Date;
}

const dnc = (db: Db) => db.collection<DncDoc>(COLLECTIONS.dnc);

export async function isDoNotCall(db: Db, number: string): Promise<boolean> {
  return (await dnc(db).findOne({ number }, { projection: { _id: 1 } })) !== null;
}

export function dncRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);

  router.post('/api/v1/dnc', admin, audited(svc, 'dnc.add', AUDITED.dncAdd), jsonBody(), async (ctx) => {
    const numbers = e164List(check(DncAdd, ctx.request.body).numbers, 'numbers');
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
    const { limit, after, values } = pageQuery(ctx.query, ['number'], ({ number }) => {
      const r = number === undefined ? null : e164Problem(number, 'number');
      return r && !('e164' in r) ? [r] : [];
    });
    const number = values.number === undefined ? undefined : e164Input(values.number, 'number');
    const and: Filter<DncDoc>[] = [];
    if (number !== undefined) and.push({ number });
    if (after) and.push({ $or: [{ created_at: { $lt: after.t } }, { created_at: after.t, _id: { $lt: after.id } }] });
    const docs = await dnc(svc.db).find(and.length ? { $and: and } : {}).sort({ created_at: -1, _id: -1 }).limit(limit + 1).toArray();
    const page = docs.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = {
      items: page.map((d) => ({ number: d.number, created_at: d.created_at.toISOString() })),
      next_cursor: docs.length > limit && last ? `${last.created_at.getTime()}.${last._id}` : null,
    };
  });

  router.delete('/api/v1/dnc/:number', admin, audited(svc, 'dnc.remove', AUDITED.dncRemove), async (ctx) => {
    const number = e164Input(ctx.params.number!, 'number');
    const res = await dnc(svc.db).deleteOne({ number });
    if (res.deletedCount === 0) throw apiError('not_found', 'the number is not on the do-not-call list');
    svc.logger.info({ req_id: ctx.state.requestId }, 'do-not-call number removed');
    ctx.status = 204;
  });
}
