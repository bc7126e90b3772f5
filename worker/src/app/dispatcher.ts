// The call dispatcher: a claimed job's kind → its transport → a session. Dial-outs, browser calls and
// inbound calls share one set-up (lease, config, prepared session, transport, run, release); a CallKind
// holds only what sets one kind apart (its checks, its first move, how the caller is connected, and
// what a caller never connected ends as).
import type { CallEvent, RuntimeConfig } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';
import { BackendError } from '../core/backend.js';
import type { CallSession } from '../call/session.js';
import { refusalFor } from '../providers/errors.js';
import type { CallJob } from '../fleet/claim.js';
import { DialError, type CallTransport, type DialOutcome, type TelephonyDialer } from '../transports/transport.js';
import type { WorkerContext } from './context.js';

/** How long answering an inbound call may take once its job is claimed (joining the room, livekit-sip's 200 OK). */
const INBOUND_ANSWER_TIMEOUT_MS = 15_000;
/** How long a prepared call waits for the backend's answer to its first move before it goes on anyway. */
const DIALING_WAIT_MS = 1000;

interface CallKind {
  /** Null when this worker can take the call; else the event that fails it (logged and counted here). */
  unfit(job: CallJob, plane: TelephonyDialer, log: Logger): CallEvent | null;
  /**
   * The move reported as soon as the call is taken, not awaited: the phone rings whatever the backend's
   * latency. Should the backend refuse it (the call was closed meanwhile), the call is called off.
   */
  firstMove?: 'dialing' | 'ringing';
  /** Connects the caller (dials, waits for the browser, answers); `closed`: the backend closed the call. */
  connect(job: CallJob, plane: TelephonyDialer, closed: AbortSignal): Promise<CallTransport>;
  /** What a call whose caller was never connected ends as (logged and counted here). */
  notConnected(err: unknown, log: Logger): CallEvent;
}

