// G.711 µ-law and the RTP packets that carry it: the bot-test simulated phone (backend botTests/sipPhone.ts) and
// the test harness's phone ear and answering-machine audio (tests/infra) speak the same codec.

const BIAS = 0x84;
const CLIP = 32635;
/** RTP payload type 0: PCMU, 8 kHz. */
export const PCMU_PAYLOAD_TYPE = 0;

/** 16-bit linear → G.711 µ-law (ITU-T G.711); out-of-range input is clipped. */
export function linearToUlaw(sample: number): number {
  const s0 = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = s0 < 0 ? 0x80 : 0;
  const s = Math.min(Math.abs(s0), CLIP) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  return ~(sign | (exponent << 4) | ((s >> (exponent + 3)) & 0x0f)) & 0xff;
}

/** G.711 µ-law → 16-bit linear (ITU-T G.711). */
export function ulawToLinear(code: number): number {
  const u = ~code & 0xff;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << ((u >> 4) & 0x07)) - BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

/** The PCMU payload of an RTP packet (CSRCs, a header extension and padding skipped); null if it is not one
 *  (RTCP, DTMF events, other payload types, a short packet). */
export function pcmuPayload(msg: Buffer): Buffer | null {
  if (msg.length < 12 || msg[0]! >> 6 !== 2 || (msg[1]! & 0x7f) !== PCMU_PAYLOAD_TYPE) return null;
  let at = 12 + 4 * (msg[0]! & 0x0f);
  if (msg[0]! & 0x10) {
    if (at + 4 > msg.length) return null;
    at += 4 + 4 * msg.readUInt16BE(at + 2);
  }
  const padding = msg[0]! & 0x20 ? msg[msg.length - 1]! : 0;
  if (at > msg.length - padding) return null;
  return msg.subarray(at, msg.length - padding);
}
