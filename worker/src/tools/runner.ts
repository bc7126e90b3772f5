// The bot's tools during a call (docs/design.md §9). The LLM stage asks for a tool by name with the
// model's arguments (a JSON string); the runner checks them against the tool's `parameters`, runs it and
// answers the text the model gets back: the tool's JSON result, or `{"error":…}`. A failing tool never
// fails the call. Each run is kept as an action record for the call's end.
//
// HTTP tools: one request, signed like webhooks (X-Voice-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret,
// "<t>.<body>")>, the body being empty for GET), to a public address only (tools/addresses.ts) unless
// TOOLS_ALLOW_PRIVATE_ADDRESSES, within the tool's timeout_ms, redirects not followed.
// Header values, the secret and the URL (it may carry a token) are never logged.
import http from 'node:http';
import https from 'node:https';
import { createHmac, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import type { Logger } from '../core/logger.js';
import { tracingOff, WorkerTracing } from '../core/tracing.js';
import { bareHost, guardedLookup, isNonPublicAddress } from '@voice-platform/schemas/node';
import { McpError, type McpTools } from './mcp.js';

/** What the model gets back from a tool at most, in characters. */
export const MAX_RESULT_CHARS = 4000;
/** What an action record keeps of a result, in characters. */
export const MAX_ACTION_RESULT_CHARS = 1000;
export const DEFAULT_TIMEOUT_MS = 5000;
/** A tool's filler is said once it has run this long without an answer (schemas FILLER_AFTER_MS_DEFAULT). */
export const DEFAULT_FILLER_AFTER_MS = 800;
/** Actions one call keeps (the call record's limit, schemas MAX_CALL_ACTIONS); later runs still run. */
export const MAX_ACTIONS = 200;
/** A response body larger than this is not read further (it could not go back whole anyway). */
const MAX_BODY_BYTES = 1024 * 1024;

export type ToolType = 'http' | 'end_call' | 'transfer_call' | 'send_dtmf';

/** A bot's tool as the worker receives it (header values in the clear); read defensively, every field optional. */
export interface ToolConfig {
  name: string;
  description?: string;
  type?: ToolType;
  parameters?: Record<string, unknown>;
  url?: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  timeout_ms?: number;
  say_while_waiting?: string;
  /** Said when the tool has not answered within filler_after_ms (shared/DESIGN.md §18). */
  filler?: string;
  filler_after_ms?: number;
  destinations?: TransferDestination[];
  mode?: 'cold' | 'warm';
  announcement?: string;
  whisper?: string;
  on_failure?: string;
}

/** Who a transfer_call tool may hand the caller to: one of number (E.164) and sip_uri. */
export interface TransferDestination {
  name: string;
  number?: string;
  sip_uri?: string;
  description?: string;
}

/** What a transfer_call run asks of the call (the session): hand the caller over; resolves with the SIP answer, throws a ToolError when it failed. */
export type TransferHandler = (req: { tool: ToolConfig; destination: TransferDestination; spoken: Promise<void>; signal?: AbortSignal }) => Promise<{ sipStatusCode: number | null }>;

/** Who is calling: sent with every HTTP tool request. */
export interface CallIdentity {
  call_id: string;
  bot_id: string;
  direction: string | null;
  to_number: string | null;
  from_number: string | null;
  variables: Record<string, string>;
}

/** The failures the model sees as `{"error": code}`. */
export type ToolErrorCode = 'invalid_arguments' | 'timeout' | `http_${number}` | 'bad_response' | 'refused' | 'unknown_tool' | 'not_runnable' | 'cancelled' | 'transfer_failed' | 'tool_error';

/** The one typed failure of a tool run; `toolOutput` is what the model gets. */
export class ToolError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ToolError';
  }
  get output(): string {
    return JSON.stringify(this.details === undefined ? { error: this.code } : { error: this.code, details: this.details });
  }
}

/** One run, for the call record (docs/design.md §9 "On the call record"); keys in and out are actions too. */
export interface ToolAction {
  type: 'tool' | 'transfer' | 'dtmf_in' | 'dtmf_out';
  name: string;
  at: string;
  duration_ms: number;
  status: 'ok' | 'failed';
  /** As the model gave them, when they were an object. */
  arguments?: Record<string, unknown>;
  result: string | null;
  error: string | null;
}

/** A bot test's answer for an HTTP tool (docs/design.md §17): its status and body, instead of a request. */
export interface ToolMock {
  status: number;
  body?: unknown;
}

