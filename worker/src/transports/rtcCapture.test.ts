// RtcCapture on the suite's real LiveKit server: with this rtc-node its frames go to the FFI directly (no
// listener per frame on the shared emitter, every capture accepted), and another participant hears them.
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { AudioSource, AudioStream, dispose, LocalAudioTrack, Room, RoomEvent, TrackPublishOptions, TrackSource, type RemoteTrack } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { waitUntil } from '@voice-platform/tests/infra';
import { RtcCapture } from './rtcCapture.js';

async function join(room: string, identity: string): Promise<Room> {
  const at = new AccessToken(process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!, { identity, ttl: '10m' });
  at.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true });
  const r = new Room();
  await r.connect(process.env.LIVEKIT_URL!, await at.toJwt(), { autoSubscribe: true, dynacast: false });
  return r;
}
const ffi = () => (globalThis as { _ffiClientInstance?: EventEmitter })._ffiClientInstance!;

afterAll(async () => {
  await dispose();
});

it('sends 10 ms frames of an unqueued source straight to the FFI, and the other side hears them', async () => {
  const name = `capture-${randomBytes(4).toString('hex')}`;
  const [bot, listener] = [await join(name, 'bot'), await join(name, 'listener')];
  const source = new AudioSource(16000, 1, 0);
  const capture = new RtcCapture(source, 16000);
  expect(capture.direct).toBe(true);
  expect(capture.frameSamples).toBe(160);
  const callbacks = { ok: 0, errors: [] as string[] };
  const onEvent = (ev: { message: { case?: string; value?: { error?: string } } }) => {
    if (ev.message.case !== 'captureAudioFrame') return;
    if (ev.message.value?.error) callbacks.errors.push(ev.message.value.error);
    else callbacks.ok++;
  };
  ffi().on('ffi_event', onEvent);
  const subscribed = new Promise<RemoteTrack>((resolve) => listener.on(RoomEvent.TrackSubscribed, (t: RemoteTrack) => resolve(t)));
  await bot.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('voice', source), new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
  // 20 ms of a 440 Hz tone, sent as the output processor sends it: one pipeline frame, two source frames.
  const tone = new Int16Array(320).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000)));
  let sent = 0;
  let listenersAdded = 0;
  const speaking = setInterval(() => {
    const before = ffi().listenerCount('ffi_event');
    capture.send(tone);
    listenersAdded += ffi().listenerCount('ffi_event') - before;
    sent += 2;
  }, 20);
  try {
    const stream = new AudioStream(await subscribed, { sampleRate: 16000, numChannels: 1, frameSizeMs: 20 });
    const reader = stream.getReader();
    let loud = 0;
    while (loud < 10) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      if (value.data.some((x) => Math.abs(x) > 2000)) loud++;
    }
    reader.releaseLock();
    await stream.cancel();
  } finally {
    clearInterval(speaking);
  }
  // No listener left behind per frame (rtc-node's captureFrame adds one until its callback), and every
  // frame accepted (a wrong size or a gone source comes back as an error).
  expect(listenersAdded).toBe(0);
  await waitUntil(() => callbacks.ok + callbacks.errors.length >= sent, { what: 'a callback for every frame', timeoutMs: 5000 });
  expect(callbacks.errors).toEqual([]);
  expect(callbacks.ok).toBe(sent);
  ffi().off('ffi_event', onEvent);
  await source.close();
  await Promise.all([bot.disconnect(), listener.disconnect()]);
});
