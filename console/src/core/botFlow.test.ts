// The flow editor's logic: the layered layout of the drawing, the arrows' labels, the problems found while the
// flow is typed (the backend's graph check), the small edits, and the flow and handoff as the form sends them.
import { BOT_DEFAULTS, type Bot, type BotFlow } from '@voice-platform/schemas/bot.js';
import { DEFAULT_HANDOFF_FAILURE } from '@voice-platform/schemas/flow.js';
import {
  addNode,
  addTransition,
  flowToolNames,
  GRAPH,
  handoffToBody,
  handoffToForm,
  layoutFlow,
  liveFlowProblems,
  parseFlowText,
  removeNode,
  removeTransition,
  whenFrom,
  whenLabel,
  type FlowGraph,
} from './botFlow.js';
import { botToForm, flowFormProblems, formToBody } from './botForm.js';
import { validateBot } from './validation.js';

/** greet → (pay intent) pay → (tool result) done; greet → (variable) done. */
const THREE: BotFlow = {
  start: 'greet',
  nodes: {
    greet: { say: 'Hello.', transitions: [{ to: 'pay', when: { intent: 'wants_to_pay' } }, { to: 'done', when: { variable: { name: 'tier', equals: 'gold' } } }] },
    pay: { tools: ['take_payment'], transitions: [{ to: 'done', when: { tool_result: { tool: 'take_payment', path: 'ok', equals: true } } }] },
    done: { say: 'Goodbye.', transitions: [], end_call: true },
  },
};

const node = (g: FlowGraph, id: string) => g.nodes.find((n) => n.id === id)!;
const rowsOf = (g: FlowGraph) => Object.fromEntries(g.nodes.map((n) => [n.id, n.row]));

