// A `sip` case's call (docs/design.md §17): the platform dials the dialler's simulated phone (sipPhone.ts) as it
// dials any phone. The runner makes a LiveKit outbound trunk to the phone for the case (its own trunk: no team's
// trunk, no carrier), places a dial-out of the run's version with the case on it through that trunk to a number
// only this case answers, and the phone's call is the caller's line: the script goes out as µ-law RTP, the bot's
// audio comes back over the same phone path a customer hears. A persona also needs the bot's words: the caller
// joins the call's room hidden and reads the worker's `events` data (the transcript), as a room case does.
import { randomInt } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { AccessToken } from 'livekit-server-sdk';
import type { Room } from '@livekit/rtc-node';
import { TERMINAL_CALL_STATUSES } from '@voice-platform/schemas';
import type { Telephony } from '../core/telephony.js';
import { CallerLine, type CallerOutcome, type Dial } from './caller.js';
import { PHONE_RATE_HZ, type PhoneCall, type SimulatedPhone } from './sipPhone.js';
import type { TestLiveKit } from './transports.js';

/** The caller id of every test dial-out (the only number of each case's trunk). */
export const SIMULATED_CALLER_ID = '+15550100999';
/** From the placed call to the phone answering: the queue, the worker's claim, livekit-sip's INVITE. */
const RING_WAIT_MS = 60_000;
/** A packet of the far end louder than this (peak, 16-bit) is the bot's voice; the rest is the line's silence. */
const BOT_VOICE_PEAK = 500;
/** The worker's identity in a call's room (worker/src/transports/livekit.ts). */
const BOT_IDENTITY = 'bot';

/** A case's trunk's name in LiveKit: the runner that finds one whose case has no lease deletes it (sweepPhoneTrunks). */
export const phoneTrunkName = (runId: string, caseId: string) => `vp-test-phone ${runId}/${caseId}`;
const PHONE_TRUNK_NAME = /^vp-test-phone ([0-9a-f]{24})\/([0-9a-f]{24})$/;

/**
 * Deletes the simulated phone's trunks a killed runner left behind: each names its run and case, and a live
 * runner holds the case's lease for as long as its trunk exists (it takes the lease before it makes the trunk
 * and deletes the trunk before it lets the lease go), so a trunk whose case has no lease is nobody's.
 * Other trunks (the teams') are never touched. Answers how many it deleted.
 */
export async function sweepPhoneTrunks(telephony: Telephony, leaseHeld: (runId: string, caseId: string) => Promise<boolean>): Promise<number> {
  let deleted = 0;
  for (const t of await telephony.listOutboundTrunks()) {
    const m = PHONE_TRUNK_NAME.exec(t.name);
    if (!m || (await leaseHeld(m[1]!, m[2]!))) continue;
    await telephony.deleteTrunk(t.id);
    deleted++;
  }
  return deleted;
}

/** What placing the dial-out answers: the call's id, or why there is no call. */
export type PlacedSipCall = { kind: 'placed'; callId: string } | Exclude<CallerOutcome, { kind: 'called' }>;

export interface SipDialOptions {
  phone: SimulatedPhone;
  telephony: Telephony;
  /** The trunk's name in LiveKit (the run and case, for whoever lists trunks). */
  trunkName: string;
  /** Places the dial-out to `toNumber` through `trunk` (the run's version, the case on the call). */
  place: (trunk: { livekitTrunkId: string; fromNumber: string }, toNumber: string) => Promise<PlacedSipCall>;
  /** The stored call's status and end reason; null: no record (yet). */
  callState: (callId: string) => Promise<{ status: string; end_reason: string | null } | null>;
  /** Set when the caller needs the bot's words (a persona): the room it joins hidden to read them. */
  observe?: TestLiveKit;
  log: (msg: string, fields: Record<string, unknown>) => void;
}

