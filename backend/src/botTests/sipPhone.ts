// The simulated phone of `sip` test cases (docs/design.md §17): a SIP user agent inside the dialler that the
// platform dials as it dials any phone, through livekit-sip and a trunk of its own (no carrier). It is the few
// parts of RFC 3261 a callee needs over UDP: it answers an INVITE with 200 and an SDP answer (resent until the
// ACK), takes a BYE, sends its own BYE to hang up, and answers OPTIONS. Media is G.711 µ-law RTP in 20 ms packets;
// keys are RFC 4733 events. A call is matched to its test case by the dialled number, registered before the call
// is placed; an INVITE to any other number is answered 404.
import dgram from 'node:dgram';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { DTMF_EVENT_CODES } from './caller.js';
import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { linearToUlaw, pcmuPayload, PCMU_PAYLOAD_TYPE as PCMU, ulawToLinear } from '@voice-platform/schemas/node';

/** The phone's side of one SIP dialog, as the caller drives it. */
export interface PhoneCall {
  /** One 20 ms frame of the caller's voice: s16le mono at PHONE_RATE_HZ (sent as µ-law). */
  sendFrame(frame: Buffer): void;
  /** Presses `digits` (RFC 4733 events), one after another; resolves once all are sent. */
  dtmf(digits: string): Promise<void>;
  /** Sends BYE (once); resolves when it is answered or given up. */
  hangUp(): Promise<void>;
  /** Each 20 ms packet of the far end's audio: its peak (16-bit scale). */
  onAudio: ((peak: number) => void) | null;
  /** The far end hung up (BYE), or the phone was stopped. */
  onEnded: (() => void) | null;
  readonly ended: boolean;
}

/** A number the phone answers: `answered` resolves with the call once its INVITE is ACKed. */
export interface ExpectedCall {
  answered: Promise<PhoneCall>;
  /** Stops waiting for the number (a call to it is answered 404 from now on). */
  cancel(): void;
}

const SIP_T1_MS = 500;
/** How long a 200 to an INVITE is resent without an ACK (64·T1, RFC 3261 §13.3.1.4). */
const ANSWER_TIMEOUT_MS = 64 * SIP_T1_MS;
/** G.711's rate: the caller speaks at it (sipCaller.ts), so nothing is resampled here. */
export const PHONE_RATE_HZ = 8000;
const SAMPLES_PER_FRAME = 160; // 20 ms at 8 kHz
/** RFC 4733 events: how long each key is held, and the pause after it. */
const KEY_MS = 100;
const KEY_GAP_MS = 150;
const COMPACT: Readonly<Record<string, string>> = { v: 'via', f: 'from', t: 'to', i: 'call-id', m: 'contact', l: 'content-length', c: 'content-type' };

interface SipMessage {
  method: string | null;
  status: number | null;
  uri: string;
  /** Lower-case names (compact forms expanded), values as sent, in order. */
  headers: Array<[string, string]>;
  body: Buffer;
}

export function parseSipMessage(buf: Buffer): SipMessage | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('utf8').split('\r\n');
  const start = lines.shift() ?? '';
  const headers: Array<[string, string]> = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && headers.length) {
      headers[headers.length - 1]![1] += ` ${line.trim()}`; // a folded line continues the header before it
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.push([COMPACT[name] ?? name, line.slice(colon + 1).trim()]);
  }
  const length = Number(headers.find(([k]) => k === 'content-length')?.[1] ?? buf.length - end - 4);
  const body = buf.subarray(end + 4, end + 4 + (Number.isFinite(length) ? length : 0));
  const status = /^SIP\/2\.0 (\d{3})/.exec(start);
  if (status) return { method: null, status: Number(status[1]), uri: '', headers, body };
  const req = /^([A-Z]+) (\S+) SIP\/2\.0$/.exec(start);
  if (!req) return null;
  return { method: req[1]!, status: null, uri: req[2]!, headers, body };
}

