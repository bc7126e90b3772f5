// Stalled stores: this file's own FerretDB, then its own Redis, is frozen (SIGSTOP: the process keeps its
// sockets open, so connections succeed and requests are sent, but nothing answers) for STALL_MS while
// every route of ROUTES is called in its own loop, one request at a time. Each answer comes within the
// store limits of the settings plus a margin: a 503 `service_unavailable` naming the frozen store, or a
// success that did not need it; never a hang, never a 500. After SIGCONT every route answers 2xx again,
// without a restart of the app.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startTestEnv, waitUntil, type Service, type TestEnv } from '@voice-platform/tests/infra';
import { ADMIN, adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, WORKER_TOKEN, type Harness } from '../testing/harness.js';

const STALL_MS = 10_000;
/** Beyond the store limits, for a busy 2-core machine (the event loop, the HTTP round trip). */
const MARGIN_MS = 1000;
const RECOVERY_DEADLINE_MS = 30_000;
/** A loop's pause between two requests. */
const PAUSE_MS = 50;

type Store = 'mongodb' | 'redis';
interface Route {
  name: string;
  method: 'GET' | 'POST';
  path: () => string;
  headers: () => Record<string, string>;
  body?: () => unknown;
}
interface Outcome {
  route: string;
  sentAt: number;
  answeredAt: number;
  status: number | 'no_answer';
  body: { error?: { code?: string; message?: string; details?: { failed?: string[] } } } | null;
}
interface Stall {
  store: Store;
  frozenAt: number;
  thawedAt: number;
  /** Every route answered 2xx again (answers overlapping [frozenAt, recoveredAt] may name the store). */
  recoveredAt: number;
}

let env: TestEnv;
let mongo: Service;
let redis: Service;
let h: Harness;
let server: http.Server;
let base: string;
let admin: string;
let key: string;
let botId: string;
let callId: string;

beforeAll(async () => {
  // Private stores, so freezing them disturbs no other test file.
  env = await startTestEnv(['mongodb']);
  mongo = env.services.mongodb!;
  redis = await env.add('redis', 'redis');
  h = await startHarness({
    mongoUri: mongo.env.MONGODB_URI,
    redisUrl: redis.env.REDIS_URL,
    env: {
      LOG_LEVEL: 'info',
      DIALOUT_RATE_PER_SECOND: '1000000', // the test clock stands still: the bucket must never run dry
      DIALOUT_BURST: '1000000',
      LOGIN_MAX_ATTEMPTS: '1000000',
      LOGIN_IP_MAX_ATTEMPTS: '1000000',
      LOGIN_GLOBAL_MAX_ATTEMPTS: '1000000',
    },
  });
  admin = await adminToken(h);
  await createTrunk(h, admin);
  key = (await createKey(h, admin)).key;
  botId = await createBot(h, admin);
  await heartbeat(h.redis, 'w1', { max_calls: 1_000_000 }, h.clock.ms + 3_600_000);
  server = http.createServer(h.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const placed = await fetch(`${base}/api/v1/sip/dialout`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ bot_id: botId, to_number: '+4915112345678' }),
  });
  expect(placed.status).toBe(201);
  callId = ((await placed.json()) as { call_id: string }).call_id;
}, 120_000);

afterAll(async () => {
  mongo?.thaw();
  redis?.thaw();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
  await env?.stop();
});

const asAdmin = () => ({ Authorization: admin });
const ROUTES: Route[] = [
  { name: 'health', method: 'GET', path: () => '/health', headers: () => ({}) },
  { name: 'login', method: 'POST', path: () => '/api/v1/auth/login', headers: () => ({}), body: () => ADMIN },
  { name: 'api keys list', method: 'GET', path: () => '/api/v1/api-keys', headers: asAdmin },
  { name: 'bots list', method: 'GET', path: () => '/api/v1/bots', headers: asAdmin },
  { name: 'bot get', method: 'GET', path: () => `/api/v1/bots/${botId}`, headers: asAdmin },
  {
    name: 'dial-out',
    method: 'POST',
    path: () => '/api/v1/sip/dialout',
    headers: () => ({ 'X-API-Key': key }),
    body: () => ({ bot_id: botId, to_number: '+4915112345678' }),
  },
  { name: 'call get (key)', method: 'GET', path: () => `/api/v1/calls/${callId}`, headers: () => ({ 'X-API-Key': key }) },
  { name: 'calls list', method: 'GET', path: () => '/api/v1/calls', headers: asAdmin },
  { name: 'config', method: 'GET', path: () => `/api/v1/config?bot_id=${botId}&call_id=${callId}`, headers: () => ({ Authorization: `Bearer ${WORKER_TOKEN}` }) },
  { name: 'campaigns list', method: 'GET', path: () => '/api/v1/campaigns', headers: asAdmin },
  { name: 'webhooks list', method: 'GET', path: () => '/api/v1/webhooks', headers: asAdmin },
];

async function call(route: Route, hangMs: number): Promise<Outcome> {
  const sentAt = performance.now();
  try {
    const res = await fetch(`${base}${route.path()}`, {
      method: route.method,
      headers: { ...route.headers(), ...(route.body ? { 'Content-Type': 'application/json' } : {}) },
      body: route.body ? JSON.stringify(route.body()) : undefined,
      signal: AbortSignal.timeout(hangMs),
    });
    const text = await res.text();
    let body: Outcome['body'] = null;
    try {
      body = JSON.parse(text) as Outcome['body'];
    } catch {
      /* kept as null: the assertions name it */
    }
    return { route: route.name, sentAt, answeredAt: performance.now(), status: res.status, body };
  } catch {
    return { route: route.name, sentAt, answeredAt: performance.now(), status: 'no_answer', body: null };
  }
}

