// One call: its pipeline, its transport, its recording and its lifecycle reports. Whatever happens
// inside (a provider failing, the caller vanishing, storage down) ends in exactly one terminal
// event, and nothing in one call can throw into another.
import path from 'node:path';
import { MAX_TRANSCRIPT_ENTRIES, type RuntimeConfig, type TranscriptEntry } from '@voice-platform/schemas';
import type { BackendClient } from '../backend.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Frame } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import type { CallProviders } from '../providers.js';
import { LlmProcessor, sentencesOf } from '../llm/llm.js';
import { SttProcessor } from '../stt/stt.js';
import { TtsProcessor } from '../tts/tts.js';
import { VadProcessor } from '../vad/vad.js';
import { OutputProcessor, type TurnTiming } from '../transports/output.js';
import { TransportInputProcessor, TransportOutputProcessor } from '../transports/io.js';
import type { CallTransport, ServerMessage } from '../transports/transport.js';
import { callEndFor, type CallEnd } from '../providers/errors.js';
import { CallRecorder, RecordingError, recordingKey, saveRecording, type RecordingStore } from './recording.js';
import { RecorderProcessor } from './recording/processor.js';

export type EndStatus = 'completed' | 'failed';

/** End reasons the session itself decides (docs/design.md §7); hang-ups come from the transport. */
export const END_REASONS = { botHangup: 'bot_hangup', maxDuration: 'max_duration', callerIdle: 'caller_idle' } as const;

export interface CallObserver {
  onTurn?(callId: string, t: TurnTiming): void;
  onFrameGap?(ms: number): void;
  onEnded?(callId: string, reason: string): void;
}

export interface CallDeps {
  backend: BackendClient;
  storage: RecordingStore | null;
  metrics: Metrics;
  logger: Logger;
  sampleRate: number;
  /** Each call's track files go to `<recordingDir>/<call_id>/` until the upload. */
  recordingDir: string;
  /** A test call (WebSocket or browser) with no caller audio for this long ends `caller_idle`. */
  testCallIdleTimeoutMs?: number;
  observer?: CallObserver;
}

export interface CallResult {
  status: EndStatus;
  reason: string;
  recordingKey: string | null;
  recordingError: string | null;
}

export class CallSession {
  readonly callId: string;
  private pipeline: Pipeline | null = null;
  private input: TransportInputProcessor | null = null;
  private transport: CallTransport | null = null;
  private preparing: Promise<void> | null = null;
  private recorder: CallRecorder | null = null;
  private startedAt = new Date();
  private maxTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** When the caller's audio last arrived (performance.now()); frames of silence count, only no frames is idle. */
  private lastAudioAt = 0;
  private ended = false;
  private readonly log: Logger;
  readonly turns: TurnTiming[] = [];
  /** Final transcripts in order, reported with the call's end. */
  readonly transcript: TranscriptEntry[] = [];
  private resolveDone!: (r: CallResult) => void;
  /** Resolves when the call has ended and everything about it is reported (and uploaded). */
  readonly done: Promise<CallResult>;

