// The error catalogue: the body every API error has, and each code the backend answers with, its HTTP
// status and what it means. The backend raises errors by code from here, its OpenAPI document lists them
// from here, and every client (console, operator, worker) reads error bodies with parseErrorBody.
import { Type, type Static } from '@sinclair/typebox';

export const ERROR_CODE_PATTERN = '^[a-z_]+$';

/** `{"error":{"code","message","details"?}}`: the body of every error answer (docs/design.md §2). */
export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String({ pattern: ERROR_CODE_PATTERN }),
    message: Type.String(),
    details: Type.Optional(Type.Unknown()),
  }),
});
export type ErrorBody = Static<typeof ErrorBody>;

interface CatalogueEntry {
  status: number;
  /** What the code means, one line (the OpenAPI document's description of it). */
  meaning: string;
  /** The message the backend sends unless the site raising it says more. */
  message: string;
  /** Answers with this code may carry `Retry-After` (seconds). */
  retryAfter?: true;
  /** `any`: any endpoint may answer it, so operations do not list it; `internal`: never sent to a client. */
  scope?: 'any' | 'internal';
}

export const ERROR_CODES = {
  bad_request: { status: 400, meaning: 'The request is not well-formed HTTP (e.g. a control character in a header, Content-Length with Transfer-Encoding); the connection is closed', message: 'the request is not well-formed HTTP', scope: 'any' },
  invalid_json: { status: 400, meaning: 'The body is not parseable JSON', message: 'the body is not valid JSON' },
  missing_api_key: { status: 401, meaning: 'No X-API-Key header', message: 'the X-API-Key header is required' },
  invalid_api_key: { status: 401, meaning: 'The X-API-Key is no key of this server', message: 'the API key is not valid' },
  api_key_inactive: { status: 401, meaning: 'The API key has been deactivated', message: 'the API key has been deactivated' },
  api_key_expired: { status: 401, meaning: 'The API key is past its `expires_at`', message: 'the API key has expired' },
  unauthorized: { status: 401, meaning: 'No bearer token, or one that is not valid (admin token, worker token, or LiveKit webhook signature)', message: 'the admin token is invalid' },
  token_expired: { status: 401, meaning: 'The admin token has expired: log in again', message: 'the admin token has expired' },
  invalid_credentials: { status: 401, meaning: 'Login: the email or the password is wrong', message: 'email or password is wrong' },
  forbidden: { status: 403, meaning: "Signed in, but this account's role may not do this (docs/roles.md)", message: "this account's role may not do this" },
  password_change_required: { status: 403, meaning: 'The account has a one-time password: change it first (POST /api/v1/auth/password)', message: 'change your one-time password first (POST /api/v1/auth/password)' },
  not_found: { status: 404, meaning: 'No such resource (or no such endpoint)', message: 'resource not found' },
  bot_not_found: { status: 404, meaning: 'No bot has this id', message: 'bot not found' },
  test_case_not_found: { status: 404, meaning: 'The bot has no test case with this id', message: 'test case not found' },
  test_run_not_found: { status: 404, meaning: 'The bot has no test run with this id', message: 'test run not found' },
  transport_unavailable: { status: 422, meaning: 'A test case names a transport runs cannot place yet (`details.field`, `details.available`)', message: 'this test transport is not available' },
  call_not_found: { status: 404, meaning: 'No call has this id (an API key sees only the calls it placed)', message: 'call not found' },
  recording_not_found: { status: 404, meaning: 'The call has no recording: none was made or uploaded (`recording_key` is null), or it is no longer in object storage', message: 'this call has no recording' },
  method_not_allowed: { status: 405, meaning: 'The path does not take this method; `Allow` lists those it takes', message: 'method not allowed on this endpoint', scope: 'any' },
  request_timeout: { status: 408, meaning: "The request's headers or body did not arrive in time; the connection is closed", message: 'the request did not arrive in time', scope: 'any' },
  conflict: { status: 409, meaning: "The resource's state does not allow this, or another request is changing it (then with `Retry-After`)", message: 'the resource is being changed by another request; retry', retryAfter: true },
  call_not_active: { status: 409, meaning: 'The call is not in progress on a worker (not answered yet, or over): nothing to control or listen to', message: 'the call is not in progress' },
  tests_failing: { status: 409, meaning: "The bot has `require_passing_tests` and this version's last test run is not all green (done, none failed, some passed)", message: "this version's last test run is not all green; the bot requires passing tests to publish" },
  bot_inactive: { status: 409, meaning: 'The bot exists but is not active', message: 'the bot is not active' },
  api_key_revoked: { status: 409, meaning: 'An inactive or expired API key cannot be reactivated nor have its expiry changed', message: 'the API key is inactive or expired; revocation is final' },
  idempotency_key_reused: { status: 409, meaning: 'The Idempotency-Key was used with a different request body', message: 'this Idempotency-Key was used with a different request body' },
  no_outbound_trunk: { status: 409, meaning: 'A dial-out needs an outbound SIP trunk and none is configured', message: 'no outbound SIP trunk is configured; an admin must create one (POST /api/v1/sip/outbound-trunks)' },
  user_exists: { status: 409, meaning: 'A user with this email exists', message: 'a user with this email exists' },
  last_owner: { status: 409, meaning: 'The last active owner cannot be demoted or deactivated', message: 'this is the last active owner: make another user owner first' },
  call_exists: { status: 409, meaning: "A call with the chosen id exists (the campaign dialler's guard against dialling one attempt twice)", message: 'a call with this id exists', scope: 'internal' },
  payload_too_large: { status: 413, meaning: 'The body is over the limit (64 KiB for JSON)', message: 'the body is too large' },
  unsupported_media_type: { status: 415, meaning: 'The body is not of a media type this endpoint takes (`application/json`, UTF-8, no `Content-Encoding`)', message: 'the body must be application/json' },
  range_not_satisfiable: { status: 416, meaning: 'The `Range` asks for bytes beyond the end of the file; `Content-Range: bytes */<size>` gives its size', message: 'the requested range is not satisfiable' },
  validation_failed: { status: 422, meaning: 'The request is invalid: `details` lists `{field, message}` for each problem', message: 'the request is invalid' },
  invalid_phone_number: { status: 422, meaning: 'A phone number is not E.164', message: 'the number must be an E.164 number such as +4915112345678' },
  conflicting_fields: { status: 422, meaning: 'Two fields that exclude each other were both sent', message: 'send variables or its alias connected_event, not both' },
  variables_mismatch: { status: 422, meaning: "The variables do not match the bot's declared variables: `details: {missing, unknown}`", message: "the variables do not match the bot's declared variables" },
  unknown_from_number: { status: 422, meaning: '`from_number` is no number of any outbound trunk', message: 'from_number is not a number of any outbound trunk' },
  rate_limited: { status: 429, meaning: 'Too many requests: retry after `Retry-After` seconds', message: 'too many requests; retry later', retryAfter: true },
  headers_too_large: { status: 431, meaning: 'The request headers are over the server limit; the connection is closed', message: 'the request headers are too large', scope: 'any' },
  internal_error: { status: 500, meaning: 'An unexpected failure; the body gives no detail', message: 'internal error', scope: 'any' },
  fleet_at_capacity: { status: 503, meaning: 'No voice worker has a free call slot: `details.live_workers`', message: 'every voice worker is busy', retryAfter: true },
  service_unavailable: { status: 503, meaning: 'A dependency is unreachable (MongoDB or Redis, named by `details.failed`; LiveKit) or the server is busy', message: 'the service is unavailable; retry later', retryAfter: true },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The body of an error answer; `details` only when given (the same bytes whoever builds it). */
export function errorBody(code: ErrorCode, message: string, details?: unknown): ErrorBody {
  return { error: { code, message, ...(details !== undefined ? { details } : {}) } };
}

/** An error answer as a client reads it. `code` is kept as sent: `known` says whether it is in the catalogue. */
interface ParsedError {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  known: boolean;
}

/**
 * Reads an error answer: `body` is the response text, or JSON already parsed. Null when it is not an
 * error body (not JSON, or not `{error:{code: string, message: string}}`): the caller decides by status.
 */
export function parseErrorBody(status: number, body: unknown): ParsedError | null {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return null;
    }
  }
  const err = (json as { error?: unknown } | null | undefined)?.error as { code?: unknown; message?: unknown; details?: unknown } | null | undefined;
  if (!err || typeof err !== 'object' || typeof err.code !== 'string' || typeof err.message !== 'string') return null;
  return { status, code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}), known: isErrorCode(err.code) };
}

/** An error answer as a thrown error: what clients of the API (console, operator) throw for it. */
export class ErrorResponse extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ErrorResponse';
  }
}