const header = (m: SipMessage, name: string) => m.headers.find(([k]) => k === name)?.[1];
/** The user part of a SIP URI inside a header (`"x" <sip:+1555@host>;tag=…` → `+1555`). */
const uriUser = (value: string) => /sips?:([^@;>]+)@/.exec(value)?.[1] ?? null;
const tagOf = (value: string) => /;\s*tag=([^;>\s]+)/i.exec(value)?.[1] ?? null;
const token = () => randomBytes(8).toString('hex');

/** The far end's media address and its telephone-event payload type, from an SDP offer; null: no PCMU offered. */
export function parseSdpOffer(sdp: string): { host: string; port: number; dtmfPt: number | null } | null {
  const host = /^c=IN IP4 (\S+)/m.exec(sdp)?.[1];
  const m = /^m=audio (\d+) RTP\/S?AVPF? ([\d ]+)/m.exec(sdp);
  if (!host || !m) return null;
  if (!m[2]!.trim().split(/\s+/).map(Number).includes(PCMU)) return null;
  const te = /^a=rtpmap:(\d+) telephone-event\/8000/m.exec(sdp);
  return { host, port: Number(m[1]), dtmfPt: te ? Number(te[1]) : null };
}

class Dialog implements PhoneCall {
  onAudio: ((peak: number) => void) | null = null;
  onEnded: (() => void) | null = null;
  ended = false;
  acked = false;
  /** The 200 to the INVITE, resent until the ACK. */
  answer: Buffer | null = null;
  private seq = randomInt(0, 0xffff);
  private timestamp = randomInt(0, 0x7fffffff);
  private readonly ssrc = randomInt(1, 0x7fffffff);
  private keying = false;
  private cseq = randomInt(1, 10_000);
  private byeSent: Promise<void> | null = null;

  constructor(
    private readonly phone: SimulatedPhone,
    readonly callId: string,
    /** Our From in requests we send: the INVITE's To with our tag. */
    readonly local: string,
    /** Their From (with their tag): our To. */
    readonly remote: string,
    /** Where requests in the dialog go: the INVITE's Contact URI, sent to the address the INVITE came from. */
    readonly remoteTarget: string,
    readonly signalling: { address: string; port: number },
    readonly rtp: dgram.Socket,
    readonly media: { host: string; port: number; dtmfPt: number | null },
  ) {
    rtp.on('message', (packet) => this.hear(packet));
  }

  private hear(packet: Buffer): void {
    const payload = pcmuPayload(packet);
    if (!payload) return;
    let peak = 0;
    for (const code of payload) peak = Math.max(peak, Math.abs(ulawToLinear(code)));
    this.onAudio?.(peak);
  }

  private send(pt: number, marker: boolean, payload: Buffer, timestamp: number): void {
    if (this.ended) return;
    const head = Buffer.alloc(12);
    head[0] = 0x80;
    head[1] = (marker ? 0x80 : 0) | pt;
    head.writeUInt16BE(this.seq, 2);
    this.seq = (this.seq + 1) & 0xffff;
    head.writeUInt32BE(timestamp >>> 0, 4);
    head.writeUInt32BE(this.ssrc, 8);
    this.rtp.send(Buffer.concat([head, payload]), this.media.port, this.media.host, () => undefined);
  }

  sendFrame(frame: Buffer): void {
    const ts = this.timestamp;
    this.timestamp = (this.timestamp + SAMPLES_PER_FRAME) >>> 0; // the clock runs on while a key is pressed
    if (this.keying || !this.acked) return;
    const out = Buffer.alloc(SAMPLES_PER_FRAME, 0xff); // µ-law silence where the frame is short
    for (let i = 0; i < SAMPLES_PER_FRAME && 2 * i + 1 < frame.length; i++) out[i] = linearToUlaw(frame.readInt16LE(2 * i));
    this.send(PCMU, false, out, ts);
  }

