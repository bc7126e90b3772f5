// The SDK against the real backend (jest.global-setup.js): dial-outs (no worker runs, so calls stay
// queued; one worker's heartbeat gives the fleet room), reading and listing calls, campaigns, the API's
// error codes, and retries after a real 429's Retry-After, seen through the `fetch` option.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, createClient, parseRetryAfter, type Client } from './index.js';
import { baseUrl, suiteBackend, type SuiteBackend } from './testing.js';

let suite: SuiteBackend;
let token: string;
const admin = <T = any>(method: string, path: string, body?: unknown) => suite.admin<T>(method, path, body);

/** A fresh API key (each has its own dial-out rate budget). */
const apiKey = async () => (await admin<{ key: string }>('POST', '/api/v1/api-keys', { name: `sdk ${randomUUID()}`, scopes: ['dialout', 'calls:read'] })).key;
const bot = async () => (await admin<{ id: string }>('POST', '/api/v1/bots', { name: 'sdk test bot' })).id;

/** Every request a client sends and what came back, with times (ms), through the client's `fetch` option. */
interface Sent {
  at: number;
  url: string;
  idempotencyKey: string | null;
  status: number | null;
  answeredAt: number | null;
  retryAfter: string | null;
  replayed: boolean;
}
function recording(): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const recorder: typeof fetch = async (input, init) => {
    const s: Sent = { at: Date.now(), url: String(input), idempotencyKey: new Headers(init?.headers).get('Idempotency-Key'), status: null, answeredAt: null, retryAfter: null, replayed: false };
    sent.push(s);
    const res = await fetch(input, init);
    Object.assign(s, { status: res.status, answeredAt: Date.now(), retryAfter: res.headers.get('Retry-After'), replayed: res.headers.get('Idempotent-Replayed') === 'true' });
    return res;
  };
  return { fetch: recorder, sent };
}

