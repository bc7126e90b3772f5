// The call's edges as processors: caller audio enters the pipeline through TransportInputProcessor and
// bot audio (with the caller's messages) leaves through TransportOutputProcessor. Every transport
// (WebSocket, LiveKit room: browser or SIP) plugs into these two the same way: its `attach` is the
// source, its `sendAudio`/`sendMessage`/`interrupt` the sink.
import { Rechunker, samplesFor } from '../audio/pcm.js';
import type { Direction, Frame, ServerMessage } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

const AUDIO_FRAME_MS = 20;

/** The first processor: caller audio, in whatever chunks the transport delivers, as 20 ms `audio_in` frames. */
export class TransportInputProcessor extends FrameProcessor {
  private readonly chunker: Rechunker;

  constructor(private readonly sampleRate: number) {
    super('transport_in');
    this.chunker = new Rechunker(samplesFor(AUDIO_FRAME_MS, sampleRate));
  }

  /** Caller audio that arrived at `atMs` (performance.now()); every frame it completes carries that time. */
  receive(pcm: Int16Array, atMs: number): void {
    if (this.cancelled) return;
    for (const frame of this.chunker.push(pcm)) this.queueFrame({ kind: 'audio_in', pcm: frame, sampleRate: this.sampleRate, atMs }, 'downstream');
  }

  /** A key the caller pressed, in order with the audio around it. */
  receiveDtmf(digit: string, atMs: number): void {
    if (this.cancelled) return;
    this.queueFrame({ kind: 'dtmf', digit, atMs }, 'downstream');
  }

  protected override onCancel(): void {
    this.chunker.clear();
  }
}

/** Where the output side goes: the transport's sink, plus the call's view of what the caller was told. */
export interface OutputSink {
  /** Bot audio, one paced frame. */
  sendAudio(pcm: Int16Array): void;
  sendMessage(msg: ServerMessage): void;
  /** Queued bot audio was dropped (barge-in): the transport drops what it still buffers. */
  interrupt?(): void;
  /** The reply that ends the call has been spoken in full. */
  onEndCall(): void;
}

/** The last processor: paced bot audio, messages and the end-of-call marker go to the sink in order. */
export class TransportOutputProcessor extends FrameProcessor {
  constructor(private readonly sink: OutputSink) {
    super('transport_out');
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (dir === 'downstream') {
      if (frame.kind === 'bot_audio') return this.sink.sendAudio(frame.pcm);
      if (frame.kind === 'transport_message') return this.sink.sendMessage(frame.msg);
      if (frame.kind === 'end_call') return this.sink.onEndCall();
    }
    this.push(frame, dir);
  }

  protected override onInterrupt(): void {
    this.sink.interrupt?.();
  }
}
