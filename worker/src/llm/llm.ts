// The reply stage. It keeps the conversation, asks the provider for a reply when a final user
// transcript arrives, and cuts the streamed reply into sentences so speech starts after the first one.
// Retries are the stage's (providers/retry.ts): a provider makes one attempt per reply.
//
// Tools (docs/design.md §9): a reply may end in tool calls. Text before them is spoken, each tool's
// `say_while_waiting` is said as it starts, the calls run at once, and the assistant message with its
// `tool_calls` plus one `tool` message per call join the history; then the model goes on, for at most
// MAX_TOOL_ROUNDS rounds a user turn (after that it is asked to answer without tools). A barge-in while
// tools run drops what would have been said next, but their results still join the history (before the
// caller's next words, as the protocol wants them).
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';
import { asProviderError } from '../providers/errors.js';
import { DEFAULT_RETRY, retryStream, type Resume, type RetryPolicy } from '../providers/retry.js';
import { keypadTurn } from './keypad.js';
import { HANDOFF_TOOL, words, type FlowContextRule } from '@voice-platform/schemas';
import { plainSummary, type Entered, type FlowMove, type FlowState } from '../flow/flow.js';

/** The system message a turn's knowledge passages come in (the scripted policy finds them by it). */
export const KNOWLEDGE_PREFIX = 'Passages from the knowledge base that may answer the caller (best first):';

/** The passages of a knowledge message (KNOWLEDGE_PREFIX), best first. */
export function knowledgeOf(message: ChatMessage | undefined): string[] {
  if (!message || message.role !== 'system' || !message.content.startsWith(KNOWLEDGE_PREFIX)) return [];
  return message.content
    .slice(KNOWLEDGE_PREFIX.length)
    .split(/\n\[\d+\] /)
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Rounds of tool calls one user turn may run. */
export const MAX_TOOL_ROUNDS = 5;

/** A tool call as the OpenAI protocol carries it (`arguments`: JSON text). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The conversation in the OpenAI chat shapes. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Text as it streams; the reply's tool calls, whole, once the reply is complete. */
export type LlmChunk = { type: 'text'; text: string } | { type: 'end_call' } | { type: 'tool_calls'; calls: ToolCall[] };

/** A tool offered to the model as a function. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface GenerateOptions {
  /** The bot's tools (end_call is always offered besides). */
  tools?: ToolSpec[];
  /** `none`: the model must answer in text (the rounds are spent). */
  toolChoice?: 'auto' | 'none';
  /** The flow has just entered this node (its `say` was said): a scripted policy adds nothing; a model goes on in it. */
  entered?: string;
}

/**
 * What the stage needs of the call's flow and handoff (shared/DESIGN.md §18), the session's (call/session.ts): both
 * change at a handoff, so they are asked each time.
 */
export interface LlmCallHooks {
  /** The call's flow now (null: the bot has none). */
  flow(): FlowState | null;
  /** The bot's own prompt (the node's is added to it). */
  botPrompt(): string;
  /** The built-in handoff as a function, when the bot may hand off. */
  handoffSpec(): ToolSpec | null;
  /** Runs a handoff the model (or a scripted intent) asked for. Never throws. */
  handoff(args: string, signal: AbortSignal): Promise<HandoffOutcome>;
  /** A node was entered (the timeline keeps the flow's entries itself). */
  onEnter?(e: Entered): void;
  /** The bot's knowledge (shared/DESIGN.md §18): what retrieves a turn's passages (put in the context before its
   *  words); null when the bot (now) has no knowledge bases. */
  knowledge?(): ((text: string) => Promise<string[]>) | null;
}

/** A handoff's answer: the tool message; `say` is the turn's last word (the other bot's greeting, or on_failure). */
export interface HandoffOutcome {
  output: string;
  say?: string;
  /** Taken: the call goes on with these (the stage switches once the tool message has joined the history). */
  next?: { provider: LlmProvider; tools: LlmTools | null; context: 'all' | 'summary' | 'none'; voice: object };
}

