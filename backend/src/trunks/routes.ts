// Admin API for outbound SIP trunks (docs/design.md §7). Each trunk is mirrored into LiveKit: LiveKit first,
// then our document, so a failure leaves neither half behind. Every change holds one lock over all
// trunks: "exactly one default" and "a number belongs to one trunk" span documents, and FerretDB has
// no transactions. The password is write-only: sealed at rest, never in a response or a log.
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { OutboundTrunkCreate, OutboundTrunkUpdate, type SipTransport } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import { requireTelephony, telephonyUnavailable } from '../telephony/errors.js';
import type { Services } from '../core/deps.js';
import { check, type FieldProblem } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import { withDocLock } from '../core/locks.js';
import { requireAdmin } from '../auth/admin.js';
import { audited, AUDITED } from '../audit/audit.js';
import { SecretBox } from '../core/secretBox.js';
import { TelephonyError, type Telephony, type TrunkSpec } from '../core/telephony.js';
import { publicTrunk, trunks, type TrunkDoc } from './store.js';
import { e164List } from '../core/phoneInput.js';

const LOCK = { ttlMs: 30_000, waitMs: 15_000 };

function trunkPasswordBox(jwtSecret: string): SecretBox {
  return new SecretBox(jwtSecret, 'sip-trunk-passwords');
}

interface TrunkFields {
  name: string;
  address: string;
  transport: SipTransport;
  numbers: string[];
  auth_username: string | null;
  auth_password: string | null;
}

function spec(f: TrunkFields): TrunkSpec {
  return { name: f.name, address: f.address, transport: f.transport, numbers: f.numbers, authUsername: f.auth_username, authPassword: f.auth_password };
}

/** Rules across fields and documents; `selfId` is the trunk being changed. */
async function checkTrunk(svc: Services, f: TrunkFields, selfId: string | null): Promise<void> {
  const problems: FieldProblem[] = [];
  if (f.auth_password !== null && f.auth_username === null) problems.push({ field: 'auth_password', message: 'needs auth_username' });
  if (problems.length) throw apiError('validation_failed', { message: 'the trunk is invalid', details: problems });
  const taken = await trunks(svc.db)
    .find({ numbers: { $in: f.numbers }, ...(selfId ? { _id: { $ne: selfId } } : {}) })
    .toArray();
  if (taken.length) {
    const owners = taken.flatMap((t) => t.numbers.filter((n) => f.numbers.includes(n)).map((n) => ({ field: 'numbers', message: `${n} already belongs to trunk ${t._id}` })));
    throw apiError('conflict', { message: 'a number can belong to one trunk only (it picks the trunk a dial-out from that number uses)', details: owners });
  }
}

