// The one log format of the backend, the worker and the operator: JSON lines of `time` (ISO 8601),
// `level` (its label: "debug", "info", "warn", "error", ...), `service`, the line's own fields and `msg`,
// with the same redaction of credentials and the same brief errors (logs.ts) everywhere. Node only (pino):
// a subpath of its own (`@voice-platform/schemas/log`), outside the index, so the console never bundles it.
import { context, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { briefError } from './logs.js';

export type { Logger };

export type LogService = 'backend' | 'worker' | 'operator';

/**
 * Fields censored wherever a log call passes them, top level or one object deep: defence in depth, should a
 * header or credential object ever reach a log call (the union of what the backend and worker redacted).
 */
export const LOG_REDACT_PATHS: readonly string[] = [
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
];

export const LOG_CENSOR = '[redacted]';

/**
 * The trace id of the span active where a line is logged (docs/design.md §16): a call's log lines lead to its
 * trace. Undefined without tracing (the API's no-op context holds no span) or outside any span.
 */
export function activeTraceId(): string | undefined {
  const sc = trace.getSpanContext(context.active());
  return sc && trace.isSpanContextValid(sc) ? sc.traceId : undefined;
}

/**
 * The pino options of one service's logger. Errors (the `err` key) are class + brief message, never a
 * stack or driver file paths (docs/design.md §2); in full only when `debug` is enabled.
 */
export function logOptions(service: LogService, level: string, fullErrors: () => boolean): LoggerOptions {
  return {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: (err: unknown) => (fullErrors() ? pino.stdSerializers.err(err as Error) : briefError(err)) },
    redact: { paths: [...LOG_REDACT_PATHS], censor: LOG_CENSOR },
    mixin: () => {
      const traceId = activeTraceId();
      return traceId ? { trace_id: traceId } : {};
    },
  };
}

/** A service's logger writing to `destination` (default: pino's synchronous stdout). `level` is pino's, any case (`INFO`). */
export function createLogger(service: LogService, level: string, destination?: DestinationStream | NodeJS.WritableStream): Logger {
  const logger: Logger = pino(logOptions(service, level.toLowerCase(), () => logger.isLevelEnabled('debug')), destination as DestinationStream | undefined);
  return logger;
}
