// The platform as an MCP server (shared/DESIGN.md §18), driven by the official SDK's client over Streamable
// HTTP: API keys as Bearer, the tools listed, list_bots answering the bots, get_call/list_calls holding a key
// to its own calls, and each tool refused (an MCP tool error naming the scope) to a key without its scope.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createBot, createKey, useAdminHarness, type Harness } from '../../testing/harness.js';

let h: Harness;
let auth: string;
let server: http.Server;
let url: URL;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

beforeAll(async () => {
  server = http.createServer(h.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function client(key: string): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return c;
}

const text = (r: object) => (((r as { content?: unknown }).content as Array<{ type: string; text?: string }>) ?? []).map((c) => c.text ?? '').join('');

describe('/mcp', () => {
  it('lists the four tools; list_bots answers the bots as GET /api/v1/bots does', async () => {
    const botId = await createBot(h, auth, { name: 'mcp listed', mcp_servers: [{ name: 'crm', url: 'https://8.8.8.8/mcp', headers: { Authorization: 'Bearer crm-secret' } }] });
    const { key } = await createKey(h, auth, { name: 'reader', scopes: ['calls:read'] });
    const c = await client(key);
    try {
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['get_call', 'list_bots', 'list_calls', 'place_call']);
      const res = await c.callTool({ name: 'list_bots', arguments: {} });
      expect(res.isError).toBeFalsy();
      const rest = (await h.http.get('/api/v1/bots').set('Authorization', auth).expect(200)).body;
      expect(res.structuredContent).toEqual(rest);
      const bot = (res.structuredContent as { items: Array<{ id: string; mcp_servers: unknown[] }> }).items.find((b) => b.id === botId)!;
      // MCP server header values are write-only, as tool headers are.
      expect(bot.mcp_servers).toEqual([{ name: 'crm', url: 'https://8.8.8.8/mcp', header_names: ['Authorization'] }]);
      expect(text(res)).not.toContain('crm-secret');
    } finally {
      await c.close();
    }
  });

  it('a key lacking the dialout scope is refused place_call: an MCP tool error naming the scope', async () => {
    const botId = await createBot(h, auth, { name: 'mcp dial' });
    const { key } = await createKey(h, auth, { name: 'reader', scopes: ['calls:read'] });
    const c = await client(key);
    try {
      const res = await c.callTool({ name: 'place_call', arguments: { bot_id: botId, to_number: '+14155550100' } });
      expect(res.isError).toBe(true);
      expect(text(res)).toBe('forbidden: the API key lacks the scope dialout');
      expect(await h.db.collection('calls_live').countDocuments({ bot_id: botId })).toBe(0);
    } finally {
      await c.close();
    }
    const dialer = await client((await createKey(h, auth, { name: 'dialer', scopes: ['dialout'] })).key);
    try {
      const res = await dialer.callTool({ name: 'list_bots', arguments: {} });
      expect(text(res)).toBe('forbidden: the API key lacks the scope calls:read');
      // In scope: the dial-out's own checks answer (here the body's).
      const bad = await dialer.callTool({ name: 'place_call', arguments: { bot_id: botId, to_number: 'not a number' } });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/^invalid_phone_number: .*to_number/);
    } finally {
      await dialer.close();
    }
  });

  it('get_call is the key\'s own calls only; list_calls lists them', async () => {
    const { key } = await createKey(h, auth, { name: 'reader', scopes: ['calls:read'] });
    const c = await client(key);
    try {
      const res = await c.callTool({ name: 'get_call', arguments: { call_id: '0123456789abcdef01234567' } });
      expect(res.isError).toBe(true);
      expect(text(res)).toBe('call_not_found: call not found');
      const list = await c.callTool({ name: 'list_calls', arguments: {} });
      expect(list.structuredContent).toEqual({ items: [] });
    } finally {
      await c.close();
    }
  });

  it('no key or a bad key: 401 in the documented shape, before MCP', async () => {
    const none = await h.http.post('/mcp').set('Content-Type', 'application/json').send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }).expect(401);
    expect(none.body.error.code).toBe('missing_api_key');
    const bad = await h.http.post('/mcp').set('Authorization', 'Bearer vp_nope').send({}).expect(401);
    expect(bad.body.error.code).toBe('invalid_api_key');
  });
});

