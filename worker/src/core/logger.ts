// Structured JSON logs in the format every part shares (schemas/src/log.ts: ISO time, level label,
// service, msg; credentials redacted; errors (the `err` key) class + brief message above debug).
import { createLogger as createServiceLogger, type Logger } from '@voice-platform/schemas/log';

export type { Logger };

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return createServiceLogger('worker', level, destination);
}