export function sipDial(o: SipDialOptions, signal?: AbortSignal): Dial {
  return async (talk) => {
    const toNumber = `+1555${randomInt(1_000_000, 10_000_000)}`;
    const expected = o.phone.expect(toNumber);
    let trunkId: string;
    try {
      trunkId = await o.telephony.createOutboundTrunk({ name: o.trunkName, address: o.phone.address, transport: 'udp', numbers: [SIMULATED_CALLER_ID], authUsername: null, authPassword: null });
    } catch (err) {
      expected.cancel();
      return { kind: 'error', reason: `the simulated phone's trunk could not be made: ${(err as Error).message}` };
    }
    let observer: Room | null = null;
    try {
      const placed = await o.place({ livekitTrunkId: trunkId, fromNumber: SIMULATED_CALLER_ID }, toNumber);
      if (placed.kind !== 'placed') return placed;
      const callId = placed.callId;
      // The observer joins while the phone rings, so it hears the greeting's transcript too.
      const early: Record<string, unknown>[] = [];
      let hear = (msg: Record<string, unknown>): void => void early.push(msg);
      if (o.observe) {
        try {
          observer = await observeRoom(o.observe, callId, (msg) => hear(msg));
        } catch (err) {
          o.log('the persona could not join the call room to read the bot', { call_id: callId, err: (err as Error).message });
        }
      }
      // The line exists before the phone answers, and the phone's call is wired to it in the same turn it is answered:
      // the greeting comes at once, and a `wait_for_bot` that missed it would wait for nothing.
      const held: { call: PhoneCall | null } = { call: null };
      const line = new CallerLine(
        {
          sendFrame: (frame) => held.call?.sendFrame(frame),
          dtmf: async (digits) => {
            await held.call?.dtmf(digits);
          },
          hangUp: async () => {
            await held.call?.hangUp();
            line.end();
          },
        },
        signal,
        PHONE_RATE_HZ,
      );
      void expected.answered.then(
        (c) => {
          held.call = c;
          c.onAudio = (peak) => {
            if (peak >= BOT_VOICE_PEAK) line.botAudio();
          };
          c.onEnded = () => line.end();
          if (c.ended) line.end();
        },
        () => undefined,
      );
      // Ringing: a call that ends first never reached the phone (refused, failed, no worker).
      const deadline = performance.now() + RING_WAIT_MS;
      while (!held.call) {
        const state = await o.callState(callId).catch(() => null);
        if (held.call) break;
        if (state && (TERMINAL_CALL_STATUSES as readonly string[]).includes(state.status)) {
          return { kind: 'called', callId, callerError: `the call ended before the simulated phone answered: ${state.status}${state.end_reason ? ` (${state.end_reason})` : ''}` };
        }
        if (performance.now() > deadline || signal?.aborted) {
          await o.telephony.deleteRoom(callId).catch(() => undefined);
          return { kind: 'called', callId, callerError: `the simulated phone was not called within ${RING_WAIT_MS} ms` };
        }
        await Promise.race([expected.answered.catch(() => undefined), delay(250)]);
      }
      const call: PhoneCall = held.call;
      hear = (msg) => line.message(msg as Parameters<CallerLine['message']>[0]);
      for (const msg of early) hear(msg);
      line.startAudio();
      try {
        return await talk(line, callId);
      } finally {
        await line.stopAudio();
        if (!call.ended) await call.hangUp();
      }
    } finally {
      expected.cancel();
      await observer?.disconnect().catch(() => undefined);
      await o.telephony.deleteTrunk(trunkId).catch((err: unknown) => o.log('could not delete the simulated phone trunk', { trunk: trunkId, err: (err as Error).message }));
    }
  };
}

/** Joins the call's room hidden (no tracks, nothing published) and hands on the worker's `events` messages. */
async function observeRoom(lk: TestLiveKit, roomName: string, onMessage: (msg: Record<string, unknown>) => void): Promise<Room> {
  const at = new AccessToken(lk.apiKey, lk.apiSecret, { identity: `test-observer-${randomInt(1e9)}`, ttl: 3600 });
  at.addGrant({ room: roomName, roomJoin: true, hidden: true, canPublish: false, canPublishData: false, canSubscribe: true });
  const rtc = await import('@livekit/rtc-node');
  const room = new rtc.Room();
  room.on(rtc.RoomEvent.DataReceived, (payload, p, _kind, topic) => {
    if (topic !== 'events' || p?.identity !== BOT_IDENTITY) return;
    try {
      onMessage(JSON.parse(Buffer.from(payload).toString('utf8')) as Record<string, unknown>);
    } catch {
      // not the worker's JSON: ignored
    }
  });
  await room.connect(lk.url.replace(/^http/, 'ws'), await at.toJwt(), { autoSubscribe: false, dynacast: false });
  return room;
}
