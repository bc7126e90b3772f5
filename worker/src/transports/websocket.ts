// `WS /ws/{bot_id}` (DESIGN.md §4). Client: optional first text message {"type":"start","variables":{…}},
// then binary PCM16LE mono at AUDIO_SAMPLE_RATE, and {"type":"stop"} to hang up. Server: {"type":"started"},
// binary bot audio, transcripts, {"type":"ended"} or {"type":"error"} followed by a close.
import WebSocket from 'ws';
import { bytesToPcm } from '../audio/pcm.js';
import type { CallTransport, ServerMessage, TransportHandlers } from './transport.js';

export type ClientMessage = { type: 'start'; variables: Record<string, string> } | { type: 'stop' };

export function parseClientMessage(text: string): ClientMessage | null {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return null;
  }
  if (!msg || typeof msg !== 'object') return null;
  const m = msg as { type?: unknown; variables?: unknown };
  if (m.type === 'stop') return { type: 'stop' };
  if (m.type !== 'start') return null;
  const vars = m.variables ?? {};
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) return null;
  for (const v of Object.values(vars)) if (typeof v !== 'string') return null;
  return { type: 'start', variables: vars as Record<string, string> };
}

/** Most audio a slow start may hold before the call is ready (about 10 s at 16 kHz). */
const MAX_EARLY_BYTES = 320_000;

export class WebSocketTransport implements CallTransport {
  readonly kind = 'websocket' as const;
  private handlers: TransportHandlers | null = null;
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private hungUp: string | null = null;
  private closed = false;

  constructor(private readonly ws: WebSocket) {
    ws.on('close', () => this.hangup('caller_hangup'));
    ws.on('error', () => this.hangup('connection_error'));
  }

  /** Audio and stop messages after the start phase (the app handles the first message). */
  onClientData(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      if (this.handlers) this.handlers.onAudio(bytesToPcm(data));
      else if (this.earlyBytes < MAX_EARLY_BYTES) {
        this.early.push(Buffer.from(data));
        this.earlyBytes += data.length;
      }
      return;
    }
    const msg = parseClientMessage(data.toString('utf8'));
    if (msg?.type === 'stop') this.hangup('caller_hangup');
    else this.sendMessage({ type: 'error', code: 'invalid_message', message: 'expected {"type":"stop"} or binary PCM16LE audio' });
  }

  attach(handlers: TransportHandlers): void {
    this.handlers = handlers;
    for (const b of this.early) handlers.onAudio(bytesToPcm(b));
    this.early = [];
    if (this.hungUp) handlers.onHangup(this.hungUp);
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
    this.hungUp ??= 'closed_by_worker';
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason);
  }

  /** Refuses the call: one error message, then the close code of DESIGN.md §4. */
  fail(code: number, errorCode: string, message: string): void {
    this.sendMessage({ type: 'error', code: errorCode, message });
    this.close(code, errorCode);
  }
}
