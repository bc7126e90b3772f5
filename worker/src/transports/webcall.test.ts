// A browser test call's room on the suite's real LiveKit server: the worker's side joins the call's
// room and waits for the caller (identity `caller`, as the backend's widget token names it); rtc-node
// stands in for the browser's livekit-client (the same protocol), speaking a tone. Audio flows both
// ways, the worker's messages reach the caller as data on topic `events`, and the caller leaving is
// the call's hang-up.
import { randomBytes } from 'node:crypto';
import { AudioFrame, AudioSource, AudioStream, dispose, LocalAudioTrack, Room, RoomEvent, TrackPublishOptions, TrackSource, type RemoteTrack } from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { createLogger } from '../core/logger.js';
import { LiveKitDialer, WEB_CALLER_IDENTITY } from './livekit.js';

const RATE = 16000;
const env = () => ({ url: process.env.LIVEKIT_URL!, apiKey: process.env.LIVEKIT_API_KEY!, apiSecret: process.env.LIVEKIT_API_SECRET! });
const dialer = () => new LiveKitDialer({ ...env(), sampleRate: RATE, ringingTimeoutSeconds: 10, workerId: 'webcall-test', logger: createLogger('silent') });
const rooms = () => new RoomServiceClient(env().url.replace(/^ws/, 'http'), env().apiKey, env().apiSecret);

async function browser(room: string): Promise<Room> {
  const at = new AccessToken(env().apiKey, env().apiSecret, { identity: WEB_CALLER_IDENTITY, ttl: '10m' });
  at.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true, canPublishData: false });
  const r = new Room();
  await r.connect(env().url, await at.toJwt(), { autoSubscribe: true, dynacast: false });
  return r;
}
const tone = (hz: number) => new Int16Array(RATE / 50).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / RATE)));
const loud = (pcm: Int16Array) => pcm.some((x) => Math.abs(x) > 1000);
async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

afterAll(async () => {
  await dispose();
});

describe('a browser test call over LiveKit', () => {
  it('joins the room, waits for the caller, carries audio both ways and events as data, and ends when the caller leaves', async () => {
    const callId = `web-${randomBytes(6).toString('hex')}`;
    const d = dialer();
    const joined = d.joinWebCall({ callId, signal: AbortSignal.timeout(20_000) });
    // The browser comes after the worker is in the room, with its microphone.
    const caller = await browser(callId);
    const mic = new AudioSource(RATE, 1);
    await caller.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('microphone', mic), new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
    const speaking = setInterval(() => void mic.captureFrame(new AudioFrame(tone(300), RATE, 1, RATE / 50)).catch(() => undefined), 20);
    const events: unknown[] = [];
    caller.on(RoomEvent.DataReceived, (payload: Uint8Array, _p, _kind, topic?: string) => {
      if (topic === 'events') events.push(JSON.parse(Buffer.from(payload).toString('utf8')));
    });
    const botVoice = new Promise<RemoteTrack>((resolve) => caller.on(RoomEvent.TrackSubscribed, (t: RemoteTrack) => resolve(t)));
    try {
      const transport = await joined;
      expect(transport.kind).toBe('livekit');
      let heard = 0;
      let hangup: string | null = null;
      transport.attach({ onAudio: (pcm) => (heard += loud(pcm) ? 1 : 0), onHangup: (reason) => (hangup = reason) });
      await until(() => heard >= 5, "the caller's voice at the worker");

      // The bot speaks and reports: the caller hears it and gets the message.
      transport.sendMessage({ type: 'started', call_id: callId });
      const botSpeaking = setInterval(() => transport.sendAudio(tone(800)), 20);
      try {
        const stream = new AudioStream(await botVoice, { sampleRate: RATE, numChannels: 1, frameSizeMs: 20 });
        const reader = stream.getReader();
        let botFrames = 0;
        while (botFrames < 5) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the bot track ended');
          if (loud(value.data)) botFrames++;
        }
        reader.releaseLock();
        await stream.cancel();
      } finally {
        clearInterval(botSpeaking);
      }
      await until(() => events.length > 0, 'the started event at the caller');
      expect(events[0]).toEqual({ type: 'started', call_id: callId });

      // The caller hangs up: the call's hang-up, and closing it removes the room.
      clearInterval(speaking);
      await caller.disconnect();
      await until(() => hangup !== null, 'the hang-up');
      expect(hangup).toBe('caller_hangup');
      transport.close();
      const deadline = Date.now() + 15_000;
      while ((await rooms().listRooms([callId])).length > 0) {
        if (Date.now() > deadline) throw new Error('the room was not deleted');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      clearInterval(speaking);
      await caller.disconnect().catch(() => undefined);
      await mic.close().catch(() => undefined);
    }
  });

  it('a caller who never comes: the join gives up when told and the room is gone', async () => {
    const callId = `web-${randomBytes(6).toString('hex')}`;
    const d = dialer();
    const gaveUp = new AbortController();
    const joined = d.joinWebCall({ callId, signal: gaveUp.signal });
    // The room exists while the worker waits in it.
    const deadline = Date.now() + 15_000;
    while ((await rooms().listRooms([callId])).length === 0) {
      if (Date.now() > deadline) throw new Error('the room never appeared');
      await new Promise((r) => setTimeout(r, 100));
    }
    gaveUp.abort();
    await expect(joined).rejects.toThrow('the caller did not join');
    expect(await rooms().listRooms([callId])).toEqual([]);
  });
});
