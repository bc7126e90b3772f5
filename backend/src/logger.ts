// Structured JSON logs. Request logs carry method, route, status and timing only: never headers,
// bodies or query strings, so keys, tokens and passwords cannot reach the log.
import { pino, type Logger, type DestinationStream } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'backend' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
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
}
