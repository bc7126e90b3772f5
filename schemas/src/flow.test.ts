// The flow graph check (shared/DESIGN.md §18): the backend refuses a flow with these problems at save, the console
// shows them as the flow is typed. Each problem names its field.
import { Value } from '@sinclair/typebox/value';
import { BotFlow } from './bot.js';
import { flowProblems, jsonEqual, valueAtPath } from './flow.js';

const node = (transitions: Array<{ to: string; when: object }>, extra: object = {}) => ({ transitions, ...extra });
const intent = (name: string, end_call?: boolean) => ({ name, examples: [name], reply: 'ok', ...(end_call ? { end_call } : {}) });

describe('flowProblems', () => {
  it('accepts a three-node flow that ends, with a global node reachable from anywhere', () => {
    const flow = {
      start: 'greet',
      nodes: {
        greet: node([{ to: 'book', when: { intent: 'book' } }], { intents: [intent('book')] }),
        book: node([{ to: 'done', when: { tool_result: { tool: 'lookup', path: 'ok', equals: true } } }], { tools: ['lookup'] }),
        done: node([], { say: 'Bye.', end_call: true }),
        help: node([{ to: 'greet', when: { intent: 'back' } }], { intents: [intent('help'), intent('back')] }),
      },
      global_nodes: ['help'],
    };
    expect(Value.Check(BotFlow, flow)).toBe(true);
    expect(flowProblems(flow, { tools: ['lookup'] })).toEqual([]);
  });

  it('names a missing start, global node, transition target and node tool', () => {
    const flow = {
      start: 'nowhere',
      nodes: { a: node([{ to: 'ghost', when: { intent: 'x' } }], { tools: ['nope'], end_call: true }) },
      global_nodes: ['phantom'],
    };
    expect(flowProblems(flow, { tools: ['lookup'] })).toEqual([
      { field: 'flow.start', message: 'names no node (nowhere)' },
      { field: 'flow.global_nodes.0', message: 'names no node (phantom)' },
      { field: 'flow.nodes.a.tools.0', message: "nope is not one of the bot's tools" },
      { field: 'flow.nodes.a.transitions.0.to', message: 'names no node (ghost)' },
    ]);
  });

  it("counts an MCP server's tools: anyTool (a server allowing every tool it lists) accepts a name not known at save", () => {
    const flow = { start: 'a', nodes: { a: node([{ to: 'b', when: { tool_result: { tool: 'crm_lookup' } } }], { tools: ['crm_lookup'] }), b: node([], { end_call: true }) } };
    expect(flowProblems(flow, { tools: ['lookup'] })).toEqual([
      { field: 'flow.nodes.a.tools.0', message: "crm_lookup is not one of the bot's tools" },
      { field: 'flow.nodes.a.transitions.0.when.tool_result.tool', message: "crm_lookup is not one of the bot's tools" },
    ]);
    expect(flowProblems(flow, { tools: ['lookup', 'crm_lookup'] })).toEqual([]);
    expect(flowProblems(flow, { tools: ['lookup'], anyTool: true })).toEqual([]);
  });

  it('names an unreachable node and a flow with no way to end', () => {
    const flow = { start: 'a', nodes: { a: node([{ to: 'b', when: { intent: 'go' } }]), b: node([{ to: 'a', when: { intent: 'back' } }]), island: node([]) } };
    expect(flowProblems(flow, { tools: [] })).toEqual([
      { field: 'flow.nodes.island', message: 'is unreachable from a (no transition leads here and it is not a global node)' },
      { field: 'flow', message: 'has no way to end: no reachable node (or intent of one) has end_call' },
    ]);
  });

  it('names each reachable node from which no path leads to an end (a loop), and counts an ending intent', () => {
    const flow = {
      start: 'a',
      nodes: {
        a: node([{ to: 'b', when: { intent: 'loop' } }, { to: 'c', when: { intent: 'stop' } }], { intents: [intent('loop'), intent('stop')] }),
        b: node([{ to: 'b2', when: { intent: 'x' } }]),
        b2: node([{ to: 'b', when: { intent: 'y' } }]),
        c: node([], { intents: [intent('bye', true)] }),
      },
    };
    expect(flowProblems(flow, { tools: [] })).toEqual([
      { field: 'flow.nodes.b', message: 'no path from here leads to an end (the call would loop)' },
      { field: 'flow.nodes.b2', message: 'no path from here leads to an end (the call would loop)' },
    ]);
  });

  it('names an intent transition whose intent the node does not have, and a tool_result on no tool of the bot', () => {
    const flow = { start: 'a', nodes: { a: node([{ to: 'a', when: { intent: 'typo' } }, { to: 'a', when: { tool_result: { tool: 'gone' } } }], { intents: [intent('real', true)] }) } };
    expect(flowProblems(flow, { tools: [] })).toEqual([
      { field: 'flow.nodes.a.transitions.0.when.intent', message: 'typo is not an intent of this node or of a global node' },
      { field: 'flow.nodes.a.transitions.1.when.tool_result.tool', message: "gone is not one of the bot's tools" },
    ]);
  });

  it('refuses by schema a node id that cannot be a function name and a when of no known kind', () => {
    expect(Value.Check(BotFlow, { start: 'a b', nodes: { 'a b': { transitions: [] } } })).toBe(false);
    expect(Value.Check(BotFlow, { start: 'a', nodes: { a: { transitions: [{ to: 'a', when: { weather: 'sunny' } }] } } })).toBe(false);
  });
});

describe('valueAtPath and jsonEqual', () => {
  it('reads a dotted path (array indexes too) and compares as JSON', () => {
    expect(valueAtPath({ a: { b: [{ c: 3 }] } }, 'a.b.0.c')).toBe(3);
    expect(valueAtPath({ a: 1 }, 'a.b')).toBeUndefined();
    expect(jsonEqual({ x: [1, { y: 'z' }] }, { x: [1, { y: 'z' }] })).toBe(true);
    expect(jsonEqual({ x: 1 }, { x: '1' })).toBe(false);
  });
});
