// What the app needs from the outside world; main.ts builds it for real, tests build it on test stores.
import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Settings } from './settings.js';
import type { Telephony } from './telephony.js';
import type { StoreCache } from './cache.js';
import type { RecordingStore } from './storage.js';
import type { Tracing } from './tracing.js';

export interface AppDeps {
  settings: Settings;
  db: Db;
  redis: Redis;
  logger: Logger;
  /** The telephony plane (LiveKit); null when LIVEKIT_* are not set (trunk changes then answer 503). */
  telephony: Telephony | null;
  /** Object storage the recordings are read from; null when STORAGE_* keys are not set (recordings then answer 503).
   *  Default: made from the STORAGE_* settings. */
  recordings?: RecordingStore | null;
  /** Epoch ms; injectable so tests can move time (expiry, token buckets) without sleeping. */
  clock?: () => number;
  version?: string;
  /** OpenTelemetry (tracing.ts); default: off. */
  tracing?: Tracing;
}

export interface Services extends Required<Omit<AppDeps, 'clock' | 'version' | 'recordings' | 'tracing'>> {
  tracing: Tracing;
  /** Set by the app (app.ts); absent in the dialler's services, which read no recordings. */
  recordings?: RecordingStore | null;
  clock: () => number;
  version: string;
  now(): Date;
  /** This replica's cache of bots, API keys and trunks (cache.ts): one per app instance. */
  cache: StoreCache;
}

export const VERSION = '0.1.0';
