// The reply stage. It keeps the conversation, asks the provider for a reply when a final user
// transcript arrives, and cuts the streamed reply into sentences so speech starts after the first one.
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export type LlmChunk = { type: 'text'; text: string } | { type: 'end_call' };

export interface LlmProvider {
  readonly name: string;
  generate(messages: ChatMessage[], signal: AbortSignal): AsyncIterable<LlmChunk>;
}

export class LlmError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

/** The sentences a whole text is spoken as: what follows the last stop (or all of it, with no stop) too. */
export function sentencesOf(text: string): string[] {
  const splitter = new SentenceSplitter();
  return [...splitter.push(text), ...splitter.flush()];
}

/** Splits streamed text at sentence ends (a stop followed by white space) so TTS can start early. */
export class SentenceSplitter {
  private buf = '';
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    const re = /[.!?…]+["')\]]*\s+/g;
    let last = 0;
    for (let m = re.exec(this.buf); m; m = re.exec(this.buf)) {
      const s = this.buf.slice(last, m.index + m[0].length).trim();
      if (s) out.push(s);
      last = m.index + m[0].length;
    }
    this.buf = this.buf.slice(last);
    return out;
  }
  flush(): string[] {
    const s = this.buf.trim();
    this.buf = '';
    return s ? [s] : [];
  }
}

export class LlmProcessor extends FrameProcessor {
  readonly messages: ChatMessage[];
  private abort: AbortController | null = null;

  constructor(
    private readonly provider: LlmProvider,
    systemPrompt: string,
  ) {
    super('llm');
    this.messages = systemPrompt ? [{ role: 'system', content: systemPrompt }] : [];
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'say') {
      this.messages.push({ role: 'assistant', content: frame.text });
      this.push({ kind: 'response_start' });
      for (const s of sentencesOf(frame.text)) this.push({ kind: 'text', text: s });
      this.push({ kind: 'response_end', endCall: frame.endCall ?? false });
      return;
    }
    this.push(frame, dir);
    if (frame.kind === 'transcript' && frame.role === 'user' && frame.final && frame.text.trim()) {
      this.messages.push({ role: 'user', content: frame.text });
      await this.respond();
    }
  }

  private async respond(): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    const started = performance.now();
    const splitter = new SentenceSplitter();
    let spoken = '';
    let endCall = false;
    let first = true;
    const emit = (sentences: string[]) => {
      for (const s of sentences) {
        if (first) {
          this.push({ kind: 'provider_time', stage: 'llm', provider: this.provider.name, ms: performance.now() - started });
          first = false;
        }
        spoken += (spoken ? ' ' : '') + s;
        this.push({ kind: 'text', text: s });
      }
    };
    this.push({ kind: 'response_start' });
    try {
      for await (const chunk of this.provider.generate([...this.messages], abort.signal)) {
        if (abort.signal.aborted) break;
        if (chunk.type === 'end_call') endCall = true;
        else emit(splitter.push(chunk.text));
      }
      if (abort.signal.aborted) return;
      emit(splitter.flush());
      this.push({ kind: 'response_end', endCall });
    } catch (err) {
      if (abort.signal.aborted || this.cancelled) return;
      this.pushError(err instanceof LlmError ? err.code : 'llm_failed', err, true);
    } finally {
      // What was said (even if cut short) is what the conversation remembers.
      if (spoken) this.messages.push({ role: 'assistant', content: spoken });
      if (this.abort === abort) this.abort = null;
    }
  }

  protected override onInterrupt(): void {
    this.abort?.abort();
  }

  protected override onCancel(): void {
    this.abort?.abort();
  }
}
