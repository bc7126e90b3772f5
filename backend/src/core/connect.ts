// Store connections with retry and exponential backoff until a deadline, then a clear failure naming
// the store (never the URL: it may hold a password).
import { setTimeout as delay } from 'node:timers/promises';
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { Redis, ReplyError } from 'ioredis';
import type { Logger } from 'pino';
import type { Settings } from './settings.js';

export class StoreUnreachableError extends Error {
  constructor(readonly store: 'mongodb' | 'redis', seconds: number) {
    super(`${store} is unreachable after ${seconds} s; check ${store === 'mongodb' ? 'MONGODB_URI' : 'REDIS_URL'}`);
    this.name = 'StoreUnreachableError';
  }
}

async function retry<T>(store: 'mongodb' | 'redis', timeoutSeconds: number, logger: Logger, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let wait = 200;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() + wait > deadline) throw new StoreUnreachableError(store, timeoutSeconds);
      logger.warn({ store, attempt: n, retry_in_ms: wait, cause: err instanceof Error ? err.name : 'unknown' }, 'store not reachable yet');
      await delay(wait);
      wait = Math.min(wait * 2, 5000);
    }
  }
}

/** The store timeouts of settings.ts: they bound how long a request can wait on a store that is gone. */
type StoreTimeouts = Pick<Settings, 'MONGODB_SERVER_SELECTION_TIMEOUT_MS' | 'MONGODB_SOCKET_TIMEOUT_MS' | 'MONGODB_OPERATION_TIMEOUT_MS' | 'REDIS_COMMAND_TIMEOUT_MS'>;

/**
 * A MongoDB client whose operations fail (the API answers 503) instead of waiting for a server that is
 * gone, stalled or swamped. Each step of an operation waits at most MONGODB_OPERATION_TIMEOUT_MS (or the
 * step's own setting when lower): server selection, the wait for a pooled connection, a new connection's
 * handshake, the reply. A frozen server is the slow case: the server stays selectable and connections
 * open, so the reply's wait is the one that ends it; the driver then drops that connection and opens
 * new ones when asked, so the pool serves again as soon as the server answers. Reads are not retried by
 * the driver (a retry would wait the limit a second time: the client retries on the 503 instead). The
 * driver's timeoutMS (whole-operation limits) is ignored by mongodb 6.22, so these are what bound an
 * operation.
 */
export function mongoClient(uri: string, t: StoreTimeouts, logger: Logger, extra: Pick<MongoClientOptions, 'monitorCommands'> = {}): MongoClient {
  const stepMs = Math.min(t.MONGODB_SERVER_SELECTION_TIMEOUT_MS, t.MONGODB_OPERATION_TIMEOUT_MS);
  const connectTimeoutMS = Math.min(5000, stepMs);
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: stepMs,
    waitQueueTimeoutMS: stepMs,
    connectTimeoutMS,
    socketTimeoutMS: Math.min(t.MONGODB_SOCKET_TIMEOUT_MS, t.MONGODB_OPERATION_TIMEOUT_MS),
    retryReads: false,
    ...extra,
  });
  watchMonitor(client, connectTimeoutMS, logger);
  return client;
}

/**
 * The driver's server monitor can wedge (mongodb 6.22, and 7.x has the same code): when the server
 * closes a connection the monitor has just opened, as a server does while shutting down, the handshake
 * may write to the destroyed socket and wait forever for a 'drain' it never emits. That heartbeat then
 * never ends, the server stays unknown, and every operation fails server selection long after MongoDB is
 * back. A heartbeat on a new connection ends within two connect timeouts (connect, then the handshake's
 * reply); one that has not is a wedged monitor, and the client is closed and connected again (an
 * operation in flight then fails, 503; the Db handles stay valid).
 */
function watchMonitor(client: MongoClient, connectTimeoutMS: number, logger: Logger): void {
  const started = new Map<string, number>();
  let reconnecting = false;
  client.on('serverHeartbeatStarted', (e) => {
    if (!e.awaited) started.set(e.connectionId, Date.now());
  });
  const ended = (e: { connectionId: string }) => started.delete(e.connectionId);
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);
  const timer = setInterval(() => {
    const stuckSince = Math.min(...started.values());
    if (reconnecting || Date.now() - stuckSince < 2 * connectTimeoutMS + 1000) return;
    reconnecting = true;
    started.clear();
    logger.warn({ store: 'mongodb' }, 'mongodb server monitor stuck; reconnecting the client');
    void client
      .close()
      .then(() => client.connect())
      .catch(() => undefined) // still away: the next operation connects again
      .finally(() => (reconnecting = false));
  }, connectTimeoutMS).unref();
  client.on('topologyClosed', () => {
    if (!reconnecting) clearInterval(timer); // closed by its owner
  });
}

