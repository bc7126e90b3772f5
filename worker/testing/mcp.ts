// A real MCP server for tests, made with the official SDK (low-level Server, Streamable HTTP, stateless: a
// server and transport per request). Its tools are given as JSON Schemas and handlers; `garbage` makes every
// request answer text that is not MCP (a server "answering garbage").
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface TestMcpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  handler: (args: Record<string, unknown>) => CallToolResult | Promise<CallToolResult>;
}

export interface TestMcpServer {
  url: string;
  /** Each tool call as received: the name, its arguments and the request's headers. */
  calls: Array<{ name: string; arguments: Record<string, unknown>; headers: http.IncomingHttpHeaders }>;
  garbage: boolean;
  close(): Promise<void>;
}

export async function startMcpServer(tools: TestMcpTool[]): Promise<TestMcpServer> {
  const out: TestMcpServer = { url: '', calls: [], garbage: false, close: async () => undefined };
  const httpServer = http.createServer((req, res) => {
    if (out.garbage) return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"not":"mcp"');
    const server = new Server({ name: 'test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema: inputSchema as { type: 'object' } })) }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      const tool = tools.find((t) => t.name === r.params.name);
      const args = (r.params.arguments ?? {}) as Record<string, unknown>;
      out.calls.push({ name: r.params.name, arguments: args, headers: req.headers });
      if (!tool) return { content: [{ type: 'text', text: `no tool ${r.params.name}` }], isError: true };
      return tool.handler(args);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  out.url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  out.close = async () => {
    httpServer.closeAllConnections();
    await new Promise((resolve) => httpServer.close(resolve));
  };
  return out;
}
