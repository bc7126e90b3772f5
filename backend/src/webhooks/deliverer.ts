// Dialler role: the webhook deliverer (docs/design.md §8).
//
// 1. Fan-out: reads the outbox stream (XREADGROUP, group `deliverers`: each entry goes to one deliverer
//    of all replicas), inserts one delivery per subscribed active webhook (id `<event>_<webhook>`, so a
//    second fan-out of one entry makes none), then XACKs and XDELs the entry. An entry whose deliverer
//    died before the XACK is taken over after RECLAIM_IDLE_MS (XAUTOCLAIM). Events the stream could not
//    take (Redis away: outbox.ts) wait in MongoDB's webhook_outbox; each pass fans them out the same way
//    and deletes each only after. An event in both (an XADD that timed out yet landed) makes one delivery.
//    A webhook with include_transcript gets call.ended and call.analyzed with the transcript the event
//    carries beside its body (outbox.ts withTranscript); the others get the body as it is.
// 2. Dispatch: due pending deliveries (MongoDB, index status_due) are attempted, at most
//    WEBHOOK_CONCURRENCY at once per process and WEBHOOK_CONCURRENCY_PER_WEBHOOK per webhook, so a slow
//    receiver holds a bounded number of sockets and cannot starve the others. An attempt needs the
//    delivery's Redis lease (SET NX PX, longer than an attempt can take), and re-reads the delivery under
//    it: an attempt another replica has just made shows as not due, so no attempt is sent twice, and
//    FerretDB's non-atomic conditional updates never decide who sends.
// 3. An attempt: POST of the stored body with X-Voice-Event-Id and X-Voice-Signature
//    (`t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`), and the Standard Webhooks headers
//    (webhook-id: the event id, the same on every retry; webhook-timestamp: this attempt's unix seconds;
//    webhook-signature: `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key being the
//    base64 decoding of the secret after `whsec_`, as the standardwebhooks libraries read a secret: the
//    secret as shown verifies there unchanged), WEBHOOK_TIMEOUT_MS for an answer, no
//    redirects followed, the host checked again (guardedLookup: the socket connects only to addresses that
//    passed). 2xx: delivered. Else retried 1, 2, 4 … minutes later; the 8th failure makes it `dead`. Each
//    attempt is logged in webhook_attempts (served as the webhook's deliveries). Delivery is at least
//    once: a crash after the POST and before the write sends that attempt again.
// Secrets and signatures are never logged; neither is the URL (it may carry a token).
import http from 'node:http';
import https from 'node:https';
import { createHmac, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { MongoServerError } from 'mongodb';
import { streamEntries, WEBHOOK_FIRST_RETRY_MS, WEBHOOK_MAX_ATTEMPTS, type StreamEntryReply, type WebhookAttemptResult, type WebhookDeliveredType } from '@voice-platform/schemas';
import type { AppDeps } from '../core/deps.js';
import { VERSION } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { withDocLock } from '../core/locks.js';
import { callCollection, locateCall, rehomeCall, type CallHome } from '../calls/store.js';
import { AddressRefused, bareHost, guardedLookup, isNonPublicAddress } from '@voice-platform/schemas/node';
import { deliveryLeaseKey, ENDED_PENDING_KEY, WEBHOOK_CONSUMER_GROUP, WEBHOOK_EVENTS_STREAM } from './keys.js';
import { emitDueEvents, emitRecordingArrived, fallbackOutbox, releaseHeldEnd, withTranscript } from './outbox.js';
import { attempts as attemptsOf, deliveries as deliveriesOf, webhooks as webhooksOf, webhookSecretBox, type DeliveryDoc, type DeliveryStatus } from './store.js';

/** An outbox entry fanned out by nobody for this long (its deliverer died) is taken over. */
const RECLAIM_IDLE_MS = 60_000;
const BATCH = 100;
/** Batches of the fallback outbox fanned out per pass at most (the rest next pass). */
const FALLBACK_BATCHES_PER_PASS = 10;
const PRUNE_EVERY_MS = 3_600_000;
/** How often calls with a status event still due (CallDoc.webhook_due) are looked for (stranded ones). */
const STRANDED_SCAN_EVERY_MS = 30_000;
/** The lease outlives the longest attempt by this much. */
const LEASE_MARGIN_MS = 30_000;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

interface DelivererDeps extends AppDeps {
  /** The process's metrics registry (the one its /metrics serves). */
  metrics: Metrics;
  /** This deliverer's consumer name in the outbox group (default: host, pid and a random tag). */
  consumerName?: string;
}

interface PassResult {
  /** Outbox events fanned out (from the stream and the MongoDB fallback). */
  fannedOut: number;
  /** Delivery attempts made. */
  attempted: number;
}

export interface WebhookDeliverer {
  /** One pass (reclaim, held call.ended, fan-out, dispatch), waiting for the attempts it starts. */
  runOnce(): Promise<PassResult>;
  start(): void;
  /** Stops: attempts in flight are cut off and not counted (their deliveries stay due); waits for them. */
  stop(): Promise<void>;
}

/** `X-Voice-Signature` for a body sent at unix second `t`. */
export function signature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex')}`;
}

