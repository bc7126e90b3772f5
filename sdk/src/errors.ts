// The SDK's errors: ApiError for every failed request (the API's error body, or no answer at all), and
// WebhookVerificationError for a delivery whose signature does not hold.

/** A request the API refused (its `{error: {code, message, details}}`), or one that got no answer (status 0). */
export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 when no answer came (network error, code `network_error`). */
    readonly status: number,
    /** The catalogue code of the answer (e.g. `validation_failed`, `call_not_found`, `rate_limited`). */
    readonly code: string,
    message: string,
    readonly details: unknown,
    /** The answer's Retry-After in seconds (null without one). */
    readonly retryAfterSeconds: number | null,
    /** The same request may succeed later (429, 503, an in-flight 409 with Retry-After, or no answer). */
    readonly retryable: boolean,
    /** The answer's X-Request-Id, to quote to the operator. */
    readonly requestId: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ApiError';
  }
}

export type WebhookVerificationReason = 'missing_headers' | 'bad_timestamp' | 'timestamp_out_of_tolerance' | 'bad_signature' | 'bad_body';

/** A webhook delivery that does not verify: its `reason` says why. Answer such a request 400 (or 401), never 2xx. */
export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
