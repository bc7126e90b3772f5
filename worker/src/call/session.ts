// One call: builds its pipeline, runs it on the caller's transport, and handles its end. The call's
// other jobs are units of their own: limits.ts (max duration, idle), the worker's outbox (outbox.ts: events
// to the backend, in order, kept until taken), recording/call.ts (the recording and its upload). Whatever happens inside (a provider
// failing, the caller vanishing, storage down) ends in exactly one terminal event, and nothing in one
// call can throw into another.
import path from 'node:path';
import { LISTEN_END, LISTEN_SIDE, MAX_CALL_ACTIONS, MAX_TRANSCRIPT_ENTRIES, MAX_TURN_LATENCIES, MAX_TURN_LATENCY_MS, renderTemplate, type CallAction, type CallControlMessage, type CallEvent, type CallTransfer, type CallTurn, type RuntimeConfig, type TranscriptEntry } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../core/metrics.js';
import type { WorkerTracing } from '../core/tracing.js';
import type { Frame, ServerMessage } from '../pipeline/frames.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { LlmProcessor, sentencesOf } from '../llm/llm.js';
import { SttProcessor } from '../stt/stt.js';
import { completeUtterance } from '../stt/turns.js';
import { speak, TtsProcessor } from '../tts/tts.js';
import { VadProcessor } from '../vad/vad.js';
import { NoiseSuppressionProcessor } from '../noise/processor.js';
import { OutputProcessor, type TurnTiming } from '../transports/output.js';
import { TransportInputProcessor, TransportOutputProcessor } from '../transports/io.js';
import type { CallTransport, TransferOutcome } from '../transports/transport.js';
import { callEndFor, type CallEnd } from '../providers/errors.js';
import type { RetryPolicy } from '../providers/retry.js';
import type { SttProvider } from '../stt/stt.js';
import type { LlmProvider } from '../llm/llm.js';
import type { TtsProvider } from '../tts/tts.js';
import type { VadEngine } from '../vad/vad.js';
import type { NoiseSuppressor } from '../noise/rnnoise.js';
import { CallRecording, recordingKey, type RecordingOutcome, type RecordingStore } from './recording.js';
import { RecorderProcessor } from './recording/processor.js';
import { CallLimits, LIMIT_REASONS } from './limits.js';
import { McpTools, mcpServersOf } from '../tools/mcp.js';
import { toolRunnerFor, toolsOf, ToolError, type ToolConfig, type ToolRunner, type TransferDestination } from '../tools/runner.js';
import { HoldTone } from './holdTone.js';
import { AmdDetector, type AmdDecision, type AnsweredBy } from '../amd/detector.js';
import { createWebRtcVad } from '../vad/webrtc.js';
import { DEFAULT_INTER_DIGIT_TIMEOUT_MS, KeypadProcessor, type KeypadTurn } from '../transports/keypad.js';
import { CallRedaction, RedactProcessor } from './redaction.js';
import { FlowState, policyWithFlow } from '../flow/flow.js';
import { DEFAULT_HANDOFF_FAILURE, HANDOFF_CONTEXTS, HANDOFF_TOOL, type HandoffContext } from '@voice-platform/schemas';
import type { HandoffOutcome, LlmCallHooks, ToolSpec } from '../llm/llm.js';

/** What a call runs on: each stage's provider for its bot (app/providers.ts picks them). */
export interface CallProviders {
  vad: VadEngine;
  stt: SttProvider;
  llm: LlmProvider;
  tts: TtsProvider;
  /** The bot's `audio.noise_suppression`: this call's RNNoise state (absent: the caller's audio goes to the VAD as is). */
  noise?: NoiseSuppressor;
  /** How every stage retries its provider. */
  retry: RetryPolicy;
  /** The bot's HTTP tools may call non-public addresses (TOOLS_ALLOW_PRIVATE_ADDRESSES; absent: no). */
  toolsAllowPrivate?: boolean;
}

export type EndStatus = 'completed' | 'failed';

/** End reasons the session itself decides (docs/design.md §7); hang-ups come from the transport. */
export const END_REASONS = { botHangup: 'bot_hangup', supervisorEnded: 'supervisor_ended', transferred: 'transferred', voicemail: 'voicemail', voicemailLeft: 'voicemail_left', fax: 'fax', ...LIMIT_REASONS } as const;

/** A bot's answering machine settings (docs/design.md §10), as its runtime config carries them. */
export interface AnsweringMachineSettings {
  detect: boolean;
  on_machine: 'hangup' | 'leave_message';
  message: string;
  max_wait_for_beep_seconds: number;
}
/** Wall-clock bounds on the screening (the detector's clock is the audio's): no voice at all, and at most. */
const SCREENING_MAX_SILENT_MS = 3500;
const SCREENING_MAX_MS = 12_000;
/** A key's tone on the caller's channel, around the key's event: silenced when the bot redacts keypad tones. */
const KEY_TONE_BEFORE_MS = 40;
const KEY_TONE_AFTER_MS = 300;

