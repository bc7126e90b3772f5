// OpenAI-compatible chat completions with streaming (Server-Sent Events). OPENAI_BASE_URL points it at
// any compatible server. The model ends the call through the `end_call` tool.
//
// Resume: `chars`. Another attempt at the same messages is expected to start with the same text, so
// the stage passes on only the sentences not yet passed on (providers/retry.ts; llm.ts).
import { ProviderError } from '../providers/errors.js';
import { streamPost } from '../providers/http.js';
import type { ChatMessage, LlmChunk, LlmProvider } from './llm.js';

export interface OpenAiLlmOptions {
  baseUrl: string;
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

type ChatChunk = {
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ function?: { name?: string } }> } }>;
  error?: { message?: string };
};

export class OpenAiLlm implements LlmProvider {
  readonly name = 'openai';
  readonly resume = 'chars' as const;
  constructor(private readonly opts: OpenAiLlmOptions) {}

  async *generate(messages: ChatMessage[], signal: AbortSignal): AsyncIterable<LlmChunk> {
    const body = streamPost({
      stage: 'llm',
      what: 'chat completions',
      url: `${this.opts.baseUrl.replace(/\/$/, '')}/chat/completions`,
      headers: { Authorization: `Bearer ${this.opts.apiKey}`, Accept: 'text/event-stream' },
      body: { model: this.opts.model, messages, temperature: this.opts.temperature, stream: true, tools: [END_CALL_TOOL] },
      signal,
      timeoutMs: this.opts.timeoutMs,
    });
    let endCall = false;
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
      if (delta?.tool_calls?.some((t) => t.function?.name === 'end_call')) endCall = true;
    }
    if (signal.aborted) return;
    if (!done) throw new ProviderError('llm', 'stream_broken', 'chat completions stream ended before [DONE]');
    if (endCall) yield { type: 'end_call' };
  }
}
