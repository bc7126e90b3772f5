// The one log format: each service's line has ISO time, level label, service and msg in the same places,
// credentials are censored at every redact path, and errors are brief above debug.
import { Writable } from 'node:stream';
import { createLogger, LOG_CENSOR, LOG_REDACT_PATHS, type LogService } from './log.js';

function capture(service: LogService, level = 'info') {
  const out: string[] = [];
  const sink = new Writable({ write: (c: Buffer, _e, cb) => (out.push(c.toString()), cb()) });
  return { log: createLogger(service, level, sink), raw: () => out.join(''), lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes the same shape for the backend, the worker and the operator', () => {
    const shapes = (['backend', 'worker', 'operator'] as const).map((service) => {
      const c = capture(service);
      c.log.child({ call_id: 'c1' }).info({ status: 200 }, 'hello');
      const [line] = c.lines();
      expect(line).toEqual({ level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), service, call_id: 'c1', status: 200, msg: 'hello' });
      return Object.keys(line!);
    });
    expect(shapes).toEqual([shapes[0], shapes[0], shapes[0]]);
    expect(shapes[0]).toEqual(['level', 'time', 'service', 'call_id', 'status', 'msg']);
  });

  it('takes levels in any case and writes their labels', () => {
    const c = capture('operator', 'WARN');
    c.log.info('dropped');
    c.log.warn('kept');
    c.log.error('kept too');
    expect(c.lines().map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'kept'],
      ['error', 'kept too'],
    ]);
  });

  it('censors credentials at every redact path', () => {
    const c = capture('worker');
    c.log.info(
      {
        authorization: 'Bearer a',
        password: 'p',
        key: 'vx_k',
        token: 't',
        access_token: 'at',
        headers: { 'x-api-key': 'vx_h', authorization: 'Bearer h' },
        req: { authorization: 'Bearer b', password: 'p2', key: 'k2', token: 't2', access_token: 'at2', headers: { 'x-api-key': 'vx_nested', authorization: 'Bearer n' } },
      },
      'credentials',
    );
    const [line] = c.lines();
    expect(line).toMatchObject({
      authorization: LOG_CENSOR,
      password: LOG_CENSOR,
      key: LOG_CENSOR,
      token: LOG_CENSOR,
      access_token: LOG_CENSOR,
      headers: { 'x-api-key': LOG_CENSOR },
      req: { authorization: LOG_CENSOR, password: LOG_CENSOR, key: LOG_CENSOR, token: LOG_CENSOR, access_token: LOG_CENSOR, headers: { 'x-api-key': LOG_CENSOR, authorization: LOG_CENSOR } },
    });
    expect(c.raw()).not.toMatch(/Bearer|vx_|"p2?"|"t2?"|"at2?"/);
    expect(LOG_REDACT_PATHS).toHaveLength(13);
  });

  it('logs an error as class and brief message above debug, in full at debug', () => {
    const err = Object.assign(new Error('failed at /go/pkg/mod/x/y.go:12\nmore'), { code: 'E1' });
    const info = capture('backend');
    info.log.error({ err }, 'boom');
    expect(info.lines()[0]!.err).toEqual({ type: 'Error', message: 'failed at [file]', code: 'E1' });
    const debug = capture('backend', 'debug');
    debug.log.error({ err }, 'boom');
    expect(debug.lines()[0]!.err).toMatchObject({ type: 'Error', message: expect.stringContaining('/go/pkg/mod'), stack: expect.any(String) });
  });
});
