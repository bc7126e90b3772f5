import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import supertest from 'supertest';
import { type BotCreate, type WorkerHeartbeat } from '@voice-platform/schemas';
import { type VoiceApp } from '../src/app.js';
import { type Settings } from '../src/core/settings.js';
import { type Sweeper } from '../src/calls/sweeper.js';
import { type WebhookDeliverer } from '../src/webhooks/deliverer.js';
import { type CampaignDialler, type DiallerStep } from '../src/campaigns/dialler.js';
import { type AnalysisRunner, type AnalysisRunnerOptions } from '../src/analysis/runner.js';
import type { Metrics } from '../src/core/metrics.js';
export declare const WORKER_TOKEN = "test-worker-token-0123456789abcdef";
export declare const JWT_SECRET = "test-jwt-secret-0123456789abcdef-0123456789";
export declare const ADMIN: {
    email: string;
    password: string;
};
/** A clock tests move by hand; starts at the real time so stored dates look ordinary. */
export declare class TestClock {
    ms: number;
    readonly now: () => number;
    advance(ms: number): void;
}
export interface Harness {
    app: VoiceApp;
    db: Db;
    redis: Redis;
    settings: Settings;
    clock: TestClock;
    logs: string[];
    http: ReturnType<typeof supertest>;
    /** Another app instance (a second replica) on the same stores. */
    replica(): {
        app: VoiceApp;
        http: ReturnType<typeof supertest>;
    };
    /** A dialler's stale-call sweeper on the same stores and clock (call several for several replicas). */
    sweeper(opts?: {
        metrics?: Metrics;
        batchSize?: number;
    }): Sweeper;
    /** A dialler's webhook deliverer on the same stores, clock and log (call several for several replicas). */
    deliverer(opts?: {
        metrics?: Metrics;
        consumerName?: string;
    }): WebhookDeliverer;
    /** A dialler's campaign dialler on the same stores and clock (call several for several replicas). */
    campaignDialler(opts?: {
        crashAfter?: (step: DiallerStep, contactId: string) => boolean;
    }): CampaignDialler;
    /** A dialler's post-call analysis runner on the same stores, clock and log (call several for several replicas). */
    analysisRunner(opts?: AnalysisRunnerOptions & {
        metrics?: Metrics;
    }): AnalysisRunner;
    close(): Promise<void>;
}
export interface HarnessOptions {
    /** A FerretDB of the test's own (e.g. one it stops); else the suite's. */
    mongoUri?: string;
    redisUrl?: string;
    env?: Record<string, string>;
    dbName?: string;
    /** The app's MongoDB client emits command monitoring events (h.db.client.on('commandStarted', …)). */
    monitorCommands?: boolean;
}
export declare function startHarness(opts?: HarnessOptions): Promise<Harness>;
export declare function adminToken(h: Harness): Promise<string>;
/**
 * One harness for a whole test file, signed in as the admin: started before its tests (`ready` gets the
 * harness and the admin's Authorization value) and closed after them.
 */
export declare function useAdminHarness(ready: (h: Harness, auth: string) => void, opts?: HarnessOptions): void;
export declare function createKey(h: Harness, auth: string, body?: Record<string, unknown>): Promise<{
    id: string;
    key: string;
}>;
export declare function createBot(h: Harness, auth: string, body?: Partial<BotCreate>): Promise<string>;
/** Writes a worker heartbeat the way a worker does (fleet contract in @voice-platform/schemas). */
export declare function heartbeat(redis: Redis, workerId: string, state: Partial<WorkerHeartbeat> & {
    max_calls: number;
}, expiresAtMs: number): Promise<void>;
/** Every JSON body a test saw, to check that secrets never leak into responses. */
export declare const bodyText: (res: {
    text?: string;
    body?: unknown;
}) => string;
/** An outbound trunk (mirrored into the suite's LiveKit): dial-outs need one. */
export declare function createTrunk(h: Harness, auth: string, body?: Record<string, unknown>): Promise<{
    id: string;
    numbers: string[];
}>;