export function trunkRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);
  const box = trunkPasswordBox(svc.settings.JWT_SECRET);
  const col = () => trunks(svc.db);
  const load = async (id: string) => {
    const doc = await col().findOne({ _id: id });
    if (!doc) throw apiError('not_found', 'trunk not found');
    return doc;
  };
  const password = (doc: TrunkDoc): string | null => (doc.auth_password_sealed ? box.open(doc.auth_password_sealed) : null);

  router.post('/api/v1/sip/outbound-trunks', admin, audited(svc, 'outbound_trunk.create', AUDITED.trunk), jsonBody(), async (ctx) => {
    const body = check(OutboundTrunkCreate, ctx.request.body);
    const fields: TrunkFields = {
      name: body.name,
      address: body.address,
      transport: body.transport ?? 'udp',
      numbers: e164List(body.numbers, 'numbers', { unique: true }),
      auth_username: body.auth_username ?? null,
      auth_password: body.auth_password ?? null,
    };
    const telephony = requireTelephony(svc);
    const doc = await withDocLock(svc.redis, 'sip-trunks', async () => {
      await checkTrunk(svc, fields, null);
      const livekitId = await telephony.createOutboundTrunk(spec(fields)).catch(telephonyUnavailable);
      const now = svc.now();
      // The first trunk is the default until another is marked.
      const isDefault = body.default === true || (await col().countDocuments({}, { limit: 1 })) === 0;
      const created: TrunkDoc = {
        _id: new ObjectId().toHexString(),
        name: fields.name,
        address: fields.address,
        transport: fields.transport,
        numbers: fields.numbers,
        auth_username: fields.auth_username,
        auth_password_sealed: fields.auth_password === null ? null : box.seal(fields.auth_password),
        default: isDefault,
        livekit_trunk_id: livekitId,
        created_at: now,
        updated_at: now,
      };
      // Every replica's cached trunks are dropped before this answers (cache.ts).
      await svc.cache.write(async () => {
        try {
          await col().insertOne(created);
        } catch (err) {
          await telephony.deleteTrunk(livekitId).catch(() => undefined);
          throw err;
        }
        if (isDefault) await col().updateMany({ _id: { $ne: created._id }, default: true }, { $set: { default: false, updated_at: now } });
      });
      return created;
    }, LOCK);
    svc.logger.info({ req_id: ctx.state.requestId, trunk_id: doc._id, livekit_trunk_id: doc.livekit_trunk_id, default: doc.default }, 'outbound trunk created');
    ctx.status = 201;
    ctx.set('Location', `/api/v1/sip/outbound-trunks/${doc._id}`);
    ctx.body = publicTrunk(doc);
  });

  router.get('/api/v1/sip/outbound-trunks', admin, async (ctx) => {
    const docs = await col().find({}).sort({ created_at: 1, _id: 1 }).limit(1000).toArray();
    ctx.body = { items: docs.map(publicTrunk) };
  });

  router.get('/api/v1/sip/outbound-trunks/:id', admin, async (ctx) => {
    ctx.body = publicTrunk(await load(ctx.params.id!));
  });

  router.patch('/api/v1/sip/outbound-trunks/:id', admin, audited(svc, 'outbound_trunk.update', AUDITED.trunk), jsonBody(), async (ctx) => {
    const patch = check(OutboundTrunkUpdate, ctx.request.body);
    if (patch.numbers !== undefined) patch.numbers = e164List(patch.numbers, 'numbers', { unique: true });
    const telephony = requireTelephony(svc);
    const id = ctx.params.id!;
    const doc = await withDocLock(svc.redis, 'sip-trunks', async () => {
      const current = await load(id);
      const storedPassword = password(current);
      // Removing the username removes the credentials; a new password needs a username.
      const username = patch.auth_username !== undefined ? patch.auth_username : current.auth_username;
      let pw = patch.auth_password !== undefined ? patch.auth_password : storedPassword;
      if (username === null && patch.auth_password === undefined) pw = null;
      const fields: TrunkFields = {
        name: patch.name ?? current.name,
        address: patch.address ?? current.address,
        transport: patch.transport ?? current.transport,
        numbers: patch.numbers ?? current.numbers,
        auth_username: username,
        auth_password: pw,
      };
      await checkTrunk(svc, fields, id);
      let livekitId = current.livekit_trunk_id;
      try {
        await telephony.updateOutboundTrunk(livekitId, spec(fields));
      } catch (err) {
        // Gone from LiveKit (its store was reset): mirror it again.
        if (!(err instanceof TelephonyError && err.notFound)) telephonyUnavailable(err);
        livekitId = await telephony.createOutboundTrunk(spec(fields)).catch(telephonyUnavailable);
      }
      const now = svc.now();
      const set: Partial<TrunkDoc> = {
        name: fields.name,
        address: fields.address,
        transport: fields.transport,
        numbers: fields.numbers,
        auth_username: fields.auth_username,
        auth_password_sealed: fields.auth_password === null ? null : fields.auth_password === storedPassword && current.auth_password_sealed ? current.auth_password_sealed : box.seal(fields.auth_password),
        livekit_trunk_id: livekitId,
        updated_at: now,
        ...(patch.default ? { default: true } : {}),
      };
      await svc.cache.write(async () => {
        await col().updateOne({ _id: id }, { $set: set });
        if (patch.default) await col().updateMany({ _id: { $ne: id }, default: true }, { $set: { default: false, updated_at: now } });
      });
      return { ...current, ...set } as TrunkDoc;
    }, LOCK);
    svc.logger.info({ req_id: ctx.state.requestId, trunk_id: id, fields: Object.keys(patch) }, 'outbound trunk updated');
    ctx.body = publicTrunk(doc);
  });

  router.delete('/api/v1/sip/outbound-trunks/:id', admin, audited(svc, 'outbound_trunk.delete', AUDITED.trunk), async (ctx) => {
    const telephony = requireTelephony(svc);
    const id = ctx.params.id!;
    await withDocLock(svc.redis, 'sip-trunks', async () => {
      const current = await load(id);
      if (current.default && (await col().countDocuments({ _id: { $ne: id } }, { limit: 1 })) > 0) {
        throw apiError('conflict', 'this is the default trunk: mark another trunk as default first (PATCH {"default": true})');
      }
      await telephony.deleteTrunk(current.livekit_trunk_id).catch(telephonyUnavailable);
      await svc.cache.write(() => col().deleteOne({ _id: id }));
    }, LOCK);
    svc.logger.info({ req_id: ctx.state.requestId, trunk_id: id }, 'outbound trunk deleted');
    ctx.status = 204;
  });
}
