// The smaller items of issue 26, each against the real app on real stores (and, where the HTTP server
// itself answers, a real listening server from server.ts, driven with raw sockets): browser test calls
// refused at creation when the test-call share is full; no-store on answers that hold a secret and nosniff
// on every answer; bodies that are too large, too slow, not UTF-8 or encoded; JWTs with `crit` or a future
// `iat`; `expires_at` in year 9999; and the documented error body for requests Node's parser refuses.
import net from 'node:net';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import { FLEET_RESERVATIONS_KEY, FLEET_TEST_RESERVATIONS_KEY, FLEET_WORKERS_KEY } from '@voice-platform/schemas';
import { adminToken, ADMIN, createBot, createKey, createTrunk, heartbeat, JWT_SECRET, startHarness, type Harness } from '../testing/harness.js';
import { createHttpServer } from './server.js';
import { findCalls } from './calls/store.js';

const BODY_READ_TIMEOUT_MS = 1000;
let h: Harness;
let auth: string;
let server: http.Server;
let port: number;

beforeAll(async () => {
  h = await startHarness({ env: { BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS) } });
  auth = await adminToken(h);
  server = createHttpServer(h.app, h.settings);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (within `waitMs`). */
  closed: boolean;
  /** From connecting to the close (or to giving up). */
  ms: number;
}

/** Writes `parts` on a fresh connection and reads until the server closes it (at most `waitMs`). */
function rawRequest(parts: Array<string | Buffer>, waitMs = 8000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = data.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('error', () => undefined); // writes after the server's close: EPIPE / ECONNRESET
    socket.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      for (const p of parts) socket.write(p);
    });
  });
}

const errorText = (code: string, message: string) => JSON.stringify({ error: { code, message } });

describe('browser test calls and the test-call share (TEST_CALL_SHARE)', () => {
  beforeEach(() => h.redis.del(FLEET_WORKERS_KEY, FLEET_RESERVATIONS_KEY, FLEET_TEST_RESERVATIONS_KEY).then(() => undefined));
  const widget = (botId: string) => h.http.post('/livekit/widget').set('Authorization', auth).send({ bot_id: botId });

  it('answers 503 fleet_at_capacity with Retry-After at creation when the share is used up, and places no call; dial-outs still get the free slots', async () => {
    const botId = await createBot(h, auth, { name: 'share bot' });
    // One worker: 4 slots, 2 busy, both with test calls, which is its whole test share.
    await heartbeat(h.redis, 'share-worker', { max_calls: 4, active_calls: 2, test_calls: 2, max_test_calls: 2 }, h.clock.ms + 60_000);
    const refused = await widget(botId);
    expect([refused.status, refused.headers['retry-after'], refused.text]).toEqual([
      503,
      '5',
      JSON.stringify({ error: { code: 'fleet_at_capacity', message: 'test calls hold their share of every voice worker; the rest is kept for dial-outs', details: { live_workers: 1 } } }),
    ]);
    expect(await findCalls(h.db, { direction: 'web' })).toEqual([]);
    expect([await h.redis.zcard(FLEET_RESERVATIONS_KEY), await h.redis.zcard(FLEET_TEST_RESERVATIONS_KEY)]).toEqual([0, 0]);

    // The two free slots are the dial-outs'.
    await createTrunk(h, auth);
    const { key } = await createKey(h, auth);
    const dial = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+15005550100' });
    expect(dial.status).toBe(201);
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, dial.body.call_id)).not.toBeNull();
    expect(await h.redis.zscore(FLEET_TEST_RESERVATIONS_KEY, dial.body.call_id)).toBeNull();
  });

  it('reserves a browser call in the test share too, so a second one beyond it is refused at once', async () => {
    const botId = await createBot(h, auth, { name: 'share bot 2' });
    await heartbeat(h.redis, 'share-worker', { max_calls: 4, active_calls: 1, test_calls: 1, max_test_calls: 2 }, h.clock.ms + 60_000);
    const first = await widget(botId);
    expect(first.status).toBe(201);
    expect(await h.redis.zscore(FLEET_TEST_RESERVATIONS_KEY, first.body.call_id)).toBe(String(h.clock.ms + h.settings.RESERVATION_TTL_SECONDS * 1000));
    expect(await h.redis.zscore(FLEET_RESERVATIONS_KEY, first.body.call_id)).not.toBeNull();
    const second = await widget(botId);
    expect([second.status, second.body.error.code]).toEqual([503, 'fleet_at_capacity']);
    // A worker that does not report its share (an older one) counts every free slot, as before.
    await heartbeat(h.redis, 'share-worker', { max_calls: 4, active_calls: 1 }, h.clock.ms + 60_000);
    expect((await widget(botId)).status).toBe(201);
  });
});

