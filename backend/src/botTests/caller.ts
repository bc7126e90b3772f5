// The bot-test caller (docs/design.md §17): a test call that speaks a case's script with the offline voice
// (schemas/node espeak-ng) in real time and keeps the line open with silence between lines, so the worker's VAD
// hears each line end. Two transports open the line (`Dial`): `ws`, a WebSocket test call to a voice worker as a
// browser's would be (a test-call token signed with the worker token, `WS /ws/{bot_id}`; the token names the run
// and case), and `room` (roomCaller.ts), a web call in a LiveKit room as the console's widget places it. Either
// way the call names the run and case, so the runtime config answers its tools with that case's mocks.
// Two callers drive the same line: a scripted one (the case's steps) and a persona (caller.persona), whose lines
// an OpenAI-compatible LLM writes, playing the caller toward its goal from what the bot said (the worker's bot
// transcript messages), each line spoken with the same offline voice; it ends when the bot hangs up or after
// max_turns lines (then it hears the bot's answer and hangs up).
import { setTimeout as delay } from 'node:timers/promises';
import WebSocket from 'ws';
import { signTestCallToken } from '@voice-platform/schemas/test-call-token';
import { speechBytes } from '@voice-platform/schemas/node';
import { PERSONA_MAX_TURNS, type LlmSettings, type TestScriptStep } from '@voice-platform/schemas';