export async function connectMongo(uri: string, timeoutSeconds: number, logger: Logger, t: StoreTimeouts): Promise<MongoClient> {
  // Each boot attempt gives up early enough to be retried (and logged) within the boot timeout.
  const selectionMs = Math.min(t.MONGODB_SERVER_SELECTION_TIMEOUT_MS, Math.max(500, timeoutSeconds * 250));
  return retry('mongodb', timeoutSeconds, logger, async () => {
    const client = mongoClient(uri, { ...t, MONGODB_SERVER_SELECTION_TIMEOUT_MS: selectionMs }, logger);
    try {
      await client.connect();
      await client.db('admin').command({ ping: 1 });
      return client;
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  });
}

/** ioredis's rejection of a command without a reply within commandTimeout (it has no class of its own). */
const COMMAND_TIMED_OUT = 'Command timed out';

/** A Redis command that failed for want of Redis (the API answers 503 naming it); `cause` is ioredis's error. */
export class RedisUnavailableError extends Error {
  constructor(override readonly cause: Error) {
    super('redis is unavailable');
    this.name = 'RedisUnavailableError';
  }
}

/**
 * What a command of ours is rejected with. A reply (ReplyError) is the server's answer, kept as it is,
 * except LOADING: a restarted server still reading its data. ioredis rejects a command with nothing else
 * than its connection's failures (MaxRetriesPerRequestError, the connection closed or not writable, no
 * reply within commandTimeout), which have no classes of their own: each becomes a RedisUnavailableError.
 */
function commandFailure(err: Error): Error {
  if (err instanceof RedisUnavailableError) return err;
  if (err instanceof ReplyError) return (err as Error).message.startsWith('LOADING ') ? new RedisUnavailableError(err as Error) : err;
  return new RedisUnavailableError(err);
}

/** A Redis client whose commands fail fast while Redis is away or stalled (the API answers 503), never queue for it. */
export function redisClient(url: string, t: Pick<StoreTimeouts, 'REDIS_COMMAND_TIMEOUT_MS'>): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    // Not connected: a command fails at once rather than waiting in the offline queue for a reconnection.
    enableOfflineQueue: false,
    // Sent but unanswered when the connection dropped: failed after one reconnection attempt or the command
    // timeout, and never sent again later (its request has answered 503 by then; a late XADD or slot
    // reservation would act for a request that was refused).
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    // A Redis that is up but does not answer.
    commandTimeout: t.REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
  });
  // Every command (pipelined and scripted ones too) goes through sendCommand; its rejection, wherever
  // ioredis decides it (on sending, on the connection's close, on the command timeout), is command.reject.
  // A command that timed out on a live connection means Redis has stalled (a frozen or swamped server):
  // the connection is dropped, so every later command fails at once (offline queue off) instead of each
  // waiting out its own timeout, and the client reconnects by itself, ready again when Redis answers.
  // Only the connection the command went out on: a late timeout must not drop a fresh connection.
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command, stream) => {
    const reject = command.reject;
    const sentOn = client.stream;
    command.reject = (err) => {
      if (err.message === COMMAND_TIMED_OUT && client.status === 'ready' && client.stream === sentOn) sentOn.destroy();
      reject(commandFailure(err));
    };
    return send(command, stream);
  };
  return client;
}

export async function connectRedis(url: string, timeoutSeconds: number, logger: Logger, t: Pick<StoreTimeouts, 'REDIS_COMMAND_TIMEOUT_MS'>): Promise<Redis> {
  return retry('redis', timeoutSeconds, logger, async () => {
    const client = redisClient(url, t);
    client.on('error', () => undefined); // reported through the health check, not as unhandled events
    try {
      await client.connect();
      await client.ping();
      return client;
    } catch (err) {
      client.disconnect();
      throw err;
    }
  });
}
