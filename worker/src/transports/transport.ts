// The seam between a call and its audio connection. The WebSocket transport fills it today; LiveKit
// rooms and SIP (through LiveKit's SIP bridge) fill the same seam later. A call never knows which.

export type ServerMessage =
  | { type: 'started'; call_id: string }
  | { type: 'transcript'; role: 'user' | 'bot'; text: string; final: boolean }
  | { type: 'ended'; reason: string }
  | { type: 'error'; code: string; message: string };

export interface TransportHandlers {
  /** Caller audio, PCM16LE mono at the call's sample rate, in any chunk size. */
  onAudio(pcm: Int16Array): void;
  /** The caller hung up (or the connection dropped). */
  onHangup(reason: string): void;
}

export interface CallTransport {
  readonly kind: 'websocket' | 'livekit' | 'sip';
  /** Bot audio, PCM16LE mono at the call's sample rate, one paced frame at a time. */
  sendAudio(pcm: Int16Array): void;
  sendMessage(msg: ServerMessage): void;
  /** Wires the caller's side to the call. */
  attach(handlers: TransportHandlers): void;
  /** Ends the connection (after the `ended` or `error` message). */
  close(code: number, reason: string): void;
}

/** Places outbound calls: fills the seam for dial-out jobs. None is configured until the LiveKit/SIP issue. */
export interface TelephonyDialer {
  readonly name: string;
  dial(call: { callId: string; toNumber: string; signal: AbortSignal }): Promise<CallTransport>;
}

/** WebSocket close codes of DESIGN.md §4 (4000 + the HTTP status they mirror). */
export const CLOSE_CODES = {
  bot_not_found: 4404,
  call_not_found: 4404,
  bot_inactive: 4409,
  config_unreachable: 4502,
  worker_at_capacity: 4503,
  worker_draining: 4503,
  invalid_message: 4400,
  variables_mismatch: 4422,
  provider_unavailable: 4500,
  internal_error: 4500,
} as const;
export type CallErrorCode = keyof typeof CLOSE_CODES;