async function caught(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

beforeAll(async () => {
  suite = await suiteBackend('sdk-tests');
  token = suite.token;
});
afterAll(() => suite?.close());

describe('dial-outs and calls', () => {
  let botId: string;
  let keyed: Client;
  let adminClient: Client;
  beforeAll(async () => {
    botId = await bot();
    keyed = createClient({ baseUrl: baseUrl(), apiKey: await apiKey() });
    adminClient = createClient({ baseUrl: baseUrl(), token });
  });

  it('dials out, reads the call back with the key and finds it in the list, page after page', async () => {
    const placed = await keyed.dialout({ bot_id: botId, to_number: '+4915200000001', variables: {} });
    expect(placed).toMatchObject({ status: 'queued', bot_id: botId, to_number: '+4915200000001', from_number: '+15550001000' });
    const call = await keyed.calls.get(placed.call_id);
    expect(call).toMatchObject({ call_id: placed.call_id, bot_id: botId, direction: 'outbound', to_number: '+4915200000001', status: 'queued' });

    const first = await adminClient.calls.list({ bot_id: botId });
    expect(first.items.map((c) => c.call_id)).toEqual([placed.call_id]);
    expect(first.next_cursor).toBeNull();

    // Two more (one in national form): three calls over pages of one.
    const more = [await keyed.dialout({ bot_id: botId, to_number: '01520 0000002', default_region: 'DE' }), await keyed.dialout({ bot_id: botId, to_number: '+4915200000003' })];
    expect(more[0]!.to_number).toBe('+4915200000002');
    const page = await adminClient.calls.list({ bot_id: botId, limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.next_cursor).toEqual(expect.any(String));
    const ids: string[] = [];
    for await (const c of adminClient.calls.iterate({ bot_id: botId, limit: 1 })) ids.push(c.call_id);
    expect(ids.sort()).toEqual([placed.call_id, ...more.map((m) => m.call_id)].sort());
  });

  it('sends a random Idempotency-Key per dial-out; the same key twice gives the same call', async () => {
    const { fetch: recorder, sent } = recording();
    const client = createClient({ baseUrl: baseUrl(), apiKey: await apiKey(), fetch: recorder });
    const ownBot = await bot();
    const body = { bot_id: ownBot, to_number: '+4915200000010', variables: {} };
    const key = randomUUID();
    const a = await client.dialout(body, { idempotencyKey: key });
    const b = await client.dialout(body, { idempotencyKey: key });
    expect(b).toEqual(a);
    expect(sent.filter((s) => s.status === 201).map((s) => [s.idempotencyKey, s.replayed])).toEqual([
      [key, false],
      [key, true],
    ]);
    expect((await adminClient.calls.list({ bot_id: ownBot })).items.map((c) => c.call_id)).toEqual([a.call_id]);

    // Without a key of the caller's, each dial-out has its own: two calls.
    sent.length = 0;
    const c = await client.dialout(body);
    const d = await client.dialout(body);
    expect(c.call_id).not.toBe(d.call_id);
    const keys = sent.filter((s) => s.status === 201).map((s) => s.idempotencyKey);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a refusal is an ApiError with the catalogue code, its details, and no retry', async () => {
    const { fetch: recorder, sent } = recording();
    const client = createClient({ baseUrl: baseUrl(), apiKey: await apiKey(), fetch: recorder });
    const missing = await caught(client.calls.get('no-such-call'));
    expect(missing).toMatchObject({ status: 404, code: 'call_not_found', message: 'call not found', retryable: false, retryAfterSeconds: null });
    expect(missing.requestId).toEqual(expect.any(String));

    const invalid = await caught(client.dialout({ bot_id: botId, to_number: '+49' }));
    expect(invalid).toMatchObject({ status: 422, code: 'invalid_phone_number', retryable: false });
    expect(invalid.details).toEqual([{ field: 'to_number', message: expect.any(String) }]);

    const unknownBot = await caught(client.dialout({ bot_id: 'no-such-bot', to_number: '+4915200000001' }));
    expect(unknownBot).toMatchObject({ status: 404, code: 'bot_not_found' });

    // A query parameter the API does not take (the type does not allow it either).
    const badQuery = await caught(adminClient.calls.list({ nope: '1' } as never));
    expect(badQuery).toMatchObject({ status: 422, code: 'validation_failed' });

    const badKey = await caught(createClient({ baseUrl: baseUrl(), apiKey: 'vp_live_not-a-key', fetch: recorder }).calls.get('x'));
    expect(badKey.status).toBe(401);
    expect(sent).toHaveLength(4); // one request each
  });

  it('a 429 with Retry-After is retried after that long, with the same Idempotency-Key, until it is placed', async () => {
    const { fetch: recorder, sent } = recording();
    const client = createClient({ baseUrl: baseUrl(), apiKey: await apiKey(), fetch: recorder, retries: 10 });
    // The key's budget is 2 at once and 1 a second: dial-outs sent together meet the limit.
    const placed: string[] = [];
    for (let round = 0; round < 5 && !sent.some((s) => s.status === 429); round++) {
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => client.dialout({ bot_id: botId, to_number: `+49152000001${round}${i}` })));
      placed.push(...answers.map((a) => a.call_id));
    }
    const limited = sent.filter((s) => s.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const s of limited) {
      expect(s.retryAfter).toMatch(/^\d+$/);
      // The next attempt of the same dial-out (its key) is sent Retry-After seconds after the 429 at the earliest.
      const next = sent.find((o) => o.idempotencyKey === s.idempotencyKey && o.at >= s.answeredAt!);
      expect(next).toBeDefined();
      expect(next!.at - s.answeredAt!).toBeGreaterThanOrEqual(Number(s.retryAfter) * 1000);
    }
    // Every dial-out ended placed, once.
    expect(new Set(placed).size).toBe(placed.length);
    expect(sent.filter((s) => s.status === 201)).toHaveLength(placed.length);
  });

  it('a Retry-After longer than the client waits is thrown as a retryable rate_limited ApiError', async () => {
    const client = createClient({ baseUrl: baseUrl(), apiKey: await apiKey(), maxRetryDelayMs: 100 });
    let err: ApiError | null = null;
    for (let i = 0; i < 10 && !err; i++) {
      err = await client.dialout({ bot_id: botId, to_number: '+4915200000020' }).then(
        () => null,
        (e: unknown) => (e instanceof ApiError ? e : Promise.reject(e)),
      );
    }
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryable: true });
    expect(err!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('network errors: a GET is sent again, a POST without an Idempotency-Key is not', async () => {
    let failures = 1;
    let sends = 0;
    const flaky: typeof fetch = (input, init) => {
      sends++;
      if (failures-- > 0) return Promise.reject(new TypeError('fetch failed'));
      return fetch(input, init);
    };
    const client = createClient({ baseUrl: baseUrl(), token, fetch: flaky });
    expect((await client.calls.list({ limit: 1 })).items).toHaveLength(1);
    expect(sends).toBe(2);

    failures = 1;
    sends = 0;
    const err = await caught(client.campaigns.create({ name: 'never sent twice', bot_id: botId, timezone: 'UTC', windows: [], max_concurrency: 1, calls_per_second: 1, retry: { max_attempts: 1, delay_seconds: 30, on: [] } }));
    expect(err).toMatchObject({ status: 0, code: 'network_error', retryable: false });
    expect(sends).toBe(1);
  });
});

it('an answer that does not come within timeoutMs is a network error, and a GET is sent again', async () => {
  let requests = 0;
  const silent = http.createServer(() => void requests++); // never answers
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const client = createClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, token: 'any', timeoutMs: 200, retries: 1 });
    expect(await caught(client.calls.get('x'))).toMatchObject({ status: 0, code: 'network_error', retryable: true });
    expect(requests).toBe(2);
  } finally {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});

