// The seam between a call and its audio connection: the WebSocket transport, and LiveKit rooms (SIP
// callees through LiveKit's SIP bridge) fill it. A call never knows which.
import type { ServerMessage } from '../pipeline/frames.js';

export interface TransportHandlers {
  /** Caller audio, PCM16LE mono at the call's sample rate, in any chunk size. */
  onAudio(pcm: Int16Array): void;
  /** The caller hung up (or the connection dropped). */
  onHangup(reason: string): void;
  /** The caller pressed keys (0-9, *, #), in order. */
  onDtmf?(digits: string): void;
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
  /** Drops bot audio the connection still buffers (barge-in); transports that buffer nothing omit it. */
  interrupt?(): void;
  /** Presses keys on the call (RFC 4733 on a phone line); transports without a keypad omit it. */
  sendDtmf?(digits: string, signal?: AbortSignal): Promise<void>;
  /** Hands the caller to a person (docs/design.md §9); transports without a phone line omit it. */
  transfer?(req: TransferRequest): Promise<TransferOutcome>;
}

/** A transfer of the call's peer (docs/design.md §9 Transfer). */
export type TransferRequest =
  /** SIP REFER to `target` (`tel:+…` or `sip:…`): the phone network connects the caller and the bot's line ends. */
  | { mode: 'cold'; target: string; signal: AbortSignal }
  | {
      /**
       * The worker dials `number` (E.164) through the call's trunk into a consult room, plays `whisper` there, then
       * moves the person into the caller's room and leaves it to the two of them.
       */
      mode: 'warm';
      number: string;
      /** The whisper as audio at the call's rate, synthesised once the person answered. */
      whisper: () => AsyncIterable<Int16Array>;
      signal: AbortSignal;
    };

export interface TransferOutcome {
  status: 'accepted' | 'failed';
  /** The SIP answer that decided it (202 REFER accepted, 200 the person answered, 486, 603…); null when none came. */
  sipStatusCode: number | null;
  /** Why it failed, for the log (never shown to the caller). */
  detail?: string;
}

/** RFC 4733 event codes of the keys a keypad has. */
export const DTMF_EVENT_CODES: Readonly<Record<string, number>> = { '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9, '*': 10, '#': 11 };

/** What a carrier can answer instead of picking up, as the call record shows it (docs/design.md §7). */
export interface DialOutcome {
  status: 'busy' | 'no_answer' | 'failed';
  reason: 'busy' | 'no_answer' | 'invalid_number' | 'sip_error' | 'dial_failed';
  sipStatusCode: number | null;
}

export class DialError extends Error {
  constructor(
    readonly outcome: DialOutcome,
    message: string,
  ) {
    super(message);
    this.name = 'DialError';
  }
}

/** SIP final responses → outcome: 486/600/603 busy; 408/480/487 no answer; 404/484/604 no such number; others sip_error. */
export function outcomeForSipStatus(code: number | null): DialOutcome {
  if (code === 486 || code === 600 || code === 603) return { status: 'busy', reason: 'busy', sipStatusCode: code };
  if (code === 408 || code === 480 || code === 487) return { status: 'no_answer', reason: 'no_answer', sipStatusCode: code };
  if (code === 404 || code === 484 || code === 604) return { status: 'failed', reason: 'invalid_number', sipStatusCode: code };
  return { status: 'failed', reason: code === null ? 'dial_failed' : 'sip_error', sipStatusCode: code };
}

export interface DialRequest {
  callId: string;
  toNumber: string;
  fromNumber: string;
  /** The telephony plane's id of the outbound trunk that places the call. */
  sipTrunkId: string;
  signal: AbortSignal;
  /** The callee's phone rings (a SIP 18x came back). */
  onRinging(): void;
}

/** Places outbound calls for dial-out jobs: resolves when the callee answered, else rejects with a DialError. */
export interface WebCallRequest {
  callId: string;
  /** Aborted when the caller took too long to come (or the worker stops). */
  signal: AbortSignal;
}

export interface InboundCallRequest {
  callId: string;
  /** The room LiveKit's dispatch rule put the caller in (`in-…`), ringing until the bot joins. */
  roomName: string;
  /** Aborted when answering takes too long (or the worker stops). */
  signal: AbortSignal;
}

export interface TelephonyDialer {
  readonly name: string;
  dial(req: DialRequest): Promise<CallTransport>;
  /** A call to one of our numbers (docs/design.md §7 inbound): joins the caller's room, which answers the call. */
  answerInbound?(req: InboundCallRequest): Promise<CallTransport>;
  /** A browser test call (docs/design.md §7 widget): resolves once the caller is in the call's room. */
  joinWebCall?(req: WebCallRequest): Promise<CallTransport>;
}

/** WebSocket close codes of docs/design.md §4 (4000 + the HTTP status they mirror). */
export const CLOSE_CODES = {
  bot_not_found: 4404,
  call_not_found: 4404,
  bot_inactive: 4409,
  config_unreachable: 4502,
  worker_at_capacity: 4503,
  worker_draining: 4503,
  invalid_message: 4400,
  unauthorized: 4401,
  origin_not_allowed: 4403,
  variables_mismatch: 4422,
  provider_unavailable: 4500,
  internal_error: 4500,
} as const;
export type CallErrorCode = keyof typeof CLOSE_CODES;
