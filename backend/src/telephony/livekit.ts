// The backend's side of the telephony plane (DESIGN.md §7): outbound trunks mirrored into LiveKit, and
// rooms deleted when a call's worker is lost (which hangs up the callee). One small interface so the
// routes and the dialler never see the SDK; every SDK failure becomes a TelephonyError.
import { RoomServiceClient, SipClient } from 'livekit-server-sdk';
import { SIPOutboundTrunkInfo, SIPTransport } from '@livekit/protocol';
import type { SipTransport } from '@voice-platform/schemas';

export interface TrunkSpec {
  name: string;
  address: string;
  transport: SipTransport;
  numbers: string[];
  authUsername: string | null;
  authPassword: string | null;
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
  /** Deletes the LiveKit trunk; one already gone is not an error. */
  deleteTrunk(livekitId: string): Promise<void>;
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

export interface LiveKitSettings {
  url: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
}

export function createLiveKitTelephony(s: LiveKitSettings): Telephony {
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
