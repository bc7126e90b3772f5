// The reply stage. It keeps the conversation, asks the provider for a reply when a final user
// transcript arrives, and cuts the streamed reply into sentences so speech starts after the first one.
// Retries are the stage's (providers/retry.ts): a provider makes one attempt per reply.
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';
import { asProviderError } from '../providers/errors.js';
import { DEFAULT_RETRY, retryStream, type Resume, type RetryPolicy } from '../providers/retry.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export type LlmChunk = { type: 'text'; text: string } | { type: 'end_call' };

export interface LlmProvider {
  readonly name: string;
  /**
   * After text was delivered: `chars`, another attempt at the same messages starts with the same text,
   * so the stage passes on only what it had not (whole sentences: a sentence is never spliced from two
   * attempts); `none`, a failure is final.
   */
  readonly resume: Resume;
  /** ONE attempt: failures are ProviderErrors (stage `llm`); the stage retries. */
  generate(messages: ChatMessage[], signal: AbortSignal): AsyncIterable<LlmChunk>;
}

/** The sentences a whole text is spoken as: what follows the last stop (or all of it, with no stop) too. */
export function sentencesOf(text: string): string[] {
  const splitter = new SentenceSplitter();
  return [...splitter.push(text), ...splitter.flush()];
}

/** Splits streamed text at sentence ends (a stop followed by white space) so TTS can start early. */
export class SentenceSplitter {
  private buf = '';
  /** Characters pushed and not yet given out as part of a sentence. */
  get pending(): number {
    return this.buf.length;
  }
  /** Forgets the unfinished sentence. */
  drop(): void {
    this.buf = '';
  }
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
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
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
    /** Characters of the provider's text pushed into the splitter. */
    let pushed = 0;
    const messages = [...this.messages];
    const reply = retryStream<LlmChunk>({
      stage: 'llm',
      policy: this.retry,
      resume: this.provider.resume,
      signal: abort.signal,
      attempt: () => this.provider.generate(messages, abort.signal),
      chars: (c) => (c.type === 'text' ? c.text.length : 0),
      dropChars: (c, n) => (c.type === 'text' ? { type: 'text', text: c.text.slice(n) } : c),
      // Only whole sentences went on: a resumed attempt starts after the last of them.
      committed: () => pushed - splitter.pending,
      onResume: () => {
        pushed -= splitter.pending;
        splitter.drop();
      },
    });
    this.push({ kind: 'response_start' });
    try {
      for await (const chunk of reply) {
        if (abort.signal.aborted) break;
        if (chunk.type === 'end_call') endCall = true;
        else {
          pushed += chunk.text.length;
          emit(splitter.push(chunk.text));
        }
      }
      if (abort.signal.aborted) return;
      emit(splitter.flush());
      this.push({ kind: 'response_end', endCall });
    } catch (err) {
      if (abort.signal.aborted || this.cancelled) return;
      this.pushError(asProviderError('llm', err).code, err, true);
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
