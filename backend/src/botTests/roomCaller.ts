// A `room` case's call (docs/design.md §17): a web call as the console's widget places it. The runner places the
// call (placeCall, `web`, the run's version, the case on the call) and the caller joins its LiveKit room with
// @livekit/rtc-node as the browser would (identity `caller`): it publishes a microphone track with the script's
// lines, hears the bot's audio track, reads the worker's messages on the data topic `events` (the WebSocket
// protocol's shapes), presses keys with publishDtmf, and hangs up by leaving. rtc-node is loaded only when a room
// case runs: an API process never loads its native library.
import type { AudioSource, RemoteTrack, Room } from '@livekit/rtc-node';
import { CALLER_RATE_HZ, CallerLine, DTMF_EVENT_CODES, FRAME_MS, type CallerOutcome, type Dial } from './caller.js';

/** The worker's identity in a call's room (worker/src/transports/livekit.ts); a supervisor listening is another. */
const BOT_IDENTITY = 'bot';
/** A frame of the bot's track louder than this (peak, 16-bit) is its voice; the rest is the line's silence. */
const BOT_VOICE_PEAK = 500;
/** The worker answers once it hears the caller's microphone; longest wait for its `started` message. */
const START_WAIT_MS = 30_000;
/** Between two keys of one dtmf step (the worker's own keypad pauses as long). */
const KEY_INTERVAL_MS = 250;

/** What the runner's placing of the call answers: the room to join, or why there is no call. */
export type PlacedCall = { kind: 'placed'; callId: string; roomName: string; token: string } | Exclude<CallerOutcome, { kind: 'called' }>;

export interface RoomDialOptions {
  /** LiveKit's address (ws(s):// or http(s)://). */
  livekitUrl: string;
  /** Places the web call and signs the caller's token. */
  place: () => Promise<PlacedCall>;
}

export function roomDial(o: RoomDialOptions, signal?: AbortSignal): Dial {
  return async (talk) => {
    const placed = await o.place();
    if (placed.kind !== 'placed') return placed;
    const rtc = await import('@livekit/rtc-node');
    const room: Room = new rtc.Room();
    let mic: AudioSource | null = null;
    let joined = false;
    const line = new CallerLine(
      {
        sendFrame: async (frame) => {
          if (!mic || line.closed) return;
          const pcm = new Int16Array(frame.length / 2);
          Buffer.from(pcm.buffer).set(frame); // a copy: the frame's bytes may sit at an odd offset
          await mic.captureFrame(new rtc.AudioFrame(pcm, CALLER_RATE_HZ, 1, (CALLER_RATE_HZ * FRAME_MS) / 1000));
        },
        dtmf: async (digits) => {
          for (let i = 0; i < digits.length && !line.closed; i++) {
            if (i > 0) await new Promise((r) => setTimeout(r, KEY_INTERVAL_MS));
            await room.localParticipant!.publishDtmf(DTMF_EVENT_CODES[digits[i]!]!, digits[i]!);
          }
        },
        hangUp: async () => {
          await room.disconnect();
          line.end();
        },
      },
      signal,
    );

    const hear = async (track: RemoteTrack) => {
      const stream = new rtc.AudioStream(track, { sampleRate: CALLER_RATE_HZ, numChannels: 1, frameSizeMs: FRAME_MS });
      const reader = stream.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done || line.closed) break;
          let peak = 0;
          for (const v of value.data) if (v > peak || -v > peak) peak = Math.abs(v);
          if (peak >= BOT_VOICE_PEAK) line.botAudio();
        }
      } catch {
        // The track went with the bot: the end is seen by the room's events.
      } finally {
        reader.releaseLock();
        await stream.cancel().catch(() => undefined);
      }
    };
    room.on(rtc.RoomEvent.TrackSubscribed, (track, _pub, p) => {
      // Not from inside rtc-node's event dispatch: a stream opened there can miss its first frames.
      if (p.identity === BOT_IDENTITY && track.kind === rtc.TrackKind.KIND_AUDIO) setImmediate(() => void hear(track));
    });
    room.on(rtc.RoomEvent.DataReceived, (payload, p, _kind, topic) => {
      if (topic !== 'events' || p?.identity !== BOT_IDENTITY) return;
      let msg: { type?: string };
      try {
        msg = JSON.parse(Buffer.from(payload).toString('utf8')) as { type?: string };
      } catch {
        return;
      }
      line.message(msg);
      if (msg.type === 'ended') line.end();
    });
    // The bot leaving, or the room deleted: the call is over.
    room.on(rtc.RoomEvent.ParticipantDisconnected, (p) => {
      if (p.identity === BOT_IDENTITY) line.end();
    });
    room.on(rtc.RoomEvent.Disconnected, () => line.end());

    try {
      try {
        await room.connect(o.livekitUrl.replace(/^http/, 'ws'), placed.token, { autoSubscribe: true, dynacast: false });
        joined = true;
        mic = new rtc.AudioSource(CALLER_RATE_HZ, 1);
        await room.localParticipant!.publishTrack(rtc.LocalAudioTrack.createAudioTrack('microphone', mic), new rtc.TrackPublishOptions({ source: rtc.TrackSource.SOURCE_MICROPHONE }));
      } catch (err) {
        return { kind: 'called', callId: placed.callId, callerError: `the caller could not join the call's room: ${(err as Error).message}` };
      }
      line.startAudio();
      // Started: the worker's `started` message, or its voice (the greeting). A data message sent while the caller's
      // side of the room is still being set up can be lost; the call's id is known from placing it either way.
      await line.until(() => line.startedId !== null || line.heardBot || line.refused !== null, START_WAIT_MS);
      if (line.startedId === null && !line.heardBot) {
        const why = line.refused ? `the worker refused the call: ${line.refused.code}: ${line.refused.message}` : line.closed ? 'the call ended before it started' : `the bot did not start the call within ${START_WAIT_MS} ms`;
        return { kind: 'called', callId: placed.callId, callerError: why };
      }
      return await talk(line, placed.callId);
    } finally {
      await line.stopAudio();
      if (joined) await room.disconnect().catch(() => undefined);
      await mic?.close().catch(() => undefined);
    }
  };
}
