// Logs carry an error's class and a short message, never a stack or a driver's file paths (docs/design.md §2);
// the full error only at LOG_LEVEL=debug.
import { Writable } from 'node:stream';
import { startHarness, type Harness } from '../testing/harness.js';
import { createLogger } from './core/logger.js';

const GO_PATH = '/go/pkg/mod/github.com/!ferret!d!b/!ferret!d!b@v1.24.2/internal/handler/msg_insert.go:123';

class DriverFailure extends Error {
  constructor() {
    super(`insert failed [${GO_PATH} handler.(*Handler).MsgInsert] unexpected state`);
    this.name = 'DriverFailure';
    this.stack = `${this.name}: ${this.message}\n    at handler (/go/src/github.com/FerretDB/FerretDB/internal/handler/handler.go:77)\n    at Object.<anonymous> (/work/main/backend/src/app.ts:1:1)`;
  }
}

async function failingRequest(level: string): Promise<{ h: Harness; line: Record<string, unknown>; raw: string }> {
  const h = await startHarness({ env: { LOG_LEVEL: level } });
  h.app.router.get('/test/boom', () => {
    throw new DriverFailure();
  });
  const res = await h.http.get('/test/boom').set('X-Request-Id', `boom-${level}`).expect(500);
  expect(res.body).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
  const raw = h.logs.find((l) => l.includes(`boom-${level}`) && l.includes('request failed'));
  expect(raw).toBeDefined();
  return { h, line: JSON.parse(raw!) as Record<string, unknown>, raw: raw! };
}

describe('error logging', () => {
  it('logs the class and a short message of an unexpected error, without stack or file paths', async () => {
    const { h, line, raw } = await failingRequest('info');
    try {
      expect(line).toMatchObject({ level: 'error', status: 500, err: { type: 'DriverFailure', message: expect.stringContaining('insert failed') } });
      expect(raw).not.toContain('stack');
      expect(raw).not.toMatch(/\.go:\d/);
      expect(raw).not.toContain('/go/pkg/mod');
      expect(raw).not.toContain('/work/main');
      expect(String((line.err as { message: string }).message).length).toBeLessThanOrEqual(200);
    } finally {
      await h.close();
    }
  });

  it('shortens error strings too (err: err.message), and cuts very long messages', async () => {
    const out: string[] = [];
    const sink = new Writable({ write: (c: Buffer, _e, cb) => (out.push(c.toString()), cb()) });
    const log = createLogger('info', sink);
    log.warn({ err: `dial failed: ${GO_PATH}` }, 'x');
    log.warn({ err: new Error('y'.repeat(5000)) }, 'y');
    const [a, b] = out.map((l) => JSON.parse(l) as { err: unknown });
    expect(JSON.stringify(a!.err)).not.toMatch(/\.go:\d|\/go\/pkg/);
    expect(JSON.stringify(a!.err)).toContain('dial failed');
    expect(JSON.stringify(b!.err).length).toBeLessThan(300);
  });

  it('keeps the full error, stack included, at LOG_LEVEL=debug', async () => {
    const { h, line } = await failingRequest('debug');
    try {
      const err = line.err as { type: string; message: string; stack: string };
      expect(err.type).toBe('DriverFailure');
      expect(err.message).toContain(GO_PATH);
      expect(err.stack).toContain('handler.go:77');
    } finally {
      await h.close();
    }
  });
});
