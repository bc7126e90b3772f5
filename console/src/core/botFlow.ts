// A bot's flow and handoff settings in the console (shared/DESIGN.md §18, docs/design.md §18): the flow edited as
// JSON text with its problems found live (the backend's own graph check, flowProblems), a layered drawing of the
// graph (pure layout: boxes and arrows in SVG coordinates), small edits (add/remove a node or a transition), and
// the handoff form. The page only renders what these return.
import { DEFAULT_HANDOFF_FAILURE, flowProblems, HANDOFF_TOOL, type FlowProblem } from '@voice-platform/schemas/flow.js';
import type { BotFlow, FlowNode, FlowTransition, FlowWhen, HandoffSettings } from '@voice-platform/schemas/bot.js';

/** The handoff setting as edited; `enabled: false` sends null (or nothing for a bot that never had one). */
export interface HandoffForm {
  enabled: boolean;
  bots: string[];
  greeting: boolean;
  on_failure: string;
}

export function handoffToForm(h: HandoffSettings | null | undefined): HandoffForm {
  return { enabled: Boolean(h), bots: [...(h?.bots ?? [])], greeting: h?.greeting ?? true, on_failure: h?.on_failure ?? DEFAULT_HANDOFF_FAILURE };
}

/** The setting as the API takes it; a blank failure text is the default one. */
export function handoffToBody(f: HandoffForm): HandoffSettings | null {
  if (!f.enabled) return null;
  return { bots: [...f.bots], greeting: f.greeting, on_failure: f.on_failure.trim() || DEFAULT_HANDOFF_FAILURE };
}

/** A stored flow as the editor's text ('' for none): pretty JSON, so it is edited by hand. */
export const flowToText = (flow: BotFlow | null | undefined): string => (flow ? JSON.stringify(flow, null, 2) : '');

/** The editor's text read: `null` for blank (no flow), the parsed value, or the JSON error as a sentence. */
export function parseFlowText(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (!text.trim()) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: `Not valid JSON: ${(err as Error).message}` };
  }
}

/** The tool names a flow may name: the bot's (as typed), and `handoff` while the bot may hand off (as the backend counts them). */
export const flowToolNames = (tools: ReadonlyArray<{ name: string }>, handoffEnabled: boolean, mcp: ReadonlyArray<{ allowed_tools: string }> = []): string[] => [
  ...tools.map((t) => t.name.trim()).filter(Boolean),
  ...(handoffEnabled ? [HANDOFF_TOOL] : []),
  ...mcp.flatMap((m) => m.allowed_tools.split(/[\s,]+/).filter(Boolean)),
];

/** An MCP server that allows every tool it lists (no names given): a flow may name any tool (the backend agrees). */
export const anyMcpTool = (mcp: ReadonlyArray<{ url: string; allowed_tools: string }>): boolean => mcp.some((m) => m.url.trim() !== '' && m.allowed_tools.trim() === '');

/**
 * The flow's problems as the editor shows them while typing: a JSON error; else the schema's errors under `flow`
 * (`schemaErrors`: validateBot's field → message for the whole bot); else the graph check the backend runs at save.
 * flowProblems assumes the schema's shape, so it runs only on a flow the schema accepts.
 */
export function liveFlowProblems(text: string, tools: readonly string[], schemaErrors: Record<string, string>, anyTool = false): FlowProblem[] {
  const parsed = parseFlowText(text);
  if (!parsed.ok) return [{ field: 'flow', message: parsed.error }];
  if (parsed.value === null) return [];
  const shape = Object.entries(schemaErrors)
    .filter(([field]) => field === 'flow' || field.startsWith('flow.'))
    .map(([field, message]) => ({ field, message }));
  if (shape.length) return shape;
  return flowProblems(parsed.value as BotFlow, { tools, anyTool });
}

/** How a transition's `when` reads on its arrow: the intent's name, the tool whose result moves, the variable. */
export function whenLabel(when: FlowWhen | undefined): string {
  if (!when || typeof when !== 'object') return '';
  if ('intent' in when) return when.intent;
  if ('tool_result' in when) {
    const t = when.tool_result;
    const at = t.path ? `.${t.path}` : '';
    return t.equals === undefined ? `result of ${t.tool}${at}` : `result of ${t.tool}${at} = ${JSON.stringify(t.equals)}`;
  }
  if ('variable' in when) return `${when.variable.name} = ${JSON.stringify(when.variable.equals)}`;
  return '';
}

/** One box of the drawing; `missing`: a node a transition names that the flow does not have (drawn as a warning). */
export interface GraphNode {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  start: boolean;
  global: boolean;
  endCall: boolean;
  missing: boolean;
  /** Its row: BFS depth from start; then unreachable nodes; then global nodes; then missing ones. */
  row: number;
}

/** One arrow: a quadratic curve from box edge to box edge (`d` an SVG path), its label at the curve's middle. */
export interface GraphEdge {
  from: string;
  to: string;
  label: string;
  d: string;
  labelX: number;
  labelY: number;
  /** The transition's index among its node's (the editor's field path). */
  index: number;
  missing: boolean;
}