describe('campaigns', () => {
  it('creates a campaign, adds contacts, starts, pauses and resumes it, and lists it', async () => {
    const client = createClient({ baseUrl: baseUrl(), token });
    const botId = await bot();
    const campaign = await client.campaigns.create({ name: `sdk ${randomUUID()}`, bot_id: botId, timezone: 'UTC', windows: [], max_concurrency: 2, calls_per_second: 1, retry: { max_attempts: 1, delay_seconds: 30, on: [] } });
    expect(campaign).toMatchObject({ bot_id: botId, status: 'draft' });
    const added = await client.campaigns.addContacts(campaign.id, [{ to_number: '+4915200000100' }, { to_number: '+4915200000101' }, { to_number: '+49' }]);
    expect(added).toMatchObject({ added: 2, duplicates: 0 });
    expect(added.rejected.map((r) => r.row)).toEqual([3]);
    expect((await client.campaigns.get(campaign.id)).counts.pending).toBe(2);
    expect((await client.campaigns.listContacts(campaign.id)).items.map((c) => c.to_number).sort()).toEqual(['+4915200000100', '+4915200000101']);
    expect((await client.campaigns.start(campaign.id)).status).toBe('running');
    expect((await client.campaigns.pause(campaign.id)).status).toBe('paused');
    expect((await client.campaigns.resume(campaign.id)).status).toBe('running');
    const ids: string[] = [];
    for await (const c of client.campaigns.iterate({ status: 'running', limit: 1 })) ids.push(c.id);
    expect(ids).toContain(campaign.id);
    expect((await client.campaigns.cancel(campaign.id)).status).toBe('canceled');
    expect(await caught(client.campaigns.start(campaign.id))).toMatchObject({ status: 409 });
  });
});

it('reads Retry-After as seconds or as an HTTP date', () => {
  const now = Date.parse('2026-11-26T08:00:00Z');
  expect(parseRetryAfter('5', now)).toBe(5);
  expect(parseRetryAfter(new Date(now + 2_500).toUTCString(), now)).toBe(2); // HTTP dates are whole seconds
  expect(parseRetryAfter('Thu, 26 Nov 2026 08:00:10 GMT', now)).toBe(10);
  expect(parseRetryAfter('Thu, 26 Nov 2026 07:00:00 GMT', now)).toBe(0);
  expect(parseRetryAfter('soon', now)).toBeNull();
  expect(parseRetryAfter(null, now)).toBeNull();
});

describe('bot versions', () => {
  it('lists versions newest first, reads a snapshot, publishes an older one (the rollback) and names a missing one', async () => {
    const client = createClient({ baseUrl: baseUrl(), token });
    const botId = await bot();
    await admin('PATCH', `/api/v1/bots/${botId}`, { prompt: 'second' });
    const page = await client.bots.versions(botId, { limit: 1 });
    expect(page.items.map((v) => v.version)).toEqual([2]);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect((await client.bots.version(botId, 2)).config.prompt).toBe('second');
    const rolled = await client.bots.publish(botId, 1);
    expect(rolled).toMatchObject({ id: botId, version: 2, published_version: 1 });
    const missing = await caught(client.bots.publish(botId, 9));
    expect([missing.status, missing.code]).toEqual([404, 'not_found']);
  });
});