describe('headers', () => {
  it('sends Cache-Control: no-store on the answers that show a secret: login, API key creation, webhook creation', async () => {
    const login = await h.http.post('/api/v1/auth/login').send(ADMIN);
    expect([login.status, login.headers['cache-control']]).toEqual([200, 'no-store']);
    const key = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'secret once' });
    expect([key.status, key.headers['cache-control']]).toEqual([201, 'no-store']);
    const hook = await h.http.post('/api/v1/webhooks').set('Authorization', auth).send({ url: 'https://93.184.216.34/hooks', events: ['call.ended'] });
    expect([hook.status, hook.headers['cache-control']]).toEqual([201, 'no-store']);
  });

  it('sends X-Content-Type-Options: nosniff on every answer, errors included', async () => {
    const answers = [
      await h.http.get('/health'),
      await h.http.get('/api/v1/bots').set('Authorization', auth),
      await h.http.get('/api/v1/bots'),
      await h.http.get('/no-such-path'),
      await h.http.post('/api/v1/bots').set('Authorization', auth).set('Content-Type', 'text/plain').send('x'),
    ];
    expect(answers.map((r) => [r.status, r.headers['x-content-type-options']])).toEqual([
      [200, 'nosniff'],
      [200, 'nosniff'],
      [401, 'nosniff'],
      [404, 'nosniff'],
      [415, 'nosniff'],
    ]);
  });
});

describe('request bodies', () => {
  const head = (extra: string) => `POST /api/v1/bots HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\n${extra}\r\n`;

  it('answers a chunked body over 64 KiB 413 with Connection: close, and closes the connection though the client sends on', async () => {
    const chunk = Buffer.alloc(1024, 'a');
    const chunks = Array.from({ length: 200 }, () => Buffer.concat([Buffer.from('400\r\n'), chunk, Buffer.from('\r\n')]));
    const res = await rawRequest([head('Transfer-Encoding: chunked\r\n'), ...chunks]);
    expect([res.status, res.headers.connection, res.headers['x-content-type-options'], res.body]).toEqual([413, 'close', 'nosniff', errorText('payload_too_large', 'body is over 65536 bytes')]);
    expect(res.closed).toBe(true);
    expect(res.ms).toBeLessThan(5000);
  });

  it('answers a body that does not arrive within BODY_READ_TIMEOUT_MS 408 request_timeout with Connection: close, and closes the connection', async () => {
    // 20 bytes announced, 9 sent, then nothing: a client trickling its body.
    const res = await rawRequest([head('Content-Length: 20\r\n'), '{"name":"']);
    expect([res.status, res.headers.connection, res.body]).toEqual([408, 'close', errorText('request_timeout', `the body did not arrive within ${BODY_READ_TIMEOUT_MS} ms`)]);
    expect(res.closed).toBe(true);
    expect(res.ms).toBeGreaterThanOrEqual(BODY_READ_TIMEOUT_MS);
    expect(res.ms).toBeLessThan(BODY_READ_TIMEOUT_MS + 4000);
  });

  it('answers headers that do not arrive in time (the server gives them BODY_READ_TIMEOUT_MS) 408 request_timeout in the error shape', async () => {
    const res = await rawRequest(['GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n']);
    expect([res.status, res.headers.connection, res.body]).toEqual([408, 'close', errorText('request_timeout', 'the request did not arrive in time')]);
    expect(res.closed).toBe(true);
    expect(res.ms).toBeGreaterThanOrEqual(BODY_READ_TIMEOUT_MS);
  });

  it('refuses a charset other than UTF-8 and any Content-Encoding with 415 unsupported_media_type', async () => {
    const bot = (type: string, encoding?: string) => {
      const req = h.http.post('/api/v1/bots').set('Authorization', auth).set('Content-Type', type);
      if (encoding) req.set('Content-Encoding', encoding);
      return req.send(JSON.stringify({ name: 'charset bot' }));
    };
    const utf16 = await bot('application/json; charset=utf-16');
    expect([utf16.status, utf16.text]).toEqual([415, errorText('unsupported_media_type', 'the body must be UTF-8 (charset=utf-8, or no charset)')]);
    expect((await bot('application/json; charset=ISO-8859-1')).status).toBe(415);
    const gzip = await bot('application/json', 'gzip');
    expect([gzip.status, gzip.text]).toEqual([415, errorText('unsupported_media_type', 'the body must be sent without Content-Encoding')]);
    // UTF-8 in any case, and identity, are taken.
    expect((await bot('application/json; charset=UTF-8')).status).toBe(201);
    expect((await bot('application/json', 'identity')).status).toBe(201);
  });
});

