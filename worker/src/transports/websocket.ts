// `WS /ws/{bot_id}` (docs/design.md §4). Client: optional first text message {"type":"start","variables":{…}},
// then binary PCM16LE mono at AUDIO_SAMPLE_RATE, {"type":"dtmf","digits":"12#"} for keys pressed (1–32 of
// 0-9, * and #: docs/design.md §9 keypad), and {"type":"stop"} to hang up. Server: {"type":"started"},
// binary bot audio, transcripts, {"type":"ended"} or {"type":"error"} followed by a close.
// Hostile clients: a frame over the server's maxPayload is closed 1009 and text that is not UTF-8 1007 by
// the WebSocket layer; a start whose variables break the CallVariables schema is invalid_message (4400); a
// binary frame of odd length is not an error (the odd byte waits for the next frame, keeping samples
// aligned); each other bad message mid-call is answered with an invalid_message error, and past
// MAX_INVALID_MESSAGES the call is closed with 4400, so a flood never buys an unbounded stream of replies.
import WebSocket from 'ws';
import { Value } from '@sinclair/typebox/value';
import { CallVariables } from '@voice-platform/schemas';
import { PcmBytes } from '../audio/pcm.js';
import type { CallTransport, TransportHandlers } from './transport.js';
import type { ServerMessage } from '../pipeline/frames.js';

export type ClientMessage = { type: 'start'; variables: Record<string, string> } | { type: 'stop' } | { type: 'dtmf'; digits: string };

const DTMF_DIGITS = /^[0-9*#]{1,32}$/;

export function parseClientMessage(text: string): ClientMessage | null {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return null;
  }
  if (!msg || typeof msg !== 'object') return null;
  const m = msg as { type?: unknown; variables?: unknown; digits?: unknown };
  if (m.type === 'stop') return { type: 'stop' };
  if (m.type === 'dtmf') return typeof m.digits === 'string' && DTMF_DIGITS.test(m.digits) ? { type: 'dtmf', digits: m.digits } : null;
  if (m.type !== 'start') return null;
  const vars = m.variables ?? {};
  // The backend's own schema for a call's variables: names, at most 50, values strings of ≤ 4000 characters.
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars) || !Value.Check(CallVariables, vars)) return null;
  return { type: 'start', variables: vars as Record<string, string> };
}

/** Most audio a slow start may hold before the call is ready (about 10 s at 16 kHz). */
const MAX_EARLY_BYTES = 320_000;
/** Bad messages a call answers with an error; the next one closes it (4400). */
export const MAX_INVALID_MESSAGES = 10;

export class WebSocketTransport implements CallTransport {
  readonly kind = 'websocket' as const;
  private handlers: TransportHandlers | null = null;
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private hungUp: string | null = null;
  private closed = false;
  private invalid = 0;
  /** Keys pressed before the call started (delivered with the early audio). */
  private earlyKeys = '';
  /** Carries an odd trailing byte over to the next frame. */
  private readonly pcm = new PcmBytes();

  constructor(private readonly ws: WebSocket) {
    ws.on('close', () => this.hangup('caller_hangup'));
    ws.on('error', () => this.hangup('connection_error'));
  }

  /** Audio and stop messages after the start phase (the app handles the first message). */
  onClientData(data: Buffer, isBinary: boolean): void {
    if (this.closed) return;
    if (isBinary) {
      if (this.handlers) this.audio(this.handlers, data);
      else if (this.earlyBytes < MAX_EARLY_BYTES) {
        this.early.push(Buffer.from(data));
        this.earlyBytes += data.length;
      }
      return;
    }
    const msg = parseClientMessage(data.toString('utf8'));
    if (msg?.type === 'stop') this.hangup('caller_hangup');
    else if (msg?.type === 'dtmf') {
      if (this.handlers) this.handlers.onDtmf?.(msg.digits);
      else this.earlyKeys = (this.earlyKeys + msg.digits).slice(0, 64);
    }
    else if (++this.invalid > MAX_INVALID_MESSAGES) this.fail(4400, 'invalid_message', 'too many invalid messages');
    else this.sendMessage({ type: 'error', code: 'invalid_message', message: 'expected {"type":"stop"}, {"type":"dtmf","digits":…} or binary PCM16LE audio' });
  }

  private audio(handlers: TransportHandlers, data: Buffer): void {
    const pcm = this.pcm.push(data);
    if (pcm.length) handlers.onAudio(pcm);
  }

  attach(handlers: TransportHandlers): void {
    this.handlers = handlers;
    for (const b of this.early) this.audio(handlers, b);
    this.early = [];
    if (this.earlyKeys) handlers.onDtmf?.(this.earlyKeys);
    this.earlyKeys = '';
    if (this.hungUp) handlers.onHangup(this.hungUp);
  }

  /** Why the connection ended (the caller, an error, or the worker's close), or null while it is up. */
  get hangupReason(): string | null {
    return this.hungUp;
  }

  private hangup(reason: string): void {
    if (this.hungUp) return;
    this.hungUp = reason;
    this.handlers?.onHangup(reason);
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  sendAudio(pcm: Int16Array): void {
    if (!this.open) return;
    this.ws.send(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), { binary: true });
  }

  sendMessage(msg: ServerMessage): void {
    if (!this.open) return;
    this.ws.send(JSON.stringify(msg));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.early = [];
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason);
    // A close the transport decides itself (a protocol error) ends the call it carries, if any.
    this.hangup(reason || 'closed_by_worker');
  }

  /** Refuses the call: one error message, then the close code of docs/design.md §4. */
  fail(code: number, errorCode: string, message: string): void {
    this.sendMessage({ type: 'error', code: errorCode, message });
    this.close(code, errorCode);
  }
}