export interface CallObserver {
  onTurn?(callId: string, t: TurnTiming): void;
  onFrameGap?(ms: number): void;
  onEnded?(callId: string, reason: string): void;
}

export interface CallDeps {
  /** The call's turn and tool spans (core/tracing.ts); absent: none. */
  tracing?: WorkerTracing;
  /** Hands a call event to the worker's outbox; never waits for the backend. */
  report(callId: string, event: CallEvent): void;
  storage: RecordingStore | null;
  metrics: Metrics;
  logger: Logger;
  sampleRate: number;
  /** Each call's track files go to `<recordingDir>/<call_id>/` until the upload. */
  recordingDir: string;
  /** A test call (WebSocket or browser) with no caller audio for this long ends `caller_idle`. */
  testCallIdleTimeoutMs?: number;
  observer?: CallObserver;
  /** Publishes a frame for the call's listeners (schemas LISTEN_SIDE + PCM, or LISTEN_END); none: nobody can listen. */
  listen?(callId: string, frame: Buffer): void;
  /** The best passages of the bot's knowledge bases for a turn's words (the backend's retrieval); none: no knowledge. */
  knowledge?(botId: string, query: string): Promise<string[]>;
  /** Handoffs (shared/DESIGN.md §18): another bot's runtime config and providers; none: handoffs fail (on_failure). */
  handoff?: { config(botId: string): Promise<RuntimeConfig>; providers(cfg: RuntimeConfig): Promise<CallProviders> };
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
  private recording: CallRecording | null = null;
  private limits: CallLimits | null = null;
  private startedAt = new Date();
  private ended = false;
  private readonly log: Logger;
  /** The bot's redaction (shared/DESIGN.md §16): applied to all the call stores, reports and logs. */
  private readonly redaction: CallRedaction;
  readonly turns: TurnTiming[] = [];
  /** Final transcripts in order, reported with the call's end. */
  readonly transcript: TranscriptEntry[] = [];
  /** The bot's tools for this call; its `actions` are reported with the call's end. */
  private tools: ToolRunner | null = null;
  /** The MCP servers' sessions of the call's bots, closed when the call ends. */
  private readonly mcp: McpTools[] = [];
  /** Supervisors' controls, as actions on the call's timeline (docs/design.md §16). */
  private readonly controls: CallAction[] = [];
  /** Epoch ms until which the call's audio goes to listeners (0: nobody listens). */
  private listenUntilMs = 0;
  /** The call's transfer to a person, once one was tried (reported with the call's end). */
  private transferRecord: CallTransfer | null = null;
  /** A transfer under way: a hang-up meanwhile waits for its outcome (a cold transfer's caller leaves when it works). */
  private transferring: Promise<unknown> | null = null;
  /** The caller was handed to a person: however the bot's side ends now, it ends `transferred`. */
  private handedOff = false;
  /** Answering machine detection: listening before the greeting (outbound SIP calls of bots that detect). */
  private screening: AmdDetector | null = null;
  /** The caller's audio goes to the pipeline (false while screening, and while a machine is dealt with). */
  private hearing = true;
  private amd: { answered_by: AnsweredBy; amd_ms: number } | null = null;
  /** The message left on a machine is being said: its end is `voicemail_left`. */
  private leavingMessage = false;
  /** The bot the call is with now (a handoff changes it): its prompt, tools, flow and handoff settings. */
  private bot: RuntimeConfig['bot'];
  /** The call's variables (a handoff may add some). */
  private variables: Record<string, string>;
  /** The flow of the bot the call is with (null: none). */
  private flow: FlowState | null = null;
  /** Flows of the bots the call was with before, for their node entries on the timeline. */
  private readonly pastFlows: FlowState[] = [];
  /** Tool runners of earlier bots (their actions are the call's). */
  private readonly pastTools: ToolRunner[] = [];
  /** Handoffs, as actions on the call's timeline. */
  private readonly handoffs: CallAction[] = [];
  private resolveDone!: (r: CallResult) => void;
  /** Resolves when the call has ended, its recording is uploaded and every event is handed to the outbox
   *  (which may still be retrying them: the call's lease stays until it has delivered them). */
  readonly done: Promise<CallResult>;

  constructor(
    readonly config: RuntimeConfig,
    private readonly providers: CallProviders,
    private readonly deps: CallDeps,
  ) {
    this.callId = config.call!.id;
    this.bot = config.bot;
    this.variables = { ...(config.call?.variables ?? {}) };
    this.redaction = new CallRedaction(config.bot.redaction);
    this.log = this.redaction.logger(deps.logger.child({ call_id: this.callId, bot_id: config.bot.id }));
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
    if (!this.transport) {
      this.pipeline?.cancel('not_started');
      for (const m of this.mcp) void m.close();
    }
  }

