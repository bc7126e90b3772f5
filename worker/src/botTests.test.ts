// Bot tests end to end (docs/design.md §17) on real services: the suite's backend (API), a worker, and the
// demo bot (backend/src/demoBot.ts, seeded by `seed.js demo-bot`). The dialler runs as its own backend process
// (ROLES=dialler, TEST_RUNNER_WORKER_URL: this worker) so the test can SIGKILL it mid-run: a second one takes the
// killed runner's case over, and each case ends with one result. The caller speaks its script with espeak-ng;
// the worker hears it with pocketsphinx; the demo bot's CRM tool is answered by the case's mock (nothing
// listens at its URL).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSocket } from 'node:dgram';
import { dispose } from '@livekit/rtc-node';
import { Redis } from 'ioredis';
import { SipClient } from 'livekit-server-sdk';
import { freePort, repoRoot, startProcess, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { admin, backendUrl, workerToken } from '../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';

const DEMO = 'demo-bot';
// The suite backend's (jest.global-setup.js): the dialler shares its database and secrets.
const JWT_SECRET = 'worker-suite-jwt-secret-0123456789abcdef-0123';

let w: TestWorker;
const diallers: ManagedProcess[] = [];

function backendEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, MONGODB_DB: 'worker_tests', JWT_SECRET, WORKER_AUTH_TOKEN: workerToken(), LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE: 'true', ...extra };
}

/** A UDP port free now on loopback (the simulated phone's SIP socket). */
async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function startDialler(n: number): Promise<ManagedProcess> {
  const port = await freePort();
  const p = startProcess(`test-dialler-${n}`, process.execPath, [path.join(repoRoot, 'backend/dist/main.js')], {
    // Its simulated phone (sip cases) on a port of its own: a dialler started while a killed one's is not yet free.
    env: backendEnv({ PORT: String(port), ROLES: 'dialler', TEST_RUNNER_WORKER_URL: w.url, TEST_RUNNER_LEASE_MS: '3000', TEST_RUNNER_POLL_INTERVAL_MS: '200', TEST_PHONE_SIP_ADDRESS: `127.0.0.1:${await freeUdpPort()}` }),
    logFile: path.join(process.env.VP_TEST_DIR!, `test-dialler-${n}.log`),
  });
  diallers.push(p);
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.ok === true || (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200, { what: 'dialler', proc: p });
  return p;
}

beforeAll(async () => {
  execFileSync(process.execPath, [path.join(repoRoot, 'backend/dist/seed.js'), 'demo-bot'], { env: backendEnv({}), stdio: 'pipe' });
  // With telephony: it also claims the `web` calls of room cases and joins their LiveKit rooms.
  w = await startWorker(telephonyEnv({ WEB_CALLER_WAIT_SECONDS: '20' }));
});
afterAll(async () => {
  for (const d of diallers) await d.stop(2000);
  await w?.stop();
  await dispose(); // the telephony worker's rtc-node runtime, or jest does not exit
});

const promiseCase = {
  name: 'promises to pay',
  transport: 'ws',
  variables: { customer_name: 'Alice', amount_due: '42 dollars' },
  caller: { script: [{ say: 'yes i will pay', wait_for_bot: true }] },
  tool_mocks: { record_promise: { status: 200, body: { reference: 'R42' } } },
  expect: {
    end_reason: 'bot_hangup',
    tools: [{ name: 'record_promise', arguments: { customer_name: 'Alice', amount_due: '42 dollars' } }],
    said: ['promise is noted under reference R42'],
    not_said: ['did not catch that'],
  },
};
// Fails on purpose: the demo bot never talks about refunds.
const refundCase = { ...promiseCase, name: 'talks about a refund', expect: { end_reason: 'bot_hangup', said: ['your refund is on its way'] } };

