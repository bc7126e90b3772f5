// A call's place in its bot's flow (shared/DESIGN.md §18): the current node, where each trigger leads (a matched
// intent, a go_to function the model called, a tool's result, the call's variables), and what entering a node
// does (its say, its end_call, the context rule). The LLM stage asks it; it decides nothing by itself.
import { goToFunction, jsonEqual, renderTemplate, valueAtPath, type BotFlow, type BotPolicy, type FlowContextRule, type FlowNode } from '@voice-platform/schemas';

/** A move the flow may make: to `to`, with `context` applied to the conversation. */
export interface FlowMove {
  to: string;
  context: FlowContextRule;
  /** What triggered it (the node entry's `via` on the call's timeline). */
  via: string;
}

/** A node entered, for the call's timeline (actions of type `flow`). */
export interface FlowEntry {
  node: string;
  from: string | null;
  via: string;
  at: string;
}

/** What entering a node asks of the call. */
export interface Entered {
  node: string;
  say: string | null;
  endCall: boolean;
  context: FlowContextRule;
}

/** The functions a model gets as go_to: name, and what the move is for. */
export interface GoToSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Variable moves followed in a row at most (a chain of them must not spin). */
const MAX_HOPS = 10;

export class FlowState {
  current: string;
  readonly entries: FlowEntry[] = [];
  private readonly globals: string[];

  constructor(
    private readonly flow: BotFlow,
    /** The bot policy's fallback (a node without a match answers with it). */
    private readonly fallback: BotPolicy['fallback'],
    private readonly variables: () => Record<string, string>,
  ) {
    this.globals = (flow.global_nodes ?? []).filter((g) => Object.hasOwn(flow.nodes, g));
    this.current = flow.start;
    this.entries.push({ node: flow.start, from: null, via: 'start', at: new Date().toISOString() });
  }

  get node(): FlowNode {
    return this.flow.nodes[this.current] ?? { transitions: [] };
  }

  private rule(context: FlowContextRule | undefined): FlowContextRule {
    return context ?? this.flow.context ?? 'append';
  }

  /** The scripted policy in the current node: its intents, then the global nodes' (entered when one matches). */
  policy(): BotPolicy {
    const own = this.node.intents ?? [];
    const global = this.globals.filter((g) => g !== this.current).flatMap((g) => this.flow.nodes[g]!.intents ?? []);
    return { intents: [...own, ...global].map((i) => ({ ...i, examples: i.examples ?? [] })), fallback: this.fallback };
  }

  /** Where a matched intent leads: a transition of the current node naming it, else the global node that has it. */
  intentMove(name: string): FlowMove | null {
    const t = this.node.transitions.find((x) => 'intent' in x.when && x.when.intent === name);
    if (t) return { to: t.to, context: this.rule(t.context), via: `intent:${name}` };
    if ((this.node.intents ?? []).some((i) => i.name === name)) return null;
    const g = this.globals.find((id) => id !== this.current && (this.flow.nodes[id]!.intents ?? []).some((i) => i.name === name));
    return g ? { to: g, context: this.rule(undefined), via: `intent:${name}` } : null;
  }

  /** The go_to functions offered in the current node: its intent transitions, and every other global node. */
  goToSpecs(): GoToSpec[] {
    const out = new Map<string, GoToSpec>();
    for (const t of this.node.transitions) {
      if (!('intent' in t.when) || out.has(t.to)) continue;
      out.set(t.to, { name: goToFunction(t.to), description: `Move the conversation to "${t.to}" when: ${t.when.intent}.`, parameters: { type: 'object', properties: {} } });
    }
    for (const g of this.globals) {
      if (g === this.current || out.has(g)) continue;
      out.set(g, { name: goToFunction(g), description: `Move the conversation to "${g}" whenever the caller needs it.`, parameters: { type: 'object', properties: {} } });
    }
    return [...out.values()];
  }

