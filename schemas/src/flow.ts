// Flows and handoffs (shared/DESIGN.md §18): a bot's conversation as a graph of nodes, and the bots a call may be
// handed to. The schemas, and the graph check the backend runs at save and the console runs live (flowProblems).
// The TypeBox schemas are in bot.ts (BotFlow, HandoffSettings): they embed the policy's intent, and bot.ts imports
// this file, so this file imports nothing of bot.ts at run time.

/** A node id: `go_to_<id>` must be a function name (≤ 64 of [A-Za-z0-9_-]). */
export const FLOW_NODE_ID_PATTERN = '^[A-Za-z0-9_-]{1,48}$';
export const MAX_FLOW_NODES = 50;
export const FLOW_CONTEXT_RULES = ['append', 'reset', 'summary'] as const;
export type FlowContextRule = (typeof FLOW_CONTEXT_RULES)[number];
export const HANDOFF_CONTEXTS = ['all', 'summary', 'none'] as const;
export type HandoffContext = (typeof HANDOFF_CONTEXTS)[number];
export const DEFAULT_HANDOFF_FAILURE = 'Sorry, I could not pass you on just now. Let us carry on.';
/** The function an LLM calls to move to node `id`. */
export const goToFunction = (id: string) => `go_to_${id}`;
/** The built-in tool that hands the call to another bot. */
export const HANDOFF_TOOL = 'handoff';

/** A problem of a flow, in the error details shape (`field` a dotted path from the bot). */
export interface FlowProblem {
  field: string;
  message: string;
}

/** What the graph check needs of the rest of the bot. */
export interface FlowContext {
  /** The bot's tool names (plus `handoff` when the bot may hand off, and its MCP servers' allowed tools). */
  tools: readonly string[];
  /** An MCP server of the bot allows all its tools (no `allowed_tools`): a name not known here may be one of them. */
  anyTool?: boolean;
}

type FlowLike = { start: string; nodes: Record<string, FlowNodeLike>; global_nodes?: string[] };
type FlowNodeLike = { tools?: string[]; intents?: Array<{ name: string; end_call?: boolean }>; transitions?: Array<{ to: string; when?: unknown }>; end_call?: boolean };

/**
 * The graph's problems, each named by field: a start, global node or transition naming no node; a node tool
 * that is not one of the bot's; an intent transition naming no intent of its node (or of a global node); a node
 * unreachable from `start` (global nodes are reachable from anywhere); no way to end (no reachable node, or
 * intent, with end_call); a reachable node from which no path leads to an end (the call would loop).
 * Pure: the console runs it as the flow is typed.
 */
export function flowProblems(flow: FlowLike, ctx: FlowContext): FlowProblem[] {
  const problems: FlowProblem[] = [];
  const nodes = flow.nodes ?? {};
  const ids = Object.keys(nodes);
  const has = (id: string) => Object.hasOwn(nodes, id);
  const globals = (flow.global_nodes ?? []).filter(has);
  if (!has(flow.start)) problems.push({ field: 'flow.start', message: `names no node (${flow.start})` });
  (flow.global_nodes ?? []).forEach((g, i) => {
    if (!has(g)) problems.push({ field: `flow.global_nodes.${i}`, message: `names no node (${g})` });
  });
  const globalIntents = new Set(globals.flatMap((g) => (nodes[g]!.intents ?? []).map((i) => i.name)));
  const known = new Set(ctx.tools);
  const tools = { has: (name: string) => ctx.anyTool === true || known.has(name) };
  for (const id of ids) {
    const node = nodes[id]!;
    node.tools?.forEach((t, k) => {
      if (!tools.has(t)) problems.push({ field: `flow.nodes.${id}.tools.${k}`, message: `${t} is not one of the bot's tools` });
    });
    const own = new Set((node.intents ?? []).map((i) => i.name));
    (node.transitions ?? []).forEach((t, j) => {
      if (!has(t.to)) problems.push({ field: `flow.nodes.${id}.transitions.${j}.to`, message: `names no node (${t.to})` });
      const intent = (t.when as { intent?: unknown } | undefined)?.intent;
      // Only a node with intents is matched by them (an LLM's node may name its transitions by purpose alone).
      if (typeof intent === 'string' && own.size > 0 && !own.has(intent) && !globalIntents.has(intent)) {
        problems.push({ field: `flow.nodes.${id}.transitions.${j}.when.intent`, message: `${intent} is not an intent of this node or of a global node` });
      }
      const tool = (t.when as { tool_result?: { tool?: unknown } } | undefined)?.tool_result?.tool;
      if (typeof tool === 'string' && !tools.has(tool)) problems.push({ field: `flow.nodes.${id}.transitions.${j}.when.tool_result.tool`, message: `${tool} is not one of the bot's tools` });
    });
  }
  // Reachable: from start, and from every global node (entered from anywhere).
  const next = (id: string) => (nodes[id]?.transitions ?? []).map((t) => t.to).filter(has);
  const reached = new Set<string>();
  const queue = [...(has(flow.start) ? [flow.start] : []), ...globals];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (reached.has(id)) continue;
    reached.add(id);
    queue.push(...next(id));
  }
  if (has(flow.start)) {
    for (const id of ids) if (!reached.has(id)) problems.push({ field: `flow.nodes.${id}`, message: `is unreachable from ${flow.start} (no transition leads here and it is not a global node)` });
  }
  // Ends: a node with end_call, or one of its intents with end_call. A node can end if it ends, leads to one that
  // can, or a global node can (it is entered from anywhere).
  const ends = (id: string) => Boolean(nodes[id]!.end_call || (nodes[id]!.intents ?? []).some((i) => i.end_call));
  const canEnd = new Set(ids.filter(ends));
  for (let grew = true; grew; ) {
    grew = false;
    const anyGlobal = globals.some((g) => canEnd.has(g));
    for (const id of ids) {
      if (!canEnd.has(id) && (anyGlobal || next(id).some((n) => canEnd.has(n)))) {
        canEnd.add(id);
        grew = true;
      }
    }
  }
  if (has(flow.start)) {
    if (![...reached].some(ends)) problems.push({ field: 'flow', message: 'has no way to end: no reachable node (or intent of one) has end_call' });
    else for (const id of ids) if (reached.has(id) && !canEnd.has(id)) problems.push({ field: `flow.nodes.${id}`, message: 'no path from here leads to an end (the call would loop)' });
  }
  return problems;
}

/** The value at a dotted path of a JSON value (`a.b.0.c`); undefined when absent. */
export function valueAtPath(value: unknown, path: string | undefined): unknown {
  if (!path) return value;
  let v: unknown = value;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** JSON equality (objects by keys, in any order). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
