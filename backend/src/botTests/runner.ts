// Dialler role: the bot-test runner (docs/design.md §17). Durable like the analysis runner (analysis/runner.ts):
// - The work is in MongoDB: a run's document lists its cases, each `pending`, `running` or `done`. Each pass
//   reads the runs not done (a small set) and takes cases up to the run's `concurrency` and this process's
//   TEST_RUNNER_CONCURRENCY.
// - Whoever runs a case holds its lease (SET NX PX TEST_RUNNER_LEASE_MS, renewed while the call goes on). A runner
//   that dies stops renewing: its `running` case has no lease once it expires and the next pass of any runner
//   takes it again (a new attempt, a new call).
// - Every change of the run's document is made under its lock (testRunLock) and a result is written only while
//   the case is not done and still this attempt's: a runner that outlived its lease finds a later attempt begun
//   and drops its result, so each case has exactly one.
// - A fleet with no free slot (the worker refuses the call, or none answers; for a room or sip case, placeCall's 503
//   fleet_at_capacity) hands the case back `pending`: the run waits queued, no case fails for it.
// - The last result completes the run and marks `test_run.completed` due in the same write; it is then sent
//   (a fixed event id) and the mark cleared; a mark a crash left is sent by the next pass.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { TERMINAL_CALL_STATUSES, type TestFailure } from '@voice-platform/schemas';
import { VERSION, type AppDeps, type Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { withDocLock } from '../core/locks.js';
import { ApiError } from '../core/errors.js';
import { StoreCache } from '../core/cache.js';
import { tracingOff } from '../core/tracing.js';
import { locateCall, type CallDoc } from '../calls/store.js';
import { joblessCloser, placeCall } from '../calls/place.js';
import { webCallerToken } from '../widget/routes.js';
import { findBot } from '../bots/store.js';
import { botAtVersion } from '../bots/versions.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { openaiAnalysis } from '../analysis/openai.js';
import { NO_CAPACITY_CODES, runPersonaCall, runScriptedCall, wsDial, type CallerOutcome, type Dial } from './caller.js';
import { roomDial, type PlacedCall } from './roomCaller.js';
import { phoneTrunkName, sipDial, sweepPhoneTrunks, type PlacedSipCall } from './sipCaller.js';
import { SimulatedPhone } from './sipPhone.js';
import { testLiveKit, testPhoneAddress, unavailableReason, type TestLiveKit } from './transports.js';
import { checkExpectations, turnLatencies } from './checks.js';
import { publicTestRun, testRunLock, testRuns, type RunCaseDoc, type TestRunDoc } from './store.js';
import { pollLoop } from '../core/pollLoop.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** One case's lease: only its holder places the case's call and writes its result. */
export const testCaseLeaseKey = (runId: string, caseId: string) => `vp:test:lease:${runId}:${caseId}`;
/** How long the stored call has, after the caller hung up, to be ended and analysed before it is checked as it is. */
const SETTLE_WAIT_MS = 60_000;
/** How often a runner looks for trunks a killed runner's sip cases left in LiveKit. */
const PHONE_TRUNK_SWEEP_MS = 60_000;

interface RunnerDeps extends AppDeps {
  metrics: Metrics;
}

export interface TestRunner {
  /** One pass: takes the cases it may and waits for them (tests). */
  runOnce(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createTestRunner(deps: RunnerDeps): TestRunner {
  const { settings, redis, db } = deps;
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger.child({ role: 'dialler', component: 'tests' });
  const leaseMs = settings.TEST_RUNNER_LEASE_MS;
  const workerUrl = settings.TEST_RUNNER_WORKER_URL;
  const inFlight = new Map<string, Promise<void>>();
  const abort = new AbortController();
  let stopped = true;
  // A room case's call is placed as the widget places one (calls/place.ts), through this process's own cache.
  const pendingMs = 2 * (settings.MONGODB_SERVER_SELECTION_TIMEOUT_MS + settings.MONGODB_SOCKET_TIMEOUT_MS);
  const svc: Services = { ...deps, logger, clock, version: deps.version ?? VERSION, now: () => new Date(clock()), cache: new StoreCache(redis, pendingMs), tracing: deps.tracing ?? tracingOff };
  const jobless = joblessCloser(svc);
  const liveKit = testLiveKit(settings);
  // `sip` cases: the phone the platform dials (sipCaller.ts), started with the runner.
  const phoneAt = testPhoneAddress(settings);
  const phone = phoneAt && svc.telephony ? new SimulatedPhone({ ...phoneAt, log: (msg, fields) => logger.warn(fields, msg) }) : null;

  const lock = <T>(runId: string, fn: () => Promise<T>) => withDocLock(redis, testRunLock(runId), fn, { waitMs: 5000 });

  /** Sends test_run.completed for a completed run whose mark is set, then clears it. */
  async function sendCompleted(runId: string): Promise<void> {
    const run = await testRuns(db).findOne({ _id: runId });
    if (!run?.webhook_due) return;
    await emitWebhookEvent({ redis, db, logger, clock, metrics: deps.metrics }, 'test_run.completed', publicTestRun(run), { id: `evt_test_run_${runId}` });
    await testRuns(db).updateOne({ _id: runId }, { $unset: { webhook_due: '' } });
    logger.info({ run_id: runId, passed: run.passed, failed: run.failed }, 'test run completed');
  }

  /** Waits for the call to be ended and, when the case checks the analysis or asks a judge, analysed. */
  async function settledCall(callId: string, wantAnalysis: boolean): Promise<CallDoc | null> {
    const deadline = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      const doc = (await locateCall(db, callId))?.doc ?? null;
      const ended = doc && (TERMINAL_CALL_STATUSES as readonly string[]).includes(doc.status);
      const analysed = !wantAnalysis || !doc?.analysis || doc.analysis.status !== 'pending';
      if ((ended && analysed) || Date.now() > deadline || abort.signal.aborted) return doc;
      await delay(250);
    }
  }

  /** The bot as the run tests it (its version): the judge and a persona caller use its LLM settings. */
  async function runBot(run: TestRunDoc) {
    const head = await findBot(db, run.bot_id);
    return head && (await botAtVersion(db, head, run.version));
  }

  /** The judge's verdict on the call: the bot's analysis LLM asked whether the call met the criterion. */
  async function judge(run: TestRunDoc, criterion: string, call: CallDoc): Promise<{ passed: boolean; reason: string }> {
    const bot = await runBot(run);
    if (!bot || bot.llm.provider !== 'openai') return { passed: false, reason: 'the bot has no OpenAI-compatible LLM to judge with' };
    try {
      const r = await openaiAnalysis({ summary: true, fields: [], success: criterion }, call.transcript ?? [], {
        llm: bot.llm,
        baseUrl: settings.OPENAI_BASE_URL,
        apiKey: settings.OPENAI_API_KEY,
        timeoutMs: settings.ANALYSIS_TIMEOUT_MS,
        signal: abort.signal,
      });
      return { passed: r.success === true, reason: r.summary ?? (r.success ? 'met' : 'not met') };
    } catch (err) {
      return { passed: false, reason: `the judge could not grade the call: ${(err as Error).message}` };
    }
  }

  /** A room case's web call (the run's version, the case on the call) and its caller's token. */
  async function placeWebCall(run: TestRunDoc, c: RunCaseDoc, lk: TestLiveKit): Promise<PlacedCall> {
    try {
      const call = await placeCall(
        svc,
        jobless,
        { apiKeyId: null, label: `test_run:${run._id}` },
        { direction: 'web', bot_id: run.bot_id, variables: c.spec.variables },
        `test_run:${run._id}`,
        await svc.cache.view(),
        { botVersion: run.version, test: { run_id: run._id, case_id: c.case_id } },
      );
      const token = await webCallerToken({ LIVEKIT_API_KEY: lk.apiKey, LIVEKIT_API_SECRET: lk.apiSecret }, call._id, settings.WIDGET_TOKEN_TTL_SECONDS);
      return { kind: 'placed', callId: call._id, roomName: call._id, token };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (NO_CAPACITY_CODES.has(err.code)) return { kind: 'no_capacity', reason: `${err.code}: ${err.message}` };
      return { kind: 'error', reason: `the call was refused: ${err.code}: ${err.message}` };
    }
  }

  /** A sip case's dial-out to the simulated phone (the run's version, the case on the call) through its own trunk. */
  async function placeSipCall(run: TestRunDoc, c: RunCaseDoc, trunk: { livekitTrunkId: string; fromNumber: string }, toNumber: string): Promise<PlacedSipCall> {
    try {
      const call = await placeCall(
        svc,
        jobless,
        { apiKeyId: null, label: `test_run:${run._id}` },
        { direction: 'outbound', bot_id: run.bot_id, to_number: toNumber, variables: c.spec.variables },
        `test_run:${run._id}`,
        await svc.cache.view(),
        { botVersion: run.version, test: { run_id: run._id, case_id: c.case_id }, trunk },
      );
      return { kind: 'placed', callId: call._id };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (NO_CAPACITY_CODES.has(err.code)) return { kind: 'no_capacity', reason: `${err.code}: ${err.message}` };
      return { kind: 'error', reason: `the call was refused: ${err.code}: ${err.message}` };
    }
  }

  /** How the case's caller reaches the bot; a string: why this dialler cannot place it. */
  function dialFor(run: TestRunDoc, c: RunCaseDoc): Dial | string {
    if (c.spec.transport === 'ws') {
      return wsDial({ workerUrl: workerUrl!, workerToken: settings.WORKER_AUTH_TOKEN, botId: run.bot_id, runId: run._id, caseId: c.case_id, variables: c.spec.variables }, abort.signal);
    }
    if (c.spec.transport === 'room' && liveKit) return roomDial({ livekitUrl: liveKit.url, place: () => placeWebCall(run, c, liveKit) }, abort.signal);
    if (c.spec.transport === 'sip' && phone && !phone.listening) return `the simulated phone is not listening at ${phone.address} (see the dialler's log)`;
    if (c.spec.transport === 'sip' && phone && svc.telephony && liveKit) {
      return sipDial(
        {
          phone,
          telephony: svc.telephony,
          trunkName: phoneTrunkName(run._id, c.case_id),
          place: (trunk, toNumber) => placeSipCall(run, c, trunk, toNumber),
          callState: async (callId) => {
            const doc = (await locateCall(db, callId))?.doc;
            return doc ? { status: doc.status, end_reason: doc.end_reason ?? null } : null;
          },
          ...('persona' in c.spec.caller ? { observe: liveKit } : {}),
          log: (msg, fields) => logger.warn({ run_id: run._id, case_id: c.case_id, ...fields }, msg),
        },
        abort.signal,
      );
    }
    return unavailableReason(c.spec.transport);
  }

  /** Places one case's call and works out its result (no lock held). Null: no capacity now, hand it back. */
  async function work(run: TestRunDoc, c: RunCaseDoc, attempt: number): Promise<{ failures: TestFailure[]; callId: string | null; latencies: number[] } | null> {
    const spec = c.spec;
    const dial = dialFor(run, c);
    if (typeof dial === 'string') return { failures: [{ expectation: 'call', detail: dial }], callId: null, latencies: [] };
    const common = {
      dial,
      signal: abort.signal,
      onStarted: (callId: string) =>
        lock(run._id, async () => {
          // The call's id on the case at once: the console links it while the call goes on.
          const cur = await testRuns(db).findOne({ _id: run._id });
          const cc = cur?.cases.find((x) => x.case_id === c.case_id);
          if (!cur || !cc || cc.status === 'done' || cc.attempts !== attempt) return;
          cc.call_id = callId;
          await testRuns(db).updateOne({ _id: run._id }, { $set: { cases: cur.cases } });
        }).catch(() => undefined),
    };
    let outcome: CallerOutcome;
    if ('script' in spec.caller) outcome = await runScriptedCall({ ...common, script: spec.caller.script });
    else {
      // A persona is played by the bot's (the run's version) OpenAI-compatible LLM, checked at save and at run.
      const bot = await runBot(run);
      if (!bot || bot.llm.provider !== 'openai') return { failures: [{ expectation: 'caller', detail: 'the bot has no OpenAI-compatible LLM to play the persona with' }], callId: null, latencies: [] };
      outcome = await runPersonaCall({ ...common, persona: spec.caller.persona, llm: bot.llm, baseUrl: settings.OPENAI_BASE_URL, apiKey: settings.OPENAI_API_KEY, timeoutMs: settings.ANALYSIS_TIMEOUT_MS });
    }
    if (outcome.kind === 'no_capacity') {
      logger.info({ run_id: run._id, case_id: c.case_id, reason: outcome.reason }, 'no voice worker free for a test call; the case waits');
      return null;
    }
    if (outcome.kind === 'error') return { failures: [{ expectation: 'call', detail: outcome.reason }], callId: null, latencies: [] };
    const wantAnalysis = spec.expect.analysis !== undefined || spec.expect.judge !== undefined;
    const call = await settledCall(outcome.callId, wantAnalysis);
    if (!call) return { failures: [{ expectation: 'call', detail: `call ${outcome.callId} has no record` }], callId: outcome.callId, latencies: [] };
    const verdict = spec.expect.judge !== undefined ? await judge(run, spec.expect.judge, call) : undefined;
    const failures = checkExpectations(spec.expect, call, verdict);
    if (outcome.callerError) failures.unshift({ expectation: 'caller', detail: outcome.callerError });
    return { failures, callId: outcome.callId, latencies: turnLatencies(call) };
  }

  /** Takes one case (its lease held): counts the attempt, runs it, writes its one result. */
  async function job(runId: string, caseId: string, key: string, token: string): Promise<void> {
    const claimed = await lock(runId, async () => {
      const run = await testRuns(db).findOne({ _id: runId });
      const c = run?.cases.find((x) => x.case_id === caseId);
      if (!run || !c || c.status === 'done') return null;
      c.status = 'running';
      c.attempts += 1;
      c.call_id = null;
      await testRuns(db).updateOne({ _id: runId }, { $set: { cases: run.cases, status: 'running', ...(run.started_at ? {} : { started_at: new Date(clock()) }) } });
      return { run, c: { ...c }, attempt: c.attempts };
    });
    if (!claimed) return;
    const renew = setInterval(() => void redis.eval(RENEW, 1, key, token, String(leaseMs)).catch(() => undefined), Math.max(100, Math.floor(leaseMs / 3)));
    let result: Awaited<ReturnType<typeof work>>;
    try {
      result = await work(claimed.run, claimed.c, claimed.attempt);
    } finally {
      clearInterval(renew);
    }
    const completed = await lock(runId, async () => {
      const run = await testRuns(db).findOne({ _id: runId });
      const c = run?.cases.find((x) => x.case_id === caseId);
      // Done elsewhere, or a later attempt begun (this one outlived its lease): that one decides.
      if (!run || !c || c.status === 'done' || c.attempts !== claimed.attempt) return false;
      if (!result) {
        c.status = 'pending';
        c.attempts -= 1; // not an attempt: the fleet had no room
        const anyStarted = run.cases.some((x) => x.status !== 'pending');
        await testRuns(db).updateOne({ _id: runId }, { $set: { cases: run.cases, ...(anyStarted ? {} : { status: 'queued' }) } });
        return false;
      }
      Object.assign(c, { status: 'done', passed: result.failures.length === 0, failures: result.failures, call_id: result.callId, latencies_ms: result.latencies });
      const passed = run.cases.filter((x) => x.status === 'done' && x.passed).length;
      const failed = run.cases.filter((x) => x.status === 'done' && !x.passed).length;
      const done = run.cases.every((x) => x.status === 'done');
      await testRuns(db).updateOne(
        { _id: runId },
        { $set: { cases: run.cases, passed, failed, ...(done ? { status: 'done', completed_at: new Date(clock()), webhook_due: true } : {}) } },
      );
      logger.info({ run_id: runId, case_id: caseId, call_id: result.callId, passed: c.passed, failures: result.failures.map((f) => f.expectation) }, 'test case finished');
      return done;
    });
    if (completed) await sendCompleted(runId);
  }

  async function pass(wait: boolean): Promise<void> {
    if (!workerUrl) return;
    // A completion whose webhook a crash left unsent.
    for (const r of await testRuns(db).find({ status: 'done', webhook_due: true }, { projection: { _id: 1 } }).limit(20).toArray()) await sendCompleted(r._id);
    const runs = await testRuns(db).find({ status: { $in: ['queued', 'running'] } }).sort({ created_at: 1 }).limit(50).toArray();
    const started: Promise<void>[] = [];
    for (const run of runs) {
      let active = 0;
      const candidates: RunCaseDoc[] = [];
      for (const c of run.cases) {
        if (c.status === 'done') continue;
        const held = (await redis.exists(testCaseLeaseKey(run._id, c.case_id))) === 1;
        if (held) active++;
        else candidates.push(c); // pending, or running under a lease that expired (its runner died)
      }
      for (const c of candidates) {
        if (active >= run.concurrency || inFlight.size >= settings.TEST_RUNNER_CONCURRENCY || stopped && !wait) break;
        const key = testCaseLeaseKey(run._id, c.case_id);
        const token = randomBytes(12).toString('hex');
        if ((await redis.set(key, token, 'PX', leaseMs, 'NX')) !== 'OK') continue;
        active++;
        const id = `${run._id}:${c.case_id}`;
        const p = job(run._id, c.case_id, key, token)
          .catch((err: unknown) => logger.warn({ err, run_id: run._id, case_id: c.case_id }, 'test case not finished; it is taken again'))
          .finally(async () => {
            await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
            inFlight.delete(id);
          });
        inFlight.set(id, p);
        started.push(p);
      }
    }
    if (wait) await Promise.all(started);
  }

  // A killed runner's sip case leaves its trunk in LiveKit: swept at start and then every PHONE_TRUNK_SWEEP_MS.
  let sweptAt = -Infinity;
  async function sweepTrunks(): Promise<void> {
    if (!phone || !svc.telephony || performance.now() - sweptAt < PHONE_TRUNK_SWEEP_MS) return;
    sweptAt = performance.now();
    try {
      const deleted = await sweepPhoneTrunks(svc.telephony, async (runId, caseId) => (await redis.exists(testCaseLeaseKey(runId, caseId))) === 1);
      if (deleted) logger.info({ deleted }, "deleted the simulated phone's trunks of cases no runner holds");
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "could not sweep the simulated phone's trunks; trying again later");
    }
  }

  const loop = pollLoop(
    async () => {
      await sweepTrunks();
      await pass(false);
    },
    settings.TEST_RUNNER_POLL_INTERVAL_MS,
    (err: unknown) => logger.warn({ err }, 'test runner pass failed; retrying'),
  );

  return {
    runOnce: () => pass(true),
    start() {
      if (!stopped) return;
      stopped = false;
      if (!workerUrl) {
        logger.info('TEST_RUNNER_WORKER_URL is not set: this dialler runs no bot tests');
        return;
      }
      logger.info({ concurrency: settings.TEST_RUNNER_CONCURRENCY, lease_ms: leaseMs, simulated_phone: phone?.address ?? null }, 'bot test runner started');
      // The phone before the first pass: a sip case must find it listening. Cannot bind: the runner goes on
      // without it (its sip cases fail naming why; ws and room cases run).
      const listening = phone
        ? phone.start().then(
            () => logger.info({ address: phone.address }, 'simulated phone listening'),
            (err: unknown) => logger.error({ err: (err as Error).message, address: phone.address }, 'the simulated phone could not listen'),
          )
        : Promise.resolve();
      void listening.then(() => {
        if (!stopped) loop.start();
      });
    },
    async stop() {
      stopped = true;
      await loop.stop();
      abort.abort();
      await Promise.allSettled([...inFlight.values()]);
      await phone?.stop();
    },
  };
}
