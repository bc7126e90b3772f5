// `npm run bench -w backend`: dial-out and worker-config throughput and latency with autocannon against
// real FerretDB + Redis, each next to its physical limit measured in the same run: the same store
// operations the endpoint makes per request, issued raw through the drivers (mongodb, ioredis) at the
// same concurrency, with no HTTP, no Koa and no app code in between. app/limit is the app's share.
// Round trips per request are counted, not assumed: MongoDB command monitoring (commandStarted) and
// every command ioredis sends (a pipeline is one trip).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import inspector from 'node:inspector/promises';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { MongoClient, ObjectId } from 'mongodb';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import autocannon from 'autocannon';
import { startTestEnv } from '@voice-platform/tests/infra';
import { CALL_JOBS_STREAM_KEY, encodeCallJob } from '@voice-platform/schemas';
import { createApp } from '../dist/app.js';
import { loadSettings } from '../dist/core/settings.js';
import { createLogger } from '../dist/core/logger.js';
import { connectRedis } from '../dist/core/connect.js';
import { COLLECTIONS, prepareStores } from '../dist/stores.js';
import { seedAdmin } from '../dist/auth/seed.js';
import { heartbeatForBench, loginAndSetup } from './setup.js';
import { telephonyFromSettings } from '../dist/telephony/livekit.js';
import { hashApiKey } from '../dist/apiKeys/keys.js';
import { reserveSlot } from '../dist/core/redisScripts.js';
import { readCacheEpoch, readCacheEpochAndTakeToken } from '../dist/core/cache.js';
import { callEventData } from '../dist/webhooks/outbox.js';
import { OUTBOX_MAX_EVENTS, WEBHOOK_EVENTS_STREAM } from '../dist/webhooks/keys.js';
import { findCall, findCalls } from '../dist/calls/store.js';
import { CommandTimes, configUnderLoad, printConfigLoad, seedPastCalls } from './configLoad.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
/** A directory: each run's CPU profile of this process is written there (open in Chrome DevTools). */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Each side runs this long, unmeasured, before the rounds (JIT, connection pools, the stores' first writes). */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** autocannon's own threads (0: on the app's event loop): the load generator is not the app's share. */
const LOAD_WORKERS = Number(process.env.BENCH_LOAD_WORKERS ?? 0);
/** `config`: only the config read under dial-out load (configLoad.ts), not the saturation rounds. */
const ONLY = process.env.BENCH_ONLY;
/** The config read under load: dial-outs per second, and how long the load (and, before it, the unloaded baseline) runs. */
const CONFIG_LOAD_RATE = Number(process.env.BENCH_CONFIG_LOAD_RATE ?? 5);
const CONFIG_LOAD_SECONDS = Number(process.env.BENCH_CONFIG_LOAD_SECONDS ?? 30);
/** Ended calls (with transcripts) stored before the config-read figure, as a database in use for a while holds. */
const CONFIG_LOAD_PAST_CALLS = Number(process.env.BENCH_CONFIG_LOAD_PAST_CALLS ?? 2000);

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests (or raw sequences) completed, to divide the counted round trips by. */
  total: number;
  trips: Trips;
  /** CPU time of this process (app, load generator, drivers) per request, ms. */
  cpuMs: number;
}

/** Round trips (and commands by name) seen on the app's store clients. */
class Trips {
  mongo = 0;
  redis = 0;
  readonly names = new Map<string, number>();
  add(store: 'mongo' | 'redis', name: string, trip = true): void {
    if (trip) this[store] += 1;
    const k = `${store === 'mongo' ? 'm' : 'r'}:${name}`;
    this.names.set(k, (this.names.get(k) ?? 0) + 1);
  }
  reset(): void {
    this.mongo = 0;
    this.redis = 0;
    this.names.clear();
  }
  snapshot(): Trips {
    const t = new Trips();
    t.mongo = this.mongo;
    t.redis = this.redis;
    for (const [k, v] of this.names) t.names.set(k, v);
    return t;
  }
  /** "mongo 4.00 (find 3.00, insert 1.00) + redis 3.00 (evalsha 2.00, xadd 1.00)" per request. */
  per(requests: number): string {
    const part = (store: 'mongo' | 'redis', p: string) => {
      const names = [...this.names].filter(([k]) => k.startsWith(p)).map(([k, v]) => `${k.slice(2)} ${(v / requests).toFixed(2)}`);
      return `${store} ${(this[store] / requests).toFixed(2)}${names.length ? ` (${names.join(', ')})` : ''}`;
    };
    return `${part('mongo', 'm:')} + ${part('redis', 'r:')}`;
  }
}

function observeRedis(redis: Redis, trips: Trips): void {
  const send = redis.sendCommand.bind(redis);
  const pipelines = new WeakSet<object>();
  redis.sendCommand = ((command: { name: string }, stream?: { isPipeline?: boolean }) => {
    const piped = stream?.isPipeline === true;
    const first = !piped || !pipelines.has(stream!);
    if (piped && first) pipelines.add(stream!);
    trips.add('redis', command.name, first);
    return send(command as never, stream as never);
  }) as Redis['sendCommand'];
}

/** Starts a CPU profile of this process when BENCH_PROFILE_DIR is set; the returned function writes it. */
async function profile(name: string): Promise<() => Promise<void>> {
  if (!PROFILE_DIR) return async () => undefined;
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile: p } = await session.post('Profiler.stop');
    mkdirSync(PROFILE_DIR, { recursive: true });
    const file = join(PROFILE_DIR, `${name.replace(/[^A-Za-z0-9]+/g, '_')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(p));
    session.disconnect();
    console.log(`   profile: ${file}`);
  };
}

/** CPU seconds (user + system) process `pid` has used so far, from /proc (Linux; null elsewhere). */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in USER_HZ (100) ticks
  } catch {
    return null;
  }
}

function cpuPer(since: NodeJS.CpuUsage, requests: number): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000 / Math.max(requests, 1);
}

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function measure(name: string, trips: Trips, opts: autocannon.Options, seconds = DURATION): Promise<Row> {
  trips.reset();
  const cpu = process.cpuUsage();
  const stopProfile = await profile(name);
  const r = await autocannon({ connections: CONNECTIONS, duration: seconds, ...(LOAD_WORKERS > 0 ? { workers: LOAD_WORKERS } : {}), ...opts });
  await stopProfile();
  const seen = trips.snapshot();
  const cpuMs = cpuPer(cpu, r.requests.total);
  return { name, rps: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, total: r.requests.total, trips: seen, cpuMs };
}

/** The physical limit: `op` (one request's store operations, raw) in CONNECTIONS loops for DURATION. */
async function saturate(name: string, trips: Trips, op: () => Promise<unknown>, duration = DURATION): Promise<Row> {
  await op(); // scripts loaded, connections open: as warm as the app is after its first request
  trips.reset();
  const cpu = process.cpuUsage();
  const stopProfile = await profile(`${name} ${op.name}`);
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + duration * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        try {
          await op();
          latencies.push(performance.now() - t);
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await stopProfile();
  const seen = trips.snapshot();
  const cpuMs = cpuPer(cpu, latencies.length + errors);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0);
  return { name, rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99), non2xx: 0, errors, total: latencies.length + errors, trips: seen, cpuMs };
}

async function main(): Promise<void> {
  console.log(`==> starting FerretDB, Redis and LiveKit (${DURATION}s per run, ${CONNECTIONS} connections, ${ROUNDS} rounds after a ${WARMUP}s warm-up of each side)`);
  const env = await startTestEnv(['mongodb', 'redis', 'livekit']);
  const trips = new Trips();
  const mongo = new MongoClient(env.env.MONGODB_URI!, { monitorCommands: true });
  mongo.on('commandStarted', (e) => trips.add('mongo', e.commandName));
  const commandTimes = new CommandTimes(mongo);
  try {
    await mongo.connect();
    const settings = loadSettings({
      JWT_SECRET: 'bench-jwt-secret-0123456789-0123456789-0123',
      WORKER_AUTH_TOKEN: 'bench-worker-token-0123456789',
      LOG_LEVEL: 'info',
      DIALOUT_RATE_PER_SECOND: '1000000',
      DIALOUT_BURST: '1000000',
      LIVEKIT_URL: env.env.LIVEKIT_URL,
      LIVEKIT_API_KEY: env.env.LIVEKIT_API_KEY,
      LIVEKIT_API_SECRET: env.env.LIVEKIT_API_SECRET,
    });
    const db = mongo.db('bench');
    const redis = await connectRedis(env.env.REDIS_URL!, 10, pino({ level: 'silent' }), settings);
    // The heartbeat has its own connection, so only request traffic is counted on `redis`.
    const beatRedis = await connectRedis(env.env.REDIS_URL!, 10, pino({ level: 'silent' }), settings);
    observeRedis(redis, trips);
    await prepareStores(db, redis);
    await seedAdmin(db, 'bench@example.com', 'bench-password');
    // The production logger (main.ts) at the production level, writing to /dev/null: its cost is part of the figures.
    const logger = createLogger('info', pino.destination('/dev/null'));
    const app = createApp({ settings, db, redis, logger, telephony: telephonyFromSettings(settings) });
    const api = await listen(app.callback());
    const baseline = await listen((_req, res) => {
      const body = JSON.stringify({ status: 'ok' });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    const { apiKey, botId, callId } = await loginAndSetup(api.url, settings.WORKER_AUTH_TOKEN);
    const stopHeartbeat = heartbeatForBench(beatRedis);

    // The raw operations, in the order the endpoints make them (keep in step with dialout/routes.ts and
    // runtimeConfig/routes.ts; the round-trip lines below show both, counted, so a drift is visible).
    // With the replica's cache warm (cache.ts), a dial-out reads no document: its key, bot and trunk come
    // from memory under the epoch it reads from Redis first.
    const keyDoc = await db.collection(COLLECTIONS.apiKeys).findOne({ key_hash: hashApiKey(apiKey) });
    const sampleCall = (await findCall(db, callId))!;
    const trunk = await db.collection(COLLECTIONS.trunks).findOne({ default: true });
    const eventBody = JSON.stringify({ id: `evt_${new ObjectId().toHexString()}`, type: 'call.queued', created_at: new Date().toISOString(), data: callEventData(sampleCall) });
    const rawDialout = async () => {
      await readCacheEpochAndTakeToken(redis, `vp:ratelimit:dialout:${String(keyDoc!._id)}`, settings.DIALOUT_RATE_PER_SECOND, settings.DIALOUT_BURST, Date.now());
      const id = new ObjectId().toHexString();
      const now = Date.now();
      await reserveSlot(redis, id, now, settings.RESERVATION_TTL_SECONDS * 1000);
      await db.collection(COLLECTIONS.liveCalls).insertOne({
        _id: id as never, bot_id: botId, direction: 'outbound', to_number: '+4915112345678', from_number: '+15550100000', status: 'queued',
        variables: { customer_name: 'Ada' }, api_key_id: keyDoc!._id, created_at: new Date(now), started_at: null, ended_at: null, end_reason: null,
        recording_key: null, recording_error: null, sip_status_code: null, transcript: [], status_times: { queued: new Date(now) },
      });
      await redis.xadd(CALL_JOBS_STREAM_KEY, 'MAXLEN', '~', '100000', '*',
        ...encodeCallJob({ call_id: id, bot_id: botId, variables: { customer_name: 'Ada' }, direction: 'outbound', to_number: '+4915112345678', sip_trunk_id: String(trunk!.livekit_trunk_id), from_number: '+15550100000' }));
      await redis.xadd(WEBHOOK_EVENTS_STREAM, 'MAXLEN', '~', String(OUTBOX_MAX_EVENTS), '*', 'id', `evt_${id}`, 'type', 'call.queued', 'body', eventBody);
    };
    const rawConfig = async () => {
      await readCacheEpoch(redis);
      await db.collection(COLLECTIONS.liveCalls).findOne({ _id: callId as never }, { projection: { _id: 1, bot_id: 1, direction: 1, to_number: 1, variables: 1 } });
    };

    const dialout: autocannon.Options = {
      url: `${api.url}/api/v1/sip/dialout`,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
      body: JSON.stringify({ bot_id: botId, to_number: '+4915112345678', variables: { customer_name: 'Ada' } }),
    };
    const config: autocannon.Options = {
      url: `${api.url}/api/v1/config?bot_id=${botId}&call_id=${callId}`,
      headers: { Authorization: `Bearer ${settings.WORKER_AUTH_TOKEN}` },
    };

    const base = await measure('baseline node:http JSON', trips, { url: `${baseline.url}/` });
    // Rounds alternate which side runs first, so a machine getting busier or quieter favours neither.
    const endpoints: Array<{ name: string; app: autocannon.Options; raw: () => Promise<unknown> }> = ONLY === 'config' ? [] : [
      { name: 'POST /api/v1/sip/dialout', app: dialout, raw: rawDialout },
      { name: 'GET /api/v1/config', app: config, raw: rawConfig },
    ];
    const results: Array<{ name: string; rounds: Array<[Row, Row]> }> = [];
    for (const e of endpoints) {
      if (WARMUP > 0) {
        await measure(`${e.name} warm-up`, trips, e.app, WARMUP);
        await saturate('raw warm-up', trips, e.raw, WARMUP);
      }
      const rounds: Array<[Row, Row]> = [];
      for (let i = 0; i < ROUNDS; i++) {
        if (i % 2 === 0) {
          const a = await measure(e.name, trips, e.app);
          rounds.push([a, await saturate('raw: its store operations', trips, e.raw)]);
        } else {
          const r = await saturate('raw: its store operations', trips, e.raw);
          rounds.push([await measure(e.name, trips, e.app), r]);
        }
      }
      results.push({ name: e.name, rounds });
    }
    // FerretDB's own CPU time in each run: what the store spends, whatever else the machine is doing.
    const ferret = env.services.mongodb?.processes()[0]?.pid;
    const storeCpu: Array<{ phase: string; seconds: number | null }> = [];
    let phaseStart: { phase: string; cpu: number | null } | null = null;
    const onPhase = (phase: string | null) => {
      const cpu = ferret ? cpuSeconds(ferret) : null;
      if (phaseStart) storeCpu.push({ phase: phaseStart.phase, seconds: cpu !== null && phaseStart.cpu !== null ? cpu - phaseStart.cpu : null });
      phaseStart = phase ? { phase, cpu } : null;
      commandTimes.phase = phase;
    };
    const loadOpts = { base: api.url, apiKey, botId, workerToken: settings.WORKER_AUTH_TOKEN, ratePerSecond: CONFIG_LOAD_RATE, seconds: CONFIG_LOAD_SECONDS, onPhase };
    await seedPastCalls(db, botId, CONFIG_LOAD_PAST_CALLS);
    const storedCalls = (await findCalls(db, {}, { projection: { _id: 1 } })).length;
    const loadBefore = loadavg()[0]!;
    const configLoad = await configUnderLoad(loadOpts);
    const loadAfter = loadavg()[0]!;
    stopHeartbeat();

    const fmt = (r: Row) =>
      `${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(6)} ${String(r.p99).padStart(6)}  ${String(r.non2xx).padStart(7)} ${String(r.errors).padStart(6)}  ${r.cpuMs.toFixed(2).padStart(9)}`;
    console.log('\nrun                                 req/s  p50 ms p99 ms  non-2xx errors  cpu ms/req (this process)');
    console.log(`${base.name.padEnd(34)} ${fmt(base)}`);
    for (const { rounds } of results) {
      rounds.forEach(([a, r], i) => {
        console.log(`${`${a.name} #${i + 1}`.padEnd(34)} ${fmt(a)}`);
        console.log(`${`  ${r.name}`.padEnd(34)} ${fmt(r)}`);
      });
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((x, y) => x - y);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    console.log(`\nendpoint                   app req/s  limit req/s  app/limit   (medians of ${ROUNDS} rounds; limit = the same store operations, raw, same concurrency)`);
    for (const { name, rounds } of results) {
      const ratios = rounds.map(([a, r]) => a.rps / r.rps);
      console.log(
        `${name.padEnd(25)} ${median(rounds.map(([a]) => a.rps)).toFixed(0).padStart(9)}  ${median(rounds.map(([, r]) => r.rps)).toFixed(0).padStart(11)}  ${median(ratios).toFixed(2).padStart(9)}   per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}`,
      );
    }
    console.log('\nround trips per request (counted over all rounds: mongodb commandStarted events, ioredis commands; a pipeline is one trip)');
    const sum = (rows: Row[]) => {
      const t = new Trips();
      for (const r of rows) {
        t.mongo += r.trips.mongo;
        t.redis += r.trips.redis;
        for (const [k, v] of r.trips.names) t.names.set(k, (t.names.get(k) ?? 0) + v);
      }
      return { t, n: rows.reduce((n, r) => n + r.total, 0) };
    };
    const drifted: string[] = [];
    for (const { name, rounds } of results) {
      const app = sum(rounds.map(([a]) => a));
      const raw = sum(rounds.map(([, r]) => r));
      console.log(`${name.padEnd(25)} app: ${app.t.per(app.n)}`);
      console.log(`${''.padEnd(25)} raw: ${raw.t.per(raw.n)}`);
      // The raw copy must make the app's operations: a command whose count per request differs is a drift.
      for (const k of new Set([...app.t.names.keys(), ...raw.t.names.keys()])) {
        const d = (app.t.names.get(k) ?? 0) / app.n - (raw.t.names.get(k) ?? 0) / raw.n;
        if (Math.abs(d) > 0.2) drifted.push(`${name}: ${k.slice(2)} ${d > 0 ? '+' : ''}${d.toFixed(2)} per request in the app`);
      }
    }
    if (drifted.length) {
      console.log(`\nWARNING: the raw operations no longer match the app's (update them in bench.ts):\n  ${drifted.join('\n  ')}`);
      process.exitCode = 1;
    }
    printConfigLoad({ ...loadOpts, storedCalls }, configLoad);
    console.log(`machine load average (1 min) before / after the config-read runs: ${loadBefore.toFixed(2)} / ${loadAfter.toFixed(2)} on ${cpus().length} CPUs (other work on the machine shows here)`);
    for (const { phase, seconds } of storeCpu) {
      const per = phase === 'under load' ? configLoad.dialouts.n + configLoad.dialouts.failed : configLoad.idle.n + configLoad.idle.failed;
      const what = phase === 'under load' ? 'dial-out (with its config read and events)' : 'config read';
      if (seconds !== null) console.log(`FerretDB CPU, ${phase}: ${seconds.toFixed(1)} s in ${CONFIG_LOAD_SECONDS} s, ${((seconds * 1000) / Math.max(per, 1)).toFixed(1)} ms per ${what}`);
    }
    commandTimes.print('MongoDB commands during the config-read runs, by run and what they do (values left out), most total time first (a command still running at the end fails when the client closes)');
    console.log(`\nbaseline node:http JSON: ${base.rps.toFixed(0)} req/s (the HTTP ceiling of this process on this machine now)`);
    const calls = (await findCalls(db, { direction: 'outbound', api_key_id: { $exists: true } }, { projection: { _id: 1 } })).length;
    console.log(`calls placed during the run (app and raw): ${calls}`);
    await api.close();
    await baseline.close();
    redis.disconnect();
    beatRedis.disconnect();
    if ([base, ...results.flatMap((e) => e.rounds.flat())].some((r) => r.non2xx > 0 || r.errors > 0)) process.exitCode = 1;
    if (Object.values(configLoad).some((f) => f.failed > 0)) process.exitCode = 1;
  } finally {
    await mongo.close();
    await env.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
