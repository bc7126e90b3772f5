// Bot audio into an unqueued rtc-node AudioSource without rtc-node's per-frame bookkeeping. rtc-node 1.1's
// `captureFrame` arms a timer, makes two promises and puts a listener on the process-wide FFI emitter
// until the frame's callback comes back; every FFI event of every call (each call's audio, each capture
// callback) passes through all those listeners. An unqueued source takes 10 ms frames, twice the calls of
// the pipeline's 20 ms: that bookkeeping cost the worker what the idle Opus encoder saved. `RtcCapture`
// sends the same CaptureAudioFrame request itself and leaves the callback to RoomEventRouter, which drops
// it. The request copies the samples before it returns (livekit-ffi 0.12), so a view into the frame is enough.
// If rtc-node's internals are not what this expects, it uses `captureFrame`: slower, never wrong.
import { AudioFrame, type AudioSource } from '@livekit/rtc-node';

interface FfiClientLike {
  request(req: { message: { case: 'captureAudioFrame'; value: unknown } }): unknown;
  retrievePtr(data: Uint8Array): bigint;
}

export class RtcCapture {
  /** Samples per frame the source takes: 10 ms. */
  readonly frameSamples: number;
  private readonly handle: bigint | null;
  private readonly client: FfiClientLike | null;

  constructor(
    private readonly source: AudioSource,
    private readonly sampleRate: number,
  ) {
    this.frameSamples = sampleRate / 100;
    const handle = (source as unknown as { ffiHandle?: { handle?: unknown } }).ffiHandle?.handle;
    const client = (globalThis as { _ffiClientInstance?: Partial<FfiClientLike> })._ffiClientInstance;
    const usable = typeof handle === 'bigint' && typeof client?.request === 'function' && typeof client.retrievePtr === 'function';
    this.handle = usable ? handle : null;
    this.client = usable ? (client as FfiClientLike) : null;
  }

  /** True when frames go to the FFI directly (false: through captureFrame). */
  get direct(): boolean {
    return this.client !== null;
  }

  /** Hands `pcm` (mono, a whole number of 10 ms frames; a last partial frame is padded with silence) to the source. */
  send(pcm: Int16Array): void {
    const step = this.frameSamples;
    for (let at = 0; at < pcm.length; at += step) {
      let frame = pcm.subarray(at, at + step);
      if (frame.length < step) {
        const padded = new Int16Array(step);
        padded.set(frame);
        frame = padded;
      }
      this.one(frame);
    }
  }

  private one(frame: Int16Array): void {
    if (!this.client) {
      // captureFrame reads from the start of the array's buffer, whatever the view's offset: a copy.
      this.source.captureFrame(new AudioFrame(frame.slice(), this.sampleRate, 1, frame.length)).catch(() => undefined);
      return;
    }
    const bytes = new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
    try {
      this.client.request({
        message: {
          case: 'captureAudioFrame',
          value: { sourceHandle: this.handle, buffer: { dataPtr: this.client.retrievePtr(bytes), sampleRate: this.sampleRate, numChannels: 1, samplesPerChannel: frame.length } },
        },
      });
    } catch {
      // The source is gone (the call is ending): as captureFrame's rejection, nothing to do.
    }
  }
}