/** The caller's audio: 16 kHz mono (8 kHz on a phone line: sipCaller.ts), 20 ms frames. */
export const CALLER_RATE_HZ = 16_000;
export const FRAME_MS = 20;
/** The bot has finished a line when its audio has stopped this long. */
const BOT_QUIET_MS = 900;
/** Longest wait for the bot to speak and finish (a step with wait_for_bot). */
const BOT_TURN_WAIT_MS = 25_000;
/** After the script: how long the bot has to end the call before the caller hangs up. */
const END_WAIT_MS = 20_000;
/** A persona's first line: how long it waits for a greeting before it speaks first. */
const GREETING_WAIT_MS = 10_000;
/** RFC 4733 event codes of the keys a script presses, as livekit-sip and the worker read them (room and sip cases). */
export const DTMF_EVENT_CODES: Readonly<Record<string, number>> = { '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9, '*': 10, '#': 11 };
/** Refusals (the worker's, or placeCall's for a room case) that mean "no room now": the case waits, it does not fail. */
export const NO_CAPACITY_CODES = new Set(['worker_at_capacity', 'worker_draining', 'fleet_at_capacity']);

/** `called` with `callerError`: the call was placed but the caller could not go on (a persona's LLM failed). */
export type CallerOutcome = { kind: 'called'; callId: string; callerError?: string } | { kind: 'no_capacity'; reason: string } | { kind: 'error'; reason: string };

/** Opens a test call over one transport (`wsDial` here, `roomDial` in roomCaller.ts), lets `talk` run on its open
 *  line, and closes it after; answers a refusal (no capacity, an error) without calling `talk`. */
export type Dial = (talk: (line: CallerLine, callId: string) => Promise<CallerOutcome>) => Promise<CallerOutcome>;

export interface TestCallOptions {
  dial: Dial;
  /** Told the call's id once the call has started (the console links it while the call goes on). */
  onStarted?: (callId: string) => void | Promise<void>;
  signal?: AbortSignal;
}
export interface ScriptedCallOptions extends TestCallOptions {
  script: TestScriptStep[];
}

/** The open line, as a caller drives it. */
interface Line {
  readonly closed: boolean;
  /** The bot's final transcript lines so far. */
  readonly botLines: readonly string[];
  /** Speaks `text` (queued in real time) and resolves once it has all been sent. */
  say(text: string): Promise<void>;
  /** Presses `digits` and resolves once they are sent. */
  dtmf(digits: string): Promise<void>;
  /** Waits for the bot to speak (after the caller's last line) and go quiet; false: it did not within `ms`. */
  waitForBot(ms: number): Promise<boolean>;
  /** Waits for the bot to end the call; false: it did not within `ms`. */
  waitForHangup(ms: number): Promise<boolean>;
}

/** A transport's end of the line: what the caller's side sends through it. */
export interface Wire {
  /** One 20 ms frame of the caller's audio (s16le mono at the line's rate). */
  sendFrame(frame: Buffer): void | Promise<void>;
  dtmf(digits: string): void | Promise<void>;
  /** The caller hangs up. */
  hangUp(): void | Promise<void>;
}

/** A message of the worker's call protocol: a WebSocket text message, or the room's `events` data (the same shapes). */
type WorkerMessage = { type?: string; call_id?: string; code?: string; message?: string; role?: string; text?: string; final?: boolean };

/** The caller's side of an open call, fed by its transport (the bot's audio, the worker's messages, the end): it
 *  speaks queued lines in real time with silence between them, and tells when the bot has spoken and gone quiet. */
export class CallerLine implements Line {
  private ended = false;
  readonly botLines: string[] = [];
  /** The worker's `started` message's call id. */
  startedId: string | null = null;
  /** The worker's `error` message: it refused the call. */
  refused: { code: string; message: string } | null = null;
  private lastBotAudioAt = 0;
  private botAudioFrames = 0;
  private heardFrom = 0; // bot frames heard before the caller's last line
  private queue = Buffer.alloc(0);
  private pumping = false;
  private pump: Promise<void> = Promise.resolve();

  /** Bytes of one 20 ms frame at the line's rate. */
  private readonly frameBytes: number;

  constructor(
    private readonly wire: Wire,
    private readonly signal?: AbortSignal,
    /** The rate the caller speaks at: the transport's own, so the voice is made at it (sox resamples well; a
     *  line that halved it would fold the voice's highs into the band the recogniser hears). */
    private readonly rateHz = CALLER_RATE_HZ,
  ) {
    this.frameBytes = (rateHz * FRAME_MS * 2) / 1000;
  }

  get closed(): boolean {
    return this.ended;
  }
  /** Whether the bot's voice has been heard on the line. */
  get heardBot(): boolean {
    return this.botAudioFrames > 0;
  }
  /** The transport heard a frame of the bot's voice. */
  botAudio(): void {
    this.lastBotAudioAt = performance.now();
    this.botAudioFrames++;
  }
  message(msg: WorkerMessage): void {
    if (msg.type === 'started' && typeof msg.call_id === 'string') this.startedId = msg.call_id;
    if (msg.type === 'transcript' && msg.role === 'bot' && msg.final === true && typeof msg.text === 'string') this.botLines.push(msg.text);
    if (msg.type === 'error' && typeof msg.code === 'string') this.refused = { code: msg.code, message: msg.message ?? '' };
  }
  /** The call is over for the caller (the bot hung up, the line dropped). */
  end(): void {
    this.ended = true;
  }

  /** Starts the outgoing audio: queued speech, else silence, one 20 ms frame per tick in real time. */
  startAudio(): void {
    if (this.pumping) return;
    this.pumping = true;
    const frameBytes = this.frameBytes;
    const silenceFrame = Buffer.alloc(frameBytes);
    this.pump = (async () => {
      const start = performance.now();
      for (let k = 0; this.pumping && !this.ended; k++) {
        const frame = this.queue.length ? this.queue.subarray(0, frameBytes) : silenceFrame;
        this.queue = this.queue.subarray(frame.length);
        await this.wire.sendFrame(frame.length === frameBytes ? frame : Buffer.concat([frame, Buffer.alloc(frameBytes - frame.length)]));
        const wait = start + (k + 1) * FRAME_MS - performance.now();
        if (wait > 0) await delay(wait);
      }
    })().catch(() => undefined);
  }
  async stopAudio(): Promise<void> {
    this.pumping = false;
    await this.pump;
  }

  async until(cond: () => boolean, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!cond() && !this.ended && performance.now() < deadline && !this.signal?.aborted) await delay(50);
    return cond();
  }
  async say(text: string): Promise<void> {
    this.queue = Buffer.concat([this.queue, speechBytes(text, this.rateHz)]);
    await this.until(() => this.queue.length === 0, 60_000);
    this.heardFrom = this.botAudioFrames;
  }
  async dtmf(digits: string): Promise<void> {
    await this.wire.dtmf(digits);
    this.heardFrom = this.botAudioFrames;
  }
  waitForBot(ms: number): Promise<boolean> {
    const seen = this.heardFrom;
    return this.until(() => this.botAudioFrames > seen && performance.now() - this.lastBotAudioAt >= BOT_QUIET_MS, ms);
  }
  waitForHangup(ms: number): Promise<boolean> {
    return this.until(() => this.ended, ms);
  }
  /** The caller hangs up unless the call is over. */
  async hangUp(): Promise<void> {
    if (!this.ended) await this.wire.hangUp();
  }
}

