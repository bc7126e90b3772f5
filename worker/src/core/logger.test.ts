// Worker logs: an error's class and a brief message, never a stack or driver file paths (docs/design.md §2);
// the full error only at debug.
import { Writable } from 'node:stream';
import { createLogger } from './logger.js';

const GO_PATH = '/go/pkg/mod/github.com/livekit/protocol@v1.20.0/livekit/sip.go:88';

function capture(level: string) {
  const out: string[] = [];
  const sink = new Writable({ write: (c: Buffer, _e, cb) => (out.push(c.toString()), cb()) });
  return { log: createLogger(level, sink), lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>), raw: () => out.join('') };
}

class TwirpError extends Error {
  code = 'internal';
  constructor() {
    super(`twirp error: ${GO_PATH}: sip trunk lookup failed`);
    this.name = 'TwirpError';
  }
}

describe('worker error logging', () => {
  it('logs class, brief message and code above debug; no stack, no .go paths', () => {
    const c = capture('info');
    c.log.error({ err: new TwirpError() }, 'dial failed');
    c.log.warn({ err: `join failed at ${GO_PATH}\nmore detail` }, 'retrying');
    const [a, b] = c.lines();
    expect(a!.err).toEqual({ type: 'TwirpError', message: expect.stringContaining('sip trunk lookup failed'), code: 'internal' });
    expect(b!.err).toBe('join failed at [file]');
    expect(c.raw()).not.toContain('stack');
    expect(c.raw()).not.toMatch(/\.go:\d|\/go\/pkg/);
  });

  it('keeps the full error at debug', () => {
    const c = capture('debug');
    c.log.error({ err: new TwirpError() }, 'dial failed');
    const err = c.lines()[0]!.err as { message: string; stack: string };
    expect(err.message).toContain(GO_PATH);
    expect(err.stack).toContain('TwirpError');
  });
});
