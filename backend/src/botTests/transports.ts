// Which transports this backend's runs can place (docs/design.md §17): `ws` always (TEST_RUNNER_WORKER_URL on the
// dialler), `room` where the backend has LiveKit settings (the runner joins the call's room as its caller), `sip` not yet.
import { AVAILABLE_TEST_TRANSPORTS, type TestTransport } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';

export interface TestLiveKit {
  url: string;
  apiKey: string;
  apiSecret: string;
}

type LiveKitSettings = Pick<Settings, 'LIVEKIT_URL' | 'LIVEKIT_API_KEY' | 'LIVEKIT_API_SECRET'>;

/** The LiveKit a `room` case's caller joins; null: the backend has none set. */
export function testLiveKit(s: LiveKitSettings): TestLiveKit | null {
  if (!s.LIVEKIT_URL || !s.LIVEKIT_API_KEY || !s.LIVEKIT_API_SECRET) return null;
  return { url: s.LIVEKIT_URL, apiKey: s.LIVEKIT_API_KEY, apiSecret: s.LIVEKIT_API_SECRET };
}

export function availableTestTransports(s: LiveKitSettings): TestTransport[] {
  return AVAILABLE_TEST_TRANSPORTS.filter((t) => t !== 'room' || testLiveKit(s) !== null);
}

/** Why a run cannot place `transport` here (the 422 transport_unavailable message). */
export function unavailableReason(transport: TestTransport): string {
  if (transport === 'room') return 'transport room is not available on this backend: a room case joins the call\'s LiveKit room, which needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET';
  return `transport ${transport} is not available yet: a SIP case needs the simulated phone in the runner`;
}
