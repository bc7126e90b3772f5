// Faults under a dial-out load, end to end on real services: a private FerretDB and Redis (to freeze), a
// backend process (api + dialler, to freeze), a worker process (to kill), the suite's LiveKit, livekit-sip
// and test phone. Dial-outs go out once a second while Redis, then FerretDB, then the backend itself is
// frozen for 10 s (SIGSTOP … SIGCONT), and finally the worker is killed (SIGKILL) with calls live.
// Afterwards nothing the platform accepted may be lost: every call is terminal, every completed call has
// its end reason, transcript, start time and recording (key or error), every slot, reservation and lease
// is back, and a webhook receiver got each call's call.ended exactly once after dedupe on the event id.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { CALL_FINAL_EVENTS_KEY, CALL_LEASES_KEY, FLEET_RESERVATIONS_KEY, TERMINAL_CALL_STATUSES, type Call } from '@voice-platform/schemas';
import { answeringNumber, freePort, holdNumber, startProcess, startTestEnv, waitUntil, type ManagedProcess, type Service, type TestEnv } from '@voice-platform/tests/infra';
import { TEST_POLICY, TEST_VARIABLES } from '../testing/backend.js';
import { telephonyEnv, workerMain } from '../testing/worker.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIAL_INTERVAL_MS = 1000;
const FREEZE_MS = 10_000;
/** Load before and after each fault. */
const CALM_MS = 5000;
const SWEEP_INTERVAL_SECONDS = 1;
const RESERVATION_TTL_SECONDS = 20;
const QUEUED_CALL_TIMEOUT_SECONDS = 30;
const WORKER_TOKEN = 'faults-suite-worker-token-0123456789';
const ADMIN = { email: 'admin@faults.example.com', password: 'faults-suite-admin-password' };
const TRUNK_NUMBER = '+15550002222';

interface Dial {
  phase: string;
  status: number | 'no_answer';
  code?: string;
  callId?: string;
}
interface Delivered {
  id: string;
  type: string;
  callId: string;
}

let env: TestEnv;
let redisSvc: Service;
let mongoSvc: Service;
let redis: Redis;
let backend: ManagedProcess;
let base: string;
let workers: ManagedProcess[] = [];
let receiver: http.Server;
const delivered: Delivered[] = [];
let adminAuth: string;
let apiKey: string;
let botId: string;

const pidOf = (svc: Service) => svc.processes()[0]!.pid;
const freeze = (pid: number) => process.kill(pid, 'SIGSTOP');
const thaw = (pid: number) => process.kill(pid, 'SIGCONT');

async function api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { Authorization: adminAuth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function startWorker(name: string): Promise<{ proc: ManagedProcess; url: string }> {
  const port = await freePort();
  const proc = startProcess(`worker-${name}`, process.execPath, [workerMain], {
    env: {
      ...process.env,
      ...telephonyEnv(),
      PORT: String(port),
      HOST: '127.0.0.1',
      SERVICE_CONFIG_URL: `${base}/api/v1/config`,
      WORKER_AUTH_TOKEN: WORKER_TOKEN,
      REDIS_URL: redisSvc.env.REDIS_URL!,
      WORKER_ID: `faults-${name}-${port}`,
      STORAGE_BUCKET: 'recordings',
      MAX_CONCURRENT_CALLS: '30',
      // The stores freeze under dial-out load here: the slots, not this machine's CPU, bound what is admitted.
      LOAD_ADMISSION: 'false',
      LOG_LEVEL: 'info',
    },
    logFile: path.join(env.dir, `worker-${name}.log`),
  });
  workers.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/health`)).status === 200, { what: `worker ${name}`, proc });
  return { proc, url };
}

beforeAll(async () => {
  env = await startTestEnv(['mongodb']);
  mongoSvc = env.services.mongodb!;
  redisSvc = await env.add('redis', 'redis', { durable: true });
  redis = new Redis(redisSvc.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);

  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const ev = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; type: string; data: { call_id?: string } };
        delivered.push({ id: ev.id, type: ev.type, callId: ev.data.call_id ?? '' });
      } catch {
        /* not an event */
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const backendEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    MONGODB_URI: mongoSvc.env.MONGODB_URI!,
    MONGODB_DB: 'faults',
    REDIS_URL: redisSvc.env.REDIS_URL!,
    JWT_SECRET: 'faults-suite-jwt-secret-0123456789abcdef-0123',
    WORKER_AUTH_TOKEN: WORKER_TOKEN,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'info',
    DIALOUT_RATE_PER_SECOND: '100',
    DIALOUT_BURST: '100',
    SWEEP_INTERVAL_SECONDS: String(SWEEP_INTERVAL_SECONDS),
    RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS),
    QUEUED_CALL_TIMEOUT_SECONDS: String(QUEUED_CALL_TIMEOUT_SECONDS),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '200',
  };
  execFileSync(process.execPath, [path.join(root, 'backend/dist/seed.js'), 'admin'], { env: backendEnv, stdio: 'pipe' });
  backend = startProcess('backend-faults', process.execPath, [path.join(root, 'backend/dist/main.js')], { env: backendEnv, logFile: path.join(env.dir, 'backend.log') });
  await waitUntil(async () => (await fetch(`${base}/health`)).status === 200, { what: 'backend', proc: backend });
  const login = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
  adminAuth = `Bearer ${((await login.json()) as { access_token: string }).access_token}`;
  apiKey = (await api('POST', '/api/v1/api-keys', { name: 'faults', scopes: ['dialout', 'calls:read', 'test_calls', 'campaigns'] })).body.key;
  const bot = await api('POST', '/api/v1/bots', {
    name: 'faults bot',
    greeting: 'Hello {{customer_name}}, this is a reminder call.',
    variables: TEST_VARIABLES,
    policy: TEST_POLICY,
    turn_detection: { end_of_turn_silence_ms: 500 },
    max_call_seconds: 90,
  });
  botId = bot.body.id;
  expect((await api('POST', '/api/v1/sip/outbound-trunks', { name: 'faults phone', address: process.env.SIP_PHONE_ADDRESS, numbers: [TRUNK_NUMBER] })).status).toBe(201);
  const hook = await api('POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`, events: ['call.ended'] });
  expect(hook.status).toBe(201);
  await startWorker('a');
}, 120_000);