describe('bot mcp_servers', () => {
  it('refuses bad URLs, private addresses, names twice and a tool listed twice (422 naming each field), storing nothing', async () => {
    const before = await h.db.collection('bots').countDocuments();
    const cases: Array<[unknown, string]> = [
      [[{ name: 'a', url: 'not a url' }], 'mcp_servers.0.url'],
      [[{ name: 'a', url: 'ftp://8.8.8.8/mcp' }], 'mcp_servers.0.url'],
      [[{ name: 'a', url: 'http://127.0.0.1:9/mcp' }], 'mcp_servers.0.url'],
      [[{ name: 'a', url: 'https://user:pw@8.8.8.8/mcp' }], 'mcp_servers.0.url'],
      [[{ name: 'a', url: 'https://8.8.8.8/mcp' }, { name: 'a', url: 'https://8.8.4.4/mcp' }], 'mcp_servers.1.name'],
      [[{ name: 'a', url: 'https://8.8.8.8/mcp', allowed_tools: ['x', 'x'] }], 'mcp_servers.0.allowed_tools.1'],
      [[{ name: 'a', url: 'https://8.8.8.8/mcp', allowed_tools: Array.from({ length: 51 }, (_, i) => `t${i}`) }], 'mcp_servers.0.allowed_tools'],
    ];
    for (const [mcp_servers, field] of cases) {
      const res = await h.http.post('/api/v1/bots').set('Authorization', auth).send({ name: 'bad mcp', mcp_servers }).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect((res.body.error.details as Array<{ field: string }>).map((d) => d.field)).toContain(field);
    }
    expect(await h.db.collection('bots').countDocuments()).toBe(before);
  });

  it('headers are write-only: kept on an edit that leaves them out, opened for the worker only', async () => {
    const id = await createBot(h, auth, { name: 'mcp headers', mcp_servers: [{ name: 'crm', url: 'https://8.8.8.8/mcp', headers: { 'X-Token': 'tok-secret' }, allowed_tools: ['lookup'] }] });
    const patched = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ mcp_servers: [{ name: 'crm', url: 'https://8.8.4.4/mcp', allowed_tools: ['lookup'] }] }).expect(200);
    expect(patched.body.mcp_servers).toEqual([{ name: 'crm', url: 'https://8.8.4.4/mcp', allowed_tools: ['lookup'], header_names: ['X-Token'] }]);
    expect(JSON.stringify(patched.body)).not.toContain('tok-secret');
    // The same servers saved again (header values kept sealed, re-sealed differently) are no new version.
    const again = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ mcp_servers: [{ name: 'crm', url: 'https://8.8.4.4/mcp', allowed_tools: ['lookup'], headers: { 'X-Token': 'tok-secret' } }] }).expect(200);
    expect(again.body.version).toBe(patched.body.version);
    const version = await h.http.get(`/api/v1/bots/${id}/versions/${again.body.version}`).set('Authorization', auth).expect(200);
    expect(version.body.config.mcp_servers).toEqual([{ name: 'crm', url: 'https://8.8.4.4/mcp', allowed_tools: ['lookup'], header_names: ['X-Token'] }]);
    const cfg = await h.http.get(`/api/v1/config?bot_id=${id}`).set('Authorization', `Bearer ${h.settings.WORKER_AUTH_TOKEN}`).expect(200);
    expect(cfg.body.bot.mcp_servers).toEqual([{ name: 'crm', url: 'https://8.8.4.4/mcp', allowed_tools: ['lookup'], headers: { 'X-Token': 'tok-secret' } }]);
    // A scripted action may name a tool an MCP server allows.
    await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ policy: { intents: [{ name: 'b', examples: ['balance'], action: { tool: 'lookup' }, reply: '{{result.text}}' }], fallback: { reply: 'x' } } }).expect(200);
    const refused = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ policy: { intents: [{ name: 'b', examples: ['balance'], action: { tool: 'other' }, reply: 'x' }], fallback: { reply: 'x' } } }).expect(422);
    expect(refused.body.error.details).toEqual([{ field: 'policy.intents.0.action.tool', message: "other is not one of the bot's tools" }]);
  });
});