/** A tool offered to the model as a function. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolRunResult {
  /** What goes back to the model as the `tool` message's content. */
  output: string;
  ok: boolean;
  /** The parsed JSON result (ok runs). */
  value?: unknown;
  /** The model is asked nothing more until the caller speaks again (a transfer ran), after `say` (its on_failure). */
  endsTurn?: boolean;
  say?: string;
}

/** What a tool run may wait for: the phrase said before it (a transfer's announcement) has been played. */
export interface RunOptions {
  spoken?: Promise<void>;
}

export interface ToolRunnerOptions {
  /** Signs HTTP tool requests; null or empty: no signature header. */
  secret: string | null;
  allowPrivate: boolean;
  logger?: Logger;
  /** Unix seconds for signatures (tests). */
  nowS?: () => number;
  /** Presses keys on the call (send_dtmf); without it, send_dtmf answers not_runnable. */
  keypad?: (digits: string, signal?: AbortSignal) => Promise<void>;
  /** Hands the caller to a person (transfer_call); without it, transfer_call answers not_runnable. */
  transfer?: TransferHandler;
  /** The call's {{variables}}, for announcements and on_failure. */
  render?: (template: string) => string;
  /** Each HTTP tool request a client span of the call's trace, with `traceparent` (docs/design.md §16). */
  tracing?: WorkerTracing;
  /** A bot test's call: HTTP tools named here answer their mock (never a request). */
  mocks?: Record<string, ToolMock>;
}

/** What `send_dtmf` accepts (schemas DTMF_PATTERN). */
const DTMF_DIGITS = /^[0-9*#]{1,32}$/;

const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {} };
/** A transfer_call tool without its own `parameters`: the model names a destination (it may leave out the only one). */
function transferSchema(t: ToolConfig): Record<string, unknown> {
  const names = (t.destinations ?? []).map((d) => d.name);
  const described = (t.destinations ?? []).map((d) => (d.description ? `${d.name} (${d.description})` : d.name)).join('; ');
  return { type: 'object', properties: { destination: { type: 'string', enum: names, description: `who to transfer the caller to: ${described}` } }, required: names.length > 1 ? ['destination'] : [] };
}
const DTMF_SCHEMA = { type: 'object', properties: { digits: { type: 'string', pattern: '^[0-9*#]{1,32}$', description: 'the keys to press' } }, required: ['digits'] };
// Ours: a tool's own headers never replace them.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'x-voice-tool-call-id', 'x-voice-signature', 'traceparent', 'tracestate']);


const agents = { 'http:': new http.Agent({ keepAlive: false }), 'https:': new https.Agent({ keepAlive: false }) };

/** `X-Voice-Signature` for a body sent at unix second `t` (the webhooks' scheme). */
export function toolSignature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex')}`;
}

