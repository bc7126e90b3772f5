// What openapi.ts hands each folder's `<folder>/openapi.ts` to describe its paths with (one type for all: each
// folder uses the part it needs).
import type { TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '@voice-platform/schemas';

type Notes = Partial<Record<ErrorCode, string>>;

export interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  /** The error responses of these codes, from the catalogue (openapi.ts). */
  errors: (codes: readonly ErrorCode[], notes?: Notes) => Record<string, object>;
  body: (schema: TSchema) => object;
  idParam: (description: string) => object;
  /** The codes of the admin token check, of the JSON body checks and of the API key check. */
  ADMIN: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
  API_KEY: readonly ErrorCode[];
  /** A resource id's schema. */
  idSchema: object;
  /** A request's RFC 3339 time (validate.ts reads them strictly). */
  timeParam: object;
  /** The note of 401 `unauthorized` for the worker token. */
  WORKER_TOKEN: Notes;
  /** The note of 503 `service_unavailable` when LiveKit is down. */
  TELEPHONY_DOWN: Notes;
  requestJson: (schema: TSchema | object) => object;
  /** A schema as plain JSON (no TypeBox symbols). */
  plain: (schema: TSchema | object) => object;
  /** An `application/json` content map of a schema. */
  json: (schema: TSchema | object) => object;
  /** The answer of a login (and of a password change): a new token. */
  LoginResponse: TSchema;
}
