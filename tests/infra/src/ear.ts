// The test phone's ear. The phone (sipp) answers its listening numbers (+150055507SS) and the agent
// (+15005553000, which also talks) with an SDP that names this UDP port as its media address, so
// livekit-sip sends the call's audio (G.711 µ-law RTP) here: a test hears what a callee on a real phone
// line would hear, after LiveKit and livekit-sip.
import { createSocket, type Socket } from 'node:dgram';

/** One RTP stream the ear heard: 8 kHz PCM laid out by RTP timestamp (gaps are silence). */
export interface HeardStream {
  ssrc: number;
  packets: number;
  pcm: Int16Array;
}

interface Packet {
  timestamp: number;
  payload: Buffer;
}

const PCMU = 0;
const TELEPHONE_EVENT = 101;

/** RFC 4733 event codes → keys. */
const KEYS = '0123456789*#ABCD';

export class PhoneEar {
  private readonly streams = new Map<number, Packet[]>();
  /** Keys heard as RFC 4733 events (telephone-event, payload type 101 as the phone's SDP names it), in order. */
  private readonly events: Array<{ ssrc: number; timestamp: number; key: string }> = [];

  /** Where the line's RTP comes from (livekit-sip's media socket), once a packet came. */
  private peer: { address: string; port: number } | null = null;
  private gotPeer!: () => void;
  /** Resolves once the line's first RTP packet arrived (the call is up, its media flowing). */
  readonly flowing = new Promise<void>((resolve) => (this.gotPeer = resolve));

  private constructor(private readonly socket: Socket) {
    socket.on('message', (msg, rinfo) => {
      if (!this.peer) {
        this.peer = { address: rinfo.address, port: rinfo.port };
        this.gotPeer();
      }
      this.onPacket(msg);
    });
  }

  /**
   * Presses `keys` on the phone's side of the line, back to where its RTP comes from: RFC 4733 events
   * (payload type 101), each key 160 ms of events and its end packet three times, a key every 250 ms.
   */
  async press(keys: string): Promise<void> {
    await this.flowing;
    const { address, port } = this.peer!;
    const ssrc = 0x4b455953;
    let seq = 1;
    const send = (buf: Buffer) => new Promise<void>((resolve, reject) => this.socket.send(buf, port, address, (err) => (err ? reject(err) : resolve())));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (let k = 0; k < keys.length; k++) {
      const code = KEYS.indexOf(keys[k]!);
      if (code < 0) throw new RangeError(`not a key: ${keys[k]}`);
      const timestamp = (1000 + k * 2000) >>> 0; // a new timestamp: a new key
      const packet = (duration: number, end: boolean, marker: boolean) => {
        const b = Buffer.alloc(16);
        b[0] = 0x80;
        b[1] = (marker ? 0x80 : 0) | TELEPHONE_EVENT;
        b.writeUInt16BE(seq++ & 0xffff, 2);
        b.writeUInt32BE(timestamp, 4);
        b.writeUInt32BE(ssrc, 8);
        b[12] = code;
        b[13] = (end ? 0x80 : 0) | 10;
        b.writeUInt16BE(duration, 14);
        return b;
      };
      for (let i = 0; i < 8; i++) {
        await send(packet((i + 1) * 160, false, i === 0));
        await sleep(20);
      }
      for (let i = 0; i < 3; i++) await send(packet(8 * 160, true, false));
      await sleep(90);
    }
  }

  /** Listens on 127.0.0.1:`port` (the phone's `SIP_PHONE_EAR_PORT`). */
  static open(port: number): Promise<PhoneEar> {
    const socket = createSocket('udp4');
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve(new PhoneEar(socket));
      });
    });
  }

  private onPacket(msg: Buffer): void {
    if (msg.length >= 16 && msg[0]! >> 6 === 2 && (msg[1]! & 0x7f) === TELEPHONE_EVENT) return this.onEvent(msg);
    if (msg.length < 12 || msg[0]! >> 6 !== 2 || (msg[1]! & 0x7f) !== PCMU) return; // RTP v2, PCMU only (not RTCP, not DTMF)
    const csrcs = msg[0]! & 0x0f;
    let at = 12 + 4 * csrcs;
    if (msg[0]! & 0x10) at += 4 + 4 * msg.readUInt16BE(at + 2); // header extension
    const padding = msg[0]! & 0x20 ? msg[msg.length - 1]! : 0;
    if (at > msg.length - padding) return;
    const ssrc = msg.readUInt32BE(8);
    const packets = this.streams.get(ssrc) ?? [];
    packets.push({ timestamp: msg.readUInt32BE(4), payload: msg.subarray(at, msg.length - padding) });
    this.streams.set(ssrc, packets);
  }

  /** One key press is every packet with the same timestamp (RFC 4733 §2.5.1.2): the first one names it. */
  private onEvent(msg: Buffer): void {
    const at = 12 + 4 * (msg[0]! & 0x0f) + (msg[0]! & 0x10 ? 4 + 4 * msg.readUInt16BE(12 + 4 * (msg[0]! & 0x0f) + 2) : 0);
    if (at >= msg.length) return;
    const ssrc = msg.readUInt32BE(8);
    const timestamp = msg.readUInt32BE(4);
    if (this.events.some((e) => e.ssrc === ssrc && e.timestamp === timestamp)) return;
    this.events.push({ ssrc, timestamp, key: KEYS[msg[at]!] ?? '?' });
  }

  /** The keys the line carried as RFC 4733 events, in the order they were pressed. */
  keys(): string {
    return this.events.map((e) => e.key).join('');
  }

  /** Every stream heard so far, in the order they began. */
  heard(): HeardStream[] {
    return [...this.streams].map(([ssrc, packets]) => {
      const first = packets[0]!.timestamp;
      // Timestamps wrap at 2^32; a call's few minutes at 8 kHz never wrap twice.
      const offset = (p: Packet) => (p.timestamp - first) >>> 0;
      const samples = Math.max(...packets.map((p) => offset(p) + p.payload.length));
      const pcm = new Int16Array(samples);
      for (const p of packets) {
        const start = offset(p);
        for (let i = 0; i < p.payload.length; i++) pcm[start + i] = ulawToLinear(p.payload[i]!);
      }
      return { ssrc, packets: packets.length, pcm };
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/** G.711 µ-law → 16-bit linear (ITU-T G.711). */
export function ulawToLinear(code: number): number {
  const u = ~code & 0xff;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << ((u >> 4) & 0x07)) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}
