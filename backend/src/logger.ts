// Structured JSON logs. Request logs carry method, route, status and timing only: never headers,
// bodies or query strings, so keys, tokens and passwords cannot reach the log. Errors (the `err` key) are
// logged as class + brief message, without stack or driver file paths (docs/design.md §2); in full only at debug.
import { briefError } from '@voice-platform/schemas';
import { pino, type Logger, type DestinationStream } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const logger: Logger = pino(
    {
      level,
      base: { service: 'backend' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: (err: unknown) => (logger.isLevelEnabled('debug') ? pino.stdSerializers.err(err as Error) : briefError(err)) },
      // Defence in depth, should a header or credential object ever be passed to a log call.
      redact: {
        paths: [
          'authorization',
          'password',
          'key',
          'token',
          'access_token',
          '*.authorization',
          '*.password',
          '*.key',
          '*.token',
          '*.access_token',
          'headers["x-api-key"]',
          '*.headers["x-api-key"]',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
  return logger;
}