describe('test cases: what a case may name is checked against the bot', () => {
  it.each([
    ['a tool the bot lacks', { expect: { tools: [{ name: 'refund' }] } }, 'expect.tools.0.name'],
    ['a mock for an unknown tool', { tool_mocks: { refund: { status: 200, body: {} } } }, 'tool_mocks.refund'],
    ['an empty script', { caller: { script: [] } }, 'caller.script'],
    ['a bad regex', { expect: { said: ['(unclosed'] } }, 'expect.said.0'],
    ['a judge while the bot has no LLM for it', { expect: { judge: 'The bot was polite.' } }, 'expect.judge'],
  ])('%s: 422 validation_failed naming %s, nothing stored', async (_what, patch, field) => {
    const before = (await admin('GET', `/api/v1/bots/${DEMO}/tests`)).body.items.length as number;
    const res = await admin('POST', `/api/v1/bots/${DEMO}/tests`, { ...promiseCase, ...patch });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect((await admin('GET', `/api/v1/bots/${DEMO}/tests`)).body.items).toHaveLength(before);
  });

  it('a case on each transport this backend places is accepted (sip: the dialler has a simulated phone); available transports are listed', async () => {
    for (const transport of ['ws', 'room', 'sip']) {
      const res = await admin('POST', `/api/v1/bots/${DEMO}/tests`, { ...promiseCase, name: `on ${transport}`, transport });
      expect(res.status).toBe(201);
      expect(res.body.transport).toBe(transport);
      expect((await admin('DELETE', `/api/v1/bots/${DEMO}/tests/${res.body.id}`)).status).toBe(204);
    }
  });

  it('a case is created, read, replaced and deleted', async () => {
    const made = await admin('POST', `/api/v1/bots/${DEMO}/tests`, { ...promiseCase, name: 'scratch' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ bot_id: DEMO, name: 'scratch', transport: 'ws', tool_mocks: promiseCase.tool_mocks });
    const put = await admin('PUT', `/api/v1/bots/${DEMO}/tests/${made.body.id}`, { ...promiseCase, name: 'scratch 2' });
    expect(put.status).toBe(200);
    expect((await admin('GET', `/api/v1/bots/${DEMO}/tests/${made.body.id}`)).body.name).toBe('scratch 2');
    expect((await admin('DELETE', `/api/v1/bots/${DEMO}/tests/${made.body.id}`)).status).toBe(204);
    expect((await admin('GET', `/api/v1/bots/${DEMO}/tests/${made.body.id}`)).body.error.code).toBe('test_case_not_found');
  });
});

describe('a test run of the demo bot', () => {
  it('one case passes (the mock called with the amount, bot_hangup), one fails naming its expectation; a killed runner is taken over and each case has one result', async () => {
    const a = await admin('POST', `/api/v1/bots/${DEMO}/tests`, promiseCase);
    const b = await admin('POST', `/api/v1/bots/${DEMO}/tests`, refundCase);
    expect([a.status, b.status]).toEqual([201, 201]);

    const started = await admin('POST', `/api/v1/bots/${DEMO}/test-runs`, { cases: [a.body.id, b.body.id], concurrency: 1 });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'queued', passed: 0, failed: 0, version: 1 });
    const runPath = `/api/v1/bots/${DEMO}/test-runs/${started.body.id}`;

    // No dialler runs tests yet: the run waits queued, no case fails for it.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await admin('GET', runPath)).body).toMatchObject({ status: 'queued', failed: 0 });

    const first = await startDialler(1);
    let killedCall: string | null = null;
    await waitUntil(async () => {
      killedCall = ((await admin('GET', runPath)).body.cases[0]?.call_id as string | null) ?? null;
      return killedCall !== null;
    }, { what: 'the first case on the line', timeoutMs: 30_000 });
    process.kill(-first.pid, 'SIGKILL'); // its process group: a crash, no shutdown
    await first.exited;
    await startDialler(2);

    let run: any;
    await waitUntil(async () => {
      run = (await admin('GET', runPath)).body;
      return run.status === 'done';
    }, { what: 'the run done', timeoutMs: 150_000 });

    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 1, version: 1 });
    expect(run.cases).toHaveLength(2);
    const [pass, fail] = run.cases;
    expect(pass).toMatchObject({ name: 'promises to pay', passed: true, failures: [] });
    // Taken over: the case's one result is a new call, not the one cut off with the killed runner.
    expect(pass.call_id).not.toBe(killedCall);
    expect(fail.passed).toBe(false);
    expect(fail.failures).toEqual([{ expectation: 'said.0', detail: expect.stringContaining('never said /your refund is on its way/i') }]);
    expect(run.latency.p50_ms).toEqual(expect.any(Number));

    // The passing case's call: the mock answered record_promise with the amount; the bot hung up.
    const call = (await admin('GET', `/api/v1/calls/${pass.call_id}`)).body;
    expect(call.end_reason).toBe('bot_hangup');
    expect(call.actions).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'record_promise', status: 'ok', arguments: { customer_name: 'Alice', amount_due: '42 dollars' } })]));

    const history = (await admin('GET', `/api/v1/bots/${DEMO}/test-runs`)).body.items;
    expect(history[0]).toMatchObject({ id: run.id, status: 'done' });
  });
});

