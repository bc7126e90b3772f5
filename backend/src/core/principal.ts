// Who a request is from: an admin (auth/admin.ts authenticates it) or an API key (apiKeys/keys.ts). In the
// kernel, so what records requests (the audit log) names them without importing either.
import type { UserRole } from '@voice-platform/schemas';

export interface AdminPrincipal {
  id: string;
  email: string;
  role: UserRole;
}

export interface KeyPrincipal {
  id: string;
  prefix: string;
  name: string;
}
