// The operator's logger: its calls name the message first, lines are the format every part shares
// (schemas/src/log.ts), below the level nothing is written, and child fields come on every line.
import { Writable } from 'node:stream';
import { LOG_LINE_SHAPE, logLineShape, parseLogLines } from '@voice-platform/tests/infra';
import { createLogger } from './log.js';

function capture(level: string) {
  let out = '';
  const sink = new Writable({ write: (c: Buffer, _e, cb) => ((out += c.toString()), cb()) });
  return { log: createLogger(level, { component: 'operator', identity: 'op-0' }, sink), lines: () => parseLogLines(out) };
}

describe('operator logger', () => {
  it('writes the shared format with the base and child fields, message last', () => {
    const c = capture('INFO');
    c.log.info('operator running', { leaderElection: true });
    c.log.child({ fleet: 'main' }).warn('fleet scaled', { from: 1, to: 2 });
    c.log.debug('not written');
    const [a, b] = c.lines();
    expect(c.lines()).toHaveLength(2);
    expect(logLineShape(a!)).toEqual(LOG_LINE_SHAPE);
    expect(a).toEqual({ level: 'info', time: expect.any(String), service: 'operator', component: 'operator', identity: 'op-0', leaderElection: true, msg: 'operator running' });
    expect(b).toMatchObject({ level: 'warn', service: 'operator', identity: 'op-0', fleet: 'main', from: 1, to: 2, msg: 'fleet scaled' });
  });

  it('censors credentials like the backend and the worker', () => {
    const c = capture('info');
    c.log.warn('login failed', { token: 'secret-token', resource: 'fleet/ns/main' });
    expect(c.lines()[0]).toMatchObject({ token: '[redacted]', resource: 'fleet/ns/main' });
  });
});
