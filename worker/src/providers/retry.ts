// Retries, written once for every stage. A provider makes ONE attempt and declares how a stream it
// broke may be resumed; the stage's processor runs it through `retryStream` (TTS, LLM) or the STT
// stage's reconnecting session, with the call's RetryPolicy:
// - a retryable failure before the provider's first output is retried, for every provider;
// - after output, `resume: 'none'` makes the failure final (a new rendition is never spliced into one
//   already delivered), `resume: 'chars'` retries and passes on only what was not yet passed on;
// - a failure that is not retryable (auth, a rejected request, a local engine's fault) is final at once;
// - when the attempts are spent the stage fails with `<stage>_unavailable` ("failed after N attempts").
import { setTimeout as delay } from 'node:timers/promises';
import { asProviderError, ProviderError, type Stage } from './errors.js';

export interface RetryPolicy {
  /** Attempts in all (1: never retried). */
  readonly attempts: number;
  /** How long to wait before retry `n` (1: the first retry), in ms. */
  backoffMs(n: number): number;
}

/** `retries` retries after the first attempt, waiting 100 ms, 200 ms, … up to 1 s between them. */
export function retryPolicy(retries: number, baseMs = 100, maxMs = 1000): RetryPolicy {
  return { attempts: retries + 1, backoffMs: (n) => Math.min(baseMs * 2 ** (n - 1), maxMs) };
}

/** PROVIDER_RETRIES' default. */
export const DEFAULT_RETRY = retryPolicy(2);

/**
 * How a provider's stream resumes after it broke mid-way: `chars`, the stage may retry and pass on only
 * the characters not yet passed on (the retry's output must start with the same text); `none`, a failure
 * after the first output is final.
 */
export type Resume = 'none' | 'chars';

/** The final error once the attempts are spent. */
export function exhausted(stage: Stage, attempts: number, last: ProviderError): ProviderError {
  return new ProviderError(stage, 'unavailable', `failed after ${attempts} attempts: ${last.message}`, { retryable: false, status: last.status, cause: last });
}

/** Waits before retry `n`; false when `signal` aborted meanwhile. */
export async function backoff(policy: RetryPolicy, n: number, signal?: AbortSignal): Promise<boolean> {
  await delay(policy.backoffMs(n), undefined, signal ? { signal } : undefined).catch(() => undefined);
  return !signal?.aborted;
}

/**
 * Opens something (an STT session) with up to `attempts` attempts, waiting the policy's backoff between
 * them; a failure that is not retryable, or the last one, is thrown (`spent` words the latter).
 */
export async function openWithRetries<T>(
  stage: Stage,
  policy: RetryPolicy,
  open: () => Promise<T>,
  opts: { attempts?: number; stop?: () => boolean; spent?: (attempts: number, last: ProviderError) => ProviderError } = {},
): Promise<T> {
  const attempts = opts.attempts ?? policy.attempts;
  const spent = opts.spent ?? ((n: number, last: ProviderError) => exhausted(stage, n, last));
  for (let n = 1; ; n++) {
    try {
      return await open();
    } catch (err) {
      const e = asProviderError(stage, err);
      if (!e.retryable) throw e;
      if (n >= attempts || opts.stop?.()) throw spent(n, e);
      await backoff(policy, n);
    }
  }
}

export interface StreamRun<T> {
  stage: Stage;
  policy: RetryPolicy;
  resume: Resume;
  signal: AbortSignal;
  /** One attempt of the provider. */
  attempt(): AsyncIterable<T>;
  /** For `chars`: the characters an item carries (0: a marker, always passed on). */
  chars?(item: T): number;
  /** For `chars`: the item without its first `n` characters. */
  dropChars?(item: T, n: number): T;
  /** For `chars`: the characters the consumer has passed on for good (default: every one it was given). */
  committed?(): number;
  /** For `chars`, before a resumed attempt: the consumer drops what it holds beyond `committed()`. */
  onResume?(): void;
}

/** A provider's stream with the stage's retries (see the top of this file). Ends quietly once `signal` aborts. */
export async function* retryStream<T>(run: StreamRun<T>): AsyncIterable<T> {
  const chars = run.resume === 'chars' && run.chars && run.dropChars ? { count: run.chars, drop: run.dropChars } : null;
  let started = false;
  let given = 0;
  let resumeAt = 0;
  for (let attempt = 1; ; attempt++) {
    let seen = 0;
    try {
      for await (const item of run.attempt()) {
        const n = chars ? chars.count(item) : -1;
        if (n > 0) {
          if (seen + n <= resumeAt) {
            seen += n;
            continue;
          }
          const cut = resumeAt - seen;
          seen += n;
          given = seen;
          started = true;
          yield cut > 0 ? chars!.drop(item, cut) : item;
          continue;
        }
        if (n < 0) started = true;
        yield item;
      }
      return;
    } catch (err) {
      if (run.signal.aborted) return;
      const e = asProviderError(run.stage, err);
      if (!e.retryable) throw e;
      if (started && !chars) {
        throw new ProviderError(run.stage, e.kind, `${e.message} (after output was delivered: not retried, a new rendition is never spliced into it)`, {
          retryable: false,
          status: e.status,
          cause: e,
        });
      }
      if (attempt >= run.policy.attempts) throw exhausted(run.stage, attempt, e);
      resumeAt = started ? (run.committed?.() ?? given) : 0;
      if (started) run.onResume?.();
      if (!(await backoff(run.policy, attempt, run.signal))) return;
    }
  }
}
