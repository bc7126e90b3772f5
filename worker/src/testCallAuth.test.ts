// WebSocket test calls are authenticated (issue: 30 idle sockets from anywhere filled the fleet): a token
// from POST /api/v1/test-calls/token, good for one call to one bot, and an Origin allow-list for
// browsers. Real backend, Redis and worker.
import { signTestCallToken } from '@voice-platform/schemas/test-call-token';
import { admin, adminAuth, backendUrl, createApiKey, createBot, getCall, updateBot, workerToken } from '../testing/backend.js';
import { TestCaller, withTestCallToken } from '../testing/client.js';
import { startWorker, type TestWorker } from '../testing/worker.js';
import { waitUntil } from '@voice-platform/tests/infra';

let w: TestWorker;
let bot: string;
let other: string;
beforeAll(async () => {
  bot = await createBot({ name: 'token bot', greeting: 'Hello there.', policy: { intents: [], fallback: { reply: 'Okay.' } } });
  other = await createBot({ name: 'other bot', greeting: 'Hi.', policy: { intents: [], fallback: { reply: 'Okay.' } } });
  w = await startWorker({ WS_ALLOWED_ORIGINS: 'https://console.example.com, http://127.0.0.1:5173/' });
});
afterAll(async () => {
  await w?.stop();
});

const refusedCount = async (code: string): Promise<number> => {
  const m = await w.worker.metrics.registry.getSingleMetric('voice_worker_calls_refused_total')!.get();
  return m.values.find((v) => v.labels.code === code)?.value ?? 0;
};

/** Connects and waits for the worker's verdict: the `started` message, or an error and the close code. */
async function attempt(url: string, origin?: string): Promise<{ started: string | null; error: { code: string; message: string } | null; closeCode: number | null; caller: TestCaller }> {
  const caller = new TestCaller(url, origin ? { origin } : {});
  await caller.opened;
  caller.send({ type: 'start' });
  await caller.until(() => caller.message('started') ?? caller.closeCode !== null, 'started or closed');
  const started = caller.message('started');
  const err = caller.message('error');
  return { started: started ? (started.call_id as string) : null, error: err ? { code: err.code as string, message: err.message as string } : null, closeCode: caller.closeCode, caller };
}

async function hangUp(caller: TestCaller): Promise<void> {
  caller.send({ type: 'stop' });
  await caller.closed;
  await waitUntil(() => w.worker.slots.active === 0, { what: 'the slot to be released', timeoutMs: 10_000 });
}

