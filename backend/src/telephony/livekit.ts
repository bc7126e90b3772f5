// The backend's side of the telephony plane (docs/design.md §7) on LiveKit: outbound trunks mirrored into LiveKit, inbound
// numbers mirrored as an inbound trunk plus a dispatch rule each, and rooms deleted when a call's worker is
// lost (which hangs up the callee). Implements Telephony (telephony.ts), so the routes and the dialler never
// see the SDK; every SDK failure becomes a TelephonyError.
import { RoomServiceClient, SipClient } from 'livekit-server-sdk';
import { SIPDispatchRule, SIPDispatchRuleIndividual, SIPDispatchRuleInfo, SIPInboundTrunkInfo, SIPOutboundTrunkInfo, SIPTransport } from '@livekit/protocol';
import type { SipTransport } from '@voice-platform/schemas';
import { TelephonyError, type Telephony, type TrunkSpec } from '../core/telephony.js';

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
    async listOutboundTrunks() {
      try {
        return (await sip.listSipOutboundTrunk()).map((t) => ({ id: t.sipTrunkId, name: t.name }));
      } catch (err) {
        throw wrap('listing the outbound trunks', err);
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