/**
 * The Standard Webhooks (standardwebhooks.com) signing key of a webhook secret: the base64 decoding of what
 * follows `whsec_` (our secrets are 32 characters of [A-Za-z0-9], all base64 digits: 24 bytes), exactly
 * what the official libraries make of the secret given to them (`new Webhook(secret)`).
 */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** The Standard Webhooks headers of event `id`'s body sent at unix second `t`. */
export function standardWebhookHeaders(secret: string, id: string, t: number, body: string): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const mac = createHmac('sha256', standardWebhookKey(secret)).update(`${id}.${t}.${body}`, 'utf8').digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': `v1,${mac}` };
}

/** Next attempt after failed attempt `n` (1-based): 1 min, then doubling. */
const retryDelayMs = (n: number) => WEBHOOK_FIRST_RETRY_MS * 2 ** (n - 1);

interface Outcome {
  statusCode: number | null;
  error: string | null;
  aborted?: boolean;
}

type StreamEntry = StreamEntryReply;

function describe(err: unknown): string {
  if (err instanceof AddressRefused) return err.reason;
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host does not resolve';
    case 'ECONNRESET':
      return 'connection reset by the receiver';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
  }
  if (typeof e?.code === 'string' && /CERT|TLS|SSL|SELF_SIGNED/.test(e.code)) return `TLS: ${e.code}`;
  return typeof e?.code === 'string' ? e.code : e instanceof Error ? e.name : 'request failed';
}

const isDuplicate = (err: unknown) => err instanceof MongoServerError && err.code === 11000;

