// What the test phone's answering machines recorded (tests/infra/phone-recorder.mjs): one WAV per call
// in the phone's voicemail folder (SIP_PHONE_VOICEMAIL_DIR, Phone.voicemailDir), named after the number
// and the call's SIP Call-ID that calls.log pairs with livekit-sip's RTP port.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One call an answering machine took, as the phone logged it before answering. */
export interface VoicemailCall {
  /** When the phone answered (ms since the epoch). */
  answeredAt: number;
  number: string;
  /** livekit-sip's RTP port for the call (the m=audio port of its INVITE). */
  rtpPort: number;
  callId: string;
}

/** A machine's recording of one call: what the caller said to it, as a phone line carried it. */
export interface Voicemail extends VoicemailCall {
  /** The WAV (16-bit 8 kHz mono), rewritten every second while the call goes on. */
  file: string;
  /** 8 kHz 16-bit samples, from livekit-sip's first packet (empty before it came). */
  pcm: Int16Array;
  sampleRate: 8000;
}

/** The calls the answering machines took, oldest first (calls.log in the voicemail folder). */
export function voicemailCalls(dir: string): VoicemailCall[] {
  const log = path.join(dir, 'calls.log');
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4)
    .map(([ms, number, rtpPort, callId]) => ({ answeredAt: Number(ms), number: number!, rtpPort: Number(rtpPort), callId: callId! }));
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/** The file the recorder writes a call to (phone-recorder.mjs names it the same way). */
export function voicemailFile(dir: string, call: Pick<VoicemailCall, 'number' | 'callId'>): string {
  return path.join(dir, `${safe(call.number.replace(/^\+/, ''))}_${safe(call.callId)}.wav`);
}

/**
 * What the machine at `number` recorded on the last call to it: null when it took no call yet; `pcm`
 * empty while nothing reached it yet. Read again to see more of a call that goes on.
 */
export function readVoicemail(dir: string, number: string): Voicemail | null {
  const call = voicemailCalls(dir).filter((c) => c.number === number).pop();
  if (!call) return null;
  const file = voicemailFile(dir, call);
  return { ...call, file, pcm: existsSync(file) ? readWav(readFileSync(file)) : new Int16Array(0), sampleRate: 8000 };
}

/** The samples of a 16-bit mono PCM WAV (its `data` chunk). */
export function readWav(buf: Buffer): Int16Array {
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  for (let at = 12; at + 8 <= buf.length; ) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'data') {
      const data = buf.subarray(at + 8, Math.min(buf.length, at + 8 + size));
      const pcm = new Int16Array(data.length >> 1);
      for (let i = 0; i < pcm.length; i++) pcm[i] = data.readInt16LE(2 * i);
      return pcm;
    }
    at += 8 + size + (size & 1);
  }
  throw new Error('a WAV file without data');
}
