// A bot's MCP servers during a call (shared/DESIGN.md §18): each is connected at call start over Streamable
// HTTP with the official SDK's client, its tools listed once (the call's cache) and offered to the model beside
// the HTTP tools. A server that cannot be reached, answers something that is not MCP, or lists more than
// MAX_MCP_TOOLS tools offers none: its tools' calls then fail like an HTTP tool's (`unknown_tool`), and the
// call goes on. Addresses are guarded like HTTP tools' (public only unless TOOLS_ALLOW_PRIVATE_ADDRESSES),
// before every request. Header values (credentials) are never logged.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AddressRefused, checkHost } from '@voice-platform/schemas/node';
import type { Logger } from '../core/logger.js';

/** Tools one server may offer a call (schemas MAX_MCP_TOOLS): more and the server is refused. */
export const MAX_MCP_TOOLS = 50;
/** Connecting and listing one server's tools takes at most this long (the call waits for it before the greeting). */
export const MCP_CONNECT_TIMEOUT_MS = 5000;

export interface McpServerConfig {
  name: string;
  url: string;
  headers?: Record<string, string>;
  allowed_tools?: string[];
}

export interface McpToolSpec {
  server: string;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call's answer as the runner keeps it: `text` is the text content joined, the structured content beside it. */
export interface McpResult {
  text: string;
  [key: string]: unknown;
}

/** The one failure of an MCP call; `code` is what the model sees as `{"error": code}`. */
export class McpError extends Error {
  constructor(
    readonly code: 'refused' | 'timeout' | 'bad_response' | 'tool_error' | 'cancelled',
    message: string,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

/** The servers as the worker got them, malformed entries left out (the worker never throws on config). */
export function mcpServersOf(raw: unknown): McpServerConfig[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter((m): m is McpServerConfig => typeof m === 'object' && m !== null && typeof (m as { name?: unknown }).name === 'string' && typeof (m as { url?: unknown }).url === 'string');
}

/** fetch that refuses a non-public address (unless allowed) before each request, redirects not followed. */
function guardedFetch(allowPrivate: boolean): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    try {
      await checkHost(url.hostname, allowPrivate);
    } catch (err) {
      if (err instanceof AddressRefused) throw new McpError('refused', 'a non-public address');
      throw err;
    }
    return fetch(input, { ...init, redirect: 'error' });
  };
}

const isObjectSchema = (s: unknown): s is Record<string, unknown> => typeof s === 'object' && s !== null && !Array.isArray(s) && (s as { type?: unknown }).type === 'object';

export class McpTools {
  private readonly clients = new Map<string, Client>();
  /** Tool name → its server (the first server listing a name has it). */
  private readonly byName = new Map<string, McpToolSpec>();

  private constructor(private readonly logger?: Logger) {}

  /** Connects every server at once; one that fails offers no tools (logged by name, never its URL or headers). */
  static async connect(servers: McpServerConfig[], opts: { allowPrivate: boolean; logger?: Logger; reserved?: ReadonlySet<string>; timeoutMs?: number }): Promise<McpTools> {
    const out = new McpTools(opts.logger);
    const listed = await Promise.all(servers.map((s) => out.open(s, opts.allowPrivate, opts.timeoutMs ?? MCP_CONNECT_TIMEOUT_MS)));
    for (const tools of listed) {
      for (const t of tools) if (!out.byName.has(t.name) && !opts.reserved?.has(t.name)) out.byName.set(t.name, t);
    }
    return out;
  }

  private async open(server: McpServerConfig, allowPrivate: boolean, timeoutMs: number): Promise<McpToolSpec[]> {
    const client = new Client({ name: 'voice-platform-worker', version: '1.0.0' });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} }, fetch: guardedFetch(allowPrivate) });
      await client.connect(transport, { timeout: timeoutMs });
      const { tools } = await client.listTools(undefined, { timeout: timeoutMs });
      const allowed = server.allowed_tools ? tools.filter((t) => server.allowed_tools!.includes(t.name)) : tools;
      if (allowed.length > MAX_MCP_TOOLS) throw new McpError('bad_response', `lists ${allowed.length} tools (at most ${MAX_MCP_TOOLS})`);
      const bad = allowed.find((t) => !isObjectSchema(t.inputSchema) || !/^[A-Za-z0-9_-]{1,64}$/.test(t.name));
      if (bad) throw new McpError('bad_response', 'a tool whose name or input schema is not usable (a JSON Schema object)');
      this.clients.set(server.name, client);
      return allowed.map((t) => ({ server: server.name, name: t.name, description: t.description ?? '', parameters: t.inputSchema as Record<string, unknown> }));
    } catch (err) {
      this.logger?.warn({ mcp_server: server.name, error: err instanceof McpError ? err.message : err instanceof Error ? err.name : 'failed' }, 'MCP server offers no tools');
      await client.close().catch(() => undefined);
      return [];
    }
  }

  get specs(): McpToolSpec[] {
    return [...this.byName.values()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Calls tool `name`: its text content joined (`text`) and structured content; an McpError when it failed. */
  async call(name: string, args: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<McpResult> {
    const spec = this.byName.get(name);
    const client = spec && this.clients.get(spec.server);
    if (!spec || !client) throw new McpError('refused', `no MCP tool named ${name}`);
    let res: Awaited<ReturnType<Client['callTool']>>;
    try {
      res = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal });
    } catch (err) {
      if (signal?.aborted) throw new McpError('cancelled', 'the call ended');
      const timedOut = err instanceof Error && /timed? ?out/i.test(err.message);
      throw new McpError(timedOut ? 'timeout' : 'bad_response', timedOut ? `no answer within ${timeoutMs} ms` : 'the MCP server failed');
    }
    const content = Array.isArray(res.content) ? res.content : [];
    const text = content.flatMap((c) => (c && typeof c === 'object' && (c as { type?: unknown }).type === 'text' ? [String((c as { text?: unknown }).text ?? '')] : [])).join('\n');
    if (res.isError) throw new McpError('tool_error', text.slice(0, 200) || 'the tool answered an error');
    const structured = res.structuredContent && typeof res.structuredContent === 'object' ? (res.structuredContent as Record<string, unknown>) : {};
    return { ...structured, text };
  }

  /** Ends every session (the call is over). */
  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close().catch(() => undefined)));
    this.clients.clear();
  }
}
