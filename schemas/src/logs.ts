// How errors appear in logs above debug level (docs/design.md §2: no stack traces, no driver messages): one
// rule for the backend's and the worker's loggers.

const MAX_MESSAGE = 200;

/**
 * An error message fit for logs above debug: its first line, file references (`handler.go:123`) and
 * absolute paths (a driver's `/go/pkg/mod/…`) replaced, cut to MAX_MESSAGE characters.
 */
export function briefMessage(text: string): string {
  const line = text
    .split('\n', 1)[0]!
    .replace(/\S*\.(?:go|js|mjs|cjs|ts|py|rs|c|cc|cpp|h)(?::\d+)+\S*/g, '[file]')
    .replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@!+~-]+){2,}[\\/]?/g, '[path]');
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
}

/** The `err` serializer above debug: the error's class, a brief message and its code; never a stack or a cause. */
export function briefError(err: unknown): unknown {
  if (typeof err === 'string') return briefMessage(err);
  if (err === null || typeof err !== 'object') return err;
  const e = err as { name?: unknown; message?: unknown; code?: unknown; constructor?: { name?: string } };
  const type = typeof e.name === 'string' && e.name ? e.name : (e.constructor?.name ?? 'Object');
  const out: { type: string; message: string; code?: string | number } = { type, message: briefMessage(typeof e.message === 'string' ? e.message : '') };
  if (typeof e.code === 'number') out.code = e.code;
  else if (typeof e.code === 'string') out.code = briefMessage(e.code).slice(0, 64);
  return out;
}
