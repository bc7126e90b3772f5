// docs/openapi.json, the committed copy of the served OpenAPI document (npm run gen:openapi -w backend writes
// it; apiDocs.test.ts fails when it differs from what the backend serves; make test lints it). Its `servers`
// is the address `make up` serves at, in place of a deployment's PUBLIC_URL, so the file is the same
// wherever it is built; its keys are sorted at every level, so a change shows as a small diff.
import { VERSION } from './core/deps.js';
import { openapiDocument } from './openapi.js';

/** The `servers` URL of docs/openapi.json (the local stack's backend, tests/infra/src/stack.ts). */
export const OPENAPI_FILE_SERVER_URL = 'http://127.0.0.1:8080';

/** The command that rewrites docs/openapi.json. */
export const GEN_OPENAPI_COMMAND = 'npm run gen:openapi -w backend';

/** Objects with their keys sorted (arrays keep their order). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
}

/** A document as docs/openapi.json holds it: its `servers` replaced by the file's, keys sorted, 2-space JSON, a final newline. */
export function renderOpenapiFile(doc: object): string {
  const plain = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  return `${JSON.stringify(sortKeys({ ...plain, servers: [{ url: OPENAPI_FILE_SERVER_URL }] }), null, 2)}\n`;
}

/** docs/openapi.json's text, built the way the server builds its document (no store, no service started). */
export function openapiFileText(): string {
  return renderOpenapiFile(openapiDocument(VERSION));
}
