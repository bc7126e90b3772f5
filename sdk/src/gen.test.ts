// The committed types are what openapi-typescript makes of the committed OpenAPI document: after
// `npm run gen:openapi -w backend` changed docs/openapi.json, `npm run gen -w sdk` must follow.
import { readFileSync } from 'node:fs';
import { GEN_COMMAND, SCHEMA_FILE, schemaText } from './gen.js';

it('src/schema.gen.ts is generated from docs/openapi.json as it is now', async () => {
  const committed = readFileSync(SCHEMA_FILE, 'utf8');
  const generated = await schemaText();
  if (committed !== generated) throw new Error(`sdk/src/schema.gen.ts is stale: run \`${GEN_COMMAND}\` and commit it`);
  expect(committed).toBe(generated);
});
