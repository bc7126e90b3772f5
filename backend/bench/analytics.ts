// `npm run bench:analytics -w backend`: GET /api/v1/analytics/calls over 100,000 ended calls in a real FerretDB
// (started as the other benches start it), beside a plain `find` of one page of calls (GET /api/v1/calls) in the
// same run, as ratios. The calls are seeded straight into the store (realistic documents: transcripts, status
// times, turn latencies; 30 days, several bots, campaigns and directions) and counted into the rollups by the
// boot backfill (rollup.ts), which is timed too, as is one call's end counted at this size.
// BENCH_ANALYTICS_CALLS (default 100000), BENCH_ANALYTICS_RUNS (default 5), BENCH_ANALYTICS_NAIVE=0 skips the
// one naive read of the calls themselves (what the rollups avoid; it takes a while).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { startTestEnv } from '@voice-platform/tests/infra';
import { TERMINAL_CALL_STATUSES, type CallStatus } from '@voice-platform/schemas';
import { createApp } from '../dist/app.js';
import { loadSettings } from '../dist/core/settings.js';
import { createLogger } from '../dist/core/logger.js';
import { connectRedis } from '../dist/core/connect.js';
import { COLLECTIONS, prepareStores } from '../dist/stores.js';
import { seedAdmin } from '../dist/auth/seed.js';
import { telephonyFromSettings } from '../dist/telephony/livekit.js';
import type { CallDoc } from '../dist/calls/store.js';
import { backfillRollups, CONTRIBUTION_FIELDS, recordCallEnd } from '../dist/analytics/rollup.js';

const CALLS = Number(process.env.BENCH_ANALYTICS_CALLS ?? 100_000);
const RUNS = Number(process.env.BENCH_ANALYTICS_RUNS ?? 5);
const NAIVE = process.env.BENCH_ANALYTICS_NAIVE !== '0';
const DAYS = 30;
const BOTS = 8;
const DAY_MS = 86_400_000;