  constructor(
    readonly config: RuntimeConfig,
    private readonly providers: CallProviders,
    private readonly deps: CallDeps,
  ) {
    this.callId = config.call!.id;
    this.log = deps.logger.child({ call_id: this.callId, bot_id: config.bot.id });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  get active(): boolean {
    return !this.ended;
  }

  /**
   * Everything that needs no caller: the pipeline, started (its start frame opens the providers' sessions),
   * and the greeting's first sentence synthesised ahead (a dial-out does this before it dials, so the callee
   * hears the bot as soon as they answer). A provider refusing the call fails here, before anyone's phone rings.
   */
  prepare(): Promise<void> {
    this.preparing ??= this.build();
    return this.preparing;
  }

  /** A prepared call that never started (nobody answered): its provider sessions close. */
  discard(): void {
    if (!this.transport) this.pipeline?.cancel('not_started');
  }

  private async build(): Promise<void> {
    const { bot } = this.config;
    const rate = this.deps.sampleRate;
    const stt = new SttProcessor(this.providers.stt, rate, this.providers.retry);
    const tts = new TtsProcessor(this.providers.tts, rate, this.providers.retry);
    const o = this.deps.observer;
    this.input = new TransportInputProcessor(rate);
    const output = new OutputProcessor(rate, {
      onTurn: (t) => {
        this.turns.push(t);
        this.deps.metrics.turnLatency.observe(t.latencyMs / 1000);
        this.deps.metrics.turnOverhead.observe(Math.max(0, t.overheadMs) / 1000);
        o?.onTurn?.(this.callId, t);
      },
      onProviderTime: (stage, provider, ms) => this.deps.metrics.providerLatency.observe({ stage, provider }, ms / 1000),
      onFrameGap: (ms) => o?.onFrameGap?.(ms),
    });
    // The call's processors in order; the README's frame map shows the same list.
    this.pipeline = new Pipeline(
      [
        this.input,
        new RecorderProcessor('user', () => this.recorder),
        new VadProcessor(this.providers.vad, rate, { endOfTurnSilenceMs: bot.turn_detection?.end_of_turn_silence_ms ?? 700 }),
        stt,
        new LlmProcessor(this.providers.llm, bot.prompt, this.providers.retry),
        tts,
        output,
        new RecorderProcessor('bot', () => this.recorder),
        new TransportOutputProcessor({
          sendAudio: (pcm) => this.transport?.sendAudio(pcm),
          sendMessage: (msg) => this.toCaller(msg),
          interrupt: () => this.transport?.interrupt?.(),
          onEndCall: () => void this.end(END_REASONS.botHangup, 'completed'),
        }),
      ],
      { upstream: (f) => this.onUpstream(f) },
    );
    // The start frame opens the stages' provider sessions (the STT's); a refusal fails the call here.
    try {
      await this.pipeline.start();
    } catch (err) {
      this.pipeline.cancel('not_started');
      throw err;
    }
    const first = sentencesOf(bot.greeting.trim())[0];
    if (first) tts.prepare(first);
  }

  /** The caller is there (connected, or the callee answered): the call runs on `transport`. */
  async start(transport: CallTransport): Promise<void> {
    await this.prepare();
    this.transport = transport;
    const { bot } = this.config;
    const rate = this.deps.sampleRate;
    this.startedAt = new Date();
    this.recorder = new CallRecorder(rate, performance.now(), {
      dir: path.join(this.deps.recordingDir, this.callId),
      // Logged and counted when it happens (it may be an hour before the call ends); reported at the end.
      onError: (err) => {
        this.deps.metrics.recordingStageFailures.inc({ stage: 'disk' });
        this.log.error({ err: err.message, cause: err.cause instanceof Error ? err.cause.message : String(err.cause) }, 'recording write failed');
      },
    });
    transport.attach({
      onAudio: (pcm) => this.onAudio(pcm),
      onHangup: (reason) => void this.end(reason, 'completed'),
    });
    void this.report({ status: 'in_progress', at: this.startedAt.toISOString() });
    transport.sendMessage({ type: 'started', call_id: this.callId });
    this.maxTimer = setTimeout(() => void this.end(END_REASONS.maxDuration, 'completed'), bot.max_call_seconds * 1000);
    const idleMs = this.deps.testCallIdleTimeoutMs;
    const direction = this.config.call?.direction;
    if (idleMs && (direction === 'websocket' || direction === 'web')) {
      // A test call nobody talks into (a forgotten tab, an idle socket) must not hold a slot for max_call_seconds.
      this.lastAudioAt = performance.now();
      this.idleTimer = setInterval(() => {
        if (performance.now() - this.lastAudioAt >= idleMs) void this.end(END_REASONS.callerIdle, 'completed');
      }, Math.min(1000, idleMs / 5));
      this.idleTimer.unref();
    }
    if (bot.greeting.trim()) this.pipeline!.push({ kind: 'say', text: bot.greeting.trim() });
    this.log.info({ direction: this.config.call?.direction, stt: this.providers.stt.name, llm: this.providers.llm.name, tts: this.providers.tts.name }, 'call started');
  }

  /** Every message to the caller passes here; final transcripts are kept for the call record. */
  private toCaller(msg: ServerMessage): void {
    if (msg.type === 'transcript' && msg.final && msg.text.trim() && this.transcript.length < MAX_TRANSCRIPT_ENTRIES) {
      this.transcript.push({ role: msg.role, text: msg.text.slice(0, 4000), at: new Date().toISOString() });
    }
    this.transport?.sendMessage(msg);
  }

  private onAudio(pcm: Int16Array): void {
    if (this.ended || !this.input) return;
    const now = performance.now();
    this.lastAudioAt = now;
    this.input.receive(pcm, now);
  }

  private onUpstream(frame: Frame): void {
    if (frame.kind !== 'error') return;
    this.log.warn({ code: frame.code, source: frame.source, fatal: frame.fatal, err: frame.message }, 'pipeline error');
    this.deps.metrics.providerErrors.inc({ code: frame.code });
    this.transport?.sendMessage({ type: 'error', code: frame.code, message: frame.message });
    if (frame.fatal) void this.end(callEndFor(frame.code, 'in_call'), 'failed');
  }

  /** Ends the call (idempotent): stop the pipeline, tell the caller, report, upload the recording. */
  async end(how: string | CallEnd, status: EndStatus): Promise<CallResult> {
    if (this.ended) return this.done;
    this.ended = true;
    const { endReason: reason, closeCode } = typeof how === 'string' ? { endReason: how, closeCode: 1000 } : how;
    if (this.maxTimer) clearTimeout(this.maxTimer);
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.pipeline?.cancel(reason);
    const endedAt = new Date();
    const endedPerf = performance.now();
    this.transport?.sendMessage({ type: 'ended', reason });
    this.transport?.close(closeCode, reason.slice(0, 100));
    this.deps.metrics.callsTotal.inc({ result: status === 'completed' ? reason : 'failed' });
    this.deps.observer?.onEnded?.(this.callId, reason);
    this.log.info({ reason, status, duration_ms: endedAt.getTime() - this.startedAt.getTime() }, 'call ended');
    await this.report({ status, end_reason: reason, at: endedAt.toISOString(), ...(this.transcript.length ? { transcript: this.transcript } : {}) });

    let key: string | null = null;
    let recordingError: string | null = null;
    if (this.recorder) {
      const candidate = recordingKey(this.callId, this.startedAt);
      try {
        await saveRecording(this.recorder, this.deps.storage, candidate, endedPerf);
        key = candidate;
      } catch (err) {
        const e = err instanceof RecordingError ? err : new RecordingError('upload', err);
        recordingError = e.message;
        if (e.stage === 'upload') {
          this.deps.metrics.recordingFailures.inc();
          this.deps.metrics.recordingStageFailures.inc({ stage: 'upload' });
          this.log.error({ err: recordingError }, 'recording upload failed');
        } // a disk failure was logged and counted when it happened
      }
      await this.report(key ? { status, recording_key: key } : { status, recording_error: recordingError! });
    }
    const result: CallResult = { status, reason, recordingKey: key, recordingError };
    this.resolveDone(result);
    return result;
  }

  private reports: Promise<unknown> = Promise.resolve();
  /** Events go out one after another, so the backend sees them in the order they happened. */
  private report(event: Parameters<BackendClient['postEvent']>[1]): Promise<void> {
    const next = this.reports.then(() => this.send(event));
    this.reports = next;
    return next;
  }

  private async send(event: Parameters<BackendClient['postEvent']>[1]): Promise<void> {
    const ok = await this.deps.backend.postEvent(this.callId, event);
    if (!ok) {
      this.deps.metrics.eventFailures.inc();
      this.log.warn({ status: event.status }, 'call event not accepted by the backend');
    }
  }
}
