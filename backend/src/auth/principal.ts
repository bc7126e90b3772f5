// Who an admin request is from (auth/admin.ts authenticates it): a module of its own, so what records requests
// (the audit log) can name it without importing the authentication back.
import type { UserRole } from '@voice-platform/schemas';

export interface AdminPrincipal {
  id: string;
  email: string;
  role: UserRole;
}