describe('POST /api/v1/test-calls/token', () => {
  it('gives an admin or an API key a signed token for one active bot, with the path to connect to', async () => {
    const key = await createApiKey();
    for (const headers of [{ Authorization: await adminAuth() }, { 'X-API-Key': key }] as Array<Record<string, string>>) {
      const res = await fetch(`${backendUrl()}/api/v1/test-calls/token`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ bot_id: bot }) });
      expect(res.status).toBe(201);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = (await res.json()) as Record<string, string>;
      expect(Object.keys(body).sort()).toEqual(['bot_id', 'expires_at', 'token', 'ws_path']);
      expect(body.bot_id).toBe(bot);
      expect(body.token).toMatch(/^vt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      expect(body.ws_path).toBe(`/ws/${bot}?token=${body.token}`);
      // TEST_CALL_TOKEN_TTL_SECONDS: 300 by default.
      const ttlMs = Date.parse(body.expires_at!) - Date.now();
      expect(ttlMs).toBeGreaterThan(290_000);
      expect(ttlMs).toBeLessThanOrEqual(300_000);
    }
  });

  it('refuses no credentials, an unknown bot and an inactive bot with the documented codes', async () => {
    const post = async (body: unknown, auth = true) => {
      const res = await fetch(`${backendUrl()}/api/v1/test-calls/token`, { method: 'POST', headers: { ...(auth ? { Authorization: await adminAuth() } : {}), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
    };
    expect(await post({ bot_id: bot }, false)).toEqual({ status: 401, code: 'missing_api_key' });
    expect(await post({ bot_id: 'no-such-bot' })).toEqual({ status: 404, code: 'bot_not_found' });
    expect(await post({ bot: bot })).toEqual({ status: 422, code: 'validation_failed' });
    const sleepy = await createBot({ name: 'inactive', active: false });
    expect(await post({ bot_id: sleepy })).toEqual({ status: 409, code: 'bot_inactive' });
  });
});

describe('WS /ws/{bot_id} with a test-call token', () => {
  it('starts a call with a token from the backend, once: the same token again is refused 4401', async () => {
    const res = await admin('POST', '/api/v1/test-calls/token', { bot_id: bot });
    expect(res.status).toBe(201);
    const url = `${w.wsUrl}${res.body.ws_path as string}`;
    const first = await attempt(url);
    expect(first.error).toBeNull();
    expect((await getCall(first.started!)).direction).toBe('websocket');
    const again = await attempt(url);
    expect(again).toMatchObject({ started: null, closeCode: 4401, error: { code: 'unauthorized', message: 'the test-call token has started a call already' } });
    await hangUp(first.caller);
  });

  it('refuses a socket without a token, or with a forged, expired, malformed or other bot\'s token, with 4401 and holds no slot', async () => {
    const base = `${w.wsUrl}/ws/${bot}`;
    const before = await refusedCount('unauthorized');
    const forged = signTestCallToken('not-the-worker-token-0123456789', { bot_id: bot, sub: 'x', ttlSeconds: 300 }).token;
    const expired = signTestCallToken(workerToken(), { bot_id: bot, sub: 'x', ttlSeconds: 60, nowMs: Date.now() - 120_000 }).token;
    // Genuinely signed, but longer-lived than any backend may issue (10 minutes).
    const tooLong = signTestCallToken(workerToken(), { bot_id: bot, sub: 'x', ttlSeconds: 3600 }).token;
    const cases: Array<[string, string]> = [
      [base, 'a test-call token is required: POST /api/v1/test-calls/token, then connect with ?token='],
      [`${base}?token=${forged}`, 'the test-call token is not genuine'],
      [`${base}?token=${expired}`, 'the test-call token has expired'],
      [`${base}?token=${tooLong}`, 'the test-call token has expired'],
      [`${base}?token=${forged.slice(0, -5)}`, 'the test-call token is malformed'],
      [`${base}?token=${'x'.repeat(5000)}`, 'the test-call token is malformed'],
      [withTestCallToken(`${w.wsUrl}/ws/${other}`).replace(`/ws/${other}`, `/ws/${bot}`), 'the test-call token is for another bot'],
    ];
    for (const [url, message] of cases) {
      const r = await attempt(url);
      expect({ url: url.slice(0, 120), ...r, caller: undefined }).toEqual({ url: url.slice(0, 120), started: null, closeCode: 4401, error: { code: 'unauthorized', message }, caller: undefined });
    }
    expect((await refusedCount('unauthorized')) - before).toBe(cases.length);
    expect(w.worker.slots.active).toBe(0);
  });

  it('refuses a browser Origin not in WS_ALLOWED_ORIGINS with 4403, and takes listed ones and clients that send none', async () => {
    const foreign = await attempt(withTestCallToken(`${w.wsUrl}/ws/${bot}`), 'https://evil.example');
    expect(foreign).toMatchObject({ started: null, closeCode: 4403, error: { code: 'origin_not_allowed', message: 'this Origin may not open test calls (WS_ALLOWED_ORIGINS)' } });
    // A listed origin (case and a trailing slash in the setting do not matter), and no Origin at all.
    for (const origin of ['https://console.example.com', 'http://127.0.0.1:5173', undefined]) {
      const ok = await attempt(withTestCallToken(`${w.wsUrl}/ws/${bot}`), origin);
      expect({ origin, error: ok.error, started: typeof ok.started }).toEqual({ origin, error: null, started: 'string' });
      await hangUp(ok.caller);
    }
  });

  it('a token that reached a worker before its bot was deactivated still gets the bot check (4409)', async () => {
    const paused = await createBot({ name: 'to pause', greeting: 'Hi.', policy: { intents: [], fallback: { reply: 'Okay.' } } });
    const url = withTestCallToken(`${w.wsUrl}/ws/${paused}`);
    await updateBot(paused, { active: false });
    expect(await attempt(url)).toMatchObject({ started: null, closeCode: 4409, error: { code: 'bot_inactive' } });
  });
});