  async dtmf(digits: string): Promise<void> {
    const pt = this.media.dtmfPt;
    if (pt === null) throw new Error('the far end offered no telephone-event payload type');
    for (const key of digits) {
      const event = DTMF_EVENT_CODES[key];
      if (event === undefined || this.ended) continue;
      this.keying = true;
      const ts = this.timestamp;
      const packet = (duration: number, end: boolean) => Buffer.from([event, (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]);
      const frames = KEY_MS / 20;
      for (let k = 1; k <= frames; k++) {
        this.send(pt, k === 1, packet(k * SAMPLES_PER_FRAME, false), ts);
        await new Promise((r) => setTimeout(r, 20));
      }
      for (let k = 0; k < 3; k++) this.send(pt, false, packet(frames * SAMPLES_PER_FRAME, true), ts); // the end, three times (RFC 4733 §2.5.1.4)
      this.keying = false;
      await new Promise((r) => setTimeout(r, KEY_GAP_MS));
    }
  }

  hangUp(): Promise<void> {
    if (this.ended) return this.byeSent ?? Promise.resolve();
    this.byeSent ??= this.phone.request(this, 'BYE', ++this.cseq).finally(() => this.end());
    return this.byeSent;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.rtp.close();
    this.phone.forget(this.callId);
    this.onEnded?.();
  }
}

export interface SimulatedPhoneOptions {
  /** The address the phone binds and puts in its Contact and SDP (livekit-sip must reach it): IPv4, or a name resolved at start. */
  host: string;
  /** Its SIP port (UDP). */
  port: number;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

/**
 * Of the addresses a host name resolves to, this machine's own (the first of them), else the first: a replica of
 * a service whose name resolves to every replica binds and advertises its own address, not a sibling's.
 */
export function ownAddress(addresses: string[], own: Set<string> = localAddresses()): string {
  if (!addresses.length) throw new Error('the simulated phone\'s host name resolves to no IPv4 address');
  return addresses.find((a) => own.has(a)) ?? addresses[0]!;
}

function localAddresses(): Set<string> {
  return new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => i.family === 'IPv4').map((i) => i.address)));
}

/** The phone: one UDP socket for SIP, one per call for RTP. */
export class SimulatedPhone {
  private socket: dgram.Socket | null = null;
  private readonly expected = new Map<string, (call: PhoneCall) => void>();
  private readonly dialogs = new Map<string, Dialog>();
  /** Requests we sent, by Via branch: resolves on their final answer. */
  private readonly pending = new Map<string, () => void>();

  /** The address bound and advertised (o.host resolved at start). */
  private host: string;

  constructor(private readonly o: SimulatedPhoneOptions) {
    this.host = o.host;
  }

  /** host:port, the address a trunk to this phone names. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }
  get port(): number {
    const a = this.socket?.address();
    return a ? a.port : this.o.port;
  }

  get listening(): boolean {
    return this.socket !== null;
  }

  async start(): Promise<void> {
    if (this.socket) return;
    // A host name (compose's service name) is its IPv4 address here: SDP and Contact carry the address. A service
    // of several replicas names all of them: each replica's phone is its own address among them.
    if (!isIPv4(this.host)) this.host = ownAddress((await lookup(this.host, { family: 4, all: true })).map((a) => a.address));
    const socket = dgram.createSocket('udp4');
    socket.on('message', (msg, rinfo) => this.receive(msg, rinfo));
    socket.on('error', (err) => this.o.log?.('simulated phone socket error', { err: err.message }));
    socket.bind(this.o.port, this.host);
    await once(socket, 'listening');
    this.socket = socket;
  }

  async stop(): Promise<void> {
    for (const d of [...this.dialogs.values()]) await d.hangUp().catch(() => undefined);
    this.expected.clear();
    const s = this.socket;
    this.socket = null;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  /** Answers the next call to `number` (E.164; compared without the `+`). */
  expect(number: string): ExpectedCall {
    const key = number.replace(/^\+/, '');
    let cancel = () => undefined as void;
    const answered = new Promise<PhoneCall>((resolve, reject) => {
      this.expected.set(key, resolve);
      cancel = () => {
        if (this.expected.get(key) === resolve) this.expected.delete(key);
        reject(new Error('no longer expected'));
      };
    });
    answered.catch(() => undefined);
    return { answered, cancel };
  }

