// A call's variables against the bot's declared ones: every required one present, none undeclared.
import type { BotVariable } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';

export function checkVariables(declared: BotVariable[], given: Record<string, string>): void {
  const names = new Set(declared.map((v) => v.name));
  const missing = declared.filter((v) => v.required && !Object.hasOwn(given, v.name)).map((v) => v.name);
  const unknown = Object.keys(given).filter((k) => !names.has(k));
  if (missing.length || unknown.length) {
    throw apiError('variables_mismatch', { details: { missing, unknown } });
  }
}
