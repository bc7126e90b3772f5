// Writes src/schema.gen.ts from docs/openapi.json (run through `npm run gen -w sdk`, which builds first).
// Run it after `npm run gen:openapi -w backend` changed the document, and commit the file; gen.test.ts
// fails until then.
import { readFileSync, writeFileSync } from 'node:fs';
import { SCHEMA_FILE, schemaText } from '../dist/gen.js';

const text = await schemaText();
let before = '';
try {
  before = readFileSync(SCHEMA_FILE, 'utf8');
} catch {
  // first run: no file yet
}
if (before === text) console.log('sdk/src/schema.gen.ts is up to date');
else {
  writeFileSync(SCHEMA_FILE, text);
  console.log('sdk/src/schema.gen.ts written: commit it');
}
