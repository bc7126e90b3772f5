// Inbound calls (docs/design.md §7): a call to one of our numbers reaches livekit-sip, whose dispatch rule (one per
// inbound number, inbound/store.ts) puts the caller in a room of its own (`in-…`) and keeps the phone
// ringing until someone in the room subscribes to the caller's audio. livekit-server tells the backend in
// a signed webhook (`participant_joined`); the backend records the call (`direction: inbound`), takes a
// slot of fleet capacity and queues a job; the worker that claims it joins the room, which answers the
// call. At capacity (or for a bot that cannot talk) the backend deletes the room while it still rings:
// livekit-sip then refuses the INVITE with 486 Busy Here, and the call is recorded `failed`.
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { ParticipantInfo_Kind } from '@livekit/protocol';
import { WebhookReceiver, type WebhookEvent } from 'livekit-server-sdk';
import { normalizePhoneNumber } from '@voice-platform/schemas';
import { ApiError, apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { readRaw } from '../core/body.js';
import { requestView } from '../core/cacheTable.js';
import { insertCall, queuedCall, type CallDoc } from '../calls/store.js';
import { joblessCloser, placeCall, type InboundInput } from '../calls/place.js';
import { recordCallEnd } from '../analytics/rollup.js';
import { emitCallEvent } from '../webhooks/outbox.js';
import { findInboundNumber, INBOUND_NUMBER_ID_ATTRIBUTE, INBOUND_ROOM_PREFIX } from './store.js';
/** One call per room, whatever LiveKit retries: the room's mark outlives any retry. */
const ROOM_MARK_TTL_SECONDS = 24 * 3600;

/** A number as livekit-sip reports it (the SIP URI's user part) in E.164, or null when it is not one. */
function e164(raw: string | undefined): string | null {
  if (!raw) return null;
  const n = normalizePhoneNumber(raw.startsWith('+') ? raw : `+${raw}`);
  return n.ok ? n.e164 : null;
}

export function liveKitWebhookRoutes(router: Router, svc: Services): void {
  const s = svc.settings;
  const receiver = s.LIVEKIT_API_KEY && s.LIVEKIT_API_SECRET ? new WebhookReceiver(s.LIVEKIT_WEBHOOK_API_KEY ?? s.LIVEKIT_API_KEY, s.LIVEKIT_API_SECRET) : null;
  const jobless = joblessCloser(svc);

  router.post('/livekit/webhook', async (ctx) => {
    if (!receiver) throw apiError('service_unavailable', 'the telephony plane is not configured (LIVEKIT_API_KEY, LIVEKIT_API_SECRET)');
    const raw = await readRaw(ctx);
    let event: WebhookEvent;
    try {
      // LiveKit signs each webhook: a JWT by our API key whose sha256 claim is the body's hash.
      event = await receiver.receive(raw.toString('utf8'), ctx.get('Authorization') || undefined);
    } catch {
      throw apiError('unauthorized', 'the webhook is not signed by this LiveKit (Authorization)');
    }
    if (event.event === 'participant_joined') await inboundParticipant(svc, jobless, event, ctx.state.requestId as string);
    ctx.status = 204;
  });
}

async function inboundParticipant(svc: Services, jobless: ReturnType<typeof joblessCloser>, event: WebhookEvent, requestId: string): Promise<void> {
  const p = event.participant;
  const room = event.room?.name ?? '';
  if (!p || p.kind !== ParticipantInfo_Kind.SIP || !room.startsWith(INBOUND_ROOM_PREFIX)) return;
  const numberId = p.attributes[INBOUND_NUMBER_ID_ATTRIBUTE];
  if (!numberId) return; // a dispatch rule that is not ours
  const log = svc.logger.child({ req_id: requestId, room });
  const callId = new ObjectId().toHexString();
  const mark = `vp:inbound-room:${room}`;
  if ((await svc.redis.set(mark, callId, 'EX', ROOM_MARK_TTL_SECONDS, 'NX')) !== 'OK') return; // a retry
  try {
    await placeInboundCall(svc, jobless, event, room, numberId, callId, log, requestId);
  } catch (err) {
    // Nothing was decided for this caller: LiveKit's retry of the webhook may try again.
    await svc.redis.del(mark).catch(() => undefined);
    throw err;
  }
}

async function placeInboundCall(svc: Services, jobless: ReturnType<typeof joblessCloser>, event: WebhookEvent, room: string, numberId: string, callId: string, log: Services['logger'], requestId: string): Promise<void> {
  const p = event.participant!;

  const refuse = async (why: string) => {
    // Deleting the room while the phone rings: livekit-sip answers the INVITE 486 Busy Here.
    await svc.telephony?.deleteRoom(room).catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not refuse the inbound call'));
    log.info({ reason: why }, 'inbound call refused');
  };
  const number = await findInboundNumber(svc.db, numberId);
  if (!number) return refuse('unknown_number');
  const now = svc.clock();
  const input: InboundInput = {
    direction: 'inbound',
    bot_id: number.bot_id,
    variables: number.variables,
    to_number: e164(p.attributes['sip.trunkPhoneNumber']) ?? number.number,
    from_number: e164(p.attributes['sip.phoneNumber']),
    room_name: room,
  };
  /** The caller hears 486; the call is on record as failed, with why. */
  const failed = async (reason: string) => {
    const ended = new Date(now);
    const queued = queuedCall({ _id: callId, bot_id: input.bot_id, direction: 'inbound', to_number: input.to_number, from_number: input.from_number, variables: input.variables, api_key_id: null, room_name: room }, ended);
    const doc: CallDoc = { ...queued, status: 'failed', end_reason: reason, ended_at: ended, sip_status_code: 486, status_times: { queued: ended, failed: ended } };
    await insertCall(svc.db, doc); // settled at once: stored with the ended calls
    // Ended without the lifecycle's end: counted in the analytics here.
    await recordCallEnd(svc.db, svc.redis, doc).catch((err: unknown) => log.warn({ err, call_id: callId }, 'call not counted in the analytics'));
    await refuse(reason);
    await emitCallEvent(svc, 'call.ended', doc);
  };
  try {
    // The one placement every call goes through (calls/place.ts): bot, reservation, record, job, rollback, event.
    await placeCall(svc, jobless, { apiKeyId: null, label: `inbound number ${numberId}` }, input, requestId, await requestView(svc.cache, {}), { callId });
  } catch (err) {
    if (err instanceof ApiError && REFUSALS.has(err.code)) return failed(err.code);
    // No job, no worker: the caller must not ring forever (placeCall closed the record and gave the slot back).
    await refuse('enqueue_failed');
    // Decided (the caller was refused): a retry of this webhook must not place the call again.
    log.error({ call_id: callId, err: err instanceof Error ? err.message : String(err) }, 'inbound call could not be queued');
  }
}

/** placeCall's refusals that put an inbound call on record as failed (the caller hears 486). */
const REFUSALS: ReadonlySet<string> = new Set(['bot_not_found', 'bot_inactive', 'fleet_at_capacity']);
