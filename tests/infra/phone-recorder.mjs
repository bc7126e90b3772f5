// The test phone's voicemail recorder (tests/infra/src/telephony.ts, docs/design.md §10). The answering
// machines (+15005558NNN) answer with an SDP that names this process's UDP port as their media address,
// so livekit-sip sends it what the caller says (G.711 µ-law RTP); it writes each call's audio as a
// 16-bit 8 kHz mono WAV in the voicemail folder, rewritten every second while the call goes on.
//
// Which call a stream belongs to: before answering, the phone appends `<ms> <number> <rtp port>
// <Call-ID>` to calls.log in that folder, the port being the m=audio port of livekit-sip's INVITE, the
// one its RTP comes from. A stream (a source port and SSRC) takes the latest line with its port that no
// other stream took: `<number without +>_<Call-ID>.wav` (voicemail.ts readVoicemail finds it the same way).
//
// Plain Node, no dependencies and no build: the phone starts it as a process of its own, which keeps
// running with the `make up` stack. Settings: PHONE_RECORDER_PORT, PHONE_VOICEMAIL_DIR.
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const port = Number(process.env.PHONE_RECORDER_PORT);
const dir = process.env.PHONE_VOICEMAIL_DIR;
if (!port || !dir) {
  console.error('phone-recorder: PHONE_RECORDER_PORT and PHONE_VOICEMAIL_DIR are required');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const callsLog = path.join(dir, 'calls.log');

const RATE = 8000;
const PCMU = 0;
/** A stream with no packet for this long has ended: written a last time and forgotten. */
const IDLE_MS = 5000;
/** Past this, a stream's first line in calls.log is given up on: it is written as unknown_<port>_<ms>.wav. */
const UNKNOWN_AFTER_MS = 3000;
/** At most this much of one call is kept (RTP timestamps far apart would ask for more). */
const MAX_SAMPLES = 10 * 60 * RATE;

/**
 * @typedef {{ key: string, port: number, ssrc: number, firstAt: number, lastAt: number, firstTs: number,
 *   chunks: Array<{ offset: number, payload: Buffer }>, name: string | null, dirty: boolean }} Stream
 */
/** @type {Map<string, Stream>} */
const streams = new Map();
/** Call-IDs a stream took (a line of calls.log names one call). */
const taken = new Set();

const safe = (s) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/** calls.log's lines, oldest first. */
function calls() {
  if (!existsSync(callsLog)) return [];
  return readFileSync(callsLog, 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 4)
    .map(([ms, number, rtpPort, callId]) => ({ ms: Number(ms), number, port: Number(rtpPort), callId }));
}

function resolve(stream, now) {
  if (stream.name) return;
  const line = calls().filter((c) => c.port === stream.port && !taken.has(c.callId) && c.ms >= stream.firstAt - 60_000).pop();
  if (line) {
    taken.add(line.callId);
    stream.name = `${safe(line.number.replace(/^\+/, ''))}_${safe(line.callId)}.wav`;
    console.log(`${new Date().toISOString()} port ${stream.port} ssrc ${stream.ssrc.toString(16)}: ${line.number} ${line.callId} → ${stream.name}`);
  } else if (now - stream.firstAt > UNKNOWN_AFTER_MS) {
    stream.name = `unknown_${stream.port}_${stream.firstAt}.wav`;
    console.log(`${new Date().toISOString()} port ${stream.port} ssrc ${stream.ssrc.toString(16)}: no call in calls.log → ${stream.name}`);
  }
}

/** µ-law → 16-bit linear (ITU-T G.711). */
function ulaw(code) {
  const u = ~code & 0xff;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << ((u >> 4) & 0x07)) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}

/** The stream as a WAV: its packets laid out by RTP timestamp (gaps are silence). */
function wav(stream) {
  const samples = Math.min(MAX_SAMPLES, Math.max(0, ...stream.chunks.map((c) => c.offset + c.payload.length)));
  const out = Buffer.alloc(44 + samples * 2);
  out.write('RIFF', 0);
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write('WAVEfmt ', 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(RATE, 24);
  out.writeUInt32LE(RATE * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36);
  out.writeUInt32LE(samples * 2, 40);
  for (const { offset, payload } of stream.chunks) {
    for (let i = 0; i < payload.length && offset + i < samples; i++) out.writeInt16LE(ulaw(payload[i]), 44 + 2 * (offset + i));
  }
  return out;
}

function write(stream) {
  if (!stream.name || !stream.dirty) return;
  const file = path.join(dir, stream.name);
  // Whole or not at all: a test may read it while the call goes on.
  writeFileSync(`${file}.tmp`, wav(stream));
  renameSync(`${file}.tmp`, file);
  stream.dirty = false;
}

const socket = createSocket('udp4');
socket.on('message', (msg, rinfo) => {
  // RTP version 2, PCMU only (not RTCP, not RFC 4733 events)
  if (msg.length < 12 || msg[0] >> 6 !== 2 || (msg[1] & 0x7f) !== PCMU) return;
  let at = 12 + 4 * (msg[0] & 0x0f);
  if (msg[0] & 0x10) at += 4 + 4 * msg.readUInt16BE(at + 2);
  const padding = msg[0] & 0x20 ? msg[msg.length - 1] : 0;
  if (at > msg.length - padding) return;
  const ssrc = msg.readUInt32BE(8);
  const timestamp = msg.readUInt32BE(4);
  const key = `${rinfo.address}:${rinfo.port}/${ssrc}`;
  const now = Date.now();
  let stream = streams.get(key);
  if (!stream) {
    stream = { key, port: rinfo.port, ssrc, firstAt: now, lastAt: now, firstTs: timestamp, chunks: [], name: null, dirty: true };
    streams.set(key, stream);
  }
  stream.lastAt = now;
  // Timestamps wrap at 2^32; a packet from before the first (reordered) is dropped.
  const offset = (timestamp - stream.firstTs) >>> 0;
  if (offset < MAX_SAMPLES) stream.chunks.push({ offset, payload: Buffer.from(msg.subarray(at, msg.length - padding)) });
  stream.dirty = true;
});

setInterval(() => {
  const now = Date.now();
  for (const stream of streams.values()) {
    try {
      resolve(stream, now);
      write(stream);
    } catch (err) {
      console.error(`${new Date().toISOString()} ${stream.key}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (now - stream.lastAt > IDLE_MS) {
      stream.dirty = true;
      resolve(stream, Infinity);
      write(stream);
      streams.delete(stream.key);
    }
  }
}, 1000);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    for (const stream of streams.values()) {
      try {
        resolve(stream, Infinity);
        write(stream);
      } catch {
        /* stopping anyway */
      }
    }
    process.exit(0);
  });
}

socket.bind(port, '127.0.0.1', () => console.log(`${new Date().toISOString()} phone-recorder on 127.0.0.1:${port}, writing to ${dir}`));
