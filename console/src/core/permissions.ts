// What the signed-in user's role may use, from the backend's own table (permissions.gen.js, generated from
// backend/src/auth/permissions.ts). The console hides what the role cannot call; the backend still decides.
import type { UserRole } from '@voice-platform/schemas/users.js';
import { MIN_ROLE, ROLES } from './permissions.gen.js';

export type { UserRole };
export { ROLES };

/** Whether `role` is `min` or above it (owner > admin > editor > viewer). */
export function atLeast(role: UserRole, min: UserRole): boolean {
  return ROLES.indexOf(role) <= ROLES.indexOf(min);
}

/** Whether `role` may call `op` (`METHOD /api/v1/path/{param}`, as in docs/roles.md). Unknown: no. */
export function roleMay(role: UserRole | null, op: string): boolean {
  const min = MIN_ROLE[op];
  return !!role && !!min && atLeast(role, min);
}

let current: UserRole | null = null;

/** The signed-in user's role (GET /api/v1/auth/me), null until known. */
export const currentRole = (): UserRole | null => current;
export function setCurrentRole(role: UserRole | null): void {
  current = role;
}

/** Whether the signed-in user may call `op`. */
export const may = (op: string): boolean => roleMay(current, op);
