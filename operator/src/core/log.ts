// JSON-lines logger: one object per line on stdout, what log collectors in a cluster expect, in the
// format every part shares (schemas/src/log.ts: ISO time, level label, service "operator", msg;
// credentials redacted). The operator's calls name the message first: `log.info('fleet scaled', {...})`.
import { createLogger as createServiceLogger, type Logger as PinoLogger } from '@voice-platform/schemas/log';

type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
}

function wrap(p: PinoLogger): Logger {
  return {
    debug: (msg, fields) => p.debug(fields ?? {}, msg),
    info: (msg, fields) => p.info(fields ?? {}, msg),
    warn: (msg, fields) => p.warn(fields ?? {}, msg),
    error: (msg, fields) => p.error(fields ?? {}, msg),
    child: (fields) => wrap(p.child(fields)),
  };
}

/** `level`: DEBUG, INFO, WARN or ERROR (any case); `base`: fields of every line (component, identity). */
export function createLogger(level: string = 'info', base: Fields = {}, destination?: Parameters<typeof createServiceLogger>[2]): Logger {
  const root = createServiceLogger('operator', level, destination);
  return wrap(Object.keys(base).length ? root.child(base) : root);
}

export const silentLogger: Logger = createLogger('silent');

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