/** What the stage needs of the call's tools (tools/runner.ts ToolRunner). */
export interface LlmTools {
  readonly specs: ToolSpec[];
  /** True for a call that hangs up rather than runs. */
  endsCall(name: string): boolean;
  sayWhileWaiting(name: string, args?: string): string | undefined;
  /** Said if the tool has not answered after `afterMs` (shared/DESIGN.md §18). */
  filler?(name: string): { text: string; afterMs: number } | undefined;
  /**
   * Never throws: `output` is the tool message's content (`{"error":…}` on failure). `endsTurn`: the model is
   * not asked again until the caller speaks (a transfer), after `say`, the tool's last word (its on_failure).
   * `spoken` resolves once the phrase said before the run has been played.
   */
  run(name: string, args: string, signal?: AbortSignal, opts?: { spoken?: Promise<void> }): Promise<{ output: string; endsTurn?: boolean; say?: string }>;
}

export interface LlmProvider {
  readonly name: string;
  /**
   * After text was delivered: `chars`, another attempt at the same messages starts with the same text,
   * so the stage passes on only what it had not (whole sentences: a sentence is never spliced from two
   * attempts); `none`, a failure is final.
   */
  readonly resume: Resume;
  /** ONE attempt: failures are ProviderErrors (stage `llm`); the stage retries. */
  generate(messages: ChatMessage[], signal: AbortSignal, opts?: GenerateOptions): AsyncIterable<LlmChunk>;
  /** Follows the call's flow (the scripted policy matches the current node's intents); a model needs nothing. */
  follow?(flow: FlowState | null): void;
  /** A short summary of the conversation (a flow's `summary` context, a handoff's); absent: the plain transcript lines. */
  summarize?(messages: ChatMessage[], signal: AbortSignal): Promise<string>;
}

/** The sentences a whole text is spoken as: what follows the last stop (or all of it, with no stop) too. */
export function sentencesOf(text: string): string[] {
  const splitter = new SentenceSplitter();
  return [...splitter.push(text), ...splitter.flush()];
}

/** Splits streamed text at sentence ends (a stop followed by white space) so TTS can start early. */
export class SentenceSplitter {
  private buf = '';
  /** Characters pushed and not yet given out as part of a sentence. */
  get pending(): number {
    return this.buf.length;
  }
  /** Forgets the unfinished sentence. */
  drop(): void {
    this.buf = '';
  }
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    const re = /[.!?…]+["')\]]*\s+/g;
    let last = 0;
    for (let m = re.exec(this.buf); m; m = re.exec(this.buf)) {
      const s = this.buf.slice(last, m.index + m[0].length).trim();
      if (s) out.push(s);
      last = m.index + m[0].length;
    }
    this.buf = this.buf.slice(last);
    return out;
  }
  flush(): string[] {
    const s = this.buf.trim();
    this.buf = '';
    return s ? [s] : [];
  }
}

/**
 * A reply prepared on the words of a pause (docs/design.md §11): generated and synthesised while the caller is
 * silent, held at the output unheard, played if the turn ends on the same words, dropped otherwise.
 */
interface Preemptive {
  text: string;
  abort: AbortController;
  /** False once dropped or failed. */
  usable: boolean;
  /** The reply calls tools: they run only once the turn has ended on these words (the spoken text first). */
  toolCalls: ToolCall[] | null;
  /** Something went downstream (an interruption must take it back). */
  pushed: boolean;
  spoken: string;
  done: Promise<void>;
}

/** The same words, however punctuated. */
const sameWords = (a: string, b: string) => words(a).join(' ') === words(b).join(' ');

export class LlmProcessor extends FrameProcessor {
  readonly messages: ChatMessage[];
  private abort: AbortController | null = null;
  private preemptive: Preemptive | null = null;
  /** Aborted only when the call ends: a barge-in does not stop tools that already run. */
  private readonly toolsAbort = new AbortController();
  /** Tools still running from a reply a barge-in cut: their results join the history first. */
  private pendingTools: Promise<void> | null = null;

  /** messages[0] is the prompt (the bot's, with the current node's). */
  private prompted: boolean;

  constructor(
    private provider: LlmProvider,
    systemPrompt: string,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
    private tools: LlmTools | null = null,
    /** A prepared reply played or dropped (metrics). */
    private readonly onPreemptive?: (outcome: 'played' | 'dropped') => void,
    private readonly hooks: LlmCallHooks | null = null,
  ) {
    super('llm');
    const flow = hooks?.flow();
    const prompt = flow ? flow.systemPrompt(systemPrompt) : systemPrompt;
    this.messages = prompt ? [{ role: 'system', content: prompt }] : [];
    this.prompted = Boolean(prompt);
  }

