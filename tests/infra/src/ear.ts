// The test phone's ear. The phone (sipp) answers its listening numbers (+150055507SS) and the agent
// (+15005553000, which also talks) with an SDP that names this UDP port as its media address, so
// livekit-sip sends the call's audio (G.711 µ-law RTP) here: a test hears what a callee on a real phone
// line would hear, after LiveKit and livekit-sip.
import { createSocket, type Socket } from 'node:dgram';
import { linearToUlaw, pcmuPayload, PCMU_PAYLOAD_TYPE, ulawToLinear } from '@voice-platform/schemas/node';

export { linearToUlaw, ulawToLinear };

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

/**
 * One call on the ear (an ear serves several at once: each distinct peer, livekit-sip's RTP address and
 * port, is one line). It records when each of the line's PCMU packets arrived and how loud it was, and
 * speaks back: `speak` queues 8 kHz PCM sent as PCMU RTP in 20 ms packets paced in real time (its own
 * SSRC, sequence numbers and timestamps), silence packets in between once it has begun, until `stop`,
 * the ear closes, or the line has been silent (no packet from the peer) for 3 s.
 */
export interface EarLine {
  readonly peer: { address: string; port: number };
  /**
   * Every PCMU packet of the line: arrival (performance.now(), ms), RMS of its decoded samples and its RTP timestamp
   * (8 kHz): the sender's media clock, which the phone's jitter buffer plays by whatever this process's event loop did.
   */
  readonly arrivals: Array<{ at: number; rms: number; rtpTs: number }>;
  /** Every packet the line sent (speech and the silence between): send time (performance.now(), ms) and RMS of its samples. */
  readonly sent: Array<{ at: number; rms: number }>;
  /** performance.now() of the line's last packet from the peer. */
  lastPacketAt: number;
  /** Queues `pcm8k` (8 kHz PCM16); resolves with the send time (performance.now()) of its last packet. */
  speak(pcm8k: Int16Array): Promise<number>;
  /** Stops sending (the line's pacing timer ends). */
  stop(): void;
}

const PCMU = PCMU_PAYLOAD_TYPE;
const TELEPHONE_EVENT = 101;

/** RFC 4733 event codes → keys. */
const KEYS = '0123456789*#ABCD';

export class PhoneEar {
  private readonly streams = new Map<number, Packet[]>();
  /** Keys heard as RFC 4733 events (telephone-event, payload type 101 as the phone's SDP names it), in order. */
  private readonly events: Array<{ ssrc: number; timestamp: number; key: string }> = [];
  /** The lines (calls) heard, by `address:port` of their peer. */
  private readonly lineMap = new Map<string, EarLine & { stopped: boolean }>();
  private readonly lineListeners: Array<(line: EarLine) => void> = [];

  /** Where the line's RTP comes from (livekit-sip's media socket), once a packet came. */
  private peer: { address: string; port: number } | null = null;
  private gotPeer!: () => void;
  /** Resolves once the line's first RTP packet arrived (the call is up, its media flowing). */
  readonly flowing = new Promise<void>((resolve) => (this.gotPeer = resolve));

  private constructor(private readonly socket: Socket) {
    socket.on('message', (msg, rinfo) => {
      const at = performance.now();
      if (!this.peer) {
        this.peer = { address: rinfo.address, port: rinfo.port };
        this.gotPeer();
      }
      this.onPacket(msg);
      this.onLinePacket(msg, rinfo.address, rinfo.port, at);
    });
  }

  /** Every line (call) heard so far, in the order they began. */
  lines(): EarLine[] {
    return [...this.lineMap.values()];
  }

  /** Calls `fn` with each line as its first packet arrives (and at once with the lines already heard). */
  onLine(fn: (line: EarLine) => void): void {
    this.lineListeners.push(fn);
    for (const l of this.lineMap.values()) fn(l);
  }

  private onLinePacket(msg: Buffer, address: string, port: number, at: number): void {
    const payload = pcmuPayload(msg);
    if (!payload && !(msg.length >= 12 && msg[0]! >> 6 === 2 && (msg[1]! & 0x7f) === TELEPHONE_EVENT)) return; // not the line's RTP (e.g. RTCP)
    const key = `${address}:${port}`;
    let line = this.lineMap.get(key);
    if (!line) {
      line = this.newLine(address, port);
      this.lineMap.set(key, line);
      for (const fn of this.lineListeners) fn(line);
    }
    line.lastPacketAt = at;
    if (!payload) return;
    let sum = 0;
    for (let i = 0; i < payload.length; i++) {
      const v = ulawToLinear(payload[i]!);
      sum += v * v;
    }
    line.arrivals.push({ at, rms: payload.length ? Math.sqrt(sum / payload.length) : 0, rtpTs: msg.readUInt32BE(4) });
  }

  private newLine(address: string, port: number): EarLine & { stopped: boolean } {
    const socket = this.socket;
    const ssrc = (Math.random() * 0x100000000) >>> 0;
    let seq = (Math.random() * 0x10000) >>> 0;
    let timestamp = (Math.random() * 0x100000000) >>> 0;
    const queue: Array<{ pcm: Int16Array; sent: (at: number) => void }> = [];
    let timer: NodeJS.Timeout | null = null;
    let startedAt = 0;
    let tick = 0;
    let marker = true;
    const silent = Buffer.alloc(160, 0xff); // µ-law of 0
    const line: EarLine & { stopped: boolean } = {
      peer: { address, port },
      arrivals: [],
      sent: [],
      lastPacketAt: performance.now(),
      stopped: false,
      speak(pcm8k) {
        return new Promise<number>((resolve) => {
          if (line.stopped) return resolve(performance.now());
          queue.push({ pcm: pcm8k, sent: resolve });
          if (!timer) {
            startedAt = performance.now();
            tick = 0;
            send();
          }
        });
      },
      stop() {
        line.stopped = true;
        if (timer) clearTimeout(timer);
        timer = null;
        for (const q of queue.splice(0)) q.sent(performance.now());
      },
    };
    let offset = 0; // samples of queue[0] sent
    function send(): void {
      timer = null;
      if (line.stopped) return;
      if (performance.now() - line.lastPacketAt > 3000) return line.stop();
      let payload: Buffer;
      let done: (() => void) | null = null;
      let sum = 0;
      const head = queue[0];
      if (head) {
        payload = Buffer.alloc(160, 0xff);
        const n = Math.min(160, head.pcm.length - offset);
        for (let i = 0; i < n; i++) {
          const v = head.pcm[offset + i]!;
          sum += v * v;
          payload[i] = linearToUlaw(v);
        }
        offset += n;
        if (offset >= head.pcm.length) {
          queue.shift();
          offset = 0;
          done = () => head.sent(performance.now());
        }
      } else payload = silent;
      const b = Buffer.alloc(12 + 160);
      b[0] = 0x80;
      b[1] = (marker ? 0x80 : 0) | PCMU;
      marker = false;
      b.writeUInt16BE(seq, 2);
      b.writeUInt32BE(timestamp, 4);
      b.writeUInt32BE(ssrc, 8);
      payload.copy(b, 12);
      seq = (seq + 1) & 0xffff;
      timestamp = (timestamp + 160) >>> 0;
      line.sent.push({ at: performance.now(), rms: Math.sqrt(sum / 160) });
      socket.send(b, port, address, () => done?.());
      tick++;
      timer = setTimeout(send, Math.max(0, startedAt + tick * 20 - performance.now()));
    }
    return line;
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
    for (const l of this.lineMap.values()) l.stop();
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

