// A bot's flow and handoff settings at save (shared/DESIGN.md §18): a broken graph or a handoff to a bot that
// cannot take calls is a 422 naming each problem, and nothing stored changes; a good flow is stored with its
// defaults and reaches the worker's runtime config.
import { useAdminHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';

let h: Harness;
let auth: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

const post = (body: object) => h.http.post('/api/v1/bots').set('Authorization', auth).send(body);
const patch = (id: string, body: object) => h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send(body);
const config = (id: string) => h.http.get(`/api/v1/config?bot_id=${id}`).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);

const lookup = { name: 'lookup', description: 'Finds the order', type: 'http', url: 'https://93.184.216.34/orders' };
const good = {
  start: 'greet',
  nodes: {
    greet: { intents: [{ name: 'order', examples: ['where is my order'], reply: 'Let me look.' }], transitions: [{ to: 'order', when: { intent: 'order' } }] },
    order: { prompt: 'Ask for the order number.', tools: ['lookup'], transitions: [{ to: 'done', when: { tool_result: { tool: 'lookup', path: 'status', equals: 'shipped' } }, context: 'summary' }] },
    done: { say: 'It is on its way. Goodbye.', transitions: [], end_call: true },
  },
};

describe('bot flows at save', () => {
  it('stores a good flow with its defaults and hands it to the worker', async () => {
    const res = await post({ name: 'orders', tools: [lookup], flow: good }).expect(201);
    expect(res.body.flow).toEqual({
      start: 'greet',
      global_nodes: [],
      context: 'append',
      nodes: { ...good.nodes, greet: { ...good.nodes.greet, intents: [{ name: 'order', examples: ['where is my order'], reply: 'Let me look.' }] } },
    });
    expect(res.body.handoff).toBeNull();
    expect((await config(res.body.id)).body.bot.flow).toEqual(res.body.flow);
  });

  it("lets a node name its MCP servers' tools: an allowed one, or any while a server allows all it lists", async () => {
    const mcpFlow = { start: 'ask', nodes: { ask: { tools: ['crm_balance'], transitions: [{ to: 'done', when: { tool_result: { tool: 'crm_balance' } } }] }, done: { say: 'Bye.', transitions: [], end_call: true } } };
    const crm = { name: 'crm', url: 'https://93.184.216.34/mcp' };
    await post({ name: 'mcp flow allowed', mcp_servers: [{ ...crm, allowed_tools: ['crm_balance'] }], flow: mcpFlow }).expect(201);
    await post({ name: 'mcp flow all', mcp_servers: [crm], flow: mcpFlow }).expect(201);
    const refused = await post({ name: 'mcp flow other', mcp_servers: [{ ...crm, allowed_tools: ['crm_other'] }], flow: mcpFlow }).expect(422);
    expect(refused.body.error.details).toEqual([
      { field: 'flow.nodes.ask.tools.0', message: "crm_balance is not one of the bot's tools" },
      { field: 'flow.nodes.ask.transitions.0.when.tool_result.tool', message: "crm_balance is not one of the bot's tools" },
    ]);
  });

  it('refuses a flow that loops without end and has an unreachable node, naming each problem; nothing stored changes', async () => {
    const bot = await post({ name: 'loops', tools: [lookup] }).expect(201);
    const loop = {
      start: 'a',
      nodes: {
        a: { intents: [{ name: 'next', examples: ['next please'], reply: 'On.' }], transitions: [{ to: 'b', when: { intent: 'next' } }] },
        b: { tools: ['lookup', 'crm'], transitions: [{ to: 'a', when: { variable: { name: 'tier', equals: 'gold' } } }, { to: 'gone', when: { intent: 'next' } }] },
        orphan: { say: 'Nobody comes here.', transitions: [], end_call: true },
      },
    };
    for (const res of [await post({ name: 'loops2', tools: [lookup], flow: loop }).expect(422), await patch(bot.body.id, { flow: loop }).expect(422)]) {
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([
        { field: 'flow.nodes.b.tools.1', message: "crm is not one of the bot's tools" },
        { field: 'flow.nodes.b.transitions.1.to', message: 'names no node (gone)' },
        { field: 'flow.nodes.orphan', message: 'is unreachable from a (no transition leads here and it is not a global node)' },
        { field: 'flow', message: 'has no way to end: no reachable node (or intent of one) has end_call' },
      ]);
    }
    expect(await h.db.collection(COLLECTIONS.bots).countDocuments({ name: 'loops2' })).toBe(0);
    expect((await h.http.get(`/api/v1/bots/${bot.body.id}`).set('Authorization', auth).expect(200)).body.flow).toBeNull();
    // A flow whose start names no node; a node intent acting with a tool the bot has not.
    const res = await patch(bot.body.id, { flow: { start: 'x', nodes: { a: { intents: [{ name: 'i', examples: ['e'], reply: 'r', action: { tool: 'nope' }, end_call: true }], transitions: [] } } } }).expect(422);
    expect(res.body.error.details).toEqual([
      { field: 'flow.start', message: 'names no node (x)' },
      { field: 'flow.nodes.a.intents.0.action.tool', message: "nope is not one of the bot's tools" },
    ]);
  });
});

describe('handoff at save', () => {
  it('stores the bots a call may be handed to with the defaults, and lets a scripted intent act with handoff', async () => {
    const other = await post({ name: 'billing' }).expect(201);
    const res = await post({
      name: 'front desk',
      handoff: { bots: [other.body.id] },
      policy: { intents: [{ name: 'billing', examples: ['billing please'], reply: 'Passing you on.', action: { tool: 'handoff', arguments: { bot_id: other.body.id } } }], fallback: { reply: 'Sorry?' } },
    }).expect(201);
    expect(res.body.handoff).toEqual({ bots: [other.body.id], greeting: true, on_failure: 'Sorry, I could not pass you on just now. Let us carry on.' });
    expect((await config(res.body.id)).body.bot.handoff).toEqual(res.body.handoff);
    // Without handoff set, the action names no tool of the bot's.
    const plain = await post({ name: 'plain', policy: { intents: [{ name: 'b', examples: ['b'], reply: 'r', action: { tool: 'handoff' } }], fallback: { reply: 'f' } } }).expect(422);
    expect(plain.body.error.details).toEqual([{ field: 'policy.intents.0.action.tool', message: "handoff is not one of the bot's tools" }]);
  });

  it('refuses a missing, inactive or own bot id and a tool named handoff, each named; nothing stored changes', async () => {
    const asleep = await post({ name: 'asleep', active: false }).expect(201);
    const me = await post({ name: 'me' }).expect(201);
    const res = await patch(me.body.id, { handoff: { bots: [asleep.body.id, 'b0000000000000000000000f', me.body.id], greeting: false } }).expect(422);
    expect(res.body.error).toMatchObject({ code: 'validation_failed' });
    expect(res.body.error.details).toEqual([
      { field: 'handoff.bots.0', message: `bot ${asleep.body.id} is inactive` },
      { field: 'handoff.bots.1', message: 'no bot has the id b0000000000000000000000f' },
      { field: 'handoff.bots.2', message: 'is this bot itself' },
    ]);
    expect((await h.http.get(`/api/v1/bots/${me.body.id}`).set('Authorization', auth).expect(200)).body.handoff).toBeNull();
    const clash = await post({ name: 'clash', handoff: { bots: [me.body.id] }, tools: [{ name: 'handoff', description: '', type: 'end_call' }] }).expect(422);
    expect(clash.body.error.details).toEqual([{ field: 'tools.0.name', message: "handoff is the built-in handoff tool's name while handoff is set: rename this tool" }]);
  });
});
