// Errors (the `err` key) are logged as class + brief message, without stack or driver file paths
// (docs/design.md §2); in full only at debug (the shared rule of @voice-platform/schemas logs.ts).
import { briefError } from '@voice-platform/schemas';
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const logger: Logger = pino(
    {
      level,
      base: { service: 'worker' },
      redact: ['token', 'authorization', '*.authorization'],
      serializers: { err: (err: unknown) => (logger.isLevelEnabled('debug') ? pino.stdSerializers.err(err as Error) : briefError(err)) },
    },
    destination ?? process.stdout,
  );
  return logger;
}