afterAll(async () => {
  for (const svc of [mongoSvc, redisSvc]) {
    const pid = svc?.processes()[0]?.pid;
    if (pid) thaw(pid);
  }
  if (backend?.isRunning()) thaw(backend.pid);
  await Promise.allSettled(workers.map((w) => w.stop(5000)));
  await backend?.stop(5000);
  redis?.disconnect();
  await new Promise((resolve) => receiver?.close(resolve));
  await env?.stop();
});

/** A number the phone answers and talks on (tests/infra answeringNumber). */
const answering = answeringNumber;

async function dialOnce(phase: string, to = answering()): Promise<Dial> {
  try {
    const res = await fetch(`${base}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ bot_id: botId, to_number: to, variables: { customer_name: 'Sam' } }),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await res.json().catch(() => null)) as { call_id?: string; error?: { code: string } } | null;
    return { phase, status: res.status, callId: res.status === 201 ? body?.call_id : undefined, code: body?.error?.code };
  } catch {
    return { phase, status: 'no_answer' };
  }
}

/** Dial-outs once a second, whatever the earlier ones are doing, while `during` runs. */
async function underLoad(phase: string, dials: Promise<Dial>[], during: () => Promise<void>): Promise<void> {
  const timer = setInterval(() => dials.push(dialOnce(phase)), DIAL_INTERVAL_MS);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function frozenFor(pid: number, ms: number): Promise<void> {
  freeze(pid);
  try {
    await pause(ms); // the fault itself lasts this long: nothing to await but the clock
  } finally {
    thaw(pid);
  }
}

async function getCall(id: string): Promise<Call> {
  for (;;) {
    const res = await api('GET', `/api/v1/calls/${id}`);
    if (res.status === 200) return res.body as Call;
    await pause(200);
  }
}

it('loses nothing it accepted through Redis, FerretDB and backend freezes and a worker killed mid-call', async () => {
  const dials: Promise<Dial>[] = [];
  await underLoad('calm', dials, () => pause(CALM_MS));
  await underLoad('redis frozen', dials, () => frozenFor(pidOf(redisSvc), FREEZE_MS));
  await underLoad('after redis', dials, () => pause(CALM_MS));
  await underLoad('ferretdb frozen', dials, () => frozenFor(pidOf(mongoSvc), FREEZE_MS));
  await underLoad('after ferretdb', dials, () => pause(CALM_MS));
  await underLoad('backend frozen', dials, () => frozenFor(backend.pid, FREEZE_MS));
  await underLoad('after backend', dials, () => pause(CALM_MS));
  const results = await Promise.all(dials);
  const accepted = results.filter((d) => d.callId).map((d) => d.callId!);

  // Terminal within the sweeper's reach (queued calls time out, the phone's line ends after 60 s at most).
  const calls = new Map<string, Call>();
  const allTerminal = (ids: string[]) => async () => {
    for (const id of ids) {
      if (calls.has(id)) continue;
      const c = await getCall(id);
      if (TERMINAL_CALL_STATUSES.includes(c.status)) calls.set(id, c);
    }
    return ids.every((id) => calls.has(id));
  };
  await waitUntil(allTerminal(accepted), { what: 'every accepted call terminal', timeoutMs: (QUEUED_CALL_TIMEOUT_SECONDS + RESERVATION_TTL_SECONDS + 90) * 1000, intervalMs: 1000 });

  // The worker dies with calls live (the phone holds each line 60 s): a second one takes what comes next.
  const held = (await Promise.all([0, 1, 2].map(() => dialOnce('killed mid-call', holdNumber(60))))).map((d) => d.callId!);
  expect(held.every(Boolean)).toBe(true);
  await waitUntil(async () => (await Promise.all(held.map(getCall))).every((c) => c.status === 'in_progress'), { what: 'the held calls answered', timeoutMs: 30_000 });
  process.kill(workers[0]!.pid, 'SIGKILL');
  const b = await startWorker('b');
  await waitUntil(allTerminal(held), { what: 'the dead worker\'s calls closed', timeoutMs: 60_000, intervalMs: 500 });
  const all = [...accepted, ...held];

  // Re-read: a completed call's recording report may land just after its end.
  await waitUntil(
    async () => {
      for (const id of all) calls.set(id, await getCall(id));
      return [...calls.values()].every((c) => c.status !== 'completed' || c.recording_key !== null || c.recording_error !== null);
    },
    { what: 'the recordings reported', timeoutMs: 60_000, intervalMs: 1000 },
  );

  const byPhase = new Map<string, Record<string, number>>();
  for (const d of results) {
    const row = byPhase.get(d.phase) ?? {};
    const key = d.status === 201 ? 'accepted' : `${d.status}${d.code ? ` ${d.code}` : ''}`;
    row[key] = (row[key] ?? 0) + 1;
    byPhase.set(d.phase, row);
  }
  const outcomes: Record<string, number> = {};
  for (const c of calls.values()) outcomes[`${c.status}/${c.end_reason}`] = (outcomes[`${c.status}/${c.end_reason}`] ?? 0) + 1;
  const incomplete = [...calls.values()].filter(
    (c) => c.status === 'completed' && (!c.end_reason || !c.started_at || !c.status_times.in_progress || c.transcript.length === 0 || (c.recording_key === null && c.recording_error === null)),
  );

  // Every slot, reservation, lease and parked end is back.
  await waitUntil(async () => ((await (await fetch(`${b.url}/health`)).json()) as { active_calls: number }).active_calls === 0, { what: 'worker b idle', timeoutMs: 60_000 });
  await waitUntil(async () => (await redis.zcard(CALL_LEASES_KEY)) === 0 && (await redis.hlen(CALL_FINAL_EVENTS_KEY)) === 0, { what: 'leases and parked ends gone', timeoutMs: 30_000 });
  expect(await redis.zcount(FLEET_RESERVATIONS_KEY, Date.now(), '+inf')).toBe(0);

  // call.ended: once per call after dedupe on the event id.
  await waitUntil(() => all.every((id) => delivered.some((e) => e.type === 'call.ended' && e.callId === id)), { what: 'a call.ended for every call', timeoutMs: 90_000, intervalMs: 500 });
  const endedIds = new Map<string, Set<string>>();
  for (const e of delivered.filter((x) => x.type === 'call.ended')) endedIds.set(e.callId, (endedIds.get(e.callId) ?? new Set()).add(e.id));
  const twice = [...endedIds.entries()].filter(([, ids]) => ids.size !== 1).map(([id]) => id);

  console.log(
    [
      `dial-outs: ${results.length} sent under faults, ${accepted.length} accepted; ${held.length} more held while the worker was killed`,
      ...[...byPhase.entries()].map(([phase, row]) => `  ${phase}: ${JSON.stringify(row)}`),
      `outcomes: ${JSON.stringify(outcomes)}`,
      `incomplete completed calls: ${incomplete.length}; call.ended deliveries: ${delivered.filter((x) => x.type === 'call.ended').length} for ${endedIds.size} calls, ${twice.length} calls with more than one event id`,
    ].join('\n'),
  );
  expect(accepted.length).toBeGreaterThan(20);
  expect(incomplete.map((c) => ({ id: c.call_id, end_reason: c.end_reason, started_at: c.started_at, transcript: c.transcript.length, recording: c.recording_key ?? c.recording_error }))).toEqual([]);
  expect(twice).toEqual([]);
  // Through every stall the calls went on as calls: each answered, heard the callee (whose phrase makes the bot
  // hang up; one miss of the recogniser is allowed) and ended; none sat out a stall in silence until the phone gave up.
  const loaded = accepted.map((id) => calls.get(id)!);
  expect(loaded.filter((c) => c.status !== 'completed').map((c) => `${c.call_id} ${c.status}/${c.end_reason}`)).toEqual([]);
  expect(loaded.filter((c) => c.end_reason !== 'bot_hangup').length).toBeLessThanOrEqual(1);
  // The killed worker's calls were closed by the dialler: failed / worker_lost, each once.
  expect(held.map((id) => `${calls.get(id)!.status}/${calls.get(id)!.end_reason}`)).toEqual(held.map(() => 'failed/worker_lost'));
}, 600_000);
