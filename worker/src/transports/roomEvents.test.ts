// The FFI event router on the suite's real LiveKit server: rooms adopted by it no longer sit on
// rtc-node's shared emitter, yet each still gets every event of its own (participants, data) and none
// of another room's.
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { AudioFrame, AudioSource, AudioStream, dispose, LocalAudioTrack, type Room, RoomEvent, TrackPublishOptions, TrackSource, type RemoteParticipant, type RemoteTrack } from '@livekit/rtc-node';
import { hearLoudFrames, joinRoom, TONE_20MS } from '../../testing/livekit.js';
import { RoomEventRouter } from './roomEvents.js';

const ffiListeners = () => (globalThis as { _ffiClientInstance?: EventEmitter })._ffiClientInstance!.listeners('ffi_event');
const onFfiEvent = (r: Room) => (r as unknown as { onFfiEvent: unknown }).onFfiEvent;

afterAll(async () => {
  await dispose();
});

describe('RoomEventRouter', () => {
  it('gives each adopted room and audio stream its own events only, off the shared emitter', async () => {
    const [nameA, nameB] = [`router-a-${randomBytes(4).toString('hex')}`, `router-b-${randomBytes(4).toString('hex')}`];
    const router = new RoomEventRouter();
    const a = await joinRoom(nameA, 'bot');
    const b = await joinRoom(nameB, 'bot');
    expect(ffiListeners()).toContain(onFfiEvent(a));
    expect(router.adopt(a)).toBe(true);
    expect(router.adopt(b)).toBe(true);
    expect(router.size).toEqual({ rooms: 2, streams: 0 });
    expect(ffiListeners()).not.toContain(onFfiEvent(a));
    expect(ffiListeners()).not.toContain(onFfiEvent(b));

    const seen = { a: [] as string[], b: [] as string[] };
    a.on(RoomEvent.ParticipantConnected, (p: RemoteParticipant) => seen.a.push(`joined:${p.identity}`));
    b.on(RoomEvent.ParticipantConnected, (p: RemoteParticipant) => seen.b.push(`joined:${p.identity}`));
    a.on(RoomEvent.DataReceived, (payload: Uint8Array) => seen.a.push(`data:${Buffer.from(payload).toString()}`));
    b.on(RoomEvent.DataReceived, (payload: Uint8Array) => seen.b.push(`data:${Buffer.from(payload).toString()}`));

    const guest = await joinRoom(nameA, 'guest');
    try {
      await guest.localParticipant!.publishData(Buffer.from('hello a'), { reliable: true, topic: 'test' });
      const deadline = Date.now() + 15_000;
      while (seen.a.length < 2) {
        if (Date.now() > deadline) throw new Error(`room a saw only ${JSON.stringify(seen.a)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect([...seen.a].sort()).toEqual(['data:hello a', 'joined:guest']); // data may overtake the signalling
      expect(seen.b).toEqual([]);
      // The guest's voice reaches room A's audio stream through the router.
      const subscribed = new Promise<RemoteTrack>((resolve) => a.on(RoomEvent.TrackSubscribed, (t: RemoteTrack) => resolve(t)));
      const source = new AudioSource(16000, 1);
      await guest.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('voice', source), new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
      const speaking = setInterval(() => void source.captureFrame(new AudioFrame(TONE_20MS, 16000, 1, 320)).catch(() => undefined), 20);
      try {
        const track = await subscribed;
        const stream = new AudioStream(track, { sampleRate: 16000, numChannels: 1, frameSizeMs: 20 });
        const release = router.adoptStreams(track);
        expect(router.size).toEqual({ rooms: 2, streams: 1 });
        await hearLoudFrames(stream, 5, 1000);
        release();
        expect(router.size).toEqual({ rooms: 2, streams: 0 });
      } finally {
        clearInterval(speaking);
        await source.close();
      }
    } finally {
      await guest.disconnect();
    }

    // A room still learns of its own disconnection, then leaves the router.
    let disconnected = false;
    a.on(RoomEvent.Disconnected, () => (disconnected = true));
    await a.disconnect();
    router.drop(a);
    expect(disconnected).toBe(true);
    await b.disconnect();
    router.drop(b);
    expect(router.size).toEqual({ rooms: 0, streams: 0 });
  });
});
