// Every provider failure is one ProviderError: which stage, which kind (the code list below), whether
// another attempt may help, and the HTTP status when there was one. The stage base (providers/retry.ts)
// decides on retries from `retryable` alone; the call decides how it ends from `code` alone
// (callEndFor, the one table of code → close code and end reason).

export type Stage = 'stt' | 'llm' | 'tts';

/** The kinds of failure, each with whether another attempt may help. */
export const ERROR_KINDS = {
  /** 401/403: the key is missing, wrong or not allowed. Never better on retry. */
  auth: { retryable: false },
  /** 429. */
  rate_limited: { retryable: true },
  /** 408, or no answer / no data within PROVIDER_TIMEOUT_MS. */
  timeout: { retryable: true },
  /** 5xx, connection refused or reset before any data; also: the retries are spent. */
  unavailable: { retryable: true },
  /** Any other 4xx: the request itself is wrong (bad text, bad voice, bad format). */
  rejected: { retryable: false },
  /** The stream broke after its first byte (audio, tokens or a live session). */
  stream_broken: { retryable: true },
  /** A local engine failed (bad exit, bad output): the same input fails the same way. */
  failed: { retryable: false },
  /** The worker cannot run the bot's provider at all (no key set, unknown provider): `provider_unavailable`. */
  config: { retryable: false },
} as const;
export type ErrorKind = keyof typeof ERROR_KINDS;

/** `<stage>_<kind>` (e.g. `tts_auth`, `llm_unavailable`), or `provider_unavailable` for `config`. */
export type ProviderErrorCode = `${Stage}_${Exclude<ErrorKind, 'config'>}` | 'provider_unavailable';

export const codeOf = (stage: Stage, kind: ErrorKind): ProviderErrorCode => (kind === 'config' ? 'provider_unavailable' : `${stage}_${kind}`);

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly retryable: boolean;
  readonly status?: number;

  constructor(
    readonly stage: Stage,
    readonly kind: ErrorKind,
    message: string,
    opts: { retryable?: boolean; status?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderError';
    this.code = codeOf(stage, kind);
    this.retryable = opts.retryable ?? ERROR_KINDS[kind].retryable;
    if (opts.status !== undefined) this.status = opts.status;
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err));

/** Any failure as a ProviderError of `stage` (an unexpected exception is a local `failed`). */
export function asProviderError(stage: Stage, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError(stage, 'failed', messageOf(err), { cause: err });
}

/** An HTTP answer that is not a success: 401/403 auth, 408 timeout, 429 rate_limited, 5xx unavailable, other 4xx rejected. */
export function httpError(stage: Stage, what: string, status: number, body: string): ProviderError {
  const kind: ErrorKind =
    status === 401 || status === 403 ? 'auth' : status === 408 ? 'timeout' : status === 429 ? 'rate_limited' : status >= 500 ? 'unavailable' : 'rejected';
  return new ProviderError(stage, kind, `${what}: HTTP ${status} ${body.slice(0, 200)}`.trimEnd(), { status });
}

/**
 * A request or stream that threw: a timeout when `idle` fired, else `unavailable` before the first byte
 * and `stream_broken` after it.
 */
export function transportError(stage: Stage, what: string, err: unknown, opts: { timedOut: boolean; started: boolean }): ProviderError {
  if (err instanceof ProviderError) return err;
  const kind: ErrorKind = opts.timedOut ? 'timeout' : opts.started ? 'stream_broken' : 'unavailable';
  return new ProviderError(stage, kind, `${what}${opts.started ? ' stream broke' : ''}: ${messageOf(err)}`, { cause: err });
}

// ---- how a failure ends the call (docs/design.md §4) ----

export interface CallEnd {
  /** WebSocket close code. */
  closeCode: number;
  /** The call record's end_reason (mid-call also the `ended` message's reason). */
  endReason: string;
}

const STAGES: readonly Stage[] = ['stt', 'llm', 'tts'];
const ALL_CODES: ProviderErrorCode[] = [
  'provider_unavailable',
  ...STAGES.flatMap((stage) => (Object.keys(ERROR_KINDS) as ErrorKind[]).filter((k) => k !== 'config').map((k) => codeOf(stage, k))),
];

/**
 * The one table of provider failures → the call's end, for every code. Refused at start (a provider
 * could not be opened, before `started`): an `error` message with the code, close 4500, end_reason = the
 * code. Mid-call: an `error` message, `ended` with `error:<code>`, close 1000 (the call ended in order,
 * for that reason); the call's status is `failed` either way.
 */
export const CALL_ENDS: Readonly<Record<ProviderErrorCode, { start: CallEnd; in_call: CallEnd }>> = Object.fromEntries(
  ALL_CODES.map((code) => [code, { start: { closeCode: 4500, endReason: code }, in_call: { closeCode: 1000, endReason: `error:${code}` } }]),
) as Record<ProviderErrorCode, { start: CallEnd; in_call: CallEnd }>;

/** Non-provider codes: at start `internal_error` (4500); mid-call a processor's own code (`vad_failed`) ends like a provider's. */
export function callEndFor(code: string, phase: 'start' | 'in_call'): CallEnd {
  const row = CALL_ENDS[code as ProviderErrorCode];
  if (row) return row[phase];
  return phase === 'start' ? { closeCode: 4500, endReason: 'internal_error' } : { closeCode: 1000, endReason: `error:${code}` };
}

/** A call that could not start because of `err`: the code the caller and the call record get, and the close code. */
export function refusalFor(err: unknown): CallEnd & { code: string } {
  const end = callEndFor(err instanceof ProviderError ? err.code : 'internal_error', 'start');
  return { code: end.endReason, ...end };
}
