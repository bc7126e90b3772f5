// OpenAI-compatible chat completions with streaming (Server-Sent Events). OPENAI_BASE_URL (or the bot's
// llm.base_url) points it at any compatible server. The model ends the call through the `end_call` tool;
// the bot's tools are offered as functions besides. Streamed `tool_calls` come in pieces keyed by
// `index` (id and name usually in the first, arguments spread over many): they are put together and
// handed on whole once the reply is complete ([DONE]), so a broken stream never runs half a call.
//
// Resume: `chars`. Another attempt at the same messages is expected to start with the same text, so
// the stage passes on only the sentences not yet passed on (providers/retry.ts; llm.ts).
import { ProviderError } from '../providers/errors.js';
import { streamPost } from '../providers/http.js';
import type { ChatMessage, GenerateOptions, LlmChunk, LlmProvider, ToolCall } from './llm.js';

export interface OpenAiLlmOptions {
  baseUrl: string;
  /** Empty: no Authorization header (a local server that needs no key). */
  apiKey: string;
  model: string;
  temperature: number;
  timeoutMs: number;
}

const END_CALL_TOOL = {
  type: 'function',
  function: { name: 'end_call', description: 'Hang up after your reply, when the conversation is over.', parameters: { type: 'object', properties: {} } },
};

/** Yields the `data:` payloads of an SSE body. */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const bytes of body) {
    buf += decoder.decode(bytes, { stream: true });
    let sep: number;
    while ((sep = buf.search(/\r?\n\r?\n/)) >= 0) {
      const event = buf.slice(0, sep);
      buf = buf.slice(sep).replace(/^\r?\n\r?\n/, '');
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield data;
    }
  }
}

type ToolCallDelta = { index?: number; id?: string; type?: string; function?: { name?: string; arguments?: string } };
type ChatChunk = {
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: ToolCallDelta[] } }>;
  error?: { message?: string };
};

/** A piece of a streamed field: appended, unless a server repeats the whole value in every chunk. */
const joinPiece = (have: string, piece: string | undefined): string => (!piece || piece === have ? have : have + piece);

export class OpenAiLlm implements LlmProvider {
  readonly name = 'openai';
  readonly resume = 'chars' as const;
  constructor(private readonly opts: OpenAiLlmOptions) {}

  /** A flow's `summary` context (shared/DESIGN.md §18): one more request, no tools, its text. */
  async summarize(messages: ChatMessage[], signal: AbortSignal): Promise<string> {
    let text = '';
    const ask: ChatMessage = { role: 'user', content: 'Summarise the conversation so far in at most three short sentences, for whoever continues it. Answer with the summary only.' };
    for await (const c of this.generate([...messages, ask], signal, { toolChoice: 'none' })) if (c.type === 'text') text += c.text;
    return text.trim().slice(0, 2000);
  }

  async *generate(messages: ChatMessage[], signal: AbortSignal, opts: GenerateOptions = {}): AsyncIterable<LlmChunk> {
    const tools = [END_CALL_TOOL, ...(opts.tools ?? []).filter((t) => t.name !== 'end_call').map((t) => ({ type: 'function', function: t }))];
    const body = streamPost({
      stage: 'llm',
      what: 'chat completions',
      url: `${this.opts.baseUrl.replace(/\/$/, '')}/chat/completions`,
      headers: { ...(this.opts.apiKey ? { Authorization: `Bearer ${this.opts.apiKey}` } : {}), Accept: 'text/event-stream' },
      body: {
        model: this.opts.model,
        messages,
        temperature: this.opts.temperature,
        stream: true,
        tools,
        ...(opts.toolChoice === 'none' ? { tool_choice: 'none' } : {}),
      },
      signal,
      timeoutMs: this.opts.timeoutMs,
    });
    /** The reply's tool calls by their `index`. */
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let done = false;
    for await (const data of sseData(body)) {
      if (data === '[DONE]') {
        done = true;
        break;
      }
      let chunk: ChatChunk;
      try {
        chunk = JSON.parse(data) as ChatChunk;
      } catch {
        throw new ProviderError('llm', 'stream_broken', `chat completions stream: not JSON: ${data.slice(0, 100)}`);
      }
      if (chunk.error) throw new ProviderError('llm', 'stream_broken', `chat completions: ${chunk.error.message ?? 'error event'}`);
      const delta = chunk.choices?.[0]?.delta;
      if (delta?.content) yield { type: 'text', text: delta.content };
      for (const piece of delta?.tool_calls ?? []) {
        const index = piece.index ?? 0;
        const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
        call.id = joinPiece(call.id, piece.id);
        call.name = joinPiece(call.name, piece.function?.name);
        call.arguments += piece.function?.arguments ?? '';
        calls.set(index, call);
      }
    }
    if (signal.aborted) return;
    if (!done) throw new ProviderError('llm', 'stream_broken', 'chat completions stream ended before [DONE]');
    if (calls.size) {
      const whole: ToolCall[] = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, c]) => ({ id: c.id || `call_${index}`, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      yield { type: 'tool_calls', calls: whole };
    }
  }
}
