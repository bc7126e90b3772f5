// Dialler role: the post-call analysis runner (docs/design.md §10).
//
// A call whose bot asks for an analysis ends with `analysis: {status: "pending"}`, recorded in the terminal
// move's own write, and is listed in ANALYSIS_DUE_KEY (jobs.ts). Each pass:
// 1. Recovery (at start, then every RECOVER_EVERY_MS): the pending analyses of calls_ending (an ended call stays
//    there while its analysis is pending: calls/store.ts isSettled, so this scan reads only the small collection
//    of ended calls not settled, as the webhook deliverer's does) are listed again (ZADD NX, due at their
//    `due_at`): a job Redis lost (flushed, restarted empty, or never took) is found again.
// 2. Due jobs are taken, at most ANALYSIS_CONCURRENCY at once per process, each under its lease (SET NX PX for
//    ANALYSIS_LEASE_MS, longer than an attempt may take; a dead runner's job is taken over after it): only the
//    holder works on it. A call whose call.ended is still held for its recording waits (at most
//    WEBHOOK_RECORDING_WAIT_SECONDS and a minute), so call.analyzed follows it.
// 3. An attempt: counted on the call first (under the call's lock; its `due_at` moved past the lease, so a
//    runner that dies mid-attempt leaves a job the recovery lists for when the lease has expired), then worked
//    out without any lock: `skipped` when the caller never said or pressed anything, else offline from the
//    transcript (scripted bots: scripted.ts) or by chat completions (OpenAI-compatible bots: openai.ts).
// 4. The result is written under the call's lock only if the analysis is still pending: a runner that took
//    over after a lease expired, or a second dialler, may have finished first, and then this result is dropped
//    (`superseded`), so a call has one result. With it, call.analyzed is marked due on the call in the same
//    write and then sent (webhooks/outbox.ts: a fixed event id, the mark cleared once the outbox has it; the
//    webhook deliverer sends a mark a crash left), so each webhook gets it once. A failed attempt is retried
//    ANALYSIS_RETRY_DELAY_MS later, doubling, 3 times; then the analysis is `failed` with the last error. A
//    failure no retry can mend (no OPENAI_API_KEY, an LLM provider without analysis) fails at once.
// Settled then, the call moves from calls_ending to calls (rehomeCall), under the same lock.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { analysisWanted } from '@voice-platform/schemas';
import type { AppDeps } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { withDocLock } from '../core/locks.js';
import { callCollection, locateCall, rehomeCall, type CallDoc } from '../calls/store.js';
import { findBot } from '../bots/store.js';
import { botAtVersion } from '../bots/versions.js';
import { sendMoveEvent } from '../webhooks/outbox.js';
import { analysisPending, type StoredAnalysis } from '../calls/analysis.js';
import { ANALYSIS_DUE_KEY, analysisLeaseKey } from './jobs.js';
import { scriptedAnalysis, type AnalysisResult } from './scripted.js';
import { AnalysisFailure, openaiAnalysis } from './openai.js';
import { pollLoop } from '../core/pollLoop.js';

/** Attempts in all: the first and 3 retries. */
export const ANALYSIS_MAX_ATTEMPTS = 4;
/** How often the pending analyses are looked for in MongoDB (the due set may have lost them). */
const RECOVER_EVERY_MS = 30_000;
/** Unless ANALYSIS_LEASE_MS says otherwise, the lease outlives the longest attempt (ANALYSIS_TIMEOUT_MS) by this much. */
const LEASE_MARGIN_MS = 30_000;
/** A call whose call.ended is held for its recording is looked at again this much later. */
const ENDED_RECHECK_MS = 1000;
/** …but waits no longer than the recording wait and this. */
const ENDED_WAIT_GRACE_MS = 60_000;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export type AnalysisJobResult = 'done' | 'skipped' | 'failed' | 'retry' | 'superseded';

