// Writes src/core/validators.gen.js from the shared schemas (their build, schemas/dist: run `npx tsc -b` first).
// Run after changing a schema the console validates with: `npm run gen:validators` in console/.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as schemas from '@voice-platform/schemas';
import { validatorsCode } from './validators.mjs';

writeFileSync(fileURLToPath(new URL('../src/core/validators.gen.js', import.meta.url)), validatorsCode(schemas));
