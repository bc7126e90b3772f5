// A bot's MCP tools and tool fillers in a call (shared/DESIGN.md §18): the call's real pipeline with the
// offline providers (VAD, pocketsphinx, the scripted policy, espeak). An MCP server made with the official SDK
// is listed at call start; the policy's action calls its tool, the reply reads {{result.text}} and a path of
// structuredContent; the call record keeps the action. A server answering garbage fails the tool like an HTTP
// tool (on_error_reply is said, the call goes on). A slow HTTP tool's filler is said before its result; a fast
// one's is not.
import http from 'node:http';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { CallEvent, RuntimeConfig } from '@voice-platform/schemas';
import { createLogger } from '../core/logger.js';
import { createMetrics } from '../core/metrics.js';
import { createProviders } from '../app/providers.js';
import { loadSettings } from '../core/settings.js';
import { silence, speech } from '../../testing/audio.js';
import { startMcpServer, type TestMcpServer } from '../../testing/mcp.js';
import type { CallTransport, TransportHandlers } from '../transports/transport.js';
import type { ServerMessage } from '../pipeline/frames.js';
import { CallSession } from './session.js';
import { McpTools } from '../tools/mcp.js';

let dir: string;
let mcp: TestMcpServer;
let slow: http.Server;
let slowBase: string;
/** Answers of the slow endpoint wait for this (the filler seen), never a fixed sleep. */
let release: (() => void) | null = null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'vp-call-mcp-'));
  mcp = await startMcpServer([
    {
      name: 'lookup_balance',
      description: "Looks up the caller's balance",
      inputSchema: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
      handler: (args) => ({ content: [{ type: 'text', text: 'forty dollars' }], structuredContent: { due: { day: 'friday' }, account: args.account } }),
    },
  ]);
  slow = http.createServer((req, res) => {
    const answer = () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"reference":"done"}');
    if (req.url === '/slow') release = answer;
    else answer();
  });
  slow.listen(0, '127.0.0.1');
  await once(slow, 'listening');
  slowBase = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await mcp.close();
  slow.closeAllConnections();
  await new Promise((resolve) => slow.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

class Caller implements CallTransport {
  readonly kind = 'websocket' as const;
  readonly messages: ServerMessage[] = [];
  private handlers: TransportHandlers | null = null;
  private waiters: Array<() => void> = [];
  attach(h: TransportHandlers): void {
    this.handlers = h;
  }
  sendAudio(): void {}
  sendMessage(msg: ServerMessage): void {
    this.messages.push(msg);
    for (const w of this.waiters.splice(0)) w();
  }
  close(): void {}
  async until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  botSaid(): string[] {
    return this.messages.flatMap((m) => (m.type === 'transcript' && m.role === 'bot' && m.final ? [m.text] : []));
  }
  async stream(pcm: Int16Array, frameMs = 20): Promise<void> {
    const n = (16000 * frameMs) / 1000;
    const start = performance.now();
    for (let i = 0, k = 0; i < pcm.length; i += n, k++) {
      this.handlers?.onAudio(pcm.subarray(i, i + n));
      const wait = start + (k + 1) * frameMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait)); // real-time pacing of the caller's audio
    }
  }
}

function config(id: string, bot: Record<string, unknown>): RuntimeConfig {
  return {
    bot: {
      id: 'bot_mcp',
      name: 'mcp',
      language: 'en',
      prompt: '',
      greeting: '',
      voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 },
      stt: { provider: 'pocketsphinx', model: 'default', language: 'en' },
      llm: { provider: 'scripted', model: 'policy', temperature: 0 },
      tools: [],
      tool_secret: null,
      turn_detection: { mode: 'fixed', end_of_turn_silence_ms: 500 },
      max_call_seconds: 60,
      ...bot,
    },
    call: { id, direction: 'websocket', to_number: null, variables: {} },
    audio: { sample_rate: 16000 },
  } as unknown as RuntimeConfig;
}

async function run(cfg: RuntimeConfig, onAsked?: (caller: Caller) => Promise<void>): Promise<{ caller: Caller; events: CallEvent[]; logs: string }> {
  const settings = loadSettings({ SERVICE_CONFIG_URL: 'http://127.0.0.1:9/api/v1/config', WORKER_AUTH_TOKEN: 'call-mcp-test-token-0123456789', TOOLS_ALLOW_PRIVATE_ADDRESSES: 'true' });
  const events: CallEvent[] = [];
  const logs: string[] = [];
  const session = new CallSession(cfg, await createProviders(cfg, settings), {
    report: (_id, e) => events.push(e),
    storage: null,
    metrics: createMetrics(false),
    logger: createLogger('info', { write: (s: string) => logs.push(s) } as unknown as NodeJS.WritableStream),
    sampleRate: 16000,
    recordingDir: dir,
  });
  const caller = new Caller();
  await session.start(caller);
  await caller.stream(silence(300));
  await caller.stream(speech('how much'));
  await caller.stream(silence(900));
  await onAsked?.(caller);
  await caller.until(() => caller.messages.some((m) => m.type === 'ended'));
  await session.done;
  return { caller, events, logs: logs.join('') };
}

const mcpPolicy = {
  intents: [
    {
      name: 'balance',
      examples: ['how much'],
      action: { tool: 'lookup_balance', arguments: { account: 'A-7' } },
      reply: 'You owe {{result.text}} by {{result.due.day}}.',
      on_error_reply: 'The system is down.',
      end_call: true,
    },
  ],
  fallback: { reply: 'Sorry.', end_call: true },
};

