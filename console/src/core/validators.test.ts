// validators.gen.js is the shared schemas compiled ahead of time (the browser may not compile: no eval
// under the console's CSP). It must be what the schemas give today: else `npm run gen:validators`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as schemas from '@voice-platform/schemas';
import { validatorsCode } from '../../scripts/validators.mjs';

describe('validators.gen.js', () => {
  it('is current with the shared schemas (run `npm run gen:validators` in console/ after changing one)', () => {
    const file = readFileSync(fileURLToPath(new URL('./validators.gen.js', import.meta.url)), 'utf8');
    expect(file === validatorsCode(schemas as unknown as Record<string, unknown>)).toBe(true);
  });

  it('holds no code the CSP would refuse, and no require', () => {
    const file = readFileSync(fileURLToPath(new URL('./validators.gen.js', import.meta.url)), 'utf8');
    expect(file).not.toMatch(/new Function|\beval\(|\brequire\(/);
  });
});