/** A small deterministic generator, so every run seeds the same calls. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function seedCalls(n: number, end: number): CallDoc[] {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const out: CallDoc[] = [];
  for (let i = 0; i < n; i++) {
    // More calls in working hours: a day's hour drawn around 14:00 UTC.
    const day = Math.floor(r() * DAYS);
    const hour = Math.min(23, Math.max(0, Math.round(14 + (r() + r() + r() - 1.5) * 8)));
    const created = new Date(end - (DAYS - day) * DAY_MS + hour * 3_600_000 + Math.floor(r() * 3_600_000));
    const bot = `bot${String(Math.floor(r() ** 1.5 * BOTS)).padStart(2, '0')}aaaaaaaaaaaaaaaaaa`;
    const x = r();
    const status: CallStatus = x < 0.62 ? 'completed' : x < 0.8 ? 'no_answer' : x < 0.9 ? 'busy' : x < 0.97 ? 'failed' : 'canceled';
    const answered = status === 'completed';
    const started = answered ? new Date(created.getTime() + 8000 + Math.floor(r() * 20_000)) : null;
    const ended = new Date((started ?? created).getTime() + (answered ? Math.floor(20_000 + r() * r() * 600_000) : 30_000));
    const turns = answered ? Math.floor(2 + r() * 12) : 0;
    const transcript = Array.from({ length: Math.min(turns * 2, 8) }, (_, k) => ({ role: (k % 2 ? 'user' : 'bot') as 'user' | 'bot', text: k % 2 ? 'Yes, that works for me, thank you.' : 'Hello, this is a reminder about your appointment tomorrow.', at: new Date(started!.getTime() + k * 4000) }));
    const campaign = r() < 0.4 ? `camp${Math.floor(r() * 3)}aaaaaaaaaaaaaaaaaaa` : null;
    out.push({
      _id: `${created.getTime().toString(16)}${String(i).padStart(12, '0')}`,
      bot_id: bot,
      direction: campaign ? 'outbound' : pick(['outbound', 'outbound', 'inbound', 'web'] as const),
      to_number: '+14155550100',
      from_number: '+15550100000',
      status,
      variables: { customer_name: 'Ada' },
      api_key_id: null,
      created_at: created,
      started_at: started,
      ended_at: ended,
      end_reason: answered ? pick(['bot_hangup', 'user_hangup', 'user_hangup', 'voicemail_left', 'max_duration']) : status,
      recording_key: answered ? `recordings/${i}.wav` : null,
      recording_error: null,
      sip_status_code: status === 'busy' ? 486 : null,
      transcript,
      status_times: { queued: created, ...(started ? { in_progress: started } : {}), [status]: ended },
      actions: [],
      transfer: null,
      answered_by: answered ? pick(['human', 'human', 'human', 'machine', 'unknown'] as const) : null,
      amd_ms: answered ? 1800 : null,
      campaign_id: campaign,
      turn_latencies_ms: Array.from({ length: turns }, () => Math.round(600 + r() * 500 + (r() < 0.1 ? r() * 2000 : 0))),
    });
  }
  return out;
}

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  console.log(`==> starting FerretDB and Redis (${CALLS} ended calls over ${DAYS} days, ${BOTS} bots; ${RUNS} runs each, median)`);
  const env = await startTestEnv(['mongodb', 'redis']);
  const mongo = new MongoClient(env.env.MONGODB_URI!);
  try {
    await mongo.connect();
    const settings = loadSettings({ JWT_SECRET: 'bench-jwt-secret-0123456789-0123456789-0123', WORKER_AUTH_TOKEN: 'bench-worker-token-0123456789', LOG_LEVEL: 'info' });
    const db = mongo.db('bench_analytics');
    const redis = await connectRedis(env.env.REDIS_URL!, 10, pino({ level: 'silent' }), settings);
    await prepareStores(db, redis);
    await seedAdmin(db, 'bench@example.com', 'bench-password');
    const app = createApp({ settings, db, redis, logger: createLogger('info', pino.destination('/dev/null')), telephony: telephonyFromSettings(settings) });
    const api = await listen(app.callback());
    const login = (await (await fetch(`${api.url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }) })).json()) as { access_token: string };
    const auth = { Authorization: `Bearer ${login.access_token}` };

    const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const docs = seedCalls(CALLS, end);
    let t = performance.now();
    for (let i = 0; i < docs.length; i += 2000) await db.collection<CallDoc>(COLLECTIONS.calls).insertMany(docs.slice(i, i + 2000));
    console.log(`seeded ${docs.length} calls into calls in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    // The boot backfill (as a release with the rollups meets an existing database).
    await db.collection(COLLECTIONS.migrations).deleteOne({ _id: 'analytics_rollups_v1' as never });
    t = performance.now();
    const counted = await backfillRollups(db, redis);
    const backfillS = (performance.now() - t) / 1000;
    const rollupDocs = (await Promise.all((await db.listCollections({}, { nameOnly: true }).toArray()).filter((c) => c.name.startsWith('analytics_calls_')).map((c) => db.collection(c.name).countDocuments()))).reduce((a, b) => a + b, 0);
    console.log(`backfill: ${counted} calls counted into ${rollupDocs} rollup documents in ${backfillS.toFixed(1)} s`);

    // One call's end counted at this size (the guard insert, then the rollup document's read and replace).
    const endTimes: number[] = [];
    for (let i = 0; i < 20; i++) {
      const base = docs[i * 997]!;
      const call = { ...base, _id: `ffff${String(i).padStart(20, '0')}`, created_at: new Date(end - DAY_MS + i * 60_000) };
      t = performance.now();
      await recordCallEnd(db, redis, call);
      endTimes.push(performance.now() - t);
    }

    const get = async (path: string): Promise<number> => {
      const t0 = performance.now();
      const res = await fetch(`${api.url}${path}`, { headers: auth });
      const body = await res.text();
      if (!res.ok) throw new Error(`${path}: ${res.status} ${body.slice(0, 300)}`);
      return performance.now() - t0;
    };
    const from = new Date(end - DAYS * DAY_MS).toISOString();
    const to = new Date(end).toISOString();
    const week = new Date(end - 7 * DAY_MS).toISOString();
    const bot = 'bot01aaaaaaaaaaaaaaaaaa';
    const cases: Array<[string, string]> = [
      ['calls list: one page (limit 50)', '/api/v1/calls?limit=50'],
      ['calls list: one page, bot filter', `/api/v1/calls?limit=50&bot_id=${bot}`],
      ['analytics: 30 days by day', `/api/v1/analytics/calls?interval=day&from=${from}&to=${to}`],
      ['analytics: 30 days by day, bot filter', `/api/v1/analytics/calls?interval=day&from=${from}&to=${to}&bot_id=${bot}`],
      ['analytics: 7 days by hour', `/api/v1/analytics/calls?interval=hour&from=${week}&to=${to}`],
      ['analytics: 30 days by hour', `/api/v1/analytics/calls?interval=hour&from=${from}&to=${to}`],
      ['analytics: 30 days by hour, bot filter', `/api/v1/analytics/calls?interval=hour&from=${from}&to=${to}&bot_id=${bot}`],
    ];
    console.log(`one call's end counted (20 ends): ${endTimes.map((x) => x.toFixed(0)).join(' ')} ms`);
    for (const [, path] of cases) await get(path); // warm-up
    const results: Array<[string, number]> = [];
    for (const [name, path] of cases) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) times.push(await get(path));
      results.push([name, median(times)]);
      console.log(`  ${name}: ${times.map((x) => x.toFixed(0)).join(' ')} ms`);
    }
    const page = results[0]![1];
    console.log(`\nload average ${loadavg().map((x) => x.toFixed(2)).join(' ')} (a shared machine)`);
    console.log('\n| request | median ms | ÷ one page of calls |');
    console.log('|---|---:|---:|');
    for (const [name, ms] of results) console.log(`| ${name} | ${ms.toFixed(1)} | ${(ms / page).toPrecision(2)} |`);
    console.log(`| one call's end counted (guard + rollup write), 20 ends | ${median(endTimes).toFixed(1)} | ${(median(endTimes) / page).toPrecision(2)} |`);
    if (NAIVE) {
      // What the rollups avoid: reading the 30 days of calls themselves (only the fields a count needs).
      t = performance.now();
      const n = (await db.collection(COLLECTIONS.calls).find({ created_at: { $gte: new Date(from), $lt: new Date(to) }, status: { $in: [...TERMINAL_CALL_STATUSES] } }, { projection: CONTRIBUTION_FIELDS }).toArray()).length;
      const naive = performance.now() - t;
      console.log(`| (for scale) a find of the 30 days' ${n} calls, counting fields only, once | ${naive.toFixed(0)} | ${(naive / page).toPrecision(2)} |`);
    }
    console.log(`\nbackfill of ${counted} calls: ${backfillS.toFixed(1)} s; ${rollupDocs} rollup documents`);
    await api.close();
    redis.disconnect();
  } finally {
    await mongo.close();
    await env.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
