export function permissionsCode(permissions: Record<string, { user: string | null }>, roles: readonly string[]): string;