export function runScriptedCall(o: ScriptedCallOptions): Promise<CallerOutcome> {
  return runTestCall(o, async (line) => {
    for (const step of o.script) {
      if (line.closed || o.signal?.aborted) break;
      if (step.wait_for_bot) await line.waitForBot(BOT_TURN_WAIT_MS);
      if (step.after_ms) await delay(step.after_ms);
      if (line.closed) break;
      if ('say' in step) await line.say(step.say);
      else await line.dtmf(step.dtmf);
    }
    return undefined;
  });
}

export interface PersonaCallOptions extends TestCallOptions {
  persona: { prompt: string; goal: string; max_turns?: number };
  /** The LLM that plays the caller (the bot's OpenAI-compatible llm), with OPENAI_BASE_URL and OPENAI_API_KEY. */
  llm: LlmSettings;
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

type Chat = { role: 'system' | 'user' | 'assistant'; content: string };

/** The persona LLM's instructions: the bot's lines come as the user's messages, the caller's own as its replies. */
export function personaSystemPrompt(p: { prompt: string; goal: string }): string {
  return [
    'You are the caller in a phone call with a voice bot (a test of that bot). Stay in character:',
    p.prompt,
    `Your goal in this call: ${p.goal}`,
    "The bot's words come to you as the user's messages. Answer with only what you say next: one or two short spoken sentences, no stage directions, no quotes, no names before the line.",
  ].join('\n');
}

/** One line of the persona from its LLM (chat completions, not streamed). The key goes only to OPENAI_BASE_URL,
 *  never to a bot's own base_url (as the analysis, analysis/openai.ts); errors say the status, never the body. */
async function personaLine(o: PersonaCallOptions, messages: Chat[]): Promise<string> {
  const own = typeof o.llm.base_url === 'string' && o.llm.base_url ? o.llm.base_url : null;
  const apiKey = own ? '' : o.apiKey;
  if (!own && !apiKey) throw new Error('OPENAI_API_KEY is not set on the backend (or give the bot its own llm.base_url)');
  let res: Response;
  try {
    res = await fetch(`${(own ?? o.baseUrl).replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ model: o.llm.model, messages, temperature: 0.7, stream: false }),
      redirect: 'error',
      signal: AbortSignal.any([AbortSignal.timeout(o.timeoutMs), ...(o.signal ? [o.signal] : [])]),
    });
  } catch (err) {
    const e = err as Error;
    throw new Error(e.name === 'TimeoutError' ? `no answer within ${o.timeoutMs} ms` : 'the request failed');
  }
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const answer = (await res.json().catch(() => null)) as { choices?: Array<{ message?: { content?: string | null } }> } | null;
  const text = answer?.choices?.[0]?.message?.content;
  if (typeof text !== 'string') throw new Error('the answer holds no message content');
  return text.trim().slice(0, 500);
}

export function runPersonaCall(o: PersonaCallOptions): Promise<CallerOutcome> {
  const maxTurns = o.persona.max_turns ?? PERSONA_MAX_TURNS;
  return runTestCall(o, async (line) => {
    const messages: Chat[] = [{ role: 'system', content: personaSystemPrompt(o.persona) }];
    let heard = 0;
    const hear = () => {
      const said = line.botLines.slice(heard).join(' ').trim();
      heard = line.botLines.length;
      if (said) messages.push({ role: 'user', content: said });
    };
    for (let turn = 0; turn < maxTurns; turn++) {
      await line.waitForBot(turn === 0 ? GREETING_WAIT_MS : BOT_TURN_WAIT_MS);
      if (line.closed || o.signal?.aborted) return undefined; // the bot hung up
      hear();
      let text: string;
      try {
        text = await personaLine(o, messages);
      } catch (err) {
        return `the persona's LLM failed: ${(err as Error).message}`;
      }
      if (!text) break; // nothing more to say
      messages.push({ role: 'assistant', content: text });
      await line.say(text);
    }
    // Its last line said: it hears the bot's answer, then hangs up unless the bot did.
    if (!line.closed) await line.waitForBot(BOT_TURN_WAIT_MS);
    return undefined;
  }, { hangUpAfterMs: 0 });
}

