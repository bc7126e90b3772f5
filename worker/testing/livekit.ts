// Rooms on the suite's real LiveKit server, for the transport tests that drive rtc-node directly.
import { Room, type AudioStream } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';

/** Joins `room` as `identity` (publish, subscribe, data), auto-subscribing. */
export async function joinRoom(room: string, identity: string): Promise<Room> {
  const at = new AccessToken(process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!, { identity, ttl: '10m' });
  at.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true, canPublishData: true });
  const r = new Room();
  await r.connect(process.env.LIVEKIT_URL!, await at.toJwt(), { autoSubscribe: true, dynacast: false });
  return r;
}

/** 20 ms of a 440 Hz tone at 16 kHz (amplitude 8000). */
export const TONE_20MS = new Int16Array(320).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000)));

/** Reads `stream` until `frames` of its frames were louder than `threshold`, then cancels it. */
export async function hearLoudFrames(stream: AudioStream, frames: number, threshold: number): Promise<void> {
  const reader = stream.getReader();
  let loud = 0;
  while (loud < frames) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended');
    if (value.data.some((x) => Math.abs(x) > threshold)) loud++;
  }
  reader.releaseLock();
  await stream.cancel();
}
