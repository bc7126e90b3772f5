// Retries for streaming cloud providers. A stream that breaks is opened again and what was already
// delivered is skipped (by characters for text, by samples for audio), so a retry mid-reply neither
// repeats nor drops speech. After the last attempt the error goes to the pipeline as an error frame.
import { setTimeout as delay } from 'node:timers/promises';

export class ProviderError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface RetryOptions<T> {
  retries: number;
  signal: AbortSignal;
  /** Units an item delivers (0: a marker, always passed on). */
  size(item: T): number;
  /** The item without its first `units`. */
  slice(item: T, units: number): T;
  /** Code of the error thrown when every attempt failed. */
  exhaustedCode: string;
  onRetry?(attempt: number, err: unknown): void;
}

export async function* resumable<T>(open: (attempt: number) => AsyncIterable<T>, opts: RetryOptions<T>): AsyncIterable<T> {
  let delivered = 0;
  for (let attempt = 0; ; attempt++) {
    let seen = 0;
    try {
      for await (const item of open(attempt)) {
        const n = opts.size(item);
        if (n === 0) {
          yield item;
          continue;
        }
        if (seen + n <= delivered) {
          seen += n;
          continue;
        }
        const skip = delivered - seen;
        seen += n;
        delivered = seen;
        yield skip > 0 ? opts.slice(item, skip) : item;
      }
      return;
    } catch (err) {
      if (opts.signal.aborted) return;
      const retryable = !(err instanceof ProviderError) || err.retryable;
      if (!retryable) throw err;
      if (attempt >= opts.retries) {
        throw new ProviderError(opts.exhaustedCode, `failed after ${attempt + 1} attempts: ${err instanceof Error ? err.message : String(err)}`, false);
      }
      opts.onRetry?.(attempt + 1, err);
      await delay(Math.min(100 * 2 ** attempt, 1000));
    }
  }
}

/** An AbortController that fires when `parent` aborts or when `touch()` was not called for `idleMs`. */
export function idleAbort(parent: AbortSignal, idleMs: number, what: string): { signal: AbortSignal; touch(): void; done(): void; timedOut(): boolean } {
  const ctrl = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const onParent = () => ctrl.abort(parent.reason);
  parent.addEventListener('abort', onParent, { once: true });
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      ctrl.abort(new ProviderError('timeout', `${what}: no data for ${idleMs} ms`, true));
    }, idleMs);
  };
  touch();
  return {
    signal: ctrl.signal,
    touch,
    done() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
    timedOut: () => timedOut,
  };
}

/** Maps an HTTP status to a provider error: 408/429/5xx are worth another attempt, other 4xx are not. */
export function httpError(what: string, status: number, body: string): ProviderError {
  const retryable = status === 408 || status === 429 || status >= 500;
  return new ProviderError(retryable ? `${what}_unavailable` : `${what}_rejected`, `${what}: HTTP ${status} ${body.slice(0, 200)}`, retryable);
}