  /** Sets the prompt (a node entered, another bot): messages[0]. */
  private setPrompt(text: string): void {
    if (this.prompted) this.messages.splice(0, 1);
    this.prompted = Boolean(text);
    if (text) this.messages.unshift({ role: 'system', content: text });
  }

  /** The flow's (or a handoff's) context rule on the conversation so far; the prompt stays. */
  private async applyContext(rule: FlowContextRule, signal: AbortSignal): Promise<void> {
    if (rule === 'append') return;
    const history = this.messages.slice(this.prompted ? 1 : 0);
    let summary: string | null = null;
    if (rule === 'summary') {
      try {
        summary = this.provider.summarize ? `Summary of the conversation so far: ${(await this.provider.summarize([...this.messages], signal)).trim()}` : plainSummary(history);
      } catch {
        summary = plainSummary(history);
      }
    }
    this.messages.splice(this.prompted ? 1 : 0);
    if (summary) this.messages.push({ role: 'system', content: summary });
  }

  /** Enters a node: its prompt, the context rule; what to say and whether the call ends. */
  private async enter(flow: FlowState, move: FlowMove, signal: AbortSignal): Promise<Entered> {
    const e = flow.enter(move);
    this.setPrompt(flow.systemPrompt(this.hooks!.botPrompt()));
    await this.applyContext(e.context, signal);
    this.hooks?.onEnter?.(e);
    return e;
  }