/** Opens the test call, lets `drive` talk on it, then waits for the bot to end it (or hangs up). `drive`
 *  answers a reason the caller could not go on, or undefined. */
function runTestCall(o: TestCallOptions, drive: (line: Line) => Promise<string | undefined>, opts: { hangUpAfterMs?: number } = {}): Promise<CallerOutcome> {
  return o.dial(async (line, callId) => {
    await o.onStarted?.(callId);
    const callerError = await drive(line);
    // The bot ends the call (an expectation may say how); else the caller hangs up.
    await line.waitForHangup(callerError ? 0 : (opts.hangUpAfterMs ?? END_WAIT_MS));
    await line.hangUp();
    return { kind: 'called', callId, ...(callerError ? { callerError } : {}) };
  });
}

export interface WsDialOptions {
  workerUrl: string;
  workerToken: string;
  botId: string;
  runId: string;
  caseId: string;
  variables: Record<string, string>;
}

/** A `ws` case: a WebSocket test call to a worker, its token naming the run and case (the worker stores them on the call). */
export function wsDial(o: WsDialOptions, signal?: AbortSignal): Dial {
  return async (talk) => {
    const base = new URL(o.workerUrl);
    base.protocol = base.protocol === 'https:' || base.protocol === 'wss:' ? 'wss:' : 'ws:';
    const { token } = signTestCallToken(o.workerToken, { bot_id: o.botId, sub: `test_run:${o.runId}`, ttlSeconds: 300, test: { run_id: o.runId, case_id: o.caseId } });
    const url = new URL(`/ws/${encodeURIComponent(o.botId)}`, base);
    url.searchParams.set('token', token);

    const ws = new WebSocket(url);
    const line = new CallerLine(
      {
        sendFrame: (frame) => {
          if (ws.readyState === WebSocket.OPEN) ws.send(frame);
        },
        dtmf: (digits) => ws.send(JSON.stringify({ type: 'dtmf', digits })),
        hangUp: () => ws.send(JSON.stringify({ type: 'stop' })),
      },
      signal,
    );
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) line.botAudio();
      else line.message(JSON.parse(data.toString()) as WorkerMessage);
    });
    const closedP = new Promise<void>((resolve) => ws.once('close', () => (line.end(), resolve())));
    const opened = await new Promise<Error | null>((resolve) => {
      ws.once('open', () => resolve(null));
      ws.once('error', (err) => resolve(err));
    });
    ws.on('error', () => undefined);
    if (opened) return { kind: 'no_capacity', reason: `no voice worker answers at ${base.host}: ${opened.message}` };

    // The start message first: audio before it would start the call without the case's variables.
    ws.send(JSON.stringify({ type: 'start', variables: o.variables }));
    line.startAudio();
    try {
      await line.until(() => line.startedId !== null || line.refused !== null, 15_000);
      if (!line.startedId) {
        const r = line.refused;
        if (r && NO_CAPACITY_CODES.has(r.code)) return { kind: 'no_capacity', reason: `${r.code}: ${r.message}` };
        return { kind: 'error', reason: r ? `the worker refused the call: ${r.code}: ${r.message}` : 'the worker did not start the call' };
      }
      return await talk(line, line.startedId);
    } finally {
      await line.stopAudio();
      if (!line.closed) {
        ws.close(1000);
        await Promise.race([closedP, delay(3000)]);
      }
    }
  };
}