/** The tools as the worker got them, malformed entries left out (the backend validated them; the worker never throws on config). */
export function toolsOf(raw: unknown): ToolConfig[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter((t): t is ToolConfig => typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string');
}

/**
 * The call's runner from its runtime config: the bot's tools and tool secret, the call's identity. Fields
 * the backend may not send yet (tool_secret, from_number) are read as optional.
 */
export function toolRunnerFor(cfg: { bot: { id: string; tools?: unknown }; call: { id: string; direction?: string; to_number?: string | null; variables?: Record<string, string> } | null }, opts: Omit<ToolRunnerOptions, 'secret'>): ToolRunner {
  const bot = cfg.bot as { id: string; tools?: unknown; tool_secret?: unknown };
  const call = cfg.call as (NonNullable<typeof cfg.call> & { from_number?: unknown }) | null;
  const identity: CallIdentity = {
    call_id: call?.id ?? '',
    bot_id: bot.id,
    direction: call?.direction ?? null,
    to_number: call?.to_number ?? null,
    from_number: typeof call?.from_number === 'string' ? call.from_number : null,
    variables: call?.variables ?? {},
  };
  const mocks = (call as { tool_mocks?: unknown } | null)?.tool_mocks;
  return new ToolRunner(toolsOf(bot.tools), identity, {
    ...opts,
    secret: typeof bot.tool_secret === 'string' && bot.tool_secret ? bot.tool_secret : null,
    ...(typeof mocks === 'object' && mocks !== null ? { mocks: mocks as Record<string, ToolMock> } : {}),
  });
}

export class ToolRunner {
  /** Every run so far, in the order they ended. */
  readonly actions: ToolAction[] = [];
  private readonly tools = new Map<string, ToolConfig>();
  private readonly validators = new Map<string, ValidateFunction | Error>();
  /** The bot's MCP servers' tools (attachMcp), offered beside its own. */
  private mcp: McpTools | null = null;
  /** The call's own compiler: Ajv keeps every schema it compiled, so a process-wide one would grow with each call. */
  private ajv: Ajv | null = null;
  private readonly lookup: ReturnType<typeof guardedLookup>;

  constructor(
    tools: ToolConfig[],
    private readonly call: CallIdentity,
    private readonly opts: ToolRunnerOptions,
  ) {
    for (const t of tools) if (!this.tools.has(t.name)) this.tools.set(t.name, t);
    this.lookup = guardedLookup(opts.allowPrivate);
  }

  /** The call's MCP tools (listed at call start); a name one of the bot's own tools has stays the bot's. */
  attachMcp(mcp: McpTools): void {
    this.mcp = mcp;
  }

  /** Every tool as a function for the model (an untyped one too: its calls answer an error), MCP tools after the bot's own. */
  get specs(): ToolSpec[] {
    const own = [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description ?? '',
      parameters: t.parameters ?? (t.type === 'send_dtmf' ? DTMF_SCHEMA : t.type === 'transfer_call' ? transferSchema(t) : EMPTY_OBJECT_SCHEMA),
    }));
    const mcp = (this.mcp?.specs ?? []).filter((t) => !this.tools.has(t.name)).map(({ name, description, parameters }) => ({ name, description, parameters }));
    return [...own, ...mcp];
  }

  /** The phrase said when tool `name` is slow, and after how long (http tools with a `filler`). */
  filler(name: string): { text: string; afterMs: number } | undefined {
    const t = this.tools.get(name);
    const text = t?.filler?.trim();
    return text ? { text: this.rendered(text) ?? text, afterMs: t!.filler_after_ms ?? DEFAULT_FILLER_AFTER_MS } : undefined;
  }

  tool(name: string): ToolConfig | undefined {
    return this.tools.get(name);
  }

  /** True for a tool that hangs up (`end_call`, or a tool of that type). */
  endsCall(name: string): boolean {
    return name === 'end_call' || this.tools.get(name)?.type === 'end_call';
  }

  /** The phrase to say while `name` runs (a transfer's announcement: before it, when `args` name a destination it has), if it has one. */
  sayWhileWaiting(name: string, args?: string): string | undefined {
    const t = this.tools.get(name);
    if (t?.type === 'transfer_call') {
      let parsed: unknown;
      try {
        parsed = parseArguments(args ?? '');
      } catch {
        return undefined;
      }
      return isObject(parsed) && destinationOf(t, parsed) ? this.rendered(t.announcement) : undefined;
    }
    return t?.type === 'http' || (t && !t.type && t.url) ? t.say_while_waiting?.trim() || undefined : undefined;
  }

  private rendered(text: string | undefined): string | undefined {
    const t = text?.trim();
    return t ? (this.opts.render?.(t) ?? t) : undefined;
  }

  /**
   * Runs tool `name` with the model's arguments (JSON text, or already parsed) and records the action.
   * Never throws: a failure is `{"error":…}` in `output`. `signal` aborts it (the call ended).
   */
  async run(name: string, args: string | Record<string, unknown>, signal?: AbortSignal, opts: RunOptions = {}): Promise<ToolRunResult> {
    const started = performance.now();
    const at = new Date().toISOString();
    let parsed: unknown = args;
    let result: ToolRunResult;
    let kind: ToolAction['type'] = 'tool';
    try {
      parsed = typeof args === 'string' ? parseArguments(args) : args;
      const tool = this.tools.get(name) ?? this.mcpTool(name);
      if (!tool) throw new ToolError('unknown_tool', `no tool named ${name}`);
      this.validate(tool, parsed);
      const type = tool.type ?? (tool.url ? 'http' : undefined);
      if (type === 'send_dtmf' && this.opts.keypad) {
        kind = 'dtmf_out';
        const digits = (parsed as { digits?: unknown }).digits;
        if (typeof digits !== 'string' || !DTMF_DIGITS.test(digits)) throw new ToolError('invalid_arguments', 'digits must be 1-32 of 0-9, * and #', [{ path: '/digits', message: 'must match ^[0-9*#]{1,32}$' }]);
        await this.opts.keypad(digits, signal);
        const value = { ok: true, sent: digits };
        result = { ok: true, output: JSON.stringify(value), value };
      } else if (type === 'transfer_call' && this.opts.transfer) {
        kind = 'transfer';
        result = await this.transfer(tool, parsed as Record<string, unknown>, opts.spoken ?? Promise.resolve(), signal);
      } else if (!this.tools.has(name) && this.mcp?.has(name)) {
        const value = await this.callMcp(name, parsed as Record<string, unknown>, signal);
        result = { ok: true, output: JSON.stringify(value).slice(0, MAX_RESULT_CHARS), value };
      } else {
        if (type !== 'http') throw new ToolError('not_runnable', `tool type ${type ?? '(none)'} does not run here`);
        const mock = this.opts.mocks?.[name];
        // A test call never reaches the CRM: the case's mock answers as the endpoint would have.
        if (mock && (mock.status < 200 || mock.status > 299)) throw new ToolError(`http_${mock.status}`, `mocked HTTP ${mock.status}`);
        const value = mock ? (mock.body ?? null) : await this.http(tool, parsed as Record<string, unknown>, signal);
        result = { ok: true, output: JSON.stringify(value).slice(0, MAX_RESULT_CHARS), value };
      }
    } catch (err) {
      const e = err instanceof ToolError ? err : new ToolError('bad_response', err instanceof Error ? err.message : String(err));
      // A failed transfer's on_failure is the turn's last word; without one, the model answers the error.
      const onFailure = kind === 'transfer' && e.code === 'transfer_failed' ? this.rendered(this.tools.get(name)?.on_failure) : undefined;
      result = { ok: false, output: e.output, ...(onFailure ? { endsTurn: true, say: onFailure } : {}) };
    }
    const duration_ms = Math.round(performance.now() - started);
    const error = result.ok ? null : (JSON.parse(result.output) as { error: string }).error;
    if (this.actions.length < MAX_ACTIONS) {
      this.actions.push({
        type: kind,
        name: name.slice(0, 64),
        at,
        duration_ms,
        status: result.ok ? 'ok' : 'failed',
        ...(isObject(parsed) ? { arguments: parsed } : {}),
        result: result.ok ? result.output.slice(0, MAX_ACTION_RESULT_CHARS) : null,
        error,
      });
    }
    this.opts.logger?.info({ tool: name, status: result.ok ? 'ok' : 'failed', duration_ms, ...(error ? { error } : {}) }, 'tool ran');
    return result;
  }

  /** An MCP tool as a tool config (its input schema checks the arguments like an HTTP tool's parameters). */
  private mcpTool(name: string): ToolConfig | undefined {
    const spec = this.mcp?.specs.find((t) => t.name === name);
    return spec && { name: spec.name, description: spec.description, parameters: spec.parameters };
  }

  /** One MCP tool call within the HTTP tools' default timeout; a failure as a ToolError like an HTTP tool's. */
  private async callMcp(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    try {
      return await this.mcp!.call(name, args, DEFAULT_TIMEOUT_MS, signal);
    } catch (err) {
      if (err instanceof McpError) throw new ToolError(err.code, err.message);
      throw new ToolError('bad_response', 'the MCP server failed');
    }
  }

  /** transfer_call: the destination the model named (the only one when there is one), handed to the call. */
  private async transfer(tool: ToolConfig, args: Record<string, unknown>, spoken: Promise<void>, signal?: AbortSignal): Promise<ToolRunResult> {
    const destination = destinationOf(tool, args);
    if (!destination) {
      throw new ToolError('invalid_arguments', 'no such destination', [{ path: '/destination', message: `must be one of: ${(tool.destinations ?? []).map((d) => d.name).join(', ')}` }]);
    }
    const { sipStatusCode } = await this.opts.transfer!({ tool, destination, spoken, signal });
    const value = { ok: true, transferred_to: destination.name, sip_status_code: sipStatusCode };
    return { ok: true, output: JSON.stringify(value), value, endsTurn: true };
  }

  /** Records something done outside a tool run (the caller's keypad turns: dtmf_in). */
  record(action: ToolAction): void {
    if (this.actions.length < MAX_ACTIONS) this.actions.push(action);
  }

  private validate(tool: ToolConfig, args: unknown): void {
    if (!isObject(args)) throw new ToolError('invalid_arguments', 'arguments are not an object', [{ path: '', message: 'must be object' }]);
    if (!tool.parameters) return;
    let v = this.validators.get(tool.name);
    if (!v) {
      try {
        // A tool schema may use any keyword (the backend stores it as given, checked to compile).
        this.ajv ??= new Ajv({ strict: false, allErrors: true });
        v = this.ajv.compile(tool.parameters);
      } catch (err) {
        v = err instanceof Error ? err : new Error(String(err));
      }
      this.validators.set(tool.name, v);
    }
    if (v instanceof Error) throw new ToolError('invalid_arguments', 'the tool parameters are not a JSON Schema', [{ path: '', message: 'the tool parameters are not a JSON Schema' }]);
    if (!v(args)) {
      const details = (v.errors ?? []).slice(0, 10).map((e) => ({ path: e.instancePath, message: e.message ?? 'invalid' }));
      throw new ToolError('invalid_arguments', 'arguments do not match the tool parameters', details);
    }
  }

  /** One request in a `tool` span of the call's trace. */
  private http(tool: ToolConfig, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const tracing = this.opts.tracing ?? tracingOff;
    return tracing.request('tool', { 'tool.name': tool.name, 'http.request.method': tool.method ?? 'POST' }, this.call.call_id || undefined, (traceHeaders) => this.send(tool, args, traceHeaders, signal));
  }

  /** One request; the parsed JSON of a 2xx answer, else a ToolError. */
  private send(tool: ToolConfig, args: Record<string, unknown>, traceHeaders: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
    let target: URL;
    try {
      target = new URL(tool.url ?? '');
    } catch {
      return Promise.reject(new ToolError('refused', 'the URL is not valid'));
    }
    const agent = agents[target.protocol as 'http:' | 'https:'];
    if (!agent) return Promise.reject(new ToolError('refused', 'the URL is not http(s)'));
    const host = bareHost(target.hostname);
    const literal = isIP(host) !== 0;
    // An IP literal never reaches the lookup: checked here.
    if (literal && !this.opts.allowPrivate && isNonPublicAddress(host)) return Promise.reject(new ToolError('refused', 'a non-public address'));
    const method = tool.method ?? 'POST';
    let body = '';
    if (method === 'GET') {
      for (const [k, v] of Object.entries(args)) target.searchParams.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    } else {
      body = JSON.stringify({ tool: tool.name, arguments: args, call: this.call });
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(tool.headers ?? {})) if (!RESERVED_HEADERS.has(k.toLowerCase())) headers[k] = v;
    Object.assign(headers, traceHeaders);
    headers['X-Voice-Tool-Call-Id'] = `tc_${randomBytes(12).toString('hex')}`;
    if (this.opts.secret) headers['X-Voice-Signature'] = toolSignature(this.opts.secret, this.opts.nowS?.() ?? Math.floor(Date.now() / 1000), body);
    if (method !== 'GET') {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const timeoutMs = tool.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    const request = target.protocol === 'https:' ? https.request : http.request;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const done = (err: ToolError | null, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(value);
        req.destroy();
      };
      const req = request(target, { method, headers, agent, ...(literal ? {} : { lookup: this.lookup as never }) }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) WorkerTracing.answered(status);
        if (status < 200 || status >= 300) {
          res.resume();
          WorkerTracing.answered(status);
          return done(new ToolError(`http_${status}`, `HTTP ${status}`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) return done(new ToolError('bad_response', `response larger than ${MAX_BODY_BYTES} bytes`));
          chunks.push(c);
        });
        res.on('error', () => done(new ToolError('bad_response', 'the response broke off')));
        res.on('aborted', () => done(new ToolError('bad_response', 'the response broke off')));
        res.on('end', () => {
          try {
            done(null, JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            done(new ToolError('bad_response', 'the response is not JSON'));
          }
        });
      });
      // One deadline for all of it: connecting, the answer and its body.
      const timer = setTimeout(() => done(new ToolError('timeout', `no answer within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = () => done(new ToolError('cancelled', 'the call ended'));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      // Before an answer: the guard refused, the name did not resolve, nobody listens.
      req.on('error', (err: NodeJS.ErrnoException) => done(new ToolError('refused', err.code === 'EADDRREFUSED' ? 'a non-public address' : `request failed: ${err.code ?? err.message}`)));
      req.end(body || undefined);
    });
  }
}

/** The destination a transfer_call's arguments name (the only one, when they name none). */
function destinationOf(tool: ToolConfig, args: Record<string, unknown>): TransferDestination | undefined {
  const destinations = tool.destinations ?? [];
  const named = typeof args.destination === 'string' ? args.destination : undefined;
  return named === undefined && destinations.length === 1 ? destinations[0] : destinations.find((d) => d.name === named);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The model's arguments text as an object ('' is no arguments). */
function parseArguments(text: string): unknown {
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ToolError('invalid_arguments', 'arguments are not JSON', [{ path: '', message: 'arguments are not JSON' }]);
  }
}