describe('the voice-platform CLI (sdk/dist/cli.js) as a CI step', () => {
  const cli = path.join(repoRoot, 'sdk/dist/cli.js');
  // A process of its own, waited for without blocking: the worker of this test runs in this process.
  const runCli = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  it('usage errors exit 2 and say what is wrong', async () => {
    const r = await runCli(['test', '--junit', 'x.xml'], { VOICE_PLATFORM_API_KEY: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--bot is required');
  });

  it('runs every case of the bot with an API key: prints each, writes JUnit with the failed expectation, exits 1; all green exits 0', async () => {
    const key = await admin('POST', '/api/v1/api-keys', { name: 'ci', scopes: ['test_calls'] });
    expect(key.status).toBe(201);
    const cases = (await admin('GET', `/api/v1/bots/${DEMO}/tests`)).body.items as Array<{ id: string; name: string }>;
    expect(cases.map((c) => c.name).sort()).toEqual(['promises to pay', 'talks about a refund']);
    const junit = path.join(mkdtempSync(path.join(tmpdir(), 'vp-cli-')), 'out.xml');

    const red = await runCli(['test', '--bot', DEMO, '--junit', junit, '--url', backendUrl()], { VOICE_PLATFORM_API_KEY: key.body.key });
    expect({ status: red.status, stderr: red.stderr }).toEqual({ status: 1, stderr: '' });
    expect(red.stdout).toMatch(/^PASS promises to pay \(call [0-9a-f]+\)$/m);
    expect(red.stdout).toMatch(/^FAIL talks about a refund/m);
    expect(red.stdout).toContain('✗ said.0: the bot never said /your refund is on its way/i');
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<testsuites tests="2" failures="1">');
    expect(xml).toContain(`<testcase name="promises to pay" classname="bot.${DEMO}"/>`);
    expect(xml).toMatch(/<testcase name="talks about a refund" classname="bot.demo-bot">\s*<failure message="said.0">said.0: the bot never said/);

    await admin('DELETE', `/api/v1/bots/${DEMO}/tests/${cases.find((c) => c.name === 'talks about a refund')!.id}`);
    const green = await runCli(['test', '--bot', DEMO, '--url', backendUrl(), '--api-key', key.body.key]);
    expect(green.status).toBe(0);
    expect(green.stdout).toContain('1 passed, 0 failed');
  });
});

/** Saves `testCase` on `botId` with `transport`, runs it alone on a dialler, and answers the finished run and its call; the case is deleted after. */
async function runCaseOn(transport: 'room' | 'sip', botId: string, testCase: Record<string, unknown>): Promise<{ run: any; call: any; version: number }> {
  const made = await admin('POST', `/api/v1/bots/${botId}/tests`, { ...testCase, transport });
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({ name: testCase.name, transport });
  try {
    const version = (await admin('GET', `/api/v1/bots/${botId}`)).body.version as number;
    const started = await admin('POST', `/api/v1/bots/${botId}/test-runs`, { cases: [made.body.id] });
    expect(started.status).toBe(202);
    expect(started.body.version).toBe(version);
    if (!diallers.some((d) => d.isRunning())) await startDialler(3);
    const runPath = `/api/v1/bots/${botId}/test-runs/${started.body.id}`;
    let run: any;
    await waitUntil(async () => {
      run = (await admin('GET', runPath)).body;
      return run.status === 'done';
    }, { what: `the ${transport} run done`, timeoutMs: 120_000 });
    const call = run.cases[0]?.call_id ? (await admin('GET', `/api/v1/calls/${run.cases[0].call_id}`)).body : null;
    return { run, call, version };
  } finally {
    await admin('DELETE', `/api/v1/bots/${botId}/tests/${made.body.id}`);
  }
}

/** A bot that asks for keys and answers 42 (a keypad-only intent). */
async function keypadBot(name: string): Promise<string> {
  const bot = await admin('POST', '/api/v1/bots', {
    name,
    greeting: 'Please key in your account number.',
    variables: [{ name: 'customer_name', required: true, description: '' }],
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 90,
    policy: {
      intents: [{ name: 'account', examples: [], dtmf: '42', reply: 'Account {{digits}} found. Goodbye.', end_call: true }],
      fallback: { reply: 'Sorry, I did not catch that.' },
    },
  });
  expect(bot.status).toBe(201);
  return bot.body.id as string;
}
const keypadCase = { name: 'keys in the account', variables: { customer_name: 'Alice' }, caller: { script: [{ dtmf: '42', wait_for_bot: true }] }, expect: { end_reason: 'bot_hangup', said: ['account 42 found'] } };

describe('a room case: a web call in a LiveKit room, as the widget places it', () => {
  const runRoomCase = (botId: string, testCase: Record<string, unknown>) => runCaseOn('room', botId, testCase);

  it("the runner places a web call of the run's version with the case on it, talks in the room, and the case passes (the mock called with the amount, bot_hangup)", async () => {
    const { run, call, version } = await runRoomCase(DEMO, { ...promiseCase, name: 'promises to pay in a room' });
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 0, version });
    expect(run.cases).toEqual([expect.objectContaining({ name: 'promises to pay in a room', passed: true, failures: [], call_id: expect.any(String) })]);
    expect(call).toMatchObject({ direction: 'web', bot_version: version, end_reason: 'bot_hangup', to_number: null, from_number: null });
    expect(call.actions).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'record_promise', status: 'ok', arguments: { customer_name: 'Alice', amount_due: '42 dollars' } })]));
  });

  it("a dtmf step presses the keys in the room (publishDtmf): the bot's keypad intent answers them", async () => {
    const botId = await keypadBot('room keypad bot');
    const { run, call } = await runRoomCase(botId, keypadCase);
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 0 });
    expect(call).toMatchObject({ direction: 'web', end_reason: 'bot_hangup' });
    expect(call.actions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'dtmf_in', arguments: { digits: '42' } })]));
    expect(call.transcript).toEqual(expect.arrayContaining([expect.objectContaining({ role: 'user', text: '42', dtmf: true })]));
  });
});

