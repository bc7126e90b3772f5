// The backend's side of the telephony plane (docs/design.md §7): outbound trunks mirrored into LiveKit, inbound
// numbers mirrored as an inbound trunk plus a dispatch rule each, and rooms deleted when a call's worker is
// lost (which hangs up the callee). One small interface so the routes and the dialler never see the SDK;
// every SDK failure becomes a TelephonyError.
import { RoomServiceClient, SipClient } from 'livekit-server-sdk';
import { SIPDispatchRule, SIPDispatchRuleIndividual, SIPDispatchRuleInfo, SIPInboundTrunkInfo, SIPOutboundTrunkInfo, SIPTransport } from '@livekit/protocol';
import type { SipTransport } from '@voice-platform/schemas';

export interface TrunkSpec {
  name: string;
  address: string;
  transport: SipTransport;
  numbers: string[];
  authUsername: string | null;
  authPassword: string | null;
}

/** An inbound trunk: the one number it accepts calls to, from these addresses (empty: any). */
export interface InboundTrunkSpec {
  name: string;
  number: string;
  allowedAddresses: string[];
}

/** An `individual` dispatch rule: each call to the trunk gets a room of its own, `<roomPrefix><random>`;
 *  the caller's participant carries `attributes`. */
export interface DispatchRuleSpec {
  name: string;
  trunkId: string;
  roomPrefix: string;
  attributes: Record<string, string>;
}