export interface FlowGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

/** Drawing sizes (SVG user units). */
export const GRAPH = { nodeHeight: 48, minNodeWidth: 110, charWidth: 8, padX: 16, gapX: 60, gapY: 80, margin: 24 } as const;

type FlowLike = { start?: unknown; nodes?: unknown; global_nodes?: unknown };
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The transitions of a node as far as they can be read (a flow being typed may be half-formed). */
function transitionsOf(node: unknown): Array<{ to: string; when: FlowWhen | undefined }> {
  const ts = isObject(node) && Array.isArray(node.transitions) ? node.transitions : [];
  return ts.map((t: unknown) => (isObject(t) && typeof t.to === 'string' ? { to: t.to, when: t.when as FlowWhen | undefined } : { to: '', when: undefined }));
}

/**
 * The flow laid out in rows, top to bottom: the start node, then the nodes its transitions reach by BFS depth;
 * nodes no transition reaches next; the global nodes in their own row; last the missing nodes transitions name.
 * In a row, boxes keep the order they were found in, centred on the widest row. Pure: the page draws it as is.
 * Anything unreadable (not an object, no nodes) draws as an empty graph.
 */
export function layoutFlow(flow: unknown): FlowGraph {
  const f: FlowLike = isObject(flow) ? flow : {};
  const nodes = isObject(f.nodes) ? f.nodes : {};
  const ids = Object.keys(nodes);
  const has = (id: string) => Object.hasOwn(nodes, id);
  const globals = new Set(Array.isArray(f.global_nodes) ? f.global_nodes.filter((g): g is string => typeof g === 'string' && has(g)) : []);
  const start = typeof f.start === 'string' && has(f.start) ? f.start : null;

  const row = new Map<string, number>();
  if (start !== null && !globals.has(start)) {
    row.set(start, 0);
    const queue = [start];
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      for (const t of transitionsOf(nodes[id])) {
        if (has(t.to) && !row.has(t.to) && !globals.has(t.to)) {
          row.set(t.to, row.get(id)! + 1);
          queue.push(t.to);
        }
      }
    }
  }
  let next = row.size ? Math.max(...row.values()) + 1 : 0;
  const unreached = ids.filter((id) => !row.has(id) && !globals.has(id));
  if (unreached.length) {
    for (const id of unreached) row.set(id, next);
    next++;
  }
  if (globals.size) {
    for (const id of globals) row.set(id, next);
    next++;
  }
  const missing: string[] = [];
  for (const id of ids) for (const t of transitionsOf(nodes[id])) if (t.to && !has(t.to) && !missing.includes(t.to)) missing.push(t.to);
  for (const id of missing) row.set(id, next);
  if (missing.length) next++;

  // Rows in found order: BFS order for the reached ones (Map insertion order), the flow's order for the rest.
  const rows: string[][] = Array.from({ length: next }, () => []);
  for (const [id, r] of row) rows[r]!.push(id);
  const width = (id: string) => Math.max(GRAPH.minNodeWidth, id.length * GRAPH.charWidth + 2 * GRAPH.padX);
  const rowWidth = (r: string[]) => r.reduce((sum, id) => sum + width(id), 0) + Math.max(0, r.length - 1) * GRAPH.gapX;
  const widest = Math.max(0, ...rows.map(rowWidth));
  const out: GraphNode[] = [];
  rows.forEach((r, i) => {
    let x = GRAPH.margin + (widest - rowWidth(r)) / 2;
    for (const id of r) {
      const node = nodes[id];
      out.push({
        id,
        x,
        y: GRAPH.margin + i * (GRAPH.nodeHeight + GRAPH.gapY),
        width: width(id),
        height: GRAPH.nodeHeight,
        start: id === start,
        global: globals.has(id),
        endCall: isObject(node) && node.end_call === true,
        missing: !has(id),
        row: i,
      });
      x += width(id) + GRAPH.gapX;
    }
  });

  const byId = new Map(out.map((n) => [n.id, n]));
  const edges: GraphEdge[] = [];
  // Arrows between the same two boxes (either way) bend apart so their labels do not sit on each other.
  const pairCount = new Map<string, number>();
  for (const id of ids) {
    transitionsOf(nodes[id]).forEach((t, index) => {
      const a = byId.get(id);
      const b = byId.get(t.to);
      if (!a || !b) return;
      const pair = [id, t.to].sort().join('\u0000');
      const k = pairCount.get(pair) ?? 0;
      pairCount.set(pair, k + 1);
      edges.push({ from: id, to: t.to, label: whenLabel(t.when), index, missing: b.missing, ...curve(a, b, k) });
    });
  }
  if (!out.length) return { nodes: [], edges: [], width: 0, height: 0 };
  const right = Math.max(0, ...out.map((n) => n.x + n.width));
  const bottom = Math.max(0, ...out.map((n) => n.y + n.height));
  // Self-loops reach out right of their box, labels past it.
  const loopRoom = edges.some((e) => e.from === e.to) ? 120 : 0;
  return { nodes: out, edges, width: Math.ceil(right + GRAPH.margin + loopRoom), height: Math.ceil(bottom + GRAPH.margin) };
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Where the segment from a box's centre towards (tx, ty) leaves the box. */
function border(n: GraphNode, tx: number, ty: number): [number, number] {
  const cx = n.x + n.width / 2;
  const cy = n.y + n.height / 2;
  const dx = tx - cx;
  const dy = ty - cy;
  if (dx === 0 && dy === 0) return [cx, cy];
  const s = Math.min(Math.abs(dx) > 0 ? n.width / 2 / Math.abs(dx) : Infinity, Math.abs(dy) > 0 ? n.height / 2 / Math.abs(dy) : Infinity);
  return [cx + dx * s, cy + dy * s];
}

