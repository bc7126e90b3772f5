// Operator settings from the environment, validated once at boot; every bad setting is reported at once.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { OperatorSettings } from './context.js';

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

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid operator settings:\n  ${problems.join('\n  ')}`);
    this.name = 'SettingsError';
  }
}

export function loadSettings(env: Record<string, string | undefined>): Settings {
  const known = Object.keys(SettingsSchema.properties);
  const input: Record<string, unknown> = {};
  for (const k of known) if (env[k] !== undefined && env[k] !== '') input[k] = env[k];
  const converted = Value.Convert(SettingsSchema, Value.Default(SettingsSchema, input));
  const problems = [...Value.Errors(SettingsSchema, converted)].map((e) => `${e.path.slice(1) || '(root)'}: ${e.message} (got ${JSON.stringify(e.value)})`);
  const settings = converted as Settings;
  if (problems.length === 0 && settings.LEASE_RENEW_DEADLINE_MS >= settings.LEASE_DURATION_MS) {
    problems.push('LEASE_RENEW_DEADLINE_MS: must be less than LEASE_DURATION_MS');
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return settings;
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
