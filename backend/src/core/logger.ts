// Structured JSON logs in the format every part shares (schemas/src/log.ts: ISO time, level label,
// service, msg; credentials redacted; errors brief above debug). Request logs carry method, route, status
// and timing only: never headers, bodies or query strings, so keys, tokens and passwords cannot reach the log.
import { createLogger as createServiceLogger, type Logger } from '@voice-platform/schemas/log';
import type { DestinationStream } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return createServiceLogger('backend', level, destination);
}
