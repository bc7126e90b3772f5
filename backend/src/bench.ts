// `npm run bench -w backend`: dial-out and worker-config throughput and latency with autocannon against
// real FerretDB + Redis, each next to a bare node:http JSON endpoint measured in the same run.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import autocannon from 'autocannon';
import { startTestEnv } from '@voice-platform/tests/infra';
import { createApp } from './app.js';
import { loadSettings } from './settings.js';
import { connectRedis } from './connect.js';
import { prepareStores } from './stores.js';
import { seedAdmin } from './auth/seed.js';
import { heartbeatForBench, loginAndSetup } from './benchSetup.js';
import { telephonyFromSettings } from './telephony/livekit.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function measure(name: string, opts: autocannon.Options): Promise<Row> {
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

async function main(): Promise<void> {
  console.log(`==> starting FerretDB, Redis and LiveKit (duration ${DURATION}s per run, ${CONNECTIONS} connections)`);
  const env = await startTestEnv(['mongodb', 'redis', 'livekit']);
  const mongo = new MongoClient(env.env.MONGODB_URI!);
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
    const redis = await connectRedis(env.env.REDIS_URL!, 10, pino({ level: 'silent' }));
    await prepareStores(db, redis);
    await seedAdmin(db, 'bench@example.com', 'bench-password');
    // Logs go to /dev/null at the production level, so their cost is part of the figures.
    const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
    const app = createApp({ settings, db, redis, logger, telephony: telephonyFromSettings(settings) });
    const api = await listen(app.callback());
    const baseline = await listen((_req, res) => {
      const body = JSON.stringify({ status: 'ok' });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    const { apiKey, botId, callId } = await loginAndSetup(api.url, settings.WORKER_AUTH_TOKEN);
    const stopHeartbeat = heartbeatForBench(redis);

    const rows: Row[] = [];
    rows.push(await measure('baseline node:http JSON', { url: `${baseline.url}/` }));
    rows.push(
      await measure('POST /api/v1/sip/dialout', {
        url: `${api.url}/api/v1/sip/dialout`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
        body: JSON.stringify({ bot_id: botId, to_number: '+4915112345678', variables: { customer_name: 'Ada' } }),
      }),
    );
    rows.push(
      await measure('GET /api/v1/config', {
        url: `${api.url}/api/v1/config?bot_id=${botId}&call_id=${callId}`,
        headers: { Authorization: `Bearer ${settings.WORKER_AUTH_TOKEN}` },
      }),
    );
    stopHeartbeat();

    const base = rows[0]!;
    console.log('\nendpoint                     req/s     p50 ms  p99 ms  non-2xx  errors   vs baseline (req/s, p50, p99)');
    for (const r of rows) {
      const ratio = r === base ? '1.00x' : `${(r.rps / base.rps).toFixed(3)}x, ${(r.p50 / Math.max(base.p50, 1)).toFixed(1)}x, ${(r.p99 / Math.max(base.p99, 1)).toFixed(1)}x`;
      console.log(
        `${r.name.padEnd(27)} ${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}  ${String(r.non2xx).padStart(7)} ${String(r.errors).padStart(7)}   ${ratio}`,
      );
    }
    console.log('(latency ratios use max(baseline, 1 ms) as the denominator: autocannon reports whole milliseconds)');
    const calls = await db.collection('calls').countDocuments({});
    console.log(`calls placed during the run: ${calls}`);
    await api.close();
    await baseline.close();
    redis.disconnect();
    if (rows.some((r) => r.non2xx > 0 || r.errors > 0)) process.exitCode = 1;
  } finally {
    await mongo.close();
    await env.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
