export const VALIDATED: string[];
export function validatorsCode(schemas: Record<string, unknown>): string;