function storedBot(extra: Partial<Bot> = {}): Bot {
  return { ...BOT_DEFAULTS, id: 'b1', name: 'Shop', has_tool_secret: false, version: 1, published_version: 1, created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z', ...extra };
}

describe('layoutFlow', () => {
  it('puts nodes in rows by BFS depth from start, marks start and end, and labels each arrow with its when', () => {
    const g = layoutFlow(THREE);
    // done is one step from greet (by the variable) even though pay also leads there: its depth is 1.
    expect(rowsOf(g)).toEqual({ greet: 0, pay: 1, done: 1 });
    expect(g.nodes.map((n) => n.id)).toEqual(['greet', 'pay', 'done']);
    expect(node(g, 'greet')).toMatchObject({ start: true, global: false, endCall: false, missing: false, y: GRAPH.margin });
    expect(node(g, 'done')).toMatchObject({ start: false, endCall: true, y: GRAPH.margin + GRAPH.nodeHeight + GRAPH.gapY });
    expect(g.edges.map((e) => [e.from, e.to, e.index, e.label])).toEqual([
      ['greet', 'pay', 0, 'wants_to_pay'],
      ['greet', 'done', 1, 'tier = "gold"'],
      ['pay', 'done', 0, 'result of take_payment.ok = true'],
    ]);
    // Boxes of a row do not overlap, and every box fits in the drawing.
    const [pay, done] = [node(g, 'pay'), node(g, 'done')];
    expect(pay.x + pay.width + GRAPH.gapX).toBe(done.x);
    for (const n of g.nodes) {
      expect(n.x).toBeGreaterThanOrEqual(GRAPH.margin);
      expect(n.x + n.width).toBeLessThanOrEqual(g.width);
      expect(n.y + n.height).toBeLessThanOrEqual(g.height);
    }
    // The single row-0 box is centred over the row below.
    const greet = node(g, 'greet');
    expect(greet.x + greet.width / 2).toBe((pay.x + done.x + done.width) / 2);
  });

  it('draws an arrow from the bottom of a box to the top of the box below, with its label on the curve', () => {
    const g = layoutFlow({ start: 'a', nodes: { a: { transitions: [{ to: 'b', when: { intent: 'yes' } }] }, b: { transitions: [], end_call: true } } });
    const [a, b] = [node(g, 'a'), node(g, 'b')];
    const e = g.edges[0]!;
    // Straight down between centred boxes of equal width.
    expect(e.d).toBe(`M ${a.x + a.width / 2} ${a.y + a.height} Q ${a.x + a.width / 2} ${(a.y + a.height + b.y) / 2} ${b.x + b.width / 2} ${b.y}`);
    expect([e.labelX, e.labelY]).toEqual([a.x + a.width / 2, (a.y + a.height / 2 + b.y + b.height / 2) / 2]);
  });

  it('sizes a box by its id', () => {
    const long = 'a_rather_long_node_identifier';
    const g = layoutFlow({ start: long, nodes: { [long]: { transitions: [], end_call: true } } });
    expect(node(g, long).width).toBe(long.length * GRAPH.charWidth + 2 * GRAPH.padX);
    expect(layoutFlow({ start: 'x', nodes: { x: { transitions: [] } } }).nodes[0]!.width).toBe(GRAPH.minNodeWidth);
  });

  it('gives global nodes their own row, after unreachable nodes, and draws missing targets last', () => {
    const g = layoutFlow({
      start: 'a',
      global_nodes: ['help'],
      nodes: {
        a: { transitions: [{ to: 'ghost', when: { intent: 'x' } }] },
        orphan: { transitions: [{ to: 'a', when: { intent: 'back' } }] },
        help: { transitions: [{ to: 'a', when: { intent: 'resume' } }] },
      },
    });
    expect(rowsOf(g)).toEqual({ a: 0, orphan: 1, help: 2, ghost: 3 });
    expect(node(g, 'help')).toMatchObject({ global: true, start: false });
    expect(node(g, 'ghost')).toMatchObject({ missing: true });
    expect(g.edges.find((e) => e.to === 'ghost')).toMatchObject({ from: 'a', missing: true, label: 'x' });
    expect(g.edges.filter((e) => !e.missing).map((e) => `${e.from}>${e.to}`)).toEqual(['orphan>a', 'help>a']);
  });

  it('a global start node stays in the global row', () => {
    const g = layoutFlow({ start: 'hub', global_nodes: ['hub'], nodes: { hub: { transitions: [], end_call: true } } });
    expect(node(g, 'hub')).toMatchObject({ start: true, global: true, row: 0 });
  });

  it('bends arrows between the same two boxes apart, and loops a box to itself', () => {
    const g = layoutFlow({
      start: 'a',
      nodes: {
        a: { transitions: [{ to: 'b', when: { intent: 'go' } }, { to: 'a', when: { intent: 'again' } }] },
        b: { transitions: [{ to: 'a', when: { intent: 'back' } }], end_call: true },
      },
    });
    const [go, again, back] = g.edges;
    expect(go!.d).toContain(' Q ');
    expect([back!.labelX, back!.labelY]).not.toEqual([go!.labelX, go!.labelY]);
    const a = node(g, 'a');
    expect(again!.d).toMatch(/^M [\d.]+ [\d.]+ C /);
    expect(again!.labelX).toBeGreaterThan(a.x + a.width);
    expect(g.width).toBeGreaterThan(Math.max(...g.nodes.map((n) => n.x + n.width)) + GRAPH.margin);
  });

  it('draws what a half-typed flow holds, and nothing for what is not a flow', () => {
    expect(layoutFlow(null)).toEqual({ nodes: [], edges: [], width: 0, height: 0 });
    expect(layoutFlow('text')).toEqual({ nodes: [], edges: [], width: 0, height: 0 });
    const g = layoutFlow({ start: 'nowhere', nodes: { a: { transitions: [{ when: { intent: 'x' } }, 'junk'] }, b: null } });
    expect(rowsOf(g)).toEqual({ a: 0, b: 0 });
    expect(g.edges).toEqual([]);
    expect(g.nodes.some((n) => n.start)).toBe(false);
  });
});

describe('whenLabel', () => {
  it('names the intent, the tool (its path and value), the variable and its value', () => {
    expect(whenLabel({ intent: 'pay_now' })).toBe('pay_now');
    expect(whenLabel({ tool_result: { tool: 'lookup' } })).toBe('result of lookup');
    expect(whenLabel({ tool_result: { tool: 'lookup', path: 'items.0.id' } })).toBe('result of lookup.items.0.id');
    expect(whenLabel({ tool_result: { tool: 'lookup', equals: 'ok' } })).toBe('result of lookup = "ok"');
    expect(whenLabel({ variable: { name: 'tier', equals: 'gold' } })).toBe('tier = "gold"');
    expect(whenLabel(undefined)).toBe('');
  });
});

describe('liveFlowProblems', () => {
  const schemaOf = (flowText: string) => {
    const form = botToForm();
    form.name = 'x';
    form.flow = flowText;
    return validateBot(formToBody(form));
  };
  const live = (flow: unknown, tools: string[] = ['take_payment']) => {
    const text = typeof flow === 'string' ? flow : JSON.stringify(flow);
    return liveFlowProblems(text, tools, schemaOf(text));
  };

  it('finds nothing in a sound flow or in no flow', () => {
    expect(live(THREE)).toEqual([]);
    expect(live('  ')).toEqual([]);
  });

  it('names a transition to a missing node and the node left unreachable, as the backend does', () => {
    const broken = structuredClone(THREE);
    broken.nodes.greet!.transitions[0]!.to = 'paymnet';
    expect(live(broken)).toEqual([
      { field: 'flow.nodes.greet.transitions.0.to', message: 'names no node (paymnet)' },
      { field: 'flow.nodes.pay', message: 'is unreachable from greet (no transition leads here and it is not a global node)' },
    ]);
    // The schema accepts it: the page's save is not held back, the backend refuses it with the same details.
    expect(schemaOf(JSON.stringify(broken))).toEqual({});
  });

  it('names a tool the bot does not have, and counts handoff while the bot may hand off', () => {
    const f: BotFlow = { start: 'a', nodes: { a: { tools: ['handoff'], transitions: [], end_call: true } } };
    expect(live(f, flowToolNames([{ name: ' lookup ' }], false))).toEqual([{ field: 'flow.nodes.a.tools.0', message: "handoff is not one of the bot's tools" }]);
    expect(live(f, flowToolNames([{ name: 'lookup' }, { name: '' }], true))).toEqual([]);
    expect(flowToolNames([{ name: ' lookup ' }, { name: '' }], true)).toEqual(['lookup', 'handoff']);
  });

  it('names JSON that does not parse, and shapes the schema refuses, before the graph check', () => {
    expect(live('{"start": "a",')).toEqual([{ field: 'flow', message: expect.stringMatching(/^Not valid JSON: /) }]);
    // A transition without its `when`: the graph check would not know the shape, the schema names the field.
    expect(live({ start: 'a', nodes: { a: { transitions: [{ to: 'a' }] } } })).toEqual([{ field: 'flow.nodes.a.transitions.0.when', message: 'This field is required.' }]);
  });
});

describe('editing the flow', () => {
  it('adds a first node as the start of a new flow, then more nodes and transitions, leaving the given flow as it was', () => {
    const one = addNode(null, 'greet');
    expect(one).toEqual({ start: 'greet', nodes: { greet: { transitions: [] } } });
    const two = addNode(one, 'bye', { endCall: true, say: 'Goodbye.' });
    expect(one.nodes).not.toHaveProperty('bye');
    expect(two.nodes.bye).toEqual({ say: 'Goodbye.', transitions: [], end_call: true });
    const linked = addTransition(two, 'greet', { to: 'bye', when: whenFrom('intent', ' done ') });
    expect(two.nodes.greet!.transitions).toEqual([]);
    expect(linked.nodes.greet!.transitions).toEqual([{ to: 'bye', when: { intent: 'done' } }]);
    expect(addTransition(linked, 'nope', { to: 'bye', when: { intent: 'x' } })).toBe(linked);
    expect(removeTransition(linked, 'greet', 0).nodes.greet!.transitions).toEqual([]);
    expect(linked.nodes.greet!.transitions).toHaveLength(1);
  });

  it('removes a node with the transitions to it and its place among the global nodes; the last one removes the flow', () => {
    const f: BotFlow = { ...THREE, global_nodes: ['done'] };
    const without = removeNode(f, 'done')!;
    expect(Object.keys(without.nodes)).toEqual(['greet', 'pay']);
    expect(without.nodes.greet!.transitions).toEqual([{ to: 'pay', when: { intent: 'wants_to_pay' } }]);
    expect(without.nodes.pay!.transitions).toEqual([]);
    expect(without.global_nodes).toEqual([]);
    expect(f.nodes.done).toBeDefined();
    expect(removeNode({ start: 'a', nodes: { a: { transitions: [] } } }, 'a')).toBeNull();
  });

  it('reads a transition’s when from the form’s kind and text', () => {
    expect(whenFrom('tool_result', 'lookup ')).toEqual({ tool_result: { tool: 'lookup' } });
    expect(whenFrom('variable', 'tier = gold')).toEqual({ variable: { name: 'tier', equals: 'gold' } });
    expect(whenFrom('variable', 'tier')).toEqual({ variable: { name: 'tier', equals: '' } });
  });
});

describe('the flow and handoff as the form sends them', () => {
  it('sends neither for a bot that never had them, and a set flow and handoff as they are', () => {
    const form = botToForm();
    expect(formToBody(form)).not.toHaveProperty('flow');
    expect(formToBody(form)).not.toHaveProperty('handoff');
    form.flow = JSON.stringify(THREE);
    form.handoff = { enabled: true, bots: ['b2'], greeting: false, on_failure: '  ' };
    expect(formToBody(form)).toMatchObject({ flow: THREE, handoff: { bots: ['b2'], greeting: false, on_failure: DEFAULT_HANDOFF_FAILURE } });
  });

  it('reads a stored flow and handoff back as they were, and removes them with null', () => {
    const handoff = { bots: ['b2', 'b3'], greeting: true, on_failure: 'Sorry.' };
    const form = botToForm(storedBot({ flow: THREE, handoff }));
    expect(JSON.parse(form.flow)).toEqual(THREE);
    expect(form.handoff).toEqual({ enabled: true, ...handoff });
    expect(formToBody(form)).toMatchObject({ flow: THREE, handoff });
    form.flow = '';
    form.handoff.enabled = false;
    expect(formToBody(form)).toMatchObject({ flow: null, handoff: null });
  });

  it('holds back flow text that is not JSON, naming it', () => {
    const form = botToForm();
    form.flow = '{ nope';
    expect(flowFormProblems(form)).toEqual({ flow: expect.stringMatching(/^Not valid JSON: /) });
    expect(formToBody(form)).not.toHaveProperty('flow');
    expect(flowFormProblems(botToForm())).toEqual({});
    expect(parseFlowText('null')).toEqual({ ok: true, value: null });
  });

  it('a new handoff starts with the greeting on and the default failure text', () => {
    expect(handoffToForm(null)).toEqual({ enabled: false, bots: [], greeting: true, on_failure: DEFAULT_HANDOFF_FAILURE });
    expect(handoffToBody(handoffToForm(null))).toBeNull();
  });
});