describe("a sip case: the platform dials the dialler's simulated phone through livekit-sip, on a trunk of its own", () => {
  const runSipCase = (botId: string, testCase: Record<string, unknown>) => runCaseOn('sip', botId, testCase);
  const sip = () => new SipClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!);

  it("a dial-out of the run's version with the case on it: the phone speaks the script over µ-law RTP, the case passes, and its trunk is gone after", async () => {
    const { run, call, version } = await runSipCase(DEMO, { ...promiseCase, name: 'promises to pay on the phone' });
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 0, version });
    expect(run.cases).toEqual([expect.objectContaining({ name: 'promises to pay on the phone', passed: true, failures: [], call_id: expect.any(String) })]);
    // A real dial-out: livekit-sip called the phone on the case's own number, from the test caller id.
    expect(call).toMatchObject({ direction: 'outbound', bot_version: version, end_reason: 'bot_hangup', from_number: '+15550100999', status: 'completed' });
    expect(call.to_number).toMatch(/^\+1555\d{7}$/);
    expect(call.actions).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'record_promise', status: 'ok', arguments: { customer_name: 'Alice', amount_due: '42 dollars' } })]));
    // The worker heard the caller's line through the phone path (pocketsphinx on the µ-law the phone sent; the
    // intent matched it, whichever of its example phrases the recogniser made of it).
    expect(call.transcript).toEqual(expect.arrayContaining([expect.objectContaining({ role: 'user', text: expect.stringMatching(/\S/) })]));
    const trunks = await sip().listSipOutboundTrunk();
    expect(trunks.filter((t) => t.name.startsWith('vp-test-phone '))).toEqual([]);
  });

  it("a trunk a killed runner's case left in LiveKit is deleted by a runner; one whose case a runner holds, and a team's, are kept", async () => {
    const lk = sip();
    const [run1, case1, run2, case2] = ['6b0c00000000000000000001', '6b0c00000000000000000002', '6b0c00000000000000000003', '6b0c00000000000000000004'];
    const left = await lk.createSipOutboundTrunk(`vp-test-phone ${run1}/${case1}`, '127.0.0.1:5999', ['+15550100999']);
    const held = await lk.createSipOutboundTrunk(`vp-test-phone ${run2}/${case2}`, '127.0.0.1:5999', ['+15550100999']);
    const team = await lk.createSipOutboundTrunk('a team trunk', '127.0.0.1:5999', ['+15550100998']);
    const redis = new Redis(process.env.REDIS_URL!);
    await redis.set(`vp:test:lease:${run2}:${case2}`, 'another-runner', 'PX', 120_000);
    try {
      await startDialler(4); // a runner sweeps when it starts, then every minute
      await waitUntil(async () => !(await lk.listSipOutboundTrunk()).some((t) => t.sipTrunkId === left.sipTrunkId), { what: 'the left trunk deleted', timeoutMs: 30_000 });
      expect((await lk.listSipOutboundTrunk()).map((t) => t.sipTrunkId)).toEqual(expect.arrayContaining([held.sipTrunkId, team.sipTrunkId]));
    } finally {
      await lk.deleteSipTrunk(held.sipTrunkId).catch(() => undefined);
      await lk.deleteSipTrunk(team.sipTrunkId).catch(() => undefined);
      await redis.del(`vp:test:lease:${run2}:${case2}`);
      redis.disconnect();
    }
  });

  it('a dtmf step presses the keys as RFC 4733 events: livekit-sip hands them to the bot, whose keypad intent answers', async () => {
    const botId = await keypadBot('sip keypad bot');
    const { run, call } = await runSipCase(botId, { ...keypadCase, name: 'keys in the account on the phone' });
    expect(run).toMatchObject({ status: 'done', passed: 1, failed: 0 });
    expect(call).toMatchObject({ direction: 'outbound', end_reason: 'bot_hangup' });
    expect(call.actions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'dtmf_in', arguments: { digits: '42' } })]));
    expect(call.transcript).toEqual(expect.arrayContaining([expect.objectContaining({ role: 'user', text: '42', dtmf: true })]));
  });
});