describe('admin JWTs', () => {
  const sub = () => (jwt.decode(auth.slice('Bearer '.length)) as { sub: string }).sub;
  const me = (token: string) => h.http.get('/api/v1/auth/me').set('Authorization', `Bearer ${token}`);
  const now = () => Math.floor(h.clock.ms / 1000);

  it('refuses a token with a crit header (an extension it does not understand) 401 unauthorized', async () => {
    const token = jwt.sign({ sub: sub(), iat: now(), exp: now() + 600 }, JWT_SECRET, { algorithm: 'HS256', header: { alg: 'HS256', crit: ['urn:example:must-know'] } as jwt.JwtHeader });
    const res = await me(token);
    expect([res.status, res.text]).toEqual([401, errorText('unauthorized', 'the admin token is invalid')]);
  });

  it('refuses a token issued a day ahead 401 unauthorized, and takes one within 60 s of clock skew', async () => {
    const ahead = jwt.sign({ sub: sub(), iat: now() + 86_400, exp: now() + 90_000 }, JWT_SECRET, { algorithm: 'HS256' });
    const res = await me(ahead);
    expect([res.status, res.text]).toEqual([401, errorText('unauthorized', 'the admin token is invalid')]);
    const skewed = jwt.sign({ sub: sub(), iat: now() + 30, exp: now() + 600 }, JWT_SECRET, { algorithm: 'HS256' });
    expect((await me(skewed)).status).toBe(200);
  });
});

describe('date-times', () => {
  it('accepts expires_at 9999-12-31T23:59:59Z on API key creation ("never")', async () => {
    const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'forever', expires_at: '9999-12-31T23:59:59Z' });
    expect([res.status, res.body.expires_at, res.body.status]).toEqual([201, '9999-12-31T23:59:59.000Z', 'active']);
    // A negative offset on that day may name an instant in year 10000, which no RFC 3339 time in UTC can write.
    const beyond = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send({ name: 'beyond', expires_at: '9999-12-31T23:59:59-01:00' });
    expect([beyond.status, beyond.body.error.code]).toEqual([422, 'validation_failed']);
  });
});

describe("requests Node's HTTP parser refuses", () => {
  it('answers a CR in a header value 400 bad_request with the documented body and Connection: close', async () => {
    const res = await rawRequest(['GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\rb\r\n\r\n']);
    expect([res.status, res.headers['content-type'], res.headers.connection, res.body]).toEqual([400, 'application/json; charset=utf-8', 'close', errorText('bad_request', 'the request is not well-formed HTTP')]);
    expect(res.closed).toBe(true);
  });

  it('answers Content-Length with Transfer-Encoding 400 bad_request with the documented body and Connection: close', async () => {
    const res = await rawRequest([
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    ]);
    expect([res.status, res.headers.connection, res.body]).toEqual([400, 'close', errorText('bad_request', 'the request is not well-formed HTTP')]);
    expect(res.closed).toBe(true);
  });
});