  forget(callId: string): void {
    this.dialogs.delete(callId);
  }

  /** Sends a message: `text` its start line and headers (each line ending CRLF), Content-Length added; answers the bytes. */
  private sendTo(text: string, body: Buffer | null, to: { address: string; port: number }): Buffer {
    const buf = Buffer.concat([Buffer.from(`${text}Content-Length: ${body?.length ?? 0}\r\n\r\n`), body ?? Buffer.alloc(0)]);
    this.sendRaw(buf, to);
    return buf;
  }
  private sendRaw(buf: Buffer, to: { address: string; port: number }): void {
    this.socket?.send(buf, to.port, to.address, () => undefined);
  }

  private respond(req: SipMessage, status: number, reason: string, to: { address: string; port: number }, opts: { toTag?: string; extra?: string[]; body?: Buffer } = {}): Buffer {
    const lines = [`SIP/2.0 ${status} ${reason}`];
    for (const [k, v] of req.headers) {
      if (k === 'via') lines.push(`Via: ${v}`);
      else if (k === 'record-route') lines.push(`Record-Route: ${v}`);
    }
    const toValue = header(req, 'to') ?? '';
    lines.push(`From: ${header(req, 'from') ?? ''}`, `To: ${opts.toTag && !tagOf(toValue) ? `${toValue};tag=${opts.toTag}` : toValue}`, `Call-ID: ${header(req, 'call-id') ?? ''}`, `CSeq: ${header(req, 'cseq') ?? ''}`, 'Server: voice-platform simulated phone', ...(opts.extra ?? []));
    return this.sendTo(`${lines.join('\r\n')}\r\n`, opts.body ?? null, to);
  }

  /** Sends a request in the dialog and resolves on its final answer (resent per T1 over UDP; given up after 64·T1). */
  async request(d: Dialog, method: string, cseq: number): Promise<void> {
    const branch = `z9hG4bK${token()}`;
    const text = [
      `${method} ${d.remoteTarget} SIP/2.0`,
      `Via: SIP/2.0/UDP ${this.address};branch=${branch};rport`,
      'Max-Forwards: 70',
      `From: ${d.local}`,
      `To: ${d.remote}`,
      `Call-ID: ${d.callId}`,
      `CSeq: ${cseq} ${method}`,
      'User-Agent: voice-platform simulated phone',
      '',
    ].join('\r\n');
    let answered = false;
    const done = new Promise<void>((r) => this.pending.set(branch, () => ((answered = true), r())));
    for (let wait = SIP_T1_MS, spent = 0; !answered && spent < ANSWER_TIMEOUT_MS && this.socket; spent += wait, wait = Math.min(wait * 2, 4000)) {
      this.sendTo(text, null, d.signalling);
      await Promise.race([done, new Promise((r) => setTimeout(r, wait))]);
    }
    this.pending.delete(branch);
  }

