import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    { level, base: { service: 'worker' }, redact: ['token', 'authorization', '*.authorization'] },
    destination ?? process.stdout,
  );
}