  /** The functions offered now: in a flow, the node's tools only and its go_to functions; the handoff when the bot may. */
  private offered(): ToolSpec[] {
    const all = this.tools?.specs ?? [];
    const handoff = this.hooks?.handoffSpec() ?? null;
    const flow = this.hooks?.flow();
    if (!flow) return handoff ? [...all, handoff] : all;
    const names = flow.tools();
    return [...all.filter((t) => names.has(t.name)), ...(handoff && names.has(handoff.name) ? [handoff] : []), ...flow.goToSpecs()];
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'instruct') {
      // Read with the conversation from the next reply on; a scripted policy answers from the caller's words only.
      this.messages.push({ role: 'system', content: `Instruction from a supervisor: ${frame.text}` });
      return;
    }
    if (frame.kind === 'say') {
      this.messages.push({ role: 'assistant', content: frame.text });
      this.push({ kind: 'response_start' });
      for (const s of sentencesOf(frame.text)) this.push({ kind: 'text', text: s });
      this.push({ kind: 'response_end', endCall: frame.endCall ?? false });
      return;
    }
    // The caller's words carry the flow node that heard them (the turn's `node` on the call record).
    const node = frame.kind === 'transcript' && frame.role === 'user' && frame.final ? this.hooks?.flow()?.current : undefined;
    this.push(node && frame.kind === 'transcript' ? { ...frame, node } : frame, dir);
    if (frame.kind !== 'transcript' || frame.role !== 'user' || !frame.text.trim()) return;
    if (frame.preemptive && !frame.dtmf) {
      // The caller paused again on the same words (a breath, a stop consonant): the reply prepared is still the one.
      if (this.preemptive?.usable && sameWords(this.preemptive.text, frame.text)) return;
      this.dropPreemptive();
      // With knowledge, a reply waits for the turn's passages: none is prepared on a pause's words.
      if (!this.pendingTools && !this.abort && !this.hooks?.knowledge?.()) this.preemptive = this.prepare(frame.text);
      return;
    }
    if (!frame.final) return;
    if (this.pendingTools) await this.pendingTools;
    // A keypad turn reaches the model (and the scripted policy's `dtmf` intents) in words.
    const content = frame.dtmf ? keypadTurn(frame.text) : frame.text;
    const ready = this.preemptive;
    this.preemptive = null;
    if (ready && !frame.dtmf && sameWords(ready.text, frame.text)) {
      await ready.done;
      if (ready.usable && !ready.abort.signal.aborted) {
        // The turn ended on the words the reply was made for: it plays now, and joins the conversation.
        this.push({ kind: 'release' });
        this.onPreemptive?.('played');
        this.messages.push({ role: 'user', content });
        // A reply that calls tools goes on from there, as if it had been asked now.
        if (ready.toolCalls) return this.respond({ calls: ready.toolCalls, spoken: ready.spoken });
        this.messages.push({ role: 'assistant', content: ready.spoken });
        return;
      }
    }
    if (ready) this.drop(ready);
    const retrieve = frame.dtmf ? null : this.hooks?.knowledge?.();
    if (retrieve) {
      const passages = await retrieve(frame.text);
      if (passages.length) this.messages.push({ role: 'system', content: `${KNOWLEDGE_PREFIX}${passages.map((p, i) => `\n[${i + 1}] ${p}`).join('')}` });
    }
    this.messages.push({ role: 'user', content });
    await this.respond();
  }

  /** Generates a reply to `text` without adding to the conversation; its frames wait at the output (`held`). */
  private prepare(text: string): Preemptive {
    const p: Preemptive = { text, abort: new AbortController(), usable: true, toolCalls: null, pushed: false, spoken: '', done: Promise.resolve() };
    p.done = (async () => {
      const spoken = { text: '' };
      const say = (sentences: string[]) => {
        for (const s of sentences) {
          if (p.abort.signal.aborted) return;
          p.pushed = true;
          this.push({ kind: 'text', text: s });
        }
      };
      try {
        p.pushed = true;
        this.push({ kind: 'response_start', held: true });
        const calls = await this.generate(p.abort.signal, say, spoken, true, [{ role: 'user', content: text }]);
        if (p.abort.signal.aborted) return;
        p.spoken = spoken.text;
        if (calls.some((c) => !this.endsCall(c.function.name))) {
          p.toolCalls = calls;
          return;
        }
        this.push({ kind: 'response_end', endCall: calls.length > 0 });
      } catch {
        // The turn's end asks again (and reports a failure then).
        p.usable = false;
      }
    })();
    return p;
  }

  private dropPreemptive(): void {
    const p = this.preemptive;
    this.preemptive = null;
    if (p) this.drop(p);
  }

  /** Stops a prepared reply and takes back what it sent downstream (the output holds it unheard). */
  private drop(p: Preemptive): void {
    if (!p.abort.signal.aborted) this.onPreemptive?.('dropped');
    p.usable = false;
    p.abort.abort();
    if (p.pushed) this.push({ kind: 'interruption' });
  }

  private endsCall(name: string): boolean {
    return this.tools ? this.tools.endsCall(name) : name === 'end_call';
  }

  /** `known`: the first round is known already (a prepared reply that called tools: its calls, the text said before them). */
  private async respond(known?: { calls: ToolCall[]; spoken: string }): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    const started = performance.now();
    let first = true;
    const say = (sentences: string[]) => {
      for (const s of sentences) {
        if (first) {
          this.push({ kind: 'provider_time', stage: 'llm', provider: this.provider.name, ms: performance.now() - started });
          first = false;
        }
        this.push({ kind: 'text', text: s });
      }
    };
    /** This round's spoken text, until it joins the history. */
    const spoken = { text: known?.spoken ?? '' };
    const emit = (sentences: string[], into: { text: string }) => {
      for (const s of sentences) into.text += (into.text ? ' ' : '') + s;
      say(sentences);
    };
    let endCall = false;
    /** The node a move of the last round entered (the next round is asked in it). */
    let entered: string | undefined;
    if (!known) this.push({ kind: 'response_start' });
    try {
      for (let round = 1; ; round++) {
        const toolsAllowed = round <= MAX_TOOL_ROUNDS;
        const calls = round === 1 && known ? known.calls : await this.generate(abort.signal, say, spoken, toolsAllowed, [], entered);
        entered = undefined;
        if (abort.signal.aborted) return;
        if (calls.some((c) => this.endsCall(c.function.name))) endCall = true;
        // Hanging up alone needs no round (the reply stays plain text); calls past the rounds are not run.
        if (!toolsAllowed || calls.every((c) => this.endsCall(c.function.name))) break;
        const text = spoken.text;
        spoken.text = '';
        const flow = this.hooks?.flow() ?? null;
        // A go_to the model called moves the flow once the round is in (the first one, if it called several).
        const goTo = flow ? calls.map((c) => flow.goToMove(c.function.name, scriptedIntent(c.function.arguments))).find((m) => m !== null) ?? null : null;
        let handoff: HandoffOutcome['next'] | undefined;
        const outputs = calls.map((c): Promise<{ output: string; endsTurn?: boolean; say?: string }> => {
          if (this.endsCall(c.function.name)) return Promise.resolve({ output: '{"ok":true}' });
          if (flow?.goToMove(c.function.name)) return Promise.resolve({ output: JSON.stringify({ ok: true, node: c.function.name.slice('go_to_'.length) }) });
          if (c.function.name === HANDOFF_TOOL && this.hooks?.handoffSpec()) {
            return this.hooks.handoff(c.function.arguments, this.toolsAbort.signal).then((h) => {
              handoff = h.next;
              return { output: h.output, endsTurn: true, ...(h.say ? { say: h.say } : {}) };
            });
          }
          if (!this.tools) return Promise.resolve({ output: '{"error":"unknown_tool"}' });
          const phrase = this.tools.sayWhileWaiting(c.function.name, c.function.arguments);
          let spoken: Promise<void> | undefined;
          if (phrase) {
            say(sentencesOf(phrase));
            spoken = this.mark();
          }
          const run = this.tools.run(c.function.name, c.function.arguments, this.toolsAbort.signal, { spoken });
          // A slow tool's filler: said once it has run afterMs without answering (not after, not on a barge-in).
          const filler = this.tools.filler?.(c.function.name);
          if (filler) {
            const timer = setTimeout(() => {
              if (!abort.signal.aborted) say(sentencesOf(filler.text));
            }, filler.afterMs);
            void run.finally(() => clearTimeout(timer));
          }
          return run;
        });
        let lastWords = '';
        let turnOver = false;
        let results: Array<{ output: string }> = [];
        // The assistant message and its answers join the history together, whenever they are in.
        const settled = Promise.all(outputs).then((out) => {
          results = out;
          this.messages.push({ role: 'assistant', content: text || null, tool_calls: calls });
          calls.forEach((c, i) => this.messages.push({ role: 'tool', tool_call_id: c.id, content: out[i]!.output }));
          lastWords = out.map((o) => o.say ?? '').filter(Boolean).join(' ');
          turnOver = out.some((o) => o.endsTurn);
        });
        this.pendingTools = settled;
        void settled.finally(() => {
          if (this.pendingTools === settled) this.pendingTools = null;
        });
        const aborted = new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
        const toolsStarted = performance.now();
        await Promise.race([settled, aborted]);
        if (abort.signal.aborted) return; // a barge-in: the results still land (pendingTools), nothing more is said
        // The turn waited this long on its tools (the turn's record keeps it apart from the model's time).
        this.push({ kind: 'provider_time', stage: 'tool', provider: calls.map((c) => c.function.name).join(','), ms: performance.now() - toolsStarted });
        if (handoff) {
          // Another bot takes the call: its model, tools and voice from here on, the conversation as asked.
          this.provider = handoff.provider;
          this.tools = handoff.tools;
          const next = this.hooks!.flow();
          this.setPrompt(next ? next.systemPrompt(this.hooks!.botPrompt()) : this.hooks!.botPrompt());
          await this.applyContext(handoff.context === 'all' ? 'append' : handoff.context === 'none' ? 'reset' : 'summary', abort.signal);
          this.push({ kind: 'voice', provider: handoff.voice });
        }
        // A go_to, else a tool's result, moves the flow (the flow the round started in: not one a handoff replaced).
        const move = flow && flow === this.hooks?.flow() ? (goTo ?? calls.map((c, i) => flow.toolMove(c.function.name, parseJson(results[i]?.output))).find((m) => m !== null) ?? null) : null;
        if (move) {
          const e = await this.enter(flow!, move, abort.signal);
          if (abort.signal.aborted) return;
          if (e.say) emit(sentencesOf(e.say), spoken);
          if (e.endCall) endCall = true;
          entered = e.node;
        }
        if (endCall) break; // the model hung up: the other tools ran, nothing more to ask
        if (turnOver) {
          // A transfer decides the turn: the call is handed over, or its on_failure is the bot's last word.
          if (lastWords) emit(sentencesOf(lastWords), spoken);
          break;
        }
      }
      // The call's variables may move the flow after a turn too.
      const flow = this.hooks?.flow();
      const vmove = !endCall ? flow?.variableMove() : null;
      if (flow && vmove) {
        const e = await this.enter(flow, vmove, abort.signal);
        if (e.say) emit(sentencesOf(e.say), spoken);
        if (e.endCall) endCall = true;
      }
      this.push({ kind: 'response_end', endCall });
    } catch (err) {
      if (abort.signal.aborted || this.cancelled) return;
      this.pushError(asProviderError('llm', err).code, err, true);
    } finally {
      // What was said (even if cut short) is what the conversation remembers.
      if (spoken.text) this.messages.push({ role: 'assistant', content: spoken.text });
      if (this.abort === abort) this.abort = null;
    }
  }

  /**
   * One request to the provider with the history as it is, its text spoken sentence by sentence (and
   * collected in `spoken`); the reply's tool calls (none: the reply is complete). Aborted: returns [].
   */
  private async generate(signal: AbortSignal, say: (sentences: string[]) => void, spoken: { text: string }, toolsAllowed: boolean, extra: ChatMessage[] = [], entered?: string): Promise<ToolCall[]> {
    const splitter = new SentenceSplitter();
    const emit = (sentences: string[]) => {
      for (const s of sentences) spoken.text += (spoken.text ? ' ' : '') + s;
      say(sentences);
    };
    /** Characters of the provider's text pushed into the splitter. */
    let pushed = 0;
    let calls: ToolCall[] = [];
    const messages = [...this.messages, ...extra];
    const opts: GenerateOptions = { tools: this.offered(), toolChoice: toolsAllowed ? 'auto' : 'none', ...(entered ? { entered } : {}) };
    const provider = this.provider;
    const reply = retryStream<LlmChunk>({
      stage: 'llm',
      policy: this.retry,
      resume: this.provider.resume,
      signal,
      attempt: () => provider.generate(messages, signal, opts),
      chars: (c) => (c.type === 'text' ? c.text.length : 0),
      dropChars: (c, n) => (c.type === 'text' ? { type: 'text', text: c.text.slice(n) } : c),
      // Only whole sentences went on: a resumed attempt starts after the last of them.
      committed: () => pushed - splitter.pending,
      onResume: () => {
        pushed -= splitter.pending;
        splitter.drop();
      },
    });
    for await (const chunk of reply) {
      if (signal.aborted) break;
      if (chunk.type === 'end_call') calls.push({ id: `end_call_${calls.length}`, type: 'function', function: { name: 'end_call', arguments: '{}' } });
      else if (chunk.type === 'tool_calls') calls = [...calls, ...chunk.calls];
      else {
        pushed += chunk.text.length;
        emit(splitter.push(chunk.text));
      }
    }
    if (signal.aborted) return [];
    // Text before a tool call is spoken before the tools run.
    emit(splitter.flush());
    return calls;
  }

  /** Resolves once what was pushed before it has been played (or dropped: a barge-in, the call's end). */
  private mark(): Promise<void> {
    return new Promise<void>((reached) => this.push({ kind: 'mark', reached }));
  }

  protected override onInterrupt(): void {
    this.abort?.abort();
    if (this.preemptive && !this.preemptive.abort.signal.aborted) this.onPreemptive?.('dropped');
    this.preemptive?.abort.abort();
    this.preemptive = null;
  }

  protected override onCancel(): void {
    this.abort?.abort();
    this.preemptive?.abort.abort();
    this.toolsAbort.abort();
  }
}

/** A tool message's content as JSON (null when it is not). */
function parseJson(text: string | undefined): unknown {
  try {
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** The intent a scripted go_to names in its arguments (`{"intent": …}`): the node entry says what moved it. */
function scriptedIntent(args: string): string | undefined {
  const v = parseJson(args) as { intent?: unknown } | null;
  return v && typeof v.intent === 'string' ? v.intent.slice(0, 64) : undefined;
}