/** Every route in its own loop, one request in flight each, until stopped. */
function startLoops(hangMs: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = ROUTES.map(async (route) => {
    while (running) {
      outcomes.push(await call(route, hangMs));
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const ok = (o: Outcome) => typeof o.status === 'number' && o.status >= 200 && o.status < 300;

/** True once every route has answered 2xx to a request sent after `since`; else throws what it still sees. */
function allAnswering(outcomes: Outcome[], since: number): boolean {
  const waiting = ROUTES.filter((r) => !outcomes.some((o) => o.route === r.name && o.sentAt >= since && ok(o)));
  if (waiting.length === 0) return true;
  const last = waiting.map((r) => {
    const o = outcomes.filter((x) => x.route === r.name).at(-1);
    return `${r.name}: ${o ? `${o.status} ${o.body?.error?.message ?? ''}` : 'nothing yet'}`;
  });
  throw new Error(`not answering 2xx yet: ${last.join('; ')}`);
}

async function stall(store: Store, svc: Service, outcomes: Outcome[]): Promise<Stall> {
  const frozenAt = performance.now();
  svc.freeze();
  try {
    // Held for STALL_MS, a plain wait: what is tested is what the app does meanwhile.
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
  } finally {
    svc.thaw();
  }
  const thawedAt = performance.now();
  await waitUntil(() => allAnswering(outcomes, thawedAt), { what: `every route answering again after ${store} thawed`, timeoutMs: RECOVERY_DEADLINE_MS, intervalMs: 100 });
  return { store, frozenAt, thawedAt, recoveredAt: performance.now() };
}

describe('routes while a store is stalled', () => {
  it('answer 503 naming the frozen store (or succeed without it) within the store limits, and recover after it thaws', async () => {
    // One operation on a stalled store fails after its own limit; the app stops at its first store failure
    // (and a Redis command that timed out drops its connection, so the next ones fail at once).
    const s = h.settings;
    const limitMs = Math.max(s.MONGODB_OPERATION_TIMEOUT_MS, s.REDIS_COMMAND_TIMEOUT_MS);
    const boundMs = limitMs + MARGIN_MS;
    const loops = startLoops(boundMs + 20_000);
    const stalls: Stall[] = [];
    try {
      await waitUntil(() => allAnswering(loops.outcomes, 0), { what: 'every route answering before the stalls', timeoutMs: 20_000, intervalMs: 100 });
      stalls.push(await stall('mongodb', mongo, loops.outcomes));
      stalls.push(await stall('redis', redis, loops.outcomes));
    } finally {
      await loops.stop();
    }
    const { outcomes } = loops;
    const ms = (o: Outcome) => Math.round(o.answeredAt - o.sentAt);
    const show = (list: Outcome[]) => JSON.stringify(list.slice(0, 5).map((o) => ({ route: o.route, status: o.status, ms: ms(o), error: o.body?.error })));

    // What each route answered in each stall (printed: the figures behind the assertions).
    const during = (x: Stall) => outcomes.filter((o) => o.sentAt <= x.recoveredAt && o.answeredAt >= x.frozenAt);
    for (const x of stalls) {
      const rows = ROUTES.map((r) => {
        const mine = during(x).filter((o) => o.route === r.name);
        const tally: Record<string, number> = {};
        for (const o of mine) tally[String(o.status)] = (tally[String(o.status)] ?? 0) + 1;
        const slowest = Math.max(0, ...mine.map(ms));
        return `  ${r.name.padEnd(16)} ${JSON.stringify(tally).padEnd(24)} slowest ${slowest} ms`;
      });
      console.log(`${x.store} frozen ${STALL_MS} ms (limit ${limitMs} ms + margin ${MARGIN_MS} ms), recovered ${Math.round(x.recoveredAt - x.thawedAt)} ms after the thaw:\n${rows.join('\n')}`);
    }

    // Never a hang: every answer within the limit plus the margin.
    const slow = outcomes.filter((o) => o.status === 'no_answer' || ms(o) > boundMs);
    expect(`${slow.length} answers slower than ${boundMs} ms ${show(slow)}`).toBe(`0 answers slower than ${boundMs} ms []`);

    // Never a 500: a 2xx, or a 503 service_unavailable naming one store that was stalled meanwhile.
    const stalledDuring = (o: Outcome) => stalls.filter((x) => o.sentAt <= x.recoveredAt && o.answeredAt >= x.frozenAt).map((x) => x.store);
    const wrong = outcomes.filter((o) => {
      if (ok(o)) return false;
      if (o.status !== 503 || o.body?.error?.code !== 'service_unavailable') return true;
      const failed = o.body.error.details?.failed ?? [];
      return failed.length !== 1 || !stalledDuring(o).includes(failed[0] as Store) || !o.body.error.message?.includes(failed[0]!);
    });
    expect(`${wrong.length} wrong answers ${show(wrong)}`).toBe('0 wrong answers []');

    // The stalls were felt: while each store was frozen, the routes that need it said so.
    for (const x of stalls) {
      const inside = outcomes.filter((o) => o.sentAt >= x.frozenAt && o.answeredAt <= x.thawedAt);
      const named = inside.filter((o) => o.status === 503 && o.body?.error?.details?.failed?.[0] === x.store);
      expect(named.length).toBeGreaterThanOrEqual(ROUTES.length);
    }
    expect(h.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]); // no unexpected error was logged
  }, 180_000);
});