/** The claim loop's `run`: one claimed job's call, from lease to release. */
export function createDispatcher(ctx: WorkerContext): (job: CallJob) => Promise<void> {
  const { settings, logger, metrics, backend, heartbeat, slots, events } = ctx;
  const report = events.report;

  const kinds: Record<CallJob['direction'], CallKind> = {
    outbound: {
      unfit(job, _plane, log) {
        if (job.sip_trunk_id && job.from_number) return null;
        log.warn('dial-out job without a trunk (queued before trunks existed)');
        return { status: 'failed', end_reason: 'no_outbound_trunk' };
      },
      firstMove: 'dialing',
      connect: (job, plane, closed) =>
        plane.dial({
          callId: job.call_id,
          toNumber: job.to_number,
          fromNumber: job.from_number,
          sipTrunkId: job.sip_trunk_id,
          signal: AbortSignal.any([AbortSignal.timeout((settings.RINGING_TIMEOUT_SECONDS + 60) * 1000), closed]),
          onRinging: () => void report(job.call_id, { status: 'ringing' }),
        }),
      notConnected(err, log) {
        const outcome: DialOutcome = err instanceof DialError ? err.outcome : { status: 'failed', reason: 'dial_failed', sipStatusCode: null };
        log.info({ status: outcome.status, reason: outcome.reason, sip_status_code: outcome.sipStatusCode }, 'callee not reached');
        metrics.callsTotal.inc({ result: outcome.reason });
        return { status: outcome.status, end_reason: outcome.reason, ...(outcome.sipStatusCode !== null ? { sip_status_code: outcome.sipStatusCode } : {}) };
      },
    },
    // A browser test call (docs/design.md §7 widget): the caller joins the call's room with the backend's token.
    web: {
      unfit(job, plane, log) {
        if (!plane.joinWebCall) {
          metrics.callsTotal.inc({ result: 'failed' });
          return { status: 'failed', end_reason: 'no_telephony_transport' };
        }
        // Browser calls are test calls: within their share of the slots (the claim took one as for a dial-out).
        if (!slots.markTest(job.call_id)) {
          log.warn({ test_calls: slots.testActive, test_max: slots.testMax }, 'browser call refused: test calls hold their share of this worker');
          metrics.callsRefused.inc({ code: 'worker_at_capacity' });
          return { status: 'failed', end_reason: 'fleet_at_capacity' };
        }
        return null;
      },
      connect: (job, plane) => plane.joinWebCall!({ callId: job.call_id, signal: AbortSignal.timeout(settings.WEB_CALLER_WAIT_SECONDS * 1000) }),
      notConnected(err, log) {
        log.info({ err: err instanceof Error ? err.message : String(err) }, 'the browser caller never joined');
        metrics.callsTotal.inc({ result: 'failed' });
        return { status: 'failed', end_reason: 'not_started' };
      },
    },
    // A call to one of our numbers (docs/design.md §7): the caller rings in `job.room_name` until the bot joins it.
    inbound: {
      unfit(job, plane) {
        if (plane.answerInbound && job.room_name) return null;
        metrics.callsTotal.inc({ result: 'failed' });
        return { status: 'failed', end_reason: 'no_telephony_transport' };
      },
      firstMove: 'ringing',
      connect: (job, plane, closed) =>
        plane.answerInbound!({ callId: job.call_id, roomName: job.room_name, signal: AbortSignal.any([AbortSignal.timeout(INBOUND_ANSWER_TIMEOUT_MS), closed]) }),
      notConnected(err, log) {
        const gone = err instanceof Error && /caller was (gone|not in the room)/.test(err.message);
        log.info({ err: err instanceof Error ? err.message : String(err) }, 'inbound call not answered');
        metrics.callsTotal.inc({ result: gone ? 'canceled' : 'failed' });
        return gone ? { status: 'canceled', end_reason: 'caller_hangup' } : { status: 'failed', end_reason: 'answer_failed' };
      },
    },
  };

  /**
   * The session with its providers open and the greeting synthesised, before the caller is there: the
   * caller hears the bot at once, and a bot that cannot talk never rings anyone. Null when it cannot
   * talk (the call is then failed).
   */
  async function preparedSession(callId: string, cfg: RuntimeConfig, log: Logger): Promise<CallSession | null> {
    try {
      const session = await ctx.newSession(cfg);
      await session.prepare();
      return session;
    } catch (err) {
      const reason = refusalFor(err).endReason;
      log.warn({ reason, err: err instanceof Error ? err.message : String(err) }, 'call could not be prepared');
      metrics.callsTotal.inc({ result: 'failed' });
      void report(callId, { status: 'failed', end_reason: reason });
      return null;
    }
  }

  /** Runs a prepared session on the caller's transport until the call is over. */
  async function runSession(callId: string, session: CallSession, transport: CallTransport): Promise<void> {
    try {
      await ctx.startSession(session, transport);
      await session.done;
    } catch (err) {
      transport.close(1011, 'internal_error');
      void report(callId, { status: 'failed', end_reason: refusalFor(err).endReason });
    }
  }

  // Each claimed job's call runs in its `call` span, child of the request that queued it (docs/design.md §16).
  return (job: CallJob): Promise<void> => ctx.tracing.call(job, () => dispatch(job));

  async function dispatch(job: CallJob): Promise<void> {
    metrics.jobsClaimed.inc();
    const log = logger.child({ call_id: job.call_id, bot_id: job.bot_id });
    // The lease comes first: should this worker die from here on, the dialler ends the call (and deletes
    // its room, which hangs up the phone), and while it lives the dialler leaves the call to it.
    await heartbeat.lease(job.call_id);
    try {
      let cfg: RuntimeConfig;
      try {
        // Nobody is on the line yet: a busy or restarting backend gets CONFIG_WAIT_MS.
        cfg = await backend.fetchConfig(job.bot_id, job.call_id, settings.CONFIG_WAIT_MS);
      } catch (err) {
        const reason = err instanceof BackendError ? err.code : 'config_unreachable';
        log.warn({ reason }, 'dial-out job failed at config');
        void report(job.call_id, { status: 'failed', end_reason: reason });
        return;
      }
      const plane = ctx.dialer;
      if (!plane) {
        // No telephony plane on this worker: say so on the call instead of pretending it rang.
        log.warn('dial-out job claimed but no telephony transport is configured');
        metrics.callsTotal.inc({ result: 'failed' });
        void report(job.call_id, { status: 'failed', end_reason: 'no_telephony_transport' });
        return;
      }
      const kind = kinds[job.direction];
      const unfit = kind.unfit(job, plane, log);
      if (unfit) {
        void report(job.call_id, unfit);
        return;
      }
      const closed = new AbortController();
      let running: CallSession | null = null;
      const moved =
        kind.firstMove &&
        report(job.call_id, { status: kind.firstMove }).then((d) => {
          if (d !== 'refused') return;
          log.warn(`the backend refused the ${kind.firstMove} move (the call is closed): calling it off`);
          closed.abort(new Error('call closed by the backend'));
          void running?.end('call_closed', 'failed');
        });
      const session = await preparedSession(job.call_id, cfg, log);
      if (!session) return;
      // A healthy backend has answered the first move by now; a closed call is then never connected. A
      // slow one gets DIALING_WAIT_MS more, then the call goes on anyway (its report follows).
      if (moved) await Promise.race([moved, new Promise((r) => setTimeout(r, DIALING_WAIT_MS).unref())]);
      if (closed.signal.aborted) {
        session.discard();
        return;
      }
      let transport: CallTransport;
      try {
        transport = await kind.connect(job, plane, closed.signal);
      } catch (err) {
        session.discard();
        void report(job.call_id, kind.notConnected(err, log));
        return;
      }
      // The session starts at once; the moves already reported reach the backend in order behind it.
      running = session;
      await runSession(job.call_id, session, transport);
    } finally {
      events.releaseLease(job.call_id);
    }
  }
}
