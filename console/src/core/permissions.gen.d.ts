import type { UserRole } from '@voice-platform/schemas/users.js';
export const ROLES: readonly UserRole[];
export const MIN_ROLE: Readonly<Record<string, UserRole>>;