  /** The move a go_to function call asks for, if it is one offered now; `intent`: the scripted policy's match that made it. */
  goToMove(fn: string, intent?: string): FlowMove | null {
    if (!this.goToSpecs().some((s) => s.name === fn)) return null;
    const to = fn.slice(goToFunction('').length);
    const t = this.node.transitions.find((x) => x.to === to && 'intent' in x.when);
    return { to, context: this.rule(t?.context), via: intent ? `intent:${intent}` : `go_to:${to}` };
  }

  /** The move a tool's JSON answer triggers (a failed run, `{"error":…}`, triggers none). */
  toolMove(tool: string, result: unknown): FlowMove | null {
    if (result === null || typeof result !== 'object' || Object.hasOwn(result, 'error')) return null;
    for (const t of this.node.transitions) {
      if (!('tool_result' in t.when) || t.when.tool_result.tool !== tool) continue;
      const { path, equals } = t.when.tool_result;
      const v = valueAtPath(result, path);
      if (equals === undefined ? v !== undefined && v !== null && v !== false : jsonEqual(v, equals)) return { to: t.to, context: this.rule(t.context), via: `tool_result:${tool}` };
    }
    return null;
  }

  /** The move the call's variables trigger now. */
  variableMove(): FlowMove | null {
    const vars = this.variables();
    const t = this.node.transitions.find((x) => 'variable' in x.when && vars[x.when.variable.name] === x.when.variable.equals);
    return t && 'variable' in t.when ? { to: t.to, context: this.rule(t.context), via: `variable:${t.when.variable.name}` } : null;
  }

  /** The node tools offered now (absent: none). */
  tools(): Set<string> {
    return new Set(this.node.tools ?? []);
  }

  /** The bot's prompt with the current node's. */
  systemPrompt(botPrompt: string): string {
    const node = renderTemplate(this.node.prompt?.trim() ?? '', this.variables()).trim();
    return [botPrompt.trim(), node].filter(Boolean).join('\n\n');
  }

  /** Enters `move.to` (and on through the variable moves it triggers): what the call says and whether it ends. */
  enter(move: FlowMove): Entered {
    const says: string[] = [];
    let endCall = false;
    let m: FlowMove | null = move;
    for (let hop = 0; m && hop < MAX_HOPS && Object.hasOwn(this.flow.nodes, m.to); hop++) {
      this.entries.push({ node: m.to, from: this.current, via: m.via, at: new Date().toISOString() });
      this.current = m.to;
      const say = this.node.say ? renderTemplate(this.node.say, this.variables()).trim() : '';
      if (say) says.push(say);
      if (this.node.end_call) {
        endCall = true;
        break;
      }
      m = this.variableMove();
    }
    return { node: this.current, say: says.join(' ') || null, endCall, context: move.context };
  }
}

/** The conversation as plain lines, for a summary with no model to write one. */
export function plainSummary(messages: ReadonlyArray<{ role: string; content?: unknown }>): string {
  const lines = messages
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string' && m.content.trim())
    .map((m) => `${m.role === 'user' ? 'Caller' : 'Bot'}: ${(m.content as string).trim()}`);
  return `Summary of the conversation so far: ${lines.join(' ') || '(nothing yet)'}`.slice(0, 4000);
}

/**
 * The bot's policy with every flow node's intents too: what the recogniser listens for (a scripted bot's grammar)
 * and what reads as a whole utterance, in whichever node the call is.
 */
export function policyWithFlow(policy: BotPolicy | null, flow: BotFlow | null | undefined): BotPolicy | null {
  if (!flow) return policy;
  const intents = Object.values(flow.nodes).flatMap((n) => (n.intents ?? []).map((i) => ({ ...i, examples: i.examples ?? [] })));
  return { intents: [...(policy?.intents ?? []), ...intents], fallback: policy?.fallback ?? { reply: 'Sorry, I did not catch that.' } };
}
