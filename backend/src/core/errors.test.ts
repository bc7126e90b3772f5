// Errors by code, and store outages told by the drivers' error types: a Redis command that fails for want of
// Redis, and MongoDB's "no usable server" errors, answer 503 naming the store; anything else is a bare 500.
import Koa from 'koa';
import request from 'supertest';
import { MongoNetworkError, MongoServerSelectionError } from 'mongodb';
import { ERROR_CODES } from '@voice-platform/schemas';
import { redisClient, RedisUnavailableError } from './connect.js';
import { apiError, errorMiddleware } from './errors.js';

function answer(err: unknown) {
  const app = new Koa();
  app.use(errorMiddleware());
  app.use(() => {
    throw err;
  });
  return request(app.callback()).get('/');
}

describe('apiError', () => {
  it('takes its status and, unless given, its message from the catalogue', () => {
    const e = apiError('bot_inactive');
    expect([e.status, e.code, e.message]).toEqual([409, 'bot_inactive', ERROR_CODES.bot_inactive.message]);
    const f = apiError('conflict', { message: 'busy', details: { a: 1 }, headers: { 'Retry-After': '1' } });
    expect([f.status, f.message, f.details, f.headers]).toEqual([409, 'busy', { a: 1 }, { 'Retry-After': '1' }]);
  });

  it('answers with the documented body and headers', async () => {
    const res = await answer(apiError('fleet_at_capacity', { details: { live_workers: 0 }, headers: { 'Retry-After': '5' } }));
    expect([res.status, res.headers['retry-after'], res.text]).toEqual([
      503,
      '5',
      '{"error":{"code":"fleet_at_capacity","message":"every voice worker is busy","details":{"live_workers":0}}}',
    ]);
  });
});

describe('store outages', () => {
  const unavailable = (store: string) => ({ error: { code: 'service_unavailable', message: `${store} is unavailable; retry later`, details: { failed: [store] } } });

  it('rejects a command with RedisUnavailableError while Redis cannot be reached, and answers 503 naming redis', async () => {
    const client = redisClient('redis://127.0.0.1:1', { REDIS_COMMAND_TIMEOUT_MS: 500 });
    client.on('error', () => undefined);
    try {
      const err = await client.get('k').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisUnavailableError);
      const res = await answer(err);
      expect([res.status, res.headers['retry-after'], res.body]).toEqual([503, '5', unavailable('redis')]);
    } finally {
      client.disconnect();
    }
  });

  it("keeps the server's replies (a wrong command) as they are: a bare 500", async () => {
    const client = redisClient(process.env.REDIS_URL!, { REDIS_COMMAND_TIMEOUT_MS: 2000 });
    try {
      await client.connect();
      const err = await client.call('NO_SUCH_COMMAND').catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(RedisUnavailableError);
      expect((err as Error).name).toBe('ReplyError');
      const res = await answer(err);
      expect([res.status, res.body]).toEqual([500, { error: { code: 'internal_error', message: 'internal error' } }]);
    } finally {
      client.disconnect();
    }
  });

  it("answers 503 naming mongodb for the driver's network and server selection errors", async () => {
    for (const err of [new MongoNetworkError('connection closed'), new MongoServerSelectionError('no server', { type: 'Unknown' } as never)]) {
      const res = await answer(err);
      expect([res.status, res.body]).toEqual([503, unavailable('mongodb')]);
    }
    // A message that merely reads like an outage is not one.
    const res = await answer(new Error('Connection is closed.'));
    expect(res.status).toBe(500);
  });
});
