// The offline `scripted` LLM: the bot's policy picks the reply. The caller's words are matched against
// each intent's example phrases; the best match above a threshold wins, otherwise the fallback.
// Replies are rendered with the call's {{variables}} (schemas/src/templates.ts).
import { goToFunction, HANDOFF_TOOL, keysOf, matchIntent as match, renderTemplate, renderWithResult, type BotPolicy } from '@voice-platform/schemas';
import type { FlowState } from '../flow/flow.js';
import { knowledgeOf, type ChatMessage, type GenerateOptions, type LlmChunk, type LlmProvider } from './llm.js';

// The matching itself is shared with the backend's post-call analysis (schemas/src/intents.ts), so a call's
// transcript is read afterwards exactly as the policy read it during the call.
export { similarity, words } from '@voice-platform/schemas';

export interface ScriptedDecision {
  intent: string | null;
  reply: string;
  endCall: boolean;
}

export { keypadTurn } from './keypad.js';

/** The keys of a keypad turn, for `{{digits}}` ('' for spoken words). */
const digitsOf = (utterance: string) => keysOf(utterance) ?? '';

export function decide(policy: BotPolicy | null, utterance: string, variables: Record<string, string>): ScriptedDecision {
  if (!policy) return { intent: null, reply: `You said: ${utterance}`, endCall: false };
  const vars = { digits: digitsOf(utterance), ...variables };
  const intent = match(policy, utterance);
  if (intent) return { intent: intent.name, reply: renderTemplate(intent.reply, vars), endCall: intent.end_call ?? false };
  return { intent: null, reply: renderTemplate(policy.fallback.reply, vars), endCall: policy.fallback.end_call ?? false };
}

/**
 * Resume: `chars`. The same messages give the same reply, so a resumed attempt is exact (it never fails, though).
 * An intent with an `action` answers in two rounds, as a model calling a tool would: first the tool call
 * (its arguments rendered), then, with the tool's answer in the history, the reply with `{{result.…}}`
 * (or `on_error_reply`, else the fallback, when the tool failed).
 */
export class ScriptedLlm implements LlmProvider {
  readonly name = 'scripted';
  readonly resume = 'chars' as const;
  private calls = 0;
  /** The call's flow (shared/DESIGN.md §18): in one, the current node's intents (and the global nodes') are matched. */
  private flow: FlowState | null = null;
  constructor(
    private readonly botPolicy: BotPolicy | null,
    private readonly variables: Record<string, string>,
  ) {}

  /** Matches in the flow's current node from now on. */
  follow(flow: FlowState | null): this {
    this.flow = flow;
    return this;
  }

  private get policy(): BotPolicy | null {
    return this.flow && this.botPolicy ? this.flow.policy() : this.flow ? { ...this.flow.policy(), fallback: { reply: 'Sorry, I did not catch that.' } } : this.botPolicy;
  }

  /** The go_to call a matched intent makes in a flow (none: it moves nowhere). */
  private goTo(intent: string | null): LlmChunk[] {
    const move = intent && this.flow?.intentMove(intent);
    return move ? [{ type: 'tool_calls', calls: [{ id: `scripted_${++this.calls}`, type: 'function', function: { name: goToFunction(move.to), arguments: JSON.stringify({ intent }) } }] }] : [];
  }

  async *generate(messages: ChatMessage[], _signal?: AbortSignal, opts?: GenerateOptions): AsyncIterable<LlmChunk> {
    // A node just entered: its say was said; the policy answers the caller's next words.
    if (opts?.entered) return;
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    const utterance = lastUser >= 0 && typeof messages[lastUser]!.content === 'string' ? (messages[lastUser]!.content as string) : '';
    const policy = this.policy;
    const intent = policy ? match(policy, utterance) : null;
    // {{knowledge}}: the best passage retrieved for this turn (the system message just before the caller's words).
    const knowledge = knowledgeOf(lastUser > 0 ? messages[lastUser - 1] : undefined)[0] ?? '';
    const vars = { digits: digitsOf(utterance), knowledge, ...this.variables };
    if (policy && intent?.action) {
      const answer = messages.slice(lastUser + 1).find((m) => m.role === 'tool');
      if (!answer && opts?.toolChoice !== 'none' && intent.action.tool === HANDOFF_TOOL) {
        // A handoff ends the turn: the reply is said before it (the other bot's greeting, or on_failure, after).
        yield { type: 'text', text: renderTemplate(intent.reply, vars) };
        const args = Object.fromEntries(Object.entries(intent.action.arguments ?? {}).map(([k, v]) => [k, renderTemplate(v, vars)]));
        yield { type: 'tool_calls', calls: [{ id: `scripted_${++this.calls}`, type: 'function', function: { name: HANDOFF_TOOL, arguments: JSON.stringify(args) } }] };
        return;
      }
      if (!answer && opts?.toolChoice !== 'none') {
        const args = Object.fromEntries(Object.entries(intent.action.arguments ?? {}).map(([k, v]) => [k, renderTemplate(v, vars)]));
        yield { type: 'tool_calls', calls: [{ id: `scripted_${++this.calls}`, type: 'function', function: { name: intent.action.tool, arguments: JSON.stringify(args) } }] };
        return;
      }
      let result: unknown = null;
      try {
        result = answer ? JSON.parse(answer.content as string) : null;
      } catch {
        result = null;
      }
      const failed = result === null || typeof result !== 'object' || Object.hasOwn(result, 'error');
      if (failed) {
        // on_error_reply ends the step as the reply would have (end_call included); the fallback is the fallback.
        const [text, ends] = intent.on_error_reply !== undefined ? [intent.on_error_reply, intent.end_call] : [policy.fallback.reply, policy.fallback.end_call];
        yield { type: 'text', text: renderTemplate(text, vars) };
        if (ends) yield { type: 'end_call' };
        return;
      }
      yield { type: 'text', text: renderWithResult(intent.reply, vars, result) };
      yield* this.goTo(intent.name);
      if (intent.end_call) yield { type: 'end_call' };
      return;
    }
    // An intent answering from the knowledge base with no passage found says the fallback (not an empty reply).
    const d = intent && !knowledge && intent.reply.includes('{{knowledge}}') ? decide(policy, '', this.variables) : decide(policy, utterance, { knowledge, ...this.variables });
    yield { type: 'text', text: d.reply };
    yield* this.goTo(d.intent);
    if (d.endCall) yield { type: 'end_call' };
  }
}