  private receive(buf: Buffer, rinfo: dgram.RemoteInfo): void {
    const msg = parseSipMessage(buf);
    if (!msg) return;
    const from = { address: rinfo.address, port: rinfo.port };
    if (msg.status !== null) {
      // An answer to our BYE: its final status ends the wait.
      const branch = /branch=([^;,\s]+)/.exec(header(msg, 'via') ?? '')?.[1];
      if (branch && msg.status >= 200) this.pending.get(branch)?.();
      return;
    }
    const callId = header(msg, 'call-id') ?? '';
    const dialog = this.dialogs.get(callId);
    switch (msg.method) {
      case 'INVITE':
        if (dialog) {
          // A resend of the INVITE (our 200 was lost) or a re-INVITE: the same answer.
          if (dialog.answer) this.sendRaw(dialog.answer, from);
          return;
        }
        void this.answer(msg, from, callId);
        return;
      case 'ACK':
        if (dialog) dialog.acked = true;
        return;
      case 'BYE':
        this.respond(msg, dialog ? 200 : 481, dialog ? 'OK' : 'Call/Transaction Does Not Exist', from);
        dialog?.end();
        return;
      case 'CANCEL':
        this.respond(msg, 200, 'OK', from);
        dialog?.end();
        return;
      case 'OPTIONS':
      case 'INFO':
      case 'NOTIFY':
        this.respond(msg, 200, 'OK', from, { extra: ['Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, NOTIFY'] });
        return;
      default:
        this.respond(msg, 405, 'Method Not Allowed', from, { extra: ['Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, NOTIFY'] });
    }
  }

  private async answer(invite: SipMessage, from: { address: string; port: number }, callId: string): Promise<void> {
    const user = uriUser(invite.uri) ?? uriUser(header(invite, 'to') ?? '');
    const take = user ? this.expected.get(user.replace(/^\+/, '')) : undefined;
    if (!take || !user) {
      this.o.log?.('simulated phone: a call to a number it does not expect', { number: user });
      this.respond(invite, 404, 'Not Found', from);
      return;
    }
    const media = parseSdpOffer(invite.body.toString('utf8'));
    if (!media) {
      this.respond(invite, 488, 'Not Acceptable Here', from);
      return;
    }
    this.expected.delete(user.replace(/^\+/, ''));
    const rtp = dgram.createSocket('udp4');
    rtp.on('error', () => undefined);
    rtp.bind(0, this.host);
    await once(rtp, 'listening');
    const toTag = token();
    const contactUri = /<([^>]+)>/.exec(header(invite, 'contact') ?? '')?.[1] ?? `sip:${from.address}:${from.port}`;
    const toValue = header(invite, 'to') ?? '';
    const dialog = new Dialog(this, callId, `${toValue};tag=${toTag}`, header(invite, 'from') ?? '', contactUri, from, rtp, media);
    this.dialogs.set(callId, dialog);
    const session = String(randomInt(1, 2 ** 31));
    const sdp = Buffer.from(
      [
        'v=0',
        `o=- ${session} ${session} IN IP4 ${this.host}`,
        's=voice-platform simulated phone',
        `c=IN IP4 ${this.host}`,
        't=0 0',
        `m=audio ${rtp.address().port} RTP/AVP ${PCMU}${media.dtmfPt !== null ? ` ${media.dtmfPt}` : ''}`,
        'a=rtpmap:0 PCMU/8000',
        ...(media.dtmfPt !== null ? [`a=rtpmap:${media.dtmfPt} telephone-event/8000`, `a=fmtp:${media.dtmfPt} 0-16`] : []),
        'a=ptime:20',
        'a=sendrecv',
        '',
      ].join('\r\n'),
    );
    const extra = [`Contact: <sip:phone@${this.address}>`, 'Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, NOTIFY', 'Content-Type: application/sdp'];
    dialog.answer = this.respond(invite, 200, 'OK', from, { toTag, extra, body: sdp });
    // Resent until the ACK (RFC 3261 §13.3.1.4); no ACK in 64·T1: the call is given up with a BYE.
    for (let wait = SIP_T1_MS, spent = 0; !dialog.acked && !dialog.ended && spent < ANSWER_TIMEOUT_MS; spent += wait, wait = Math.min(wait * 2, 4000)) {
      await new Promise((r) => setTimeout(r, wait));
      if (!dialog.acked && !dialog.ended) this.sendRaw(dialog.answer, from);
    }
    if (!dialog.acked) {
      void dialog.hangUp();
      return;
    }
    take(dialog);
  }
}

