// Boot: settings (all problems at once) → stores (retry with backoff) → indexes and stream group →
// listen, then the roles of ROLES: `api` serves the HTTP API; `dialler` runs the stale-call sweeper, the
// webhook deliverer, the campaign dialler and the post-call analysis runner (a dialler-only process still listens, for the probes and /metrics). SIGTERM/SIGINT stop
// the sweeper (waiting for a pass in flight) and the deliverer (cutting attempts in flight short), close
// the server, wait for in-flight requests, store the webhook events held in memory (if a store takes them
// within HELD_EVENTS_FLUSH_MS; else they are counted lost), then close the store clients.
import { settingsOrExit } from '@voice-platform/schemas';
import { createApp, createProbeApp } from './app.js';
import { wireCallHandlers } from './callHandlers.js';
import { createHttpServer } from './server.js';
import { createSweeper } from './calls/sweeper.js';
import { createWebhookDeliverer } from './webhooks/deliverer.js';
import { flushHeldWebhookEvents } from './webhooks/outbox.js';
import { createCampaignDialler } from './campaigns/dialler.js';
import { createAnalysisRunner } from './analysis/runner.js';
import { createTestRunner } from './botTests/runner.js';
import { loadSettings } from './core/settings.js';
import { createLogger } from './core/logger.js';
import { createTracing } from './core/tracing.js';
import { connectMongo, connectRedis, StoreUnreachableError } from './core/connect.js';
import { prepareStores } from './stores.js';
import { VERSION } from './core/deps.js';
import { telephonyFromSettings } from './telephony/livekit.js';

/** How long shutdown tries to store webhook events that neither Redis nor MongoDB took yet. */
const HELD_EVENTS_FLUSH_MS = 5000;

async function main(): Promise<void> {
  const settings = settingsOrExit('backend', () => loadSettings(process.env));
  const logger = createLogger(settings.LOG_LEVEL);
  let mongo;
  let redis;
  try {
    mongo = await connectMongo(settings.MONGODB_URI, settings.BOOT_TIMEOUT_SECONDS, logger, settings);
    redis = await connectRedis(settings.REDIS_URL, settings.BOOT_TIMEOUT_SECONDS, logger, settings);
  } catch (err) {
    if (err instanceof StoreUnreachableError) {
      logger.fatal({ store: err.store }, err.message);
      process.stderr.write(`backend: ${err.message}\n`);
      await mongo?.close().catch(() => undefined);
      process.exit(3);
    }
    throw err;
  }
  const db = mongo.db(settings.MONGODB_DB);
  await prepareStores(db, redis);
  const tracing = createTracing(settings, logger, VERSION);
  const deps = { settings, db, redis, logger, version: VERSION, telephony: telephonyFromSettings(settings), tracing };
  // Every role moves calls (the API's worker events, the dialler's sweeper and campaigns): what follows a move
  // is subscribed here too, not only by createApp (a dialler-only process serves the probe app alone).
  wireCallHandlers();
  const app = settings.roles.includes('api') ? createApp(deps) : createProbeApp(deps);
  // The sweeper counts into the app's registry, so this process's /metrics shows it.
  const sweeper = settings.roles.includes('dialler') ? createSweeper({ ...deps, metrics: app.metrics }) : null;
  const deliverer = settings.roles.includes('dialler') ? createWebhookDeliverer({ ...deps, metrics: app.metrics }) : null;
  const campaignDialler = settings.roles.includes('dialler') ? createCampaignDialler({ ...deps, metrics: app.metrics }) : null;
  const analysisRunner = settings.roles.includes('dialler') ? createAnalysisRunner({ ...deps, metrics: app.metrics }) : null;
  const testRunner = settings.roles.includes('dialler') ? createTestRunner({ ...deps, metrics: app.metrics }) : null;
  const server = createHttpServer(app, settings);
  await new Promise<void>((resolve) => server.listen(settings.PORT, settings.HOST, resolve));
  const address = server.address();
  logger.info({ host: settings.HOST, port: typeof address === 'object' && address ? address.port : settings.PORT, version: VERSION, roles: settings.roles }, 'backend listening');
  sweeper?.start();
  deliverer?.start();
  campaignDialler?.start();
  analysisRunner?.start();
  testRunner?.start();

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => server.closeAllConnections(), 10_000).unref();
    // The sweeper's pass needs the stores: let it finish before they close.
    const sweeperStopped = Promise.all([sweeper?.stop().catch(() => undefined), deliverer?.stop().catch(() => undefined), campaignDialler?.stop().catch(() => undefined), analysisRunner?.stop().catch(() => undefined), testRunner?.stop().catch(() => undefined)]);
    server.close(async () => {
      clearTimeout(force);
      await sweeperStopped;
      await flushHeldWebhookEvents({ timeoutMs: HELD_EVENTS_FLUSH_MS });
      await mongo.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
      // The last spans go out if the collector answers soon; a dead one never holds the exit.
      await Promise.race([tracing.shutdown(), new Promise((r) => setTimeout(r, 2000).unref())]);
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`backend: boot failed: ${err instanceof Error ? err.name : 'unknown error'}\n`);
  process.exit(1);
});
