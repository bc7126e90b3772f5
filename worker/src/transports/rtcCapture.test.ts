// RtcCapture on the suite's real LiveKit server: with this rtc-node its frames go to the FFI directly (no
// listener per frame on the shared emitter, every capture accepted), and another participant hears them.
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { AudioSource, AudioStream, dispose, LocalAudioTrack, RoomEvent, TrackPublishOptions, TrackSource, type RemoteTrack } from '@livekit/rtc-node';
import { waitUntil } from '@voice-platform/tests/infra';
import { hearLoudFrames, joinRoom, TONE_20MS } from '../../testing/livekit.js';
import { RtcCapture } from './rtcCapture.js';

const ffi = () => (globalThis as { _ffiClientInstance?: EventEmitter })._ffiClientInstance!;

afterAll(async () => {
  await dispose();
});

it('sends 10 ms frames of an unqueued source straight to the FFI, and the other side hears them', async () => {
  const name = `capture-${randomBytes(4).toString('hex')}`;
  const [bot, listener] = [await joinRoom(name, 'bot'), await joinRoom(name, 'listener')];
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
  let sent = 0;
  let listenersAdded = 0;
  const speaking = setInterval(() => {
    const before = ffi().listenerCount('ffi_event');
    capture.send(TONE_20MS); // one pipeline frame: two 10 ms source frames
    listenersAdded += ffi().listenerCount('ffi_event') - before;
    sent += 2;
  }, 20);
  try {
    await hearLoudFrames(new AudioStream(await subscribed, { sampleRate: 16000, numChannels: 1, frameSizeMs: 20 }), 10, 2000);
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
