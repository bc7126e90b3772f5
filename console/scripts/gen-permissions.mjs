// Writes src/core/permissions.gen.js from the backend's role table (its build, backend/dist: run `npx tsc -b`
// first). Run after changing backend/src/auth/permissions.ts: `npm run gen:permissions` in console/.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { USER_ROLES } from '@voice-platform/schemas';
import { PERMISSIONS } from '../../backend/dist/auth/permissions.js';
import { permissionsCode } from './permissions.mjs';

writeFileSync(fileURLToPath(new URL('../src/core/permissions.gen.js', import.meta.url)), permissionsCode(PERMISSIONS, USER_ROLES));
