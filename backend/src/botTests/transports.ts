// Which transports this backend's runs can place (docs/design.md §17): `ws` always (TEST_RUNNER_WORKER_URL on the
// dialler), `room` where the backend has LiveKit settings (the runner joins the call's room as its caller), `sip`
// where it also has TEST_PHONE_SIP_ADDRESS (the platform dials the dialler's simulated phone through livekit-sip).
import { TEST_TRANSPORTS, type TestTransport } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';

export interface TestLiveKit {
  url: string;
  apiKey: string;
  apiSecret: string;
}

type TransportSettings = Pick<Settings, 'LIVEKIT_URL' | 'LIVEKIT_API_KEY' | 'LIVEKIT_API_SECRET' | 'TEST_PHONE_SIP_ADDRESS'>;

/** The LiveKit a `room` case's caller joins; null: the backend has none set. */
export function testLiveKit(s: TransportSettings): TestLiveKit | null {
  if (!s.LIVEKIT_URL || !s.LIVEKIT_API_KEY || !s.LIVEKIT_API_SECRET) return null;
  return { url: s.LIVEKIT_URL, apiKey: s.LIVEKIT_API_KEY, apiSecret: s.LIVEKIT_API_SECRET };
}

/** The simulated phone's address (`IPv4:port`) for `sip` cases; null: this backend places none. */
export function testPhoneAddress(s: TransportSettings): { host: string; port: number } | null {
  if (!testLiveKit(s) || !s.TEST_PHONE_SIP_ADDRESS) return null;
  const [host, port] = s.TEST_PHONE_SIP_ADDRESS.split(':') as [string, string];
  return { host, port: Number(port) };
}

export function availableTestTransports(s: TransportSettings): TestTransport[] {
  return TEST_TRANSPORTS.filter((t) => (t === 'room' ? testLiveKit(s) !== null : t === 'sip' ? testPhoneAddress(s) !== null : true));
}

/** Why a run cannot place `transport` here (the 422 transport_unavailable message). */
export function unavailableReason(transport: TestTransport): string {
  if (transport === 'room') return 'transport room is not available on this backend: a room case joins the call\'s LiveKit room, which needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET';
  return 'transport sip is not available on this backend: a SIP case dials the simulated phone, which needs TEST_PHONE_SIP_ADDRESS and the LIVEKIT_* settings';
}