interface RunnerDeps extends AppDeps {
  /** The process's metrics registry (the one its /metrics serves). */
  metrics: Metrics;
  /** How long a taken job stays this runner's (default ANALYSIS_LEASE_MS, else ANALYSIS_TIMEOUT_MS + 30 s). */
  leaseMs?: number;
  /** Tests: awaited after an attempt's work, before its result is written (a runner held here past its lease). */
  beforeResult?: (callId: string) => Promise<void>;
  /** Tests: called right after the result's write, before call.analyzed is sent (throwing there is a crash in between). */
  afterResultWrite?: (callId: string) => void;
}

/** What a test may set on a runner besides its deps. */
export type AnalysisRunnerOptions = Pick<RunnerDeps, 'leaseMs' | 'beforeResult' | 'afterResultWrite'>;

export interface PassResult {
  /** Pending analyses listed again by the recovery scan (0 when it did not run). */
  recovered: number;
  /** Jobs this pass took, by how each ended. */
  results: AnalysisJobResult[];
}

export interface AnalysisRunner {
  /** One pass: recovery when due, then the due jobs, waiting for them. */
  runOnce(): Promise<PassResult>;
  start(): void;
  /** Stops: attempts in flight are cut off (their jobs stay due for another runner) and waited for. */
  stop(): Promise<void>;
}

type Outcome = { kind: 'result'; status: 'done' | 'skipped'; result: AnalysisResult | null } | { kind: 'failure'; error: string; retry: boolean };

