// Writes docs/openapi.json from the compiled backend (run through `npm run gen:openapi -w backend`, which
// builds first): the document the server serves, with a fixed `servers` (src/openapiFile.ts). Starts nothing.
// Run it after changing an endpoint or a schema and commit the file; apiDocs.test.ts fails until then.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openapiFileText } from '../dist/openapiFile.js';

const file = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const text = openapiFileText();
let before = '';
try {
  before = readFileSync(file, 'utf8');
} catch {
  // first run: no file yet
}
if (before === text) {
  console.log(`docs/openapi.json is up to date (${Object.keys(JSON.parse(text).paths).length} paths)`);
} else {
  writeFileSync(file, text);
  // The SDK's types are generated from this file (sdk/src/gen.test.ts fails until they follow it).
  console.log(`docs/openapi.json written (${Object.keys(JSON.parse(text).paths).length} paths): commit it, and the SDK's types after \`npm run gen -w sdk\``);
}
