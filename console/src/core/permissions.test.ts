// permissions.gen.js is the backend's role table as the console reads it: it must be what the table says
// today (else `npm run gen:permissions`), and `roleMay` must answer as the backend's `userMay` does.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { USER_ROLES } from '@voice-platform/schemas';
import { PERMISSIONS, userMay } from '../../../backend/src/auth/permissions.js';
import { permissionsCode } from '../../scripts/permissions.mjs';
import { atLeast, roleMay } from './permissions.js';

describe('permissions.gen.js', () => {
  it('is current with backend/src/auth/permissions.ts (run `npm run gen:permissions` in console/ after changing it)', () => {
    const file = readFileSync(fileURLToPath(new URL('./permissions.gen.js', import.meta.url)), 'utf8');
    expect(file === permissionsCode(PERMISSIONS, USER_ROLES)).toBe(true);
  });

  it('answers as the backend for every operation and role', () => {
    for (const [op, p] of Object.entries(PERMISSIONS)) for (const role of USER_ROLES) expect([op, role, roleMay(role, op)]).toEqual([op, role, userMay(role, p)]);
    expect(roleMay(null, 'GET /api/v1/bots')).toBe(false);
    expect(roleMay('owner', 'GET /api/v1/nothing-here')).toBe(false);
  });

  it('orders the roles owner > admin > editor > viewer', () => {
    expect(atLeast('owner', 'admin')).toBe(true);
    expect(atLeast('editor', 'admin')).toBe(false);
    expect(atLeast('viewer', 'viewer')).toBe(true);
    // docs/roles.md: a viewer changes nothing; an editor no API keys, webhooks or trunks; users for admins.
    expect(roleMay('viewer', 'POST /api/v1/bots')).toBe(false);
    expect(roleMay('editor', 'POST /api/v1/bots')).toBe(true);
    expect(roleMay('editor', 'POST /api/v1/api-keys')).toBe(false);
    expect(roleMay('editor', 'PATCH /api/v1/webhooks/{id}')).toBe(false);
    expect(roleMay('editor', 'DELETE /api/v1/sip/outbound-trunks/{id}')).toBe(false);
    expect(roleMay('admin', 'GET /api/v1/users')).toBe(true);
    expect(roleMay('editor', 'GET /api/v1/users')).toBe(false);
  });
});
