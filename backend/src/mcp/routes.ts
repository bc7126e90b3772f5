// The platform as an MCP server (shared/DESIGN.md §18): `/mcp`, Streamable HTTP (the official SDK's server,
// stateless: a server and transport per request, JSON answers), for API keys sent as `Authorization: Bearer`.
// Tools call the same service functions as the REST routes: place_call (the dial-out's parse and placeCall,
// its rate limit), get_call and list_calls (the key's own calls, like GET /api/v1/calls/{id} with a key),
// list_bots. Each tool needs its scope (MCP_TOOL_SCOPES): a key without it gets an MCP tool error naming it.
// A key that does not authenticate is refused before MCP (401, the documented error shape).
import type { Router } from '@koa/router';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { phoneNumberRegion, type ApiKeyScope } from '@voice-platform/schemas';
import { ApiError, apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { requestView } from '../core/cacheTable.js';
import { takeToken } from '../core/redisScripts.js';
import { bearer } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { bots, publicBot } from '../bots/store.js';
import { findCall, findCalls, publicCall } from '../calls/store.js';
import { joblessCloser, placeCall } from '../calls/place.js';
import { parseDialout } from '../dialout/routes.js';
import { trunkForDialout } from '../trunks/store.js';
import { VERSION } from '../core/deps.js';

/** The scope each tool needs (docs/roles.md lists them). */
export const MCP_TOOL_SCOPES: Readonly<Record<string, ApiKeyScope>> = { place_call: 'dialout', get_call: 'calls:read', list_calls: 'calls:read', list_bots: 'calls:read' };

const TOOLS = [
  {
    name: 'place_call',
    description: 'Places an outbound phone call with a bot (like POST /api/v1/sip/dialout). Needs the dialout scope.',
    inputSchema: {
      type: 'object' as const,
      properties: {
        bot_id: { type: 'string' },
        to_number: { type: 'string', description: 'E.164, or national with default_region' },
        from_number: { type: 'string' },
        default_region: { type: 'string' },
        variables: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['bot_id', 'to_number'],
      additionalProperties: false,
    },
  },
  { name: 'get_call', description: "One call of this key's (like GET /api/v1/calls/{id}). Needs calls:read.", inputSchema: { type: 'object' as const, properties: { call_id: { type: 'string' } }, required: ['call_id'] } },
  {
    name: 'list_calls',
    description: "This key's calls, newest first (at most `limit`, default 20). Needs calls:read.",
    inputSchema: { type: 'object' as const, properties: { bot_id: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100 } } },
  },
  { name: 'list_bots', description: 'The bots (like GET /api/v1/bots). Needs calls:read.', inputSchema: { type: 'object' as const, properties: {} } },
];

const ok = (value: object): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> });
const failed = (code: string, message: string): CallToolResult => ({ content: [{ type: 'text', text: `${code}: ${message}` }], isError: true });

export function mcpRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const jobless = joblessCloser(svc);
  const handle = async (ctx: Parameters<Parameters<Router['all']>[1]>[0]) => {
    const token = bearer(ctx);
    if (!token) throw apiError('missing_api_key', 'an API key is required as Authorization: Bearer');
    const key = await authenticateKey(svc, metrics, ctx, undefined, { key: token, scopesChecked: true });
    const requestId = ctx.state.requestId as string;

    const run = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
      const scope = MCP_TOOL_SCOPES[name];
      if (!scope) return failed('unknown_tool', `no tool named ${name}`);
      if (!key.scopes.includes(scope)) return failed('forbidden', `the API key lacks the scope ${scope}`);
      const view = await requestView(svc.cache, ctx.state);
      if (name === 'list_bots') {
        const docs = await bots(svc.db).find({}).sort({ created_at: -1, _id: -1 }).limit(1000).toArray();
        return ok({ items: docs.map(publicBot) });
      }
      if (name === 'get_call') {
        const doc = typeof args.call_id === 'string' ? await findCall(svc.db, args.call_id) : null;
        if (!doc || doc.api_key_id !== key.id) return failed('call_not_found', 'call not found');
        return ok(publicCall(doc));
      }
      if (name === 'list_calls') {
        const limit = Number.isInteger(args.limit) && (args.limit as number) >= 1 && (args.limit as number) <= 100 ? (args.limit as number) : 20;
        const filter = { api_key_id: key.id, ...(typeof args.bot_id === 'string' ? { bot_id: args.bot_id } : {}) };
        const docs = await findCalls(svc.db, filter, { sort: { created_at: -1, _id: -1 }, limit });
        return ok({ items: docs.map(publicCall) });
      }
      // place_call: the dial-out's own rate limit, parse and placement.
      const s = svc.settings;
      const r = await takeToken(svc.redis, `vp:ratelimit:dialout:${key.id}`, s.DIALOUT_RATE_PER_SECOND, s.DIALOUT_BURST, svc.clock());
      if (!r.allowed) return failed('rate_limited', 'too many dial-out requests for this API key');
      const req = await parseDialout(args, async (from) => {
        try {
          return phoneNumberRegion((await trunkForDialout(svc.db, from, { table: svc.cache.trunks, view })).fromNumber);
        } catch (err) {
          if (err instanceof ApiError) return null;
          throw err;
        }
      });
      const call = await placeCall(svc, jobless, { apiKeyId: key.id, label: key.prefix }, { direction: 'outbound', ...req }, requestId, view);
      metrics.dialouts.inc({ result: 'queued' });
      return ok({ call_id: call._id, status: 'queued', bot_id: call.bot_id, to_number: req.to_number, from_number: call.from_number, created_at: call.created_at.toISOString() });
    };

    const server = new Server({ name: 'voice-platform', version: VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      try {
        return await run(r.params.name, (r.params.arguments ?? {}) as Record<string, unknown>);
      } catch (err) {
        // The REST route's refusals (validation, bot, trunk, capacity) as the tool's error: code, message and the fields named.
        if (err instanceof ApiError) {
          const fields = Array.isArray(err.details) ? ` (${(err.details as Array<{ field?: string; message?: string }>).map((d) => `${d.field}: ${d.message}`).join('; ')})` : '';
          return failed(err.code, `${err.message}${fields}`);
        }
        throw err;
      }
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.respond = false;
    ctx.res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res);
  };
  router.post('/mcp', handle);
  router.get('/mcp', handle);
  router.delete('/mcp', handle);
}