/** LiveKit could not be reached or refused the request; `notFound` when the object is already gone. */
export class TelephonyError extends Error {
  constructor(
    message: string,
    readonly notFound = false,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}

export interface Telephony {
  /** Creates the trunk in LiveKit; resolves to its LiveKit id. */
  createOutboundTrunk(spec: TrunkSpec): Promise<string>;
  /** Replaces the LiveKit trunk's fields with `spec` (all of them, the password included). */
  updateOutboundTrunk(livekitId: string, spec: TrunkSpec): Promise<void>;
  /** Deletes the LiveKit trunk (outbound or inbound); one already gone is not an error. */
  deleteTrunk(livekitId: string): Promise<void>;
  /** Creates an inbound trunk; resolves to its LiveKit id. */
  createInboundTrunk(spec: InboundTrunkSpec): Promise<string>;
  /** Replaces the inbound trunk's fields with `spec`. */
  updateInboundTrunk(livekitId: string, spec: InboundTrunkSpec): Promise<void>;
  /** Creates an `individual` dispatch rule; resolves to its LiveKit id. */
  createDispatchRule(spec: DispatchRuleSpec): Promise<string>;
  /** Replaces the dispatch rule with `spec`. */
  updateDispatchRule(livekitId: string, spec: DispatchRuleSpec): Promise<void>;
  /** Deletes the dispatch rule; one already gone is not an error. */
  deleteDispatchRule(livekitId: string): Promise<void>;
  /** Deletes a call's room (every participant is removed: a SIP callee gets a BYE); one already gone is not an error. */
  deleteRoom(name: string): Promise<void>;
}

const TRANSPORTS: Record<SipTransport, SIPTransport> = {
  udp: SIPTransport.SIP_TRANSPORT_UDP,
  tcp: SIPTransport.SIP_TRANSPORT_TCP,
  tls: SIPTransport.SIP_TRANSPORT_TLS,
};

/** The SDK's errors carry LiveKit's own text; ours say what failed and keep the Twirp code only. */
function wrap(what: string, err: unknown): TelephonyError {
  const e = err as { status?: number; code?: string; name?: string };
  if (e?.status === 404 || e?.code === 'not_found') return new TelephonyError(`${what}: not found in LiveKit`, true);
  const why = typeof e?.status === 'number' ? `LiveKit answered ${e.status}${e.code ? ` ${e.code}` : ''}` : 'LiveKit is unreachable';
  return new TelephonyError(`${what}: ${why}`);
}

interface LiveKitSettings {
  url: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
}

function createLiveKitTelephony(s: LiveKitSettings): Telephony {
  const host = s.url.replace(/^ws/, 'http');
  const opts = { requestTimeout: Math.max(1, Math.ceil(s.timeoutMs / 1000)) };
  const sip = new SipClient(host, s.apiKey, s.apiSecret, opts);
  const rooms = new RoomServiceClient(host, s.apiKey, s.apiSecret, opts);
  const info = (id: string, spec: TrunkSpec) =>
    new SIPOutboundTrunkInfo({
      sipTrunkId: id,
      name: spec.name,
      address: spec.address,
      transport: TRANSPORTS[spec.transport],
      numbers: spec.numbers,
      authUsername: spec.authUsername ?? '',
      authPassword: spec.authPassword ?? '',
    });
  return {
    async createOutboundTrunk(spec) {
      try {
        const t = await sip.createSipOutboundTrunk(spec.name, spec.address, spec.numbers, {
          transport: TRANSPORTS[spec.transport],
          authUsername: spec.authUsername ?? undefined,
          authPassword: spec.authPassword ?? undefined,
        });
        return t.sipTrunkId;
      } catch (err) {
        throw wrap('creating the outbound trunk', err);
      }
    },
    async updateOutboundTrunk(id, spec) {
      try {
        await sip.updateSipOutboundTrunk(id, info(id, spec));
      } catch (err) {
        throw wrap('updating the outbound trunk', err);
      }
    },
    async deleteTrunk(id) {
      try {
        await sip.deleteSipTrunk(id);
      } catch (err) {
        const e = wrap('deleting the trunk', err);
        if (!e.notFound) throw e;
      }
    },
    async createInboundTrunk(spec) {
      try {
        const t = await sip.createSipInboundTrunk(spec.name, [spec.number], { allowedAddresses: spec.allowedAddresses });
        return t.sipTrunkId;
      } catch (err) {
        throw wrap('creating the inbound trunk', err);
      }
    },
    async updateInboundTrunk(id, spec) {
      try {
        await sip.updateSipInboundTrunk(id, new SIPInboundTrunkInfo({ sipTrunkId: id, name: spec.name, numbers: [spec.number], allowedAddresses: spec.allowedAddresses }));
      } catch (err) {
        throw wrap('updating the inbound trunk', err);
      }
    },
    async createDispatchRule(spec) {
      try {
        const r = await sip.createSipDispatchRule({ type: 'individual', roomPrefix: spec.roomPrefix }, { trunkIds: [spec.trunkId], name: spec.name, attributes: spec.attributes });
        return r.sipDispatchRuleId;
      } catch (err) {
        throw wrap('creating the dispatch rule', err);
      }
    },
    async updateDispatchRule(id, spec) {
      const rule = new SIPDispatchRule({ rule: { case: 'dispatchRuleIndividual', value: new SIPDispatchRuleIndividual({ roomPrefix: spec.roomPrefix }) } });
      try {
        await sip.updateSipDispatchRule(id, new SIPDispatchRuleInfo({ sipDispatchRuleId: id, rule, trunkIds: [spec.trunkId], name: spec.name, attributes: spec.attributes }));
      } catch (err) {
        throw wrap('updating the dispatch rule', err);
      }
    },
    async deleteDispatchRule(id) {
      try {
        await sip.deleteSipDispatchRule(id);
      } catch (err) {
        const e = wrap('deleting the dispatch rule', err);
        if (!e.notFound) throw e;
      }
    },
    async deleteRoom(name) {
      try {
        await rooms.deleteRoom(name);
      } catch (err) {
        const e = wrap('deleting the room', err);
        if (!e.notFound) throw e;
      }
    },
  };
}

/** From the backend's settings: null when the telephony plane is not configured. */
export function telephonyFromSettings(s: { LIVEKIT_URL?: string; LIVEKIT_API_KEY?: string; LIVEKIT_API_SECRET?: string; LIVEKIT_TIMEOUT_MS: number }): Telephony | null {
  if (!s.LIVEKIT_URL || !s.LIVEKIT_API_KEY || !s.LIVEKIT_API_SECRET) return null;
  return createLiveKitTelephony({ url: s.LIVEKIT_URL, apiKey: s.LIVEKIT_API_KEY, apiSecret: s.LIVEKIT_API_SECRET, timeoutMs: s.LIVEKIT_TIMEOUT_MS });
}
