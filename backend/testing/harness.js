// Test harness: a real app on real stores (the suite's FerretDB, its own database per file; Redis from
// the suite or a private one), driven through HTTP with supertest.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { saveLogs } from '@voice-platform/tests/infra';
import { FLEET_WORKERS_KEY, fleetWorkerKey } from '@voice-platform/schemas';
import { createApp } from '../src/app.js';
import { loadSettings } from '../src/core/settings.js';
import { createLogger } from '../src/core/logger.js';
import { mongoClient, redisClient } from '../src/core/connect.js';
import { prepareStores } from '../src/stores.js';
import { seedAdmin } from '../src/auth/seed.js';
import { createSweeper } from '../src/calls/sweeper.js';
import { createWebhookDeliverer } from '../src/webhooks/deliverer.js';
import { createCampaignDialler } from '../src/campaigns/dialler.js';
import { createAnalysisRunner } from '../src/analysis/runner.js';
import { telephonyFromSettings } from '../src/telephony/livekit.js';
export const WORKER_TOKEN = 'test-worker-token-0123456789abcdef';
export const JWT_SECRET = 'test-jwt-secret-0123456789abcdef-0123456789';
export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };
/** A clock tests move by hand; starts at the real time so stored dates look ordinary. */
export class TestClock {
    ms = Date.now();
    now = () => this.ms;
    advance(ms) {
        this.ms += ms;
    }
}
export async function startHarness(opts = {}) {
    const settings = loadSettings({
        JWT_SECRET,
        WORKER_AUTH_TOKEN: WORKER_TOKEN,
        LOG_LEVEL: 'debug',
        // The suite's LiveKit (jest.global-setup.js); a test may unset these to run without telephony.
        LIVEKIT_URL: process.env.LIVEKIT_URL,
        LIVEKIT_API_KEY: process.env.LIVEKIT_API_KEY,
        LIVEKIT_API_SECRET: process.env.LIVEKIT_API_SECRET,
        ...opts.env,
    });
    const clock = new TestClock();
    const logs = [];
    const sink = new Writable({
        write(chunk, _enc, cb) {
            logs.push(chunk.toString());
            cb();
        },
    });
    // The store clients main.ts makes, with the same timeouts.
    const mongo = mongoClient(opts.mongoUri ?? process.env.MONGODB_URI, settings, createLogger(settings.LOG_LEVEL, sink), { monitorCommands: opts.monitorCommands ?? false });
    await mongo.connect();
    const db = mongo.db(opts.dbName ?? `t_${randomBytes(6).toString('hex')}`);
    const redis = redisClient(opts.redisUrl ?? process.env.REDIS_URL, settings);
    redis.on('error', () => undefined);
    await redis.connect();
    await prepareStores(db, redis);
    const telephony = telephonyFromSettings(settings);
    const deps = () => ({ settings, db, redis, logger: createLogger(settings.LOG_LEVEL, sink), clock: clock.now, telephony });
    const make = () => createApp(deps());
    const app = make();
    return {
        app,
        db,
        redis,
        settings,
        clock,
        logs,
        http: supertest(app.callback()),
        replica() {
            const other = make();
            return { app: other, http: supertest(other.callback()) };
        },
        sweeper(o = {}) {
            return createSweeper({ ...deps(), metrics: o.metrics ?? app.metrics, ...(o.batchSize ? { batchSize: o.batchSize } : {}) });
        },
        deliverer(o = {}) {
            return createWebhookDeliverer({ ...deps(), metrics: o.metrics ?? app.metrics, ...(o.consumerName ? { consumerName: o.consumerName } : {}) });
        },
        campaignDialler(o = {}) {
            return createCampaignDialler({ ...deps(), metrics: app.metrics, ...(o.crashAfter ? { crashAfter: o.crashAfter } : {}) });
        },
        analysisRunner(o = {}) {
            return createAnalysisRunner({ ...deps(), ...o, metrics: o.metrics ?? app.metrics });
        },
        async close() {
            // The app's logs go to test-artifacts/logs/ with the suite's, for the secrets check after `make test`.
            saveLogs(`harness-${db.databaseName}`, logs);
            await db.dropDatabase().catch(() => undefined);
            await mongo.close();
            redis.disconnect();
        },
    };
}
export async function adminToken(h) {
    await seedAdmin(h.db, ADMIN.email, ADMIN.password);
    const res = await h.http.post('/api/v1/auth/login').send(ADMIN).expect(200);
    return `Bearer ${res.body.access_token}`;
}
/**
 * One harness for a whole test file, signed in as the admin: started before its tests (`ready` gets the
 * harness and the admin's Authorization value) and closed after them.
 */
export function useAdminHarness(ready, opts) {
    let h;
    beforeAll(async () => {
        h = await startHarness(opts);
        ready(h, await adminToken(h));
    });
    afterAll(() => h?.close());
}
export async function createKey(h, auth, body = { name: 'crm' }) {
    const res = await h.http.post('/api/v1/api-keys').set('Authorization', auth).send(body).expect(201);
    return { id: res.body.id, key: res.body.key };
}
export async function createBot(h, auth, body = {}) {
    const res = await h.http
        .post('/api/v1/bots')
        .set('Authorization', auth)
        .send({ name: 'Reminder', ...body });
    if (res.status !== 201)
        throw new Error(`bot create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
}
/** Writes a worker heartbeat the way a worker does (fleet contract in @voice-platform/schemas). */
export async function heartbeat(redis, workerId, state, expiresAtMs) {
    const hb = { worker_id: workerId, active_calls: 0, draining: false, version: 'test', updated_at: Date.now(), ...state };
    await redis.set(fleetWorkerKey(workerId), JSON.stringify(hb), 'PX', 60_000);
    await redis.zadd(FLEET_WORKERS_KEY, expiresAtMs, workerId);
}
/** Every JSON body a test saw, to check that secrets never leak into responses. */
export const bodyText = (res) => res.text ?? JSON.stringify(res.body);
/** An outbound trunk (mirrored into the suite's LiveKit): dial-outs need one. */
export async function createTrunk(h, auth, body = {}) {
    const res = await h.http
        .post('/api/v1/sip/outbound-trunks')
        .set('Authorization', auth)
        .send({ name: 'carrier', address: 'sip.example.com', numbers: ['+15550001000'], ...body });
    if (res.status !== 201)
        throw new Error(`trunk create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
}
//# sourceMappingURL=harness.js.map