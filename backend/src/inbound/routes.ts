// Admin API for inbound numbers (docs/design.md §7). Each number is mirrored into LiveKit (store.ts): an
// inbound trunk for that number and an `individual` dispatch rule on it whose participant attribute names
// this document. LiveKit first, then our document, so a failure leaves neither half behind. Every change
// holds one lock over all numbers ("a number is answered by one bot" spans documents; no transactions).
// Bots cannot be deleted through the API; should a number's bot be missing, its calls fail (`bot_not_found`,
// telephony/inboundCalls.ts), so nothing cascades from bots to numbers.
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { InboundNumberCreate, InboundNumberUpdate } from '@voice-platform/schemas';
import { ApiError, apiError } from '../core/errors.js';
import { requireTelephony, telephonyUnavailable } from '../telephony/errors.js';
import type { Services } from '../core/deps.js';
import { check } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { withDocLock } from '../core/locks.js';
import { requireAdmin } from '../auth/admin.js';
import { audited, AUDITED } from '../audit/audit.js';
import { findBot } from '../bots/store.js';
import { checkVariables } from '../calls/variables.js';
import { TelephonyError, type DispatchRuleSpec, type InboundTrunkSpec, type Telephony } from '../core/telephony.js';
import { e164Input } from '../core/phoneInput.js';
import { INBOUND_NUMBER_ID_ATTRIBUTE, INBOUND_ROOM_PREFIX, inboundNumbers, publicInboundNumber, type InboundNumberDoc } from './store.js';

const LOCK = { ttlMs: 30_000, waitMs: 15_000 };

const isDuplicateKey = (err: unknown) => (err as { code?: number })?.code === 11000;

/** `owner`: the inbound number that has it, when known (a lost race on the unique index does not say). */
function taken(number: string, owner: string | null): ApiError {
  return apiError('conflict', {
    message: 'a number can be an inbound number once only (it picks the bot that answers)',
    details: [{ field: 'number', message: owner ? `${number} is already inbound number ${owner}` : `${number} is already an inbound number` }],
  });
}

const trunkSpec = (f: { number: string; allowed_addresses: string[] }): InboundTrunkSpec => ({
  name: `vp inbound ${f.number}`,
  number: f.number,
  allowedAddresses: f.allowed_addresses,
});

const ruleSpec = (id: string, number: string, trunkId: string): DispatchRuleSpec => ({
  name: `vp inbound ${number}`,
  trunkId,
  roomPrefix: INBOUND_ROOM_PREFIX,
  attributes: { [INBOUND_NUMBER_ID_ATTRIBUTE]: id },
});