/** The k-th arrow between two boxes: straight for the first (k = 0), bent to alternate sides after; a loop for a box to itself. */
function curve(a: GraphNode, b: GraphNode, k: number): { d: string; labelX: number; labelY: number } {
  if (a === b) {
    const x = a.x + a.width;
    const y1 = a.y + a.height * 0.3;
    const y2 = a.y + a.height * 0.7;
    const reach = 40 + 16 * k;
    return { d: `M ${round(x)} ${round(y1)} C ${round(x + reach)} ${round(y1 - 20)}, ${round(x + reach)} ${round(y2 + 20)}, ${round(x)} ${round(y2)}`, labelX: round(x + reach + 4), labelY: round(a.y + a.height / 2) };
  }
  const acx = a.x + a.width / 2;
  const acy = a.y + a.height / 2;
  const bcx = b.x + b.width / 2;
  const bcy = b.y + b.height / 2;
  const len = Math.hypot(bcx - acx, bcy - acy);
  // Perpendicular offset: 0, +40, -40, +80, -80, …
  const bend = k === 0 ? 0 : Math.ceil(k / 2) * 40 * (k % 2 ? 1 : -1);
  const mx = (acx + bcx) / 2 + (-(bcy - acy) / len) * bend;
  const my = (acy + bcy) / 2 + ((bcx - acx) / len) * bend;
  const [sx, sy] = border(a, mx, my);
  const [ex, ey] = border(b, mx, my);
  // The control point that puts the curve's middle at (mx, my): the label sits on the curve.
  const cx = 2 * mx - (sx + ex) / 2;
  const cy = 2 * my - (sy + ey) / 2;
  return { d: `M ${round(sx)} ${round(sy)} Q ${round(cx)} ${round(cy)} ${round(ex)} ${round(ey)}`, labelX: round(mx), labelY: round(my) };
}

// Small edits of the flow (the editor's forms): each returns a new flow, the one given untouched.

/** The flow with a node `id` added (a new flow starting there when there is none). */
export function addNode(flow: BotFlow | null, id: string, opts: { endCall?: boolean; say?: string } = {}): BotFlow {
  const node: FlowNode = { ...(opts.say ? { say: opts.say } : {}), transitions: [], ...(opts.endCall ? { end_call: true } : {}) };
  if (!flow) return { start: id, nodes: { [id]: node } };
  return { ...flow, nodes: { ...flow.nodes, [id]: node } };
}

/** The flow without node `id`, the transitions to it and its place among the global nodes (null when it was the last node). */
export function removeNode(flow: BotFlow, id: string): BotFlow | null {
  const nodes = Object.fromEntries(
    Object.entries(flow.nodes)
      .filter(([n]) => n !== id)
      .map(([n, node]) => [n, { ...node, transitions: node.transitions.filter((t) => t.to !== id) }]),
  );
  if (!Object.keys(nodes).length) return null;
  return { ...flow, nodes, ...(flow.global_nodes ? { global_nodes: flow.global_nodes.filter((g) => g !== id) } : {}) };
}

/** A transition's `when` from the editor's two fields: its kind and its text (`tool` or `name=value` for a variable). */
export function whenFrom(kind: 'intent' | 'tool_result' | 'variable', text: string): FlowWhen {
  const t = text.trim();
  if (kind === 'intent') return { intent: t };
  if (kind === 'tool_result') return { tool_result: { tool: t } };
  const eq = t.indexOf('=');
  return { variable: { name: (eq < 0 ? t : t.slice(0, eq)).trim(), equals: eq < 0 ? '' : t.slice(eq + 1).trim() } };
}

/** The flow with a transition added to node `from` (its node must exist). */
export function addTransition(flow: BotFlow, from: string, transition: FlowTransition): BotFlow {
  const node = flow.nodes[from];
  if (!node) return flow;
  return { ...flow, nodes: { ...flow.nodes, [from]: { ...node, transitions: [...node.transitions, transition] } } };
}

/** The flow without node `from`'s transition number `index`. */
export function removeTransition(flow: BotFlow, from: string, index: number): BotFlow {
  const node = flow.nodes[from];
  if (!node) return flow;
  return { ...flow, nodes: { ...flow.nodes, [from]: { ...node, transitions: node.transitions.filter((_, i) => i !== index) } } };
}