it('lists the MCP server tools at call start, calls one from a scripted action, speaks its text and structured content, records the action', async () => {
  mcp.calls.length = 0;
  const { caller, events, logs } = await run(config('call_mcp_1', { mcp_servers: [{ name: 'crm', url: mcp.url, headers: { Authorization: 'Bearer mcp-secret' } }], policy: mcpPolicy }));
  expect(caller.botSaid()).toContain('You owe forty dollars by friday.');
  expect(mcp.calls).toEqual([{ name: 'lookup_balance', arguments: { account: 'A-7' }, headers: expect.objectContaining({ authorization: 'Bearer mcp-secret' }) }]);
  const end = events.find((e) => e.end_reason) as CallEvent & { actions?: unknown[] };
  expect(end.actions).toEqual([
    { type: 'tool', name: 'lookup_balance', at: expect.any(String), duration_ms: expect.any(Number), status: 'ok', arguments: { account: 'A-7' }, result: JSON.stringify({ due: { day: 'friday' }, account: 'A-7', text: 'forty dollars' }), error: null },
  ]);
  expect(logs).not.toContain('mcp-secret');
}, 60_000);

it('a server answering garbage offers no tools: the action fails like an HTTP tool, on_error_reply is said, the call ends normally', async () => {
  mcp.garbage = true;
  try {
    const { caller, events, logs } = await run(config('call_mcp_2', { mcp_servers: [{ name: 'crm', url: mcp.url }], policy: mcpPolicy }));
    expect(caller.botSaid()).toContain('The system is down.');
    const end = events.find((e) => e.end_reason) as CallEvent & { actions?: Array<{ status: string; error: string }> };
    expect(end.end_reason).toBe('bot_hangup');
    expect(end.actions?.map((a) => [a.status, a.error])).toEqual([['failed', 'unknown_tool']]);
    expect(logs).toContain('MCP server offers no tools');
  } finally {
    mcp.garbage = false;
  }
}, 60_000);

const fillerPolicy = (tool: string) => ({
  intents: [{ name: 'balance', examples: ['how much'], action: { tool, arguments: {} }, reply: 'Your reference is {{result.reference}}.', end_call: true }],
  fallback: { reply: 'Sorry.', end_call: true },
});

it("a slow tool's filler is said after filler_after_ms, before the tool's result", async () => {
  release = null;
  const tools = [{ name: 'slow_tool', description: '', type: 'http', url: `${slowBase}/slow`, timeout_ms: 10_000, filler: 'One moment while I check that.', filler_after_ms: 300 }];
  const { caller } = await run(config('call_filler_1', { tools, policy: fillerPolicy('slow_tool') }), async (c) => {
    // The tool answers only once the filler was said: it cannot have answered within filler_after_ms.
    await c.until(() => c.botSaid().includes('One moment while I check that.') && release !== null);
    release!();
  });
  const said = caller.botSaid();
  expect(said.indexOf('One moment while I check that.')).toBeGreaterThanOrEqual(0);
  expect(said.indexOf('One moment while I check that.')).toBeLessThan(said.indexOf('Your reference is done.'));
}, 60_000);

it("a tool answering within filler_after_ms has no filler said", async () => {
  const tools = [{ name: 'fast_tool', description: '', type: 'http', url: `${slowBase}/fast`, filler: 'One moment while I check that.', filler_after_ms: 3000 }];
  const { caller } = await run(config('call_filler_2', { tools, policy: fillerPolicy('fast_tool') }));
  expect(caller.botSaid()).toContain('Your reference is done.');
  expect(caller.botSaid()).not.toContain('One moment while I check that.');
}, 60_000);

describe('McpTools.connect', () => {
  const tool = (name: string, inputSchema: Record<string, unknown> = { type: 'object', properties: {} }) => ({ name, inputSchema, handler: () => ({ content: [{ type: 'text' as const, text: name }] }) });

  it('refuses a server listing more than 50 tools, or a tool whose input schema is not a JSON Schema object; allowed_tools narrows the list', async () => {
    const many = await startMcpServer(Array.from({ length: 51 }, (_, i) => tool(`t${i}`)));
    const badSchema = await startMcpServer([tool('fine'), tool('odd', { type: 'string' })]);
    const logs: string[] = [];
    const logger = createLogger('info', { write: (s: string) => logs.push(s) } as unknown as NodeJS.WritableStream);
    try {
      const all = await McpTools.connect([{ name: 'many', url: many.url }], { allowPrivate: true, logger });
      expect(all.specs).toEqual([]);
      const narrowed = await McpTools.connect([{ name: 'many', url: many.url, allowed_tools: ['t3', 't7'] }], { allowPrivate: true, logger });
      expect(narrowed.specs.map((t) => t.name)).toEqual(['t3', 't7']);
      expect((await narrowed.call('t7', {}, 2000)).text).toBe('t7');
      await narrowed.close();
      const bad = await McpTools.connect([{ name: 'odd', url: badSchema.url }], { allowPrivate: true, logger });
      expect(bad.specs).toEqual([]);
      expect(logs.filter((l) => l.includes('MCP server offers no tools')).length).toBe(2);
      // A private address is refused unless allowed (the HTTP tools' guard).
      const guarded = await McpTools.connect([{ name: 'many', url: many.url, allowed_tools: ['t1'] }], { allowPrivate: false, logger });
      expect(guarded.specs).toEqual([]);
    } finally {
      await many.close();
      await badSchema.close();
    }
  });
});