export function createWebhookDeliverer(deps: DelivererDeps): WebhookDeliverer {
  const clock = deps.clock ?? Date.now;
  const { settings, redis } = deps;
  const logger = deps.logger.child({ role: 'dialler', component: 'webhooks' });
  const consumer = deps.consumerName ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const box = webhookSecretBox(settings.JWT_SECRET);
  const hooks = webhooksOf(deps.db);
  const deliveries = deliveriesOf(deps.db);
  const attemptLog = attemptsOf(deps.db);
  const fallback = fallbackOutbox(deps.db);
  const emitDeps = { redis, db: deps.db, logger, clock, metrics: deps.metrics };
  const allowPrivate = settings.WEBHOOK_ALLOW_PRIVATE;
  const timeoutMs = settings.WEBHOOK_TIMEOUT_MS;
  const leaseMs = timeoutMs + LEASE_MARGIN_MS;
  const concurrency = settings.WEBHOOK_CONCURRENCY;
  const perWebhook = settings.WEBHOOK_CONCURRENCY_PER_WEBHOOK;
  const pollMs = settings.WEBHOOK_POLL_INTERVAL_MS;
  // No keep-alive: an idle socket to a receiver is never kept; maxSockets bounds each origin besides.
  const agents = { 'http:': new http.Agent({ keepAlive: false, maxSockets: concurrency }), 'https:': new https.Agent({ keepAlive: false, maxSockets: concurrency }) };
  const lookup = guardedLookup(allowPrivate);

  const inFlight = new Map<string, Promise<void>>();
  const perHook = new Map<string, number>();
  const controllers = new Set<AbortController>();
  /** Leases asked for without an answer (Redis stalled): Redis may have granted them, so each is released
   *  (by its token) once Redis answers, rather than holding its delivery back for the lease's whole time. */
  const unanswered = new Map<string, string>();
  let stopped = true;
  /** Set by stop(): no new attempt starts (a pass still running when stop() came included). */
  let closing = false;
  let blocking: Redis | undefined;
  let loopDone: Promise<void> | undefined;
  let lastPrune = 0;
  let lastStrandedScan = 0;

  // --- fan-out -------------------------------------------------------------------------------------

  async function ensureGroup(): Promise<void> {
    await redis.xgroup('CREATE', WEBHOOK_EVENTS_STREAM, WEBHOOK_CONSUMER_GROUP, '0', 'MKSTREAM').catch((err: unknown) => {
      if (!(err instanceof Error && err.message.includes('BUSYGROUP'))) throw err;
    });
  }

  async function readNew(conn: Redis, blockMs?: number): Promise<StreamEntry[]> {
    const args = ['GROUP', WEBHOOK_CONSUMER_GROUP, consumer, 'COUNT', String(BATCH), ...(blockMs ? ['BLOCK', String(blockMs)] : []), 'STREAMS', WEBHOOK_EVENTS_STREAM, '>'];
    try {
      return streamEntries(await conn.call('XREADGROUP', ...args));
    } catch (err) {
      // The group is gone (Redis was flushed or restarted empty): make it again and read next time.
      if (err instanceof Error && err.message.includes('NOGROUP')) {
        await ensureGroup();
        return [];
      }
      throw err;
    }
  }

  /** One delivery per subscribed active webhook (or the test event's one webhook); a second fan-out of the event makes none. */
  async function fanOutEvent(ev: { id: string; type: string; body: string; webhookId?: string | null; transcript?: string | null }): Promise<void> {
    const targets = ev.webhookId
      ? await hooks.find({ _id: ev.webhookId }, { projection: { _id: 1 } }).toArray()
      : (await hooks.find({ active: true }, { projection: { _id: 1, events: 1, include_transcript: 1 } }).toArray()).filter((h) => (h.events as string[]).includes(ev.type));
    const now = new Date(clock());
    let full: string | undefined;
    for (const target of targets) {
      const body = target.include_transcript && ev.transcript ? (full ??= withTranscript(ev.body, ev.transcript)) : ev.body;
      const doc: DeliveryDoc = {
        _id: `${ev.id}_${target._id}`,
        webhook_id: target._id,
        event_id: ev.id,
        type: ev.type as WebhookDeliveredType,
        body,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        created_at: now,
        updated_at: now,
      };
      await deliveries.insertOne(doc).catch((err: unknown) => {
        if (!isDuplicate(err)) throw err;
      });
    }
  }

  async function fanOut(entries: StreamEntry[]): Promise<void> {
    for (const [streamId, fields] of entries) {
      const f: Record<string, string> = {};
      for (let i = 0; fields && i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
      if (f.id && f.type && f.body) await fanOutEvent({ id: f.id, type: f.type, body: f.body, webhookId: f.webhook_id, transcript: f.transcript });
      await redis.multi().xack(WEBHOOK_EVENTS_STREAM, WEBHOOK_CONSUMER_GROUP, streamId).xdel(WEBHOOK_EVENTS_STREAM, streamId).exec();
    }
  }

  /** Fans out the events kept in MongoDB while Redis was away, oldest first; each is deleted only once fanned out. */
  async function drainFallback(): Promise<number> {
    let n = 0;
    for (let batch = 0; batch < FALLBACK_BATCHES_PER_PASS; batch++) {
      const docs = await fallback.find({}).sort({ created_at: 1, _id: 1 }).limit(BATCH).toArray();
      for (const d of docs) {
        await fanOutEvent({ id: d._id, type: d.type, body: d.body, webhookId: d.webhook_id, transcript: d.transcript });
        await fallback.deleteOne({ _id: d._id });
        n++;
      }
      if (docs.length < BATCH) break;
    }
    if (n) logger.info({ events: n }, 'webhook events from the MongoDB fallback fanned out');
    return n;
  }

  // --- housekeeping --------------------------------------------------------------------------------

  /** Housekeeping; resolves to the fallback events fanned out. */
  async function maintain(): Promise<number> {
    // First, and needing only MongoDB: events kept there while Redis was away.
    const fromFallback = await drainFallback();
    const claimed = (await redis.call('XAUTOCLAIM', WEBHOOK_EVENTS_STREAM, WEBHOOK_CONSUMER_GROUP, consumer, String(RECLAIM_IDLE_MS), '0-0', 'COUNT', String(BATCH)).catch(
      (err: unknown) => {
        if (err instanceof Error && err.message.includes('NOGROUP')) return null;
        throw err;
      },
    )) as [string, StreamEntry[]] | null;
    const orphans = (claimed?.[1] ?? []).filter(([, fields]) => fields !== null);
    if (orphans.length) {
      logger.info({ entries: orphans.length }, 'webhook events of a stopped deliverer taken over');
      await fanOut(orphans);
    }
    // Held call.ended whose recording never came within the wait: sent without it.
    const cutoff = clock() - settings.WEBHOOK_RECORDING_WAIT_SECONDS * 1000;
    for (const callId of await redis.zrangebyscore(ENDED_PENDING_KEY, '-inf', cutoff, 'LIMIT', 0, BATCH)) {
      // Under the call's lock, as its moves: the release clears the call's `webhook_due` mark after the emit.
      await withDocLock(redis, `call:${callId}`, async () => {
        const found = await locateCall(deps.db, callId);
        if (!found) return void (await releaseHeldEnd(emitDeps, callId));
        await emitRecordingArrived(emitDeps, found.doc);
        await settle(found.home, callId);
      }, { waitMs: 500 }).catch((err: unknown) => logger.warn({ err, call_id: callId }, 'held call.ended not sent yet; next pass'));
    }
    if (Date.now() - lastStrandedScan >= STRANDED_SCAN_EVERY_MS) {
      lastStrandedScan = Date.now();
      await sendStranded();
    }
    if (Date.now() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      const before = new Date(clock() - settings.WEBHOOK_LOG_RETENTION_DAYS * 86_400_000);
      const a = await attemptLog.deleteMany({ attempted_at: { $lt: before } });
      const d = await deliveries.deleteMany({ status: { $in: ['delivered', 'dead'] }, updated_at: { $lt: before } });
      if (a.deletedCount || d.deletedCount) logger.info({ attempts: a.deletedCount, deliveries: d.deletedCount }, 'old webhook deliveries pruned');
    }
    return fromFallback;
  }

  /** A call whose last event due was sent: settled, its record moves on to `calls` (calls/store.ts; under its lock). */
  async function settle(home: CallHome, callId: string): Promise<void> {
    if (home === 'ended') return;
    const doc = await callCollection(deps.db, home).findOne({ _id: callId });
    if (doc) await rehomeCall(deps.db, doc, home);
  }

  /**
   * Calls whose move landed while its event never reached the outbox, and that no later move will come for
   * (the process that moved them died: a dialler between its sweeper's write and the emit, say). A mark
   * found under the call's lock was left by a finished move, so sending it races no one. A call.ended held
   * for its recording keeps its mark until sent: left alone here.
   */
  async function sendStranded(): Promise<void> {
    // Calls not settled (calls/store.ts): a call with an event still due is in calls_live or calls_ending.
    for (const home of ['live', 'ending'] as const) await sendStrandedOf(home);
  }

  async function sendStrandedOf(home: CallHome): Promise<void> {
    const calls = callCollection(deps.db, home);
    let after = '';
    for (;;) {
      const page = await calls
        .find({ webhook_due: { $in: ['call.ringing', 'call.in_progress', 'call.ended', 'call.analyzed'] }, _id: { $gt: after } }, { projection: { _id: 1, webhook_due: 1 } })
        .sort({ _id: 1 })
        .limit(BATCH)
        .toArray();
      for (const { _id: callId, webhook_due: due } of page) {
        if (due?.length === 1 && due[0] === 'call.ended' && (await redis.zscore(ENDED_PENDING_KEY, callId)) !== null) continue;
        await withDocLock(redis, `call:${callId}`, async () => {
          const doc = await calls.findOne({ _id: callId });
          // Its recording may still come (a worker's report): an answered call's end is held for it first.
          if (doc?.webhook_due?.length) await emitDueEvents(emitDeps, doc, true);
          await settle(home, callId);
        }, { waitMs: 500 }).catch((err: unknown) => logger.warn({ err, call_id: callId }, 'stranded call event not sent yet; next scan'));
      }
      if (page.length < BATCH) return;
      after = page[page.length - 1]!._id;
    }
  }

  // --- attempts ------------------------------------------------------------------------------------

  function post(url: string, d: DeliveryDoc, secret: string, t: number, signal: AbortSignal): Promise<Outcome> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve({ statusCode: null, error: 'the URL is not valid' });
    }
    const host = bareHost(target.hostname);
    const literal = isIP(host) !== 0;
    if (literal && !allowPrivate && isNonPublicAddress(host)) {
      return Promise.resolve({ statusCode: null, error: `${host} is a loopback, private, link-local or otherwise non-public address` });
    }
    const agent = agents[target.protocol as 'http:' | 'https:'];
    if (!agent) return Promise.resolve({ statusCode: null, error: 'the URL is not http(s)' });
    const body = Buffer.from(d.body, 'utf8');
    const headers = {
      'Content-Type': 'application/json',
      'Content-Length': String(body.length),
      'User-Agent': `voice-platform-webhooks/${VERSION}`,
      'X-Voice-Event-Id': d.event_id,
      'X-Voice-Event-Type': d.type,
      'X-Voice-Signature': signature(secret, t, d.body),
      ...standardWebhookHeaders(secret, d.event_id, t, d.body),
    };
    const request = target.protocol === 'https:' ? https.request : http.request;
    return new Promise<Outcome>((resolve) => {
      let settled = false;
      const done = (o: Outcome) => {
        if (settled) return;
        settled = true;
        resolve(o);
      };
      const req = request(target, { method: 'POST', headers, agent, ...(literal ? {} : { lookup: lookup as never }) }, (res) => {
        const code = res.statusCode ?? 0;
        done({ statusCode: code, error: code >= 200 && code < 300 ? null : `HTTP ${code}` });
        res.on('error', () => undefined);
        res.resume(); // the body is not read; the timer below cuts a body that never ends
      });
      // One deadline for the answer; past it the socket goes, whatever stage it is in.
      const timer = setTimeout(() => {
        done({ statusCode: null, error: `no answer within ${timeoutMs} ms` });
        req.destroy();
      }, timeoutMs);
      const onAbort = () => {
        done({ statusCode: null, error: 'aborted', aborted: true });
        req.destroy();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => done({ statusCode: null, error: describe(err) }));
      req.on('close', () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      });
      req.end(body);
    });
  }

  /** One attempt of a delivery whose lease this process holds. */
  async function attempt(id: string): Promise<boolean> {
    const d = await deliveries.findOne({ _id: id });
    // Done, or just attempted by another replica (its next attempt is not due yet): nothing to send.
    if (!d || d.status !== 'pending' || !d.next_attempt_at || d.next_attempt_at.getTime() > clock()) return false;
    const hook = await hooks.findOne({ _id: d.webhook_id });
    if (!hook) {
      await deliveries.deleteOne({ _id: id });
      return false;
    }
    if (!hook.active || closing) return false;
    const n = d.attempts + 1;
    const attemptedAt = clock();
    const started = performance.now();
    const secret = box.open(hook.secret_sealed);
    let outcome: Outcome;
    if (secret === null) {
      outcome = { statusCode: null, error: 'the signing secret cannot be read (JWT_SECRET changed?): create the webhook again' };
    } else {
      const controller = new AbortController();
      controllers.add(controller);
      try {
        outcome = await post(hook.url, d, secret, Math.floor(attemptedAt / 1000), controller.signal);
      } finally {
        controllers.delete(controller);
      }
    }
    if (outcome.aborted) return false; // shutting down: not an attempt; the delivery stays due
    const at = clock();
    const delivered = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const status: DeliveryStatus = delivered ? 'delivered' : n >= WEBHOOK_MAX_ATTEMPTS ? 'dead' : 'pending';
    const next = status === 'pending' ? new Date(at + retryDelayMs(n)) : null;
    const result: WebhookAttemptResult = delivered ? 'delivered' : status === 'dead' ? 'dead' : 'failed';
    await deliveries.updateOne(
      { _id: id, attempts: d.attempts },
      {
        $set: {
          attempts: n,
          status,
          next_attempt_at: next,
          last_status_code: outcome.statusCode,
          last_error: outcome.error,
          delivered_at: delivered ? new Date(at) : null,
          updated_at: new Date(at),
        },
      },
    );
    await attemptLog.insertOne({
      _id: `${id}_${n}`,
      webhook_id: d.webhook_id,
      delivery_id: id,
      event_id: d.event_id,
      type: d.type,
      attempt: n,
      status: result,
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: Math.round(performance.now() - started),
      attempted_at: new Date(attemptedAt),
      next_attempt_at: next,
      delivered_at: delivered ? new Date(at) : null,
    }).catch((err: unknown) => {
      if (!isDuplicate(err)) throw err; // the same attempt recorded twice (a lease lost mid-attempt): keep the first
    });
    deps.metrics.webhookAttempts.inc({ result });
    const line = { webhook_id: d.webhook_id, event_id: d.event_id, event_type: d.type, attempt: n, status_code: outcome.statusCode, error: outcome.error, next_attempt_at: next?.toISOString() };
    if (delivered) logger.info(line, 'webhook delivered');
    else if (status === 'dead') logger.warn(line, 'webhook delivery dead: no more retries');
    else logger.info(line, 'webhook attempt failed; retry scheduled');
    return true;
  }

  // --- dispatch ------------------------------------------------------------------------------------

  let chain: Promise<unknown> = Promise.resolve();
  let kickQueued = false;

  /** Starts attempts of due deliveries up to the limits; `wait`: until they are done. Never overlaps itself. */
  function dispatch(wait: boolean): Promise<number> {
    const run = chain.then(() => dispatchOnce(wait));
    chain = run.catch(() => undefined);
    return run;
  }

  function kick(): void {
    if (stopped || kickQueued) return;
    kickQueued = true;
    dispatch(false)
      .catch((err: unknown) => logger.warn({ err }, 'webhook dispatch failed'))
      .finally(() => (kickQueued = false));
  }

  async function dispatchOnce(wait: boolean): Promise<number> {
    for (const [token, key] of unanswered) {
      await redis.eval(RELEASE, 1, key, token);
      unanswered.delete(token);
    }
    const free = concurrency - inFlight.size;
    if (free <= 0 || closing) return 0;
    // Paused webhooks keep their deliveries for when they are active again; webhooks at their limit of
    // attempts in flight are left out too, so a backlog at a slow receiver cannot fill the page and starve the others.
    const paused = (await hooks.find({ active: false }, { projection: { _id: 1 } }).toArray()).map((h) => h._id);
    const skip = [...paused, ...[...perHook].filter(([, n]) => n >= perWebhook).map(([hookId]) => hookId)];
    const due = await deliveries
      .find({ status: 'pending', next_attempt_at: { $lte: new Date(clock()) }, ...(skip.length ? { webhook_id: { $nin: skip } } : {}) }, { projection: { _id: 1, webhook_id: 1 } })
      .sort({ next_attempt_at: 1, _id: 1 })
      .limit(inFlight.size + free * 4)
      .toArray();
    const started: Array<Promise<boolean>> = [];
    for (const { _id: id, webhook_id: hookId } of due) {
      if (inFlight.size >= concurrency || closing) break;
      if (inFlight.has(id) || (perHook.get(hookId) ?? 0) >= perWebhook) continue;
      const token = randomBytes(12).toString('hex');
      const key = deliveryLeaseKey(id);
      const lease = await redis.set(key, token, 'PX', leaseMs, 'NX').catch((err: unknown) => {
        unanswered.set(token, key);
        throw err;
      });
      if (lease !== 'OK') continue; // another replica has it
      perHook.set(hookId, (perHook.get(hookId) ?? 0) + 1);
      const run = (async () => {
        try {
          return await attempt(id);
        } catch (err) {
          logger.warn({ err, webhook_id: hookId, delivery_id: id }, 'webhook attempt not recorded; it is retried');
          return false;
        } finally {
          await redis.eval(RELEASE, 1, key, token).catch(() => undefined); // expires by itself if Redis is gone
          inFlight.delete(id);
          const left = (perHook.get(hookId) ?? 1) - 1;
          if (left > 0) perHook.set(hookId, left);
          else perHook.delete(hookId);
          kick(); // a slot is free: more may be due
        }
      })();
      inFlight.set(id, run.then(() => undefined));
      started.push(run);
    }
    if (!wait) return started.length;
    return (await Promise.all(started)).filter(Boolean).length;
  }

  // --- running -------------------------------------------------------------------------------------

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        if (!blocking) {
          blocking = redis.duplicate({ commandTimeout: pollMs + 5000 });
          blocking.on('error', () => undefined);
        }
        if (blocking.status === 'wait' || blocking.status === 'end') await blocking.connect();
        await maintain();
        await dispatch(false);
        // Waits up to pollMs for new events: a new event is fanned out and tried at once.
        const entries = await readNew(blocking, pollMs);
        if (entries.length) await fanOut(entries);
        if (entries.length) await dispatch(false);
      } catch (err) {
        if (stopped) break;
        logger.warn({ err }, 'webhook deliverer pass failed; retrying'); // class + brief message (logger.ts)
        await delay(pollMs);
      }
    }
  }

  return {
    async runOnce() {
      const fromFallback = await maintain();
      const entries = await readNew(redis);
      if (entries.length) await fanOut(entries);
      const attempted = await dispatch(true);
      return { fannedOut: fromFallback + entries.length, attempted };
    },
    start() {
      if (!stopped) return;
      stopped = false;
      closing = false;
      logger.info({ consumer, concurrency, per_webhook: perWebhook, timeout_ms: timeoutMs, allow_private: allowPrivate }, 'webhook deliverer started');
      loopDone = loop();
    },
    async stop() {
      stopped = true;
      closing = true;
      blocking?.disconnect(); // ends a blocking read at once
      await loopDone;
      for (const c of controllers) c.abort();
      await Promise.allSettled([...inFlight.values()]);
      blocking = undefined;
      closing = false;
      // Leave no consumer behind in the group, unless it still owns entries (another deliverer takes those over).
      try {
        const pending = (await redis.xpending(WEBHOOK_EVENTS_STREAM, WEBHOOK_CONSUMER_GROUP, '-', '+', 1, consumer)) as unknown[];
        if (pending.length === 0) await redis.xgroup('DELCONSUMER', WEBHOOK_EVENTS_STREAM, WEBHOOK_CONSUMER_GROUP, consumer);
      } catch {
        // Redis is gone: nothing to tidy.
      }
    },
  };
}
