// Operator settings from the environment, validated once at boot; every bad setting is reported at once.
import { Type, type Static } from '@sinclair/typebox';
import { parseSettings, SettingsError } from '@voice-platform/schemas';
import type { OperatorSettings } from './core/context.js';

export const SettingsSchema = Type.Object({
  WATCH_NAMESPACE: Type.String({ default: '', description: 'Namespace to watch; empty for all' }),
  OPERATOR_NAMESPACE: Type.String({ minLength: 1, default: 'default', description: 'Where the Lease and the backend Secret live' }),
  POD_NAME: Type.Optional(Type.String({ minLength: 1, description: 'Leader-election identity (downward API)' })),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  LOG_LEVEL: Type.Union([Type.Literal('DEBUG'), Type.Literal('INFO'), Type.Literal('WARN'), Type.Literal('ERROR')], { default: 'INFO' }),
  SCRAPE_INTERVAL_MS: Type.Integer({ minimum: 500, maximum: 300_000, default: 5000 }),
  SCRAPE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 2000 }),
  BOT_RESYNC_MS: Type.Integer({ minimum: 1000, default: 300_000 }),
  BACKEND_URL: Type.String({ pattern: '^https?://', default: 'http://voice-platform-backend:8080' }),
  BACKEND_CREDENTIALS_SECRET: Type.String({ minLength: 1, default: 'voice-platform-admin' }),
  RECONCILE_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  LEADER_ELECTION: Type.Boolean({ default: true }),
  LEADER_ELECTION_ID: Type.String({ minLength: 1, default: 'voice-platform-operator' }),
  LEASE_DURATION_MS: Type.Integer({ minimum: 1000, default: 15_000 }),
  LEASE_RENEW_DEADLINE_MS: Type.Integer({ minimum: 500, default: 10_000 }),
  LEASE_RETRY_PERIOD_MS: Type.Integer({ minimum: 100, default: 2000 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 20_000 }),
});
export type Settings = Static<typeof SettingsSchema>;

export { SettingsError };

export function loadSettings(env: Record<string, string | undefined>): Settings {
  const parsed = parseSettings(SettingsSchema, env);
  const s = parsed.value;
  // Checks the schema cannot express, reported with the schema's problems.
  if (!parsed.problems.has('LEASE_RENEW_DEADLINE_MS') && !parsed.problems.has('LEASE_DURATION_MS') && s.LEASE_RENEW_DEADLINE_MS >= s.LEASE_DURATION_MS) {
    parsed.problems.set('LEASE_RENEW_DEADLINE_MS', `LEASE_RENEW_DEADLINE_MS must be less than LEASE_DURATION_MS (got ${s.LEASE_RENEW_DEADLINE_MS} >= ${s.LEASE_DURATION_MS})`);
  }
  parsed.check();
  return s;
}

export function operatorSettings(s: Settings): OperatorSettings {
  return {
    watchNamespace: s.WATCH_NAMESPACE,
    operatorNamespace: s.OPERATOR_NAMESPACE,
    scrapeIntervalMs: s.SCRAPE_INTERVAL_MS,
    scrapeTimeoutMs: s.SCRAPE_TIMEOUT_MS,
    botResyncMs: s.BOT_RESYNC_MS,
    backendUrl: s.BACKEND_URL,
    backendCredentialsSecret: s.BACKEND_CREDENTIALS_SECRET,
    concurrency: s.RECONCILE_CONCURRENCY,
  };
}