export function inboundNumberRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);
  const col = () => inboundNumbers(svc.db);
  const load = async (id: string) => {
    const doc = await col().findOne({ _id: id });
    if (!doc) throw apiError('not_found', 'inbound number not found');
    return doc;
  };
  /** Rules across documents: the number is free (409), the bot exists (404), the variables fit it (422). */
  const checkNumber = async (number: string, selfId: string | null) => {
    const owner = await col().findOne({ number, ...(selfId ? { _id: { $ne: selfId } } : {}) });
    if (owner) throw taken(number, owner._id);
  };
  const checkBot = async (botId: string, variables: Record<string, string>) => {
    const bot = await findBot(svc.db, botId);
    if (!bot) throw apiError('bot_not_found');
    checkVariables(bot.variables, variables);
  };

  router.post('/api/v1/sip/inbound-numbers', admin, audited(svc, 'inbound_number.create', AUDITED.inboundNumber), jsonBody(), async (ctx) => {
    const body = check(InboundNumberCreate, ctx.request.body);
    body.number = e164Input(body.number, 'number');
    const telephony = requireTelephony(svc);
    const doc = await withDocLock(svc.redis, 'sip-inbound-numbers', async () => {
      const fields = { number: body.number, bot_id: body.bot_id, variables: body.variables ?? {}, allowed_addresses: body.allowed_addresses ?? [] };
      await checkNumber(fields.number, null);
      await checkBot(fields.bot_id, fields.variables);
      // The id exists before the LiveKit objects: the dispatch rule carries it to each call.
      const id = new ObjectId().toHexString();
      const trunkId = await telephony.createInboundTrunk(trunkSpec(fields)).catch(telephonyUnavailable);
      const undo = async (ruleId: string | null) => {
        if (ruleId) await telephony.deleteDispatchRule(ruleId).catch(() => undefined);
        await telephony.deleteTrunk(trunkId).catch(() => undefined);
      };
      let ruleId: string;
      try {
        ruleId = await telephony.createDispatchRule(ruleSpec(id, fields.number, trunkId));
      } catch (err) {
        await undo(null);
        telephonyUnavailable(err);
      }
      const now = svc.now();
      const created: InboundNumberDoc = { _id: id, ...fields, livekit_trunk_id: trunkId, livekit_rule_id: ruleId, created_at: now, updated_at: now };
      try {
        await col().insertOne(created);
      } catch (err) {
        await undo(ruleId);
        if (isDuplicateKey(err)) throw taken(fields.number, null);
        throw err;
      }
      return created;
    }, LOCK);
    svc.logger.info(
      { req_id: ctx.state.requestId, inbound_number_id: doc._id, bot_id: doc.bot_id, livekit_trunk_id: doc.livekit_trunk_id, livekit_rule_id: doc.livekit_rule_id },
      'inbound number created',
    );
    ctx.status = 201;
    ctx.set('Location', `/api/v1/sip/inbound-numbers/${doc._id}`);
    ctx.body = publicInboundNumber(doc);
  });

  router.get('/api/v1/sip/inbound-numbers', admin, async (ctx) => {
    const docs = await col().find({}).sort({ created_at: 1, _id: 1 }).limit(1000).toArray();
    ctx.body = { items: docs.map(publicInboundNumber) };
  });

  router.get('/api/v1/sip/inbound-numbers/:id', admin, async (ctx) => {
    ctx.body = publicInboundNumber(await load(ctx.params.id!));
  });

  router.patch('/api/v1/sip/inbound-numbers/:id', admin, audited(svc, 'inbound_number.update', AUDITED.inboundNumber), jsonBody(), async (ctx) => {
    const patch = check(InboundNumberUpdate, ctx.request.body);
    if (patch.number !== undefined) patch.number = e164Input(patch.number, 'number');
    const telephony = requireTelephony(svc);
    const id = ctx.params.id!;
    const doc = await withDocLock(svc.redis, 'sip-inbound-numbers', async () => {
      const current = await load(id);
      const fields = {
        number: patch.number ?? current.number,
        bot_id: patch.bot_id ?? current.bot_id,
        variables: patch.variables ?? current.variables,
        allowed_addresses: patch.allowed_addresses ?? current.allowed_addresses,
      };
      if (fields.number !== current.number) await checkNumber(fields.number, id);
      // The bot's declared variables may have changed since; only a change of bot or variables is checked against them.
      if (patch.bot_id !== undefined || patch.variables !== undefined) await checkBot(fields.bot_id, fields.variables);

      let trunkId = current.livekit_trunk_id;
      let ruleId = current.livekit_rule_id;
      const made: Array<() => Promise<void>> = []; // what to take back should a later step fail
      const takeBack = async () => {
        for (const back of made.reverse()) await back().catch(() => undefined);
      };
      try {
        try {
          await telephony.updateInboundTrunk(trunkId, trunkSpec(fields));
          made.push(() => telephony.updateInboundTrunk(current.livekit_trunk_id, trunkSpec(current)));
        } catch (err) {
          // Gone from LiveKit (its store was reset): mirror it again.
          if (!(err instanceof TelephonyError && err.notFound)) throw err;
          trunkId = await telephony.createInboundTrunk(trunkSpec(fields));
          made.push(() => telephony.deleteTrunk(trunkId));
        }
        try {
          await telephony.updateDispatchRule(ruleId, ruleSpec(id, fields.number, trunkId));
          made.push(() => telephony.updateDispatchRule(current.livekit_rule_id, ruleSpec(id, current.number, current.livekit_trunk_id)));
        } catch (err) {
          if (!(err instanceof TelephonyError && err.notFound)) throw err;
          ruleId = await telephony.createDispatchRule(ruleSpec(id, fields.number, trunkId));
          made.push(() => telephony.deleteDispatchRule(ruleId));
        }
      } catch (err) {
        await takeBack();
        telephonyUnavailable(err);
      }
      const set: Partial<InboundNumberDoc> = { ...fields, livekit_trunk_id: trunkId, livekit_rule_id: ruleId, updated_at: svc.now() };
      try {
        await col().updateOne({ _id: id }, { $set: set });
      } catch (err) {
        await takeBack();
        if (isDuplicateKey(err)) throw taken(fields.number, null);
        throw err;
      }
      return { ...current, ...set } as InboundNumberDoc;
    }, LOCK);
    svc.logger.info({ req_id: ctx.state.requestId, inbound_number_id: id, fields: Object.keys(patch) }, 'inbound number updated');
    ctx.body = publicInboundNumber(doc);
  });

  router.delete('/api/v1/sip/inbound-numbers/:id', admin, audited(svc, 'inbound_number.delete', AUDITED.inboundNumber), async (ctx) => {
    const telephony = requireTelephony(svc);
    const id = ctx.params.id!;
    await withDocLock(svc.redis, 'sip-inbound-numbers', async () => {
      const current = await load(id);
      // The rule first: a call arriving in between finds no rule rather than a rule on a dead trunk.
      await telephony.deleteDispatchRule(current.livekit_rule_id).catch(telephonyUnavailable);
      await telephony.deleteTrunk(current.livekit_trunk_id).catch(telephonyUnavailable);
      await col().deleteOne({ _id: id });
    }, LOCK);
    svc.logger.info({ req_id: ctx.state.requestId, inbound_number_id: id }, 'inbound number deleted');
    ctx.status = 204;
  });
}