export function createAnalysisRunner(deps: RunnerDeps): AnalysisRunner {
  const clock = deps.clock ?? Date.now;
  const { settings, redis, db } = deps;
  const logger = deps.logger.child({ role: 'dialler', component: 'analysis' });
  const leaseMs = deps.leaseMs ?? settings.ANALYSIS_LEASE_MS ?? settings.ANALYSIS_TIMEOUT_MS + LEASE_MARGIN_MS;
  const concurrency = settings.ANALYSIS_CONCURRENCY;
  const emitDeps = { redis, db, logger, clock, metrics: deps.metrics };
  const endedWaitMs = settings.WEBHOOK_RECORDING_WAIT_SECONDS * 1000 + ENDED_WAIT_GRACE_MS;
  const retryDelayMs = (n: number) => settings.ANALYSIS_RETRY_DELAY_MS * 2 ** (n - 1);

  const inFlight = new Map<string, Promise<AnalysisJobResult | null>>();
  const controllers = new Set<AbortController>();
  let lastRecovery = -Infinity;
  let stopped = true;
  let closing = false;

  /** Lists every pending analysis of the calls not settled in the due set again (NX: one listed keeps its time). */
  async function recover(): Promise<number> {
    // calls_live too: an ended call whose move on was cut short (the sweeper moves it).
    const pending = (
      await Promise.all((['ending', 'live'] as const).map((home) => callCollection(db, home).find({ 'analysis.status': 'pending' }, { projection: { _id: 1, analysis: 1 } }).toArray()))
    ).flat();
    for (const c of pending) await redis.zadd(ANALYSIS_DUE_KEY, 'NX', c.analysis?.due_at?.getTime() ?? clock(), c._id);
    if (pending.length) logger.debug({ pending: pending.length }, 'pending analyses listed');
    return pending.length;
  }

  /** Works the analysis out (no lock held): skipped, a result, or why this attempt failed. */
  async function work(doc: CallDoc, signal: AbortSignal): Promise<Outcome> {
    const transcript = doc.transcript ?? [];
    const head = await findBot(db, doc.bot_id);
    // The settings of the version the call ran (shared/DESIGN.md §17).
    const bot = head && ((doc.bot_version ? await botAtVersion(db, head, doc.bot_version) : null) ?? head);
    // A bot deleted or no longer asking for anything since the call: nothing to work out.
    if (!bot || !analysisWanted(bot.analysis) || !transcript.some((t) => t.role === 'user')) return { kind: 'result', status: 'skipped', result: null };
    const provider = bot.llm.provider;
    const started = performance.now();
    try {
      let result: AnalysisResult;
      if (provider === 'openai') {
        result = await openaiAnalysis(bot.analysis, transcript, { llm: bot.llm, baseUrl: settings.OPENAI_BASE_URL, apiKey: settings.OPENAI_API_KEY, timeoutMs: settings.ANALYSIS_TIMEOUT_MS, signal });
      } else if (provider === 'scripted') {
        result = scriptedAnalysis(bot.analysis, bot.policy, transcript);
      } else {
        return { kind: 'failure', error: `no post-call analysis for LLM provider ${JSON.stringify(provider)} (openai and scripted only)`, retry: false };
      }
      return { kind: 'result', status: 'done', result };
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof AnalysisFailure) return { kind: 'failure', error: err.message, retry: err.retry };
      throw err;
    } finally {
      deps.metrics.analysisDuration.observe({ provider: provider === 'openai' ? 'openai' : 'scripted' }, (performance.now() - started) / 1000);
    }
  }

  /** One attempt at a call's analysis, its lease held. Null: nothing to do now (not pending, or not yet). */
  async function job(id: string): Promise<AnalysisJobResult | null> {
    const found = await locateCall(db, id);
    if (!found || !analysisPending(found.doc.analysis)) {
      await redis.zrem(ANALYSIS_DUE_KEY, id);
      return null;
    }
    const doc = found.doc;
    // call.ended goes first: it may still be held for the call's recording.
    if (doc.webhook_due?.includes('call.ended') && (doc.ended_at?.getTime() ?? 0) + endedWaitMs > clock()) {
      await redis.zadd(ANALYSIS_DUE_KEY, 'XX', clock() + ENDED_RECHECK_MS, id);
      return null;
    }
    // The attempt is counted, and the job due again only after this lease, before any work.
    const n = await withDocLock(redis, `call:${id}`, async () => {
      const now = await locateCall(db, id, { analysis: 1 });
      if (!now || !analysisPending(now.doc.analysis)) return null;
      const attempt = (now.doc.analysis!.attempts ?? 0) + 1;
      await callCollection(db, now.home).updateOne({ _id: id }, { $set: { 'analysis.attempts': attempt, 'analysis.due_at': new Date(clock() + leaseMs) } });
      return attempt;
    }, { waitMs: 1000 });
    if (n === null) {
      await redis.zrem(ANALYSIS_DUE_KEY, id);
      return null;
    }

    const controller = new AbortController();
    controllers.add(controller);
    let outcome: Outcome;
    try {
      outcome = await work(doc, controller.signal);
    } catch (err) {
      if (controller.signal.aborted) {
        // Stopping: not this job's failure; due again at once for another runner.
        await redis.zadd(ANALYSIS_DUE_KEY, 'XX', clock(), id).catch(() => undefined);
        return null;
      }
      throw err;
    } finally {
      controllers.delete(controller);
    }
    await deps.beforeResult?.(id);

    const result = await withDocLock(redis, `call:${id}`, async (): Promise<AnalysisJobResult> => {
      const cur = await locateCall(db, id);
      // Finished by another runner (this one's lease expired meanwhile, or a second dialler): one result only.
      if (!cur || !analysisPending(cur.doc.analysis)) return 'superseded';
      const col = callCollection(db, cur.home);
      const at = new Date(clock());
      let analysis: StoredAnalysis;
      if (outcome.kind === 'failure') {
        // A later attempt has begun (this one outlived its lease): that one decides.
        if ((cur.doc.analysis!.attempts ?? 0) > n) return 'superseded';
        if (outcome.retry && n < ANALYSIS_MAX_ATTEMPTS) {
          const due = clock() + retryDelayMs(n);
          await col.updateOne({ _id: id }, { $set: { 'analysis.due_at': new Date(due), 'analysis.error': outcome.error } });
          await redis.zadd(ANALYSIS_DUE_KEY, due, id).catch(() => undefined); // else the recovery lists it at due_at
          return 'retry';
        }
        analysis = { status: 'failed', summary: null, data: null, success: null, error: outcome.error, completed_at: at };
      } else {
        const r = outcome.result;
        analysis = { status: outcome.status, summary: r?.summary ?? null, data: r?.data ?? null, success: r?.success ?? null, error: null, completed_at: at };
      }
      // The result and its event, due, in one write: a crash after it leaves the event to the deliverer's scan.
      await col.updateOne({ _id: id }, { $set: { analysis }, $addToSet: { webhook_due: 'call.analyzed' } });
      deps.afterResultWrite?.(id);
      const after = await col.findOne({ _id: id });
      if (after) {
        await sendMoveEvent(emitDeps, 'call.analyzed', after);
        const settled = await col.findOne({ _id: id });
        if (settled) await rehomeCall(db, settled, cur.home);
      }
      return analysis.status as 'done' | 'skipped' | 'failed';
    }, { waitMs: 3000 });
    if (result !== 'retry') await redis.zrem(ANALYSIS_DUE_KEY, id).catch(() => undefined);
    deps.metrics.analysisJobs.inc({ result });
    const line = { call_id: id, attempt: n, result, ...(outcome.kind === 'failure' ? { error: outcome.error } : {}) };
    if (result === 'retry' || result === 'failed') logger.warn(line, result === 'retry' ? 'call analysis attempt failed; retry scheduled' : 'call analysis failed: no more attempts');
    else logger.info(line, result === 'superseded' ? 'call analysis finished elsewhere first; this result dropped' : 'call analysed');
    return result;
  }

  /** Takes due jobs up to the limit; `wait`: until they are done. */
  async function dispatch(wait: boolean): Promise<AnalysisJobResult[]> {
    const free = concurrency - inFlight.size;
    if (free <= 0 || closing) return [];
    const due = await redis.zrangebyscore(ANALYSIS_DUE_KEY, '-inf', clock(), 'LIMIT', 0, inFlight.size + free * 4);
    const started: Array<Promise<AnalysisJobResult | null>> = [];
    for (const id of due) {
      if (inFlight.size >= concurrency || closing) break;
      if (inFlight.has(id)) continue;
      const token = randomBytes(12).toString('hex');
      const key = analysisLeaseKey(id);
      if ((await redis.set(key, token, 'PX', leaseMs, 'NX')) !== 'OK') continue; // another runner has it
      const run = (async () => {
        try {
          return await job(id);
        } catch (err) {
          logger.warn({ err, call_id: id }, 'call analysis attempt not finished; it is taken again');
          return null;
        } finally {
          await redis.eval(RELEASE, 1, key, token).catch(() => undefined); // expires by itself if Redis is gone
          inFlight.delete(id);
        }
      })();
      inFlight.set(id, run);
      started.push(run);
    }
    if (!wait) return [];
    return (await Promise.all(started)).filter((r): r is AnalysisJobResult => r !== null);
  }

  async function pass(wait: boolean): Promise<PassResult> {
    let recovered = 0;
    if (Date.now() - lastRecovery >= RECOVER_EVERY_MS) {
      recovered = await recover();
      lastRecovery = Date.now();
    }
    return { recovered, results: await dispatch(wait) };
  }

  const loop = pollLoop(() => pass(false), settings.ANALYSIS_POLL_INTERVAL_MS, (err: unknown) => logger.warn({ err }, 'call analysis pass failed; retrying'));

  return {
    runOnce: () => pass(true),
    start() {
      if (!stopped) return;
      stopped = false;
      closing = false;
      logger.info({ concurrency, lease_ms: leaseMs, poll_ms: settings.ANALYSIS_POLL_INTERVAL_MS }, 'call analysis runner started');
      loop.start();
    },
    async stop() {
      stopped = true;
      closing = true;
      await loop.stop();
      for (const c of controllers) c.abort();
      await Promise.allSettled([...inFlight.values()]);
      closing = false;
    },
  };
}
