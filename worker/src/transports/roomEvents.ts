// rtc-node 1.1 hands every FFI event of the process (every call's audio frames and capture callbacks
// included) to every connected room and every audio stream, which drop what is not theirs; a room takes
// an async lock per event to do so. With N calls that is N² listener calls (N² lock round trips) every
// 20 ms. Rooms' and audio streams' listeners move from rtc-node's shared emitter to this router, which
// gives each only its own events (what Room reads: its `roomEvent`s and RPC invocations; what a stream
// reads: its `audioStreamEvent`s). If rtc-node's internals are not what this expects (another version),
// rooms and streams are left as they are: slower, never wrong.
import type { EventEmitter } from 'node:events';
import type { RemoteTrack, Room } from '@livekit/rtc-node';

type Listener = (ev: FfiEventLike) => unknown;
interface FfiEventLike {
  message: { case?: string; value?: { roomHandle?: bigint; streamHandle?: bigint; message?: { case?: string } } };
}
/** An audio stream's source as rtc-node keeps it on its track (private in rtc-node's types). */
interface StreamInternals {
  onEvent?: Listener;
  ffiHandle?: { handle: bigint };
  /** Set when the stream tore itself down (cancelled, ended, or its track went away). */
  disposed?: boolean;
}
/** The Room internals the router moves (private in rtc-node's types). */
interface RoomInternals {
  onFfiEvent?: Listener;
  ffiHandle?: { handle: bigint };
}

const FFI_EVENT = 'ffi_event';

export class RoomEventRouter {
  private readonly rooms = new Map<bigint, Listener>();
  private readonly streams = new Map<bigint, StreamInternals>();
  private client: EventEmitter | null = null;

  /** The rooms and streams the router serves (for tests). */
  get size(): { rooms: number; streams: number } {
    return { rooms: this.rooms.size, streams: this.streams.size };
  }

  /** rtc-node's FFI emitter with this router on it, or null before rtc-node made one. */
  private emitter(): EventEmitter | null {
    const client = (globalThis as { _ffiClientInstance?: EventEmitter })._ffiClientInstance ?? null;
    if (client && this.client !== client) {
      this.client = client;
      client.on(FFI_EVENT, this.route);
    }
    return client;
  }

  /** Moves `listener` off the shared emitter in one synchronous step: no event can fall between. */
  private take(listener: unknown, handle: unknown): handle is bigint {
    const client = this.emitter();
    if (!client || typeof listener !== 'function' || typeof handle !== 'bigint' || !client.listeners(FFI_EVENT).includes(listener)) return false;
    client.off(FFI_EVENT, listener as Listener);
    return true;
  }

  /** Takes a connected room's listener off the shared emitter; false when rtc-node is not as expected. */
  adopt(room: Room): boolean {
    const r = room as unknown as RoomInternals;
    const handle = r.ffiHandle?.handle;
    if (!this.take(r.onFfiEvent, handle)) return false;
    this.rooms.set(handle, r.onFfiEvent!);
    return true;
  }

  /**
   * Takes the listeners of the audio streams just opened on `track` (new AudioStream(track)) off the
   * shared emitter. Returns what gives them back up (call it when the stream is cancelled).
   */
  adoptStreams(track: RemoteTrack): () => void {
    const refs = (track as unknown as { audioStreams?: Set<WeakRef<StreamInternals>> }).audioStreams;
    const handles: bigint[] = [];
    for (const ref of refs ?? []) {
      const s = ref.deref();
      const handle = s?.ffiHandle?.handle;
      if (!s || s.disposed || !this.take(s.onEvent, handle)) continue;
      this.streams.set(handle, s);
      handles.push(handle);
    }
    return () => {
      for (const h of handles) this.streams.delete(h);
    };
  }

  /** After the room disconnected: it gets nothing more. */
  drop(room: Room): void {
    const handle = (room as unknown as RoomInternals).ffiHandle?.handle;
    if (typeof handle === 'bigint') this.rooms.delete(handle);
  }

  private readonly route = (ev: FfiEventLike): void => {
    const kind = ev.message.case;
    if (kind === 'roomEvent') {
      const handle = ev.message.value?.roomHandle;
      if (handle !== undefined) void this.rooms.get(handle)?.(ev);
    } else if (kind === 'audioStreamEvent') {
      const handle = ev.message.value?.streamHandle;
      const stream = handle === undefined ? undefined : this.streams.get(handle);
      if (!stream) return;
      // A stream that tore itself down (it would have left the shared emitter) gets nothing more.
      if (stream.disposed) {
        this.streams.delete(handle!);
        return;
      }
      try {
        stream.onEvent!(ev);
      } catch {
        // Its reader went away mid-frame: the stream is done, the other calls' events go on.
        this.streams.delete(handle!);
      }
      if (ev.message.value?.message?.case === 'eos') this.streams.delete(handle!);
    } else if (kind === 'rpcMethodInvocation') {
      for (const l of this.rooms.values()) void l(ev);
    }
  };
}