  private async build(): Promise<void> {
    const { bot } = this.config;
    const rate = this.deps.sampleRate;
    // Turn-taking (docs/design.md §11). Configs from before the settings existed (a cached one, an older backend) lack them.
    const td = bot.turn_detection as Partial<typeof bot.turn_detection> | undefined;
    const smart = (td?.mode ?? 'smart') === 'smart';
    const interruption = (bot.interruption as typeof bot.interruption | undefined) ?? { ignore_backchannels: true, min_words: 2 };
    const wholePolicy = policyWithFlow(bot.policy, bot.flow);
    const stt = new SttProcessor(this.providers.stt, rate, this.providers.retry, {
      smart,
      complete: (text) => completeUtterance(wholePolicy, text),
      ignoreBackchannels: interruption.ignore_backchannels,
      minWords: interruption.min_words,
      onTurnEnd: (how) => this.deps.metrics.turnEnds.inc({ how }),
    });
    const tts = new TtsProcessor(this.providers.tts, rate, this.providers.retry);
    const o = this.deps.observer;
    // The recording's taps also feed a supervisor listening in (docs/design.md §16), while one does.
    const tap = {
      writeUser: (pcm: Int16Array, atMs: number) => {
        this.recording?.recorder.writeUser(pcm, atMs);
        this.toListeners(LISTEN_SIDE.caller, pcm);
      },
      writeBot: (pcm: Int16Array, atMs: number) => {
        this.recording?.recorder.writeBot(pcm, atMs);
        this.toListeners(LISTEN_SIDE.bot, pcm);
      },
    };
    const recorder = () => tap;
    this.input = new TransportInputProcessor(rate);
    this.tools = this.toolsFor(this.config);
    await this.connectMcp(bot, this.tools);
    this.flow = this.flowFor(bot);
    this.providers.llm.follow?.(this.flow);
    // Configs from before the setting existed (a cached one, an older backend) have none.
    const interDigitMs = (bot.dtmf as typeof bot.dtmf | undefined)?.inter_digit_timeout_ms ?? DEFAULT_INTER_DIGIT_TIMEOUT_MS;
    const output = new OutputProcessor(rate, {
      onTurn: (t) => {
        this.turns.push(t);
        this.deps.tracing?.turn(this.callId, t);
        this.deps.metrics.turnLatency.observe(t.latencyMs / 1000);
        this.deps.metrics.turnOverhead.observe(Math.max(0, t.overheadMs) / 1000);
        o?.onTurn?.(this.callId, t);
      },
      // Tools are the bot's own endpoints, named by its config: in the turns, not in a metric label.
      onProviderTime: (stage, provider, ms) => stage !== 'tool' && this.deps.metrics.providerLatency.observe({ stage, provider }, ms / 1000),
      onFrameGap: (ms) => o?.onFrameGap?.(ms),
    });
    // The call's processors in order; the README's frame map shows the same list.
    this.pipeline = new Pipeline(
      [
        this.input,
        new KeypadProcessor(interDigitMs, (t) => this.onKeypadTurn(t)),
        new RecorderProcessor('user', recorder),
        // The bot's audio.noise_suppression: the VAD and the STT hear the caller denoised (the recording as sent).
        ...(this.providers.noise ? [new NoiseSuppressionProcessor(this.providers.noise)] : []),
        new VadProcessor(this.providers.vad, rate, {
          endOfTurnSilenceMs: td?.end_of_turn_silence_ms ?? 700,
          minSilenceMs: td?.min_silence_ms ?? 250,
          smart,
          ignoreBackchannels: interruption.ignore_backchannels,
        }),
        stt,
        // redact_llm: the model gets the caller's words (and keys) masked too.
        ...(this.redaction.llm ? [new RedactProcessor(this.redaction)] : []),
        new LlmProcessor(this.providers.llm, bot.prompt, this.providers.retry, this.tools, (outcome) => this.deps.metrics.preemptiveReplies.inc({ outcome }), this.llmHooks()),
        tts,
        output,
        new RecorderProcessor('bot', recorder),
        new TransportOutputProcessor({
          sendAudio: (pcm) => this.transport?.sendAudio(pcm),
          sendMessage: (msg) => this.toCaller(msg),
          interrupt: () => this.transport?.interrupt?.(),
          onEndCall: () => void this.end(this.leavingMessage ? END_REASONS.voicemailLeft : END_REASONS.botHangup, 'completed'),
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

  /** A bot's tools for this call (the call's identity, the bot's id). */
  private toolsFor(cfg: RuntimeConfig): ToolRunner {
    return toolRunnerFor({ bot: cfg.bot, call: this.config.call ? { ...this.config.call, variables: this.variables } : null }, {
      allowPrivate: this.providers.toolsAllowPrivate ?? false,
      logger: this.log,
      keypad: (digits, signal) => this.sendKeys(digits, signal),
      transfer: (req) => this.transfer(req.tool, req.destination, req.spoken, req.signal),
      render: (text) => renderTemplate(text, this.variables),
      tracing: this.deps.tracing,
    });
  }

  /** A bot's MCP servers (shared/DESIGN.md §18): their tools listed once, for this call (and again for a bot handed to). */
  private async connectMcp(bot: RuntimeConfig['bot'], tools: ToolRunner): Promise<void> {
    const servers = mcpServersOf((bot as { mcp_servers?: unknown }).mcp_servers);
    if (!servers.length) return;
    const mcp = await McpTools.connect(servers, { allowPrivate: this.providers.toolsAllowPrivate ?? false, logger: this.log, reserved: new Set(toolsOf(bot.tools).map((t) => t.name)) });
    this.mcp.push(mcp);
    tools.attachMcp(mcp);
  }

  private flowFor(bot: RuntimeConfig['bot']): FlowState | null {
    // Configs from before flows existed (an older backend) have none.
    const flow = (bot as { flow?: RuntimeConfig['bot']['flow'] }).flow;
    return flow ? new FlowState(flow, bot.policy?.fallback ?? { reply: 'Sorry, I did not catch that.' }, () => this.variables) : null;
  }

  /** What the LLM stage asks of the call's flow and handoffs (they change at a handoff). */
  private llmHooks(): LlmCallHooks {
    return {
      flow: () => this.flow,
      botPrompt: () => this.bot.prompt,
      handoffSpec: () => {
        const h = (this.bot as { handoff?: RuntimeConfig['bot']['handoff'] }).handoff;
        return h ? handoffSpec(h.bots) : null;
      },
      handoff: (args, signal) => this.handoff(args, signal),
      onEnter: (e) => this.log.info({ node: e.node, end_call: e.endCall }, 'flow node entered'),
      // Each turn's passages of the bot's knowledge bases now (a handoff changes the bot; configs from an older backend have none).
      knowledge: () => {
        const ids = (this.bot as { knowledge_base_ids?: unknown }).knowledge_base_ids;
        const ask = this.deps.knowledge;
        const botId = this.bot.id;
        return ask && Array.isArray(ids) && ids.length ? (text) => ask(botId, text) : null;
      },
    };
  }

  /**
   * The built-in handoff (shared/DESIGN.md §18): the other bot's config and providers; taken, the call goes on with
   * them in this session (the LLM stage switches; its voice from the next sentence), the variables added. A bot
   * not listed, missing, inactive or unreachable: `on_failure`, and the call goes on with this bot.
   */
  private async handoff(argsText: string, signal: AbortSignal): Promise<HandoffOutcome> {
    const started = performance.now();
    const from = this.bot;
    const settings = (from as { handoff?: RuntimeConfig['bot']['handoff'] }).handoff;
    const action: CallAction = { type: 'handoff', name: HANDOFF_TOOL, at: new Date().toISOString(), duration_ms: 0, status: 'ok', arguments: { from_bot_id: from.id } };
    this.handoffs.push(action);
    const fail = (code: string, message: string): HandoffOutcome => {
      action.status = 'failed';
      action.error = code;
      action.duration_ms = Math.round(performance.now() - started);
      this.log.info({ code, err: message.slice(0, 200) }, 'handoff failed');
      return { output: JSON.stringify({ error: code }), say: renderTemplate(settings?.on_failure ?? DEFAULT_HANDOFF_FAILURE, this.variables) };
    };
    let args: { bot_id?: unknown; context?: unknown; variables?: unknown };
    try {
      args = argsText.trim() ? (JSON.parse(argsText) as typeof args) : {};
    } catch {
      return fail('invalid_arguments', 'arguments are not JSON');
    }
    const botId = typeof args.bot_id === 'string' ? args.bot_id : '';
    const context: HandoffContext = HANDOFF_CONTEXTS.includes(args.context as HandoffContext) ? (args.context as HandoffContext) : 'all';
    const passed = args.variables && typeof args.variables === 'object' && !Array.isArray(args.variables) ? Object.fromEntries(Object.entries(args.variables).filter(([, v]) => typeof v === 'string')) as Record<string, string> : {};
    Object.assign(action.arguments!, { bot_id: botId, context, ...(Object.keys(passed).length ? { variables: passed } : {}) });
    if (!settings?.bots.includes(botId)) return fail('not_allowed', `bot ${botId} is not one this bot may hand off to`);
    if (!this.deps.handoff) return fail('unavailable', 'this worker cannot hand off');
    let next: RuntimeConfig;
    let made: CallProviders;
    try {
      const variables = { ...this.variables, ...passed };
      const raw = await this.deps.handoff.config(botId);
      // Read with its templates as written: rendered here with the call's variables and those passed on.
      next = { ...raw, bot: { ...raw.bot, prompt: renderTemplate(raw.bot.prompt, variables), greeting: renderTemplate(raw.bot.greeting, variables) } };
      made = await this.deps.handoff.providers({ ...next, call: this.config.call ? { ...this.config.call, variables } : null });
    } catch (err) {
      const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'unavailable';
      return fail(code, err instanceof Error ? err.message : String(err));
    }
    // Only its model and voice are used: the call keeps its line, VAD and recogniser.
    made.vad.close();
    if (signal.aborted || this.ended) return fail('cancelled', 'the call ended');
    Object.assign(this.variables, passed);
    this.pastTools.push(this.tools!);
    if (this.flow) this.pastFlows.push(this.flow);
    this.bot = next.bot;
    this.tools = this.toolsFor(next);
    await this.connectMcp(next.bot, this.tools);
    this.flow = this.flowFor(next.bot);
    made.llm.follow?.(this.flow);
    action.result = JSON.stringify({ bot_id: next.bot.id, name: next.bot.name }).slice(0, 1000);
    action.duration_ms = Math.round(performance.now() - started);
    this.log.info({ from_bot_id: from.id, to_bot_id: next.bot.id, context }, 'handed off');
    const greeting = settings.greeting !== false ? renderTemplate(next.bot.greeting, this.variables).trim() : '';
    return {
      output: JSON.stringify({ ok: true, bot_id: next.bot.id }),
      ...(greeting ? { say: greeting } : {}),
      next: { provider: made.llm, tools: this.tools, context, voice: made.tts },
    };
  }

  /** The caller is there (connected, or the callee answered): the call runs on `transport`. */
  async start(transport: CallTransport): Promise<void> {
    await this.prepare();
    this.transport = transport;
    const { bot } = this.config;
    const rate = this.deps.sampleRate;
    this.startedAt = new Date();
    // recording.enabled false: none is made, so none is uploaded or reported (configs from before the setting record).
    if (bot.recording?.enabled !== false) this.recording = new CallRecording(rate, performance.now(), path.join(this.deps.recordingDir, this.callId), this.deps.metrics, this.log);
    transport.attach({
      onAudio: (pcm) => this.onAudio(pcm),
      onHangup: (reason) => void this.hungUp(reason),
      onDtmf: (digits) => this.onDtmf(digits),
    });
    this.deps.report(this.callId, { status: 'in_progress', at: this.startedAt.toISOString() });
    transport.sendMessage({ type: 'started', call_id: this.callId });
    const direction = this.config.call?.direction;
    // A test call nobody talks into (a forgotten tab, an idle socket) must not hold a slot for max_call_seconds.
    const testCall = direction === 'websocket' || direction === 'web';
    this.limits = new CallLimits(
      { maxCallMs: bot.max_call_seconds * 1000, idleTimeoutMs: testCall ? this.deps.testCallIdleTimeoutMs : undefined },
      (reason) => void this.end(reason, 'completed'),
    );
    this.limits.start();
    // Configs from before the setting existed (an older backend) have none.
    const am = bot.answering_machine as AnsweringMachineSettings | undefined;
    if (am?.detect && direction === 'outbound' && transport.kind === 'sip') {
      // Listen first: a person is greeted at once, a machine gets the bot's on_machine.
      this.screening = new AmdDetector(await createWebRtcVad(), rate);
      this.hearing = false;
      void this.screen(this.screening, am);
    } else this.greet();
    this.log.info({ direction: this.config.call?.direction, stt: this.providers.stt.name, llm: this.providers.llm.name, tts: this.providers.tts.name }, 'call started');
  }

  private greet(): void {
    const greeting = this.config.bot.greeting.trim();
    if (greeting && !this.ended) this.pipeline!.push({ kind: 'say', text: greeting });
  }

  /** Answering machine detection: the verdict, then the greeting (a person) or the bot's on_machine. */
  private async screen(detector: AmdDetector, am: AnsweringMachineSettings): Promise<void> {
    // A line that brings no audio at all still gets a verdict; one that talks gets the detector's in time.
    const silent = setTimeout(() => detector.silent(), SCREENING_MAX_SILENT_MS);
    const bound = setTimeout(() => detector.stop(), SCREENING_MAX_MS);
    const decision = await detector.decided;
    clearTimeout(silent);
    clearTimeout(bound);
    if (this.ended) return;
    this.noteVerdict(decision);
    if (decision.answeredBy === 'fax') return void this.end({ endReason: END_REASONS.fax, closeCode: 1000 }, 'failed');
    if (decision.answeredBy === 'machine') return this.onMachine(detector, am);
    // A person (or nobody yet): greeted at once; the detector listens on for a machine's late beep.
    this.hearing = true;
    this.greet();
    const revised = await Promise.race([detector.revised, this.done.then(() => null)]);
    if (!revised || this.ended) return;
    this.log.info({ rule: revised.rule, amd_ms: Math.round(revised.atMs) }, 'answering machine: a beep after the greeting began');
    this.noteVerdict(revised);
    // What the bot was saying goes to the machine's recording: stopped, then on_machine.
    this.pipeline?.push({ kind: 'interruption' });
    await this.onMachine(detector, am);
  }

  private noteVerdict(d: AmdDecision): void {
    this.amd = { answered_by: d.answeredBy, amd_ms: Math.round(d.atMs) };
    this.deps.metrics.amdTotal.inc({ result: d.answeredBy });
    this.deps.metrics.amdDecision.observe(d.atMs / 1000);
    this.log.info({ answered_by: d.answeredBy, rule: d.rule, amd_ms: Math.round(d.atMs) }, 'answering machine detection');
  }

  /** A machine answered: hang up, or leave the message once its beep (or greeting) is over. */
  private async onMachine(detector: AmdDetector, am: AnsweringMachineSettings): Promise<void> {
    this.hearing = false;
    const message = renderTemplate(am.message.trim(), this.config.call?.variables ?? {}).trim();
    if (am.on_machine !== 'leave_message' || !message) return void this.end(END_REASONS.voicemail, 'completed');
    const cue = await Promise.race([detector.messageCue(am.max_wait_for_beep_seconds * 1000), this.done.then(() => null)]);
    if (!cue || this.ended) return;
    this.log.info({ cue }, 'answering machine: leaving the message');
    this.leavingMessage = true;
    this.pipeline!.push({ kind: 'say', text: message, endCall: true });
  }

  /** Every message to the caller passes here; final transcripts are kept for the call record. */
  private toCaller(msg: ServerMessage): void {
    // Masked before it is kept or sent (the live transcript too): what the bot redacts never leaves the worker.
    if (msg.type === 'transcript') msg = { ...msg, text: this.redaction.text(msg.text) };
    if (msg.type === 'transcript' && msg.final && msg.text.trim() && this.transcript.length < MAX_TRANSCRIPT_ENTRIES) {
      this.transcript.push({ role: msg.role, text: msg.text.slice(0, 4000), at: new Date().toISOString(), ...(msg.dtmf ? { dtmf: true } : {}) });
    }
    this.transport?.sendMessage(msg);
  }

  private onAudio(pcm: Int16Array): void {
    if (this.ended || !this.input) return;
    const now = performance.now();
    this.limits?.heard(now);
    // The detector hears the call from the answer on (after a person's verdict too: a late beep revises it).
    if (this.screening?.listening) this.screening.push(pcm);
    if (this.hearing) this.input.receive(pcm, now);
    // Unheard by the bot (a machine's greeting), but on the recording all the same.
    else this.recording?.recorder?.writeUser(pcm, now);
  }

  /** Keys the caller pressed: into the pipeline (the keypad stage collects them into a turn). */
  private onDtmf(digits: string): void {
    if (this.ended || !this.input) return;
    const now = performance.now();
    this.limits?.heard(now);
    // recording.redact_keypad_tones: the caller's channel is silent around each key (its tone is the key).
    if (this.config.bot.recording?.redact_keypad_tones) this.recording?.recorder.silenceUser(now - KEY_TONE_BEFORE_MS, now + KEY_TONE_AFTER_MS);
    for (const d of digits) this.input.receiveDtmf(d, now);
  }

  /** A keypad turn is one of the call's actions (dtmf_in). */
  private onKeypadTurn(t: KeypadTurn): void {
    this.tools?.record({ type: 'dtmf_in', name: 'keypad', at: t.startedAt.toISOString(), duration_ms: t.durationMs, status: 'ok', arguments: { digits: t.digits }, result: null, error: null });
  }

  /** send_dtmf: the keys go out on the call's line (WebSocket and browser calls have none: logged), and into the transcript. */
  private async sendKeys(digits: string, signal?: AbortSignal): Promise<void> {
    if (this.ended) throw new Error('the call has ended');
    if (this.transport?.sendDtmf) await this.transport.sendDtmf(digits, signal);
    else this.log.info({ keys: digits.length, transport: this.transport?.kind }, 'keys not sent: the transport has no keypad');
    this.toCaller({ type: 'transcript', role: 'bot', text: digits, final: true, dtmf: true });
  }

  /** The caller's side is gone; during a transfer, its outcome decides what the end is called. */
  private async hungUp(reason: string): Promise<void> {
    if (this.transferring) {
      await this.transferring;
      // After the tool run has recorded the transfer action (it resolves with the transfer).
      await new Promise((resolve) => setImmediate(resolve));
    }
    void this.end(reason, 'completed');
  }

  /** transfer_call (docs/design.md §9): resolves once the caller was handed over, else throws a transfer_failed ToolError. */
  private async transfer(tool: ToolConfig, destination: TransferDestination, spoken: Promise<void>, signal?: AbortSignal): Promise<{ sipStatusCode: number | null }> {
    const run = this.handOver(tool, destination, spoken, signal);
    this.transferring = run.catch(() => undefined);
    try {
      return await run;
    } finally {
      this.transferring = null;
    }
  }

  private async handOver(tool: ToolConfig, destination: TransferDestination, spoken: Promise<void>, signal?: AbortSignal): Promise<{ sipStatusCode: number | null }> {
    const mode = tool.mode ?? 'cold';
    const target = destination.number ?? destination.sip_uri ?? '';
    const at = new Date().toISOString();
    // The announcement first, as the caller hears it (a barge-in or the call's end cuts it short).
    await Promise.race([spoken, new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }))]);
    const transport = this.transport;
    if (this.ended || signal?.aborted || !transport) throw new ToolError('cancelled', 'the call ended');
    const callSignal = signal ?? new AbortController().signal;
    let outcome: TransferOutcome;
    if (!transport.transfer) {
      // A test call has no phone line: it ends as a transfer would, and the log says so.
      this.log.info({ mode, transport: transport.kind }, 'transfer not placed: the transport has no phone line');
      outcome = { status: 'accepted', sipStatusCode: null };
    } else if (mode === 'warm') {
      const hold = new HoldTone(this.deps.sampleRate, (pcm) => transport.sendAudio(pcm));
      hold.start();
      try {
        outcome = destination.number
          ? await transport.transfer({ mode: 'warm', number: destination.number, whisper: () => this.whisper(tool.whisper, callSignal), signal: callSignal })
          : { status: 'failed', sipStatusCode: null, detail: 'a warm transfer needs a number' };
      } finally {
        hold.stop();
      }
    } else {
      outcome = await transport.transfer({ mode: 'cold', target: destination.number ? `tel:${destination.number}` : target, signal: callSignal });
    }
    this.transferRecord = { mode, target, status: outcome.status, sip_status_code: outcome.sipStatusCode, at };
    this.log.info({ mode, status: outcome.status, sip_status_code: outcome.sipStatusCode, ...(outcome.detail ? { detail: outcome.detail.slice(0, 200) } : {}) }, 'transfer');
    if (outcome.status === 'failed') throw new ToolError('transfer_failed', `the transfer failed (${outcome.sipStatusCode ?? 'no SIP answer'})`, { sip_status_code: outcome.sipStatusCode });
    this.handedOff = true;
    // The bot's part is over; after the tool run has recorded the action (it resolves first), the call ends.
    setImmediate(() => void this.end(END_REASONS.transferred, 'completed'));
    return { sipStatusCode: outcome.sipStatusCode };
  }

  /** A warm transfer's whisper as audio: the tool's text with the call's {{variables}} and {{summary}} (the caller's turns so far). */
  private async *whisper(text: string | undefined, signal: AbortSignal): AsyncIterable<Int16Array> {
    const summary = this.transcript.filter((t) => t.role === 'user').map((t) => t.text).join(' ');
    const words = renderTemplate(text?.trim() ?? '', { ...(this.config.call?.variables ?? {}), summary }).trim();
    if (!words) return;
    yield* speak(this.providers.tts, words, signal, this.providers.retry, this.deps.sampleRate);
  }

  private onUpstream(frame: Frame): void {
    if (frame.kind !== 'error') return;
    this.log.warn({ code: frame.code, source: frame.source, fatal: frame.fatal, err: frame.message }, 'pipeline error');
    this.deps.metrics.providerErrors.inc({ code: frame.code });
    this.transport?.sendMessage({ type: 'error', code: frame.code, message: frame.message });
    if (frame.fatal) void this.end(callEndFor(frame.code, 'in_call'), 'failed');
  }

  /**
   * A supervisor's control (docs/design.md §16, published by the backend on the call's channel): say now (what the
   * bot was saying is cut short), an instruction the model reads before its next reply, a cold transfer, the end.
   * Each is an action on the call's timeline.
   */
  control(c: CallControlMessage): void {
    if (this.ended || !this.pipeline) return;
    const action: CallAction = { type: 'control', name: c.type, at: new Date().toISOString(), duration_ms: 0, status: 'ok', arguments: { by: c.by, ...(c.text !== undefined ? { text: c.text } : {}), ...(c.to !== undefined ? { to: c.to } : {}) } };
    this.controls.push(action);
    this.log.info({ control: c.type, by: c.by }, 'supervisor control');
    switch (c.type) {
      case 'say':
        this.pipeline.push({ kind: 'interruption' });
        this.pipeline.push({ kind: 'say', text: c.text ?? '' });
        return;
      case 'instruct':
        this.pipeline.push({ kind: 'instruct', text: c.text ?? '' });
        return;
      case 'transfer': {
        const to = c.to ?? '';
        const destination: TransferDestination = to.startsWith('+') ? { name: 'supervisor', number: to } : { name: 'supervisor', sip_uri: to };
        const started = performance.now();
        void this.transfer({ name: 'supervisor_transfer', type: 'transfer_call', mode: 'cold' }, destination, Promise.resolve()).then(
          () => (action.duration_ms = Math.round(performance.now() - started)),
          (err: unknown) => {
            action.status = 'failed';
            action.duration_ms = Math.round(performance.now() - started);
            action.error = (err instanceof Error ? err.message : String(err)).slice(0, 200);
          },
        );
        return;
      }
      case 'end':
        void this.end(END_REASONS.supervisorEnded, 'completed');
    }
  }

  /** Someone listens in (renewed by the backend while they do): both sides' frames are published until `untilMs` (epoch). */
  listen(untilMs: number): void {
    if (!this.ended) this.listenUntilMs = Math.max(this.listenUntilMs, untilMs);
  }

  private toListeners(side: number, pcm: Int16Array): void {
    if (!this.deps.listen || this.listenUntilMs < Date.now()) return;
    const frame = Buffer.allocUnsafe(1 + pcm.byteLength);
    frame[0] = side;
    Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).copy(frame, 1);
    this.deps.listen(this.callId, frame);
  }

  /** Ends the call (idempotent): stop the limits and the pipeline, tell the caller, report, upload the recording. */
  async end(how: string | CallEnd, status: EndStatus): Promise<CallResult> {
    if (this.ended) return this.done;
    this.ended = true;
    this.screening?.stop();
    const asked = typeof how === 'string' ? { endReason: how, closeCode: 1000 } : how;
    // Once the caller was handed to a person, the bot's side ends as the transfer, however it goes.
    const { endReason: reason, closeCode } = this.handedOff ? { endReason: END_REASONS.transferred, closeCode: 1000 } : asked;
    this.limits?.stop();
    this.pipeline?.cancel(reason);
    for (const m of this.mcp) void m.close();
    if (this.listenUntilMs >= Date.now()) this.deps.listen?.(this.callId, Buffer.of(LISTEN_END));
    this.listenUntilMs = 0;
    const endedAt = new Date();
    const endedPerf = performance.now();
    this.transport?.sendMessage({ type: 'ended', reason });
    this.transport?.close(closeCode, reason.slice(0, 100));
    this.deps.metrics.callsTotal.inc({ result: status === 'completed' ? reason : 'failed' });
    this.deps.observer?.onEnded?.(this.callId, reason);
    this.log.info({ reason, status, duration_ms: endedAt.getTime() - this.startedAt.getTime() }, 'call ended');
    const flowActions = [...this.pastFlows, ...(this.flow ? [this.flow] : [])].flatMap((f) => f.entries.map((e): CallAction => ({ type: 'flow', name: e.node, at: e.at, duration_ms: 0, status: 'ok', arguments: { from: e.from, via: e.via } })));
    const toolActions = [...this.pastTools, ...(this.tools ? [this.tools] : [])].flatMap((t) => t.actions);
    const actions = [...toolActions, ...this.controls, ...this.handoffs, ...flowActions].map((a) => this.redaction.action(a)).sort((a, b) => a.at.localeCompare(b.at)).slice(0, MAX_CALL_ACTIONS);
    this.deps.report(this.callId, {
      status,
      end_reason: reason,
      at: endedAt.toISOString(),
      ...(this.transcript.length ? { transcript: this.transcript } : {}),
      ...(actions.length ? { actions } : {}),
      ...(this.transferRecord ? { transfer: this.transferRecord } : {}),
      ...(this.amd ?? {}),
      ...(this.turns.length ? { turn_latencies_ms: turnLatencies(this.turns), turns: callTurns(this.turns, (t) => this.redaction.text(t)) } : {}),
    });

    let saved: RecordingOutcome = { key: null, error: null };
    if (this.recording) {
      saved = await this.recording.save(this.deps.storage, recordingKey(this.callId, this.startedAt), endedPerf);
      this.deps.report(this.callId, saved.key ? { status, recording_key: saved.key } : { status, recording_error: saved.error! });
    }
    const result: CallResult = { status, reason, recordingKey: saved.key, recordingError: saved.error };
    this.resolveDone(result);
    return result;
  }
}

const wholeMs = (ms: number) => Math.min(MAX_TURN_LATENCY_MS, Math.max(0, Math.round(ms)));

/** Each turn's latency as the end event reports it: whole ms, the first MAX_TURN_LATENCIES turns (analytics). */
export const turnLatencies = (turns: readonly TurnTiming[]): number[] => turns.slice(0, MAX_TURN_LATENCIES).map((t) => wholeMs(t.latencyMs));

/** The same turns with their stages (docs/design.md §16): GET /calls/{id} `turns`. */
export const callTurns = (turns: readonly TurnTiming[], mask: (text: string) => string = (t) => t): CallTurn[] =>
  turns.slice(0, MAX_TURN_LATENCIES).map((t, i) => ({
    index: i + 1,
    user_text: mask(t.userText).slice(0, 2000),
    user_end_at: t.userEndAt.toISOString(),
    decided_at: t.decidedAt.toISOString(),
    stt_ms: wholeMs(t.path.sttMs),
    llm_first_token_ms: wholeMs(t.path.llmMs),
    tts_first_audio_ms: wholeMs(t.path.ttsMs),
    tool_ms: wholeMs(t.path.toolMs),
    ...(t.node ? { node: t.node } : {}),
    latency_ms: wholeMs(t.latencyMs),
    preemptive: t.preemptive,
    interrupted: t.interrupted,
  }));

/** The built-in handoff as a function for the model: the bots it may hand to, how much of the conversation goes along. */
function handoffSpec(bots: string[]): ToolSpec {
  return {
    name: HANDOFF_TOOL,
    description: 'Hand the call to another bot, which goes on with the caller in its own voice.',
    parameters: {
      type: 'object',
      properties: {
        bot_id: { type: 'string', enum: bots, description: 'the bot to hand the call to' },
        context: { type: 'string', enum: [...HANDOFF_CONTEXTS], description: 'all: the whole conversation goes along; summary: a short summary; none: nothing' },
        variables: { type: 'object', additionalProperties: { type: 'string' }, description: 'what the other bot should know, by name' },
      },
      required: ['bot_id'],
    },
  };
}
