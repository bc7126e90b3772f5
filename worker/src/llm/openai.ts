// OpenAI-compatible chat completions with streaming (Server-Sent Events). OPENAI_BASE_URL points it at
// any compatible server. The model ends the call through the `end_call` tool.
import { httpError, idleAbort, ProviderError, resumable } from '../providers/retry.js';
import { LlmError, type ChatMessage, type LlmChunk, type LlmProvider } from './llm.js';

export interface OpenAiLlmOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  temperature: number;
  timeoutMs: number;
  retries: number;
}

const END_CALL_TOOL = {
  type: 'function',
  function: { name: 'end_call', description: 'Hang up after your reply, when the conversation is over.', parameters: { type: 'object', properties: {} } },
};

/** Yields the `data:` payloads of an SSE body. */
export async function* sseData(body: ReadableStream<Uint8Array>, onChunk: () => void): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    onChunk();
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

export class OpenAiLlm implements LlmProvider {
  readonly name = 'openai';
  constructor(private readonly opts: OpenAiLlmOptions) {}

  generate(messages: ChatMessage[], signal: AbortSignal): AsyncIterable<LlmChunk> {
    const stream = resumable<LlmChunk>(() => this.attempt(messages, signal), {
      retries: this.opts.retries,
      signal,
      size: (c) => (c.type === 'text' ? c.text.length : 0),
      slice: (c, n) => (c.type === 'text' ? { type: 'text', text: c.text.slice(n) } : c),
      exhaustedCode: 'llm_unavailable',
    });
    return mapErrors(stream);
  }

  private async *attempt(messages: ChatMessage[], signal: AbortSignal): AsyncIterable<LlmChunk> {
    const idle = idleAbort(signal, this.opts.timeoutMs, 'chat completions');
    try {
      let res: Response;
      try {
        res = await fetch(`${this.opts.baseUrl.replace(/\/$/, '')}/chat/completions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${this.opts.apiKey}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
          body: JSON.stringify({ model: this.opts.model, messages, temperature: this.opts.temperature, stream: true, tools: [END_CALL_TOOL] }),
          signal: idle.signal,
        });
      } catch (err) {
        throw new ProviderError('llm_unavailable', `chat completions: ${describe(err, idle.signal)}`, true);
      }
      if (!res.ok || !res.body) throw httpError('llm', res.status, await res.text().catch(() => ''));
      let endCall = false;
      let done = false;
      try {
        for await (const data of sseData(res.body, idle.touch)) {
          if (data === '[DONE]') {
            done = true;
            break;
          }
          const chunk = JSON.parse(data) as {
            choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ function?: { name?: string } }> } }>;
            error?: { message?: string };
          };
          if (chunk.error) throw new ProviderError('llm_unavailable', `chat completions: ${chunk.error.message ?? 'error event'}`, true);
          const delta = chunk.choices?.[0]?.delta;
          if (delta?.content) yield { type: 'text', text: delta.content };
          if (delta?.tool_calls?.some((t) => t.function?.name === 'end_call')) endCall = true;
        }
      } catch (err) {
        if (err instanceof ProviderError) throw err;
        throw new ProviderError('llm_unavailable', `chat completions stream: ${describe(err, idle.signal)}`, true);
      }
      if (!done) throw new ProviderError('llm_unavailable', 'chat completions stream ended before [DONE]', true);
      if (endCall) yield { type: 'end_call' };
    } finally {
      idle.done();
    }
  }
}

function describe(err: unknown, signal: AbortSignal): string {
  if (signal.aborted && signal.reason instanceof Error) return signal.reason.message;
  if (err instanceof Error) return err.cause instanceof Error ? err.cause.message : err.message;
  return String(err);
}

async function* mapErrors(stream: AsyncIterable<LlmChunk>): AsyncIterable<LlmChunk> {
  try {
    yield* stream;
  } catch (err) {
    if (err instanceof ProviderError) throw new LlmError(err.code, err.message);
    throw err;
  }
}
