// Settings checks a schema cannot express: ROLES and the sweeper timeout against the reservation TTL.
import { loadSettings, SettingsError } from './settings.js';
import { serviceNameFor } from './tracing.js';

const base = { JWT_SECRET: 'settings-test-jwt-secret-0123456789-0123', WORKER_AUTH_TOKEN: 'settings-test-worker-token' };
const problems = (env: Record<string, string>): string[] => {
  try {
    loadSettings({ ...base, ...env });
  } catch (err) {
    if (err instanceof SettingsError) return err.problems;
    throw err;
  }
  return [];
};

describe('settings: roles and sweeper', () => {
  it('defaults to every role and the documented sweeper timings', () => {
    const s = loadSettings(base);
    expect(s.roles).toEqual(['api', 'dialler']);
    expect(s.SWEEP_INTERVAL_SECONDS).toBe(15);
    expect(s.QUEUED_CALL_TIMEOUT_SECONDS).toBe(120);
  });

  it('parses a comma-separated subset, trimming and dropping repeats', () => {
    expect(loadSettings({ ...base, ROLES: ' dialler , dialler' }).roles).toEqual(['dialler']);
    expect(loadSettings({ ...base, ROLES: 'api' }).roles).toEqual(['api']);
  });

  it('refuses unknown and empty roles together with the other problems', () => {
    expect(problems({ ROLES: 'api,bogus', PORT: 'x' })).toEqual([expect.stringContaining('PORT'), expect.stringMatching(/^ROLES has unknown role bogus/)]);
    expect(problems({ ROLES: '' })).toEqual([expect.stringMatching(/^ROLES must name at least one of api, dialler/)]);
  });

  it('requires QUEUED_CALL_TIMEOUT_SECONDS above RESERVATION_TTL_SECONDS', () => {
    expect(problems({ QUEUED_CALL_TIMEOUT_SECONDS: '60' })).toEqual(['QUEUED_CALL_TIMEOUT_SECONDS must be greater than RESERVATION_TTL_SECONDS (got 60 <= 60)']);
    expect(problems({ RESERVATION_TTL_SECONDS: '300' })).toEqual([expect.stringContaining('QUEUED_CALL_TIMEOUT_SECONDS must be greater')]);
    expect(problems({ QUEUED_CALL_TIMEOUT_SECONDS: '61' })).toEqual([]);
    expect(problems({ SWEEP_INTERVAL_SECONDS: '0' })).toEqual([expect.stringContaining('SWEEP_INTERVAL_SECONDS')]);
  });
});

describe('settings: the example secrets of .env.example', () => {
  const example = {
    JWT_SECRET: 'local-dev-jwt-secret-change-me-0123456789',
    WORKER_AUTH_TOKEN: 'local-dev-worker-token-change-me-0123456789',
    ADMIN_EMAIL: 'admin@example.com',
    ADMIN_PASSWORD: 'admin-password-change-me',
  };
  it('are refused outside local development, each named, never echoed', () => {
    const found = problems(example);
    expect(found).toHaveLength(3);
    for (const [i, name] of ['JWT_SECRET', 'WORKER_AUTH_TOKEN', 'ADMIN_PASSWORD'].entries()) {
      expect(found[i]).toMatch(new RegExp(`^${name} is the example value from \\.env\\.example`));
    }
    expect(found.join(' ')).not.toContain('change-me-0123');
    expect(problems({ ...example, LOCAL_DEVELOPMENT: 'false' })).toHaveLength(3);
  });
  it('are accepted with LOCAL_DEVELOPMENT=true (make up)', () => {
    expect(problems({ ...example, LOCAL_DEVELOPMENT: 'true' })).toEqual([]);
  });
});

describe('settings: object storage (recordings)', () => {
  it("defaults to the worker's local MinIO without keys (recordings cannot be read)", () => {
    const s = loadSettings(base);
    expect([s.STORAGE_ENDPOINT, s.STORAGE_BUCKET, s.STORAGE_SECURE, s.STORAGE_REGION, s.STORAGE_ACCESS_KEY, s.STORAGE_TIMEOUT_MS]).toEqual(['127.0.0.1:9000', 'recordings', false, 'us-east-1', '', 10000]);
  });
  it('wants both keys or neither, and refuses the example secret key outside local development', () => {
    expect(problems({ STORAGE_ACCESS_KEY: 'minio-user' })).toEqual(['STORAGE_SECRET_KEY is required when STORAGE_ACCESS_KEY is set (object storage needs both keys)']);
    expect(problems({ STORAGE_SECRET_KEY: 'minio-secret-key' })).toEqual(['STORAGE_ACCESS_KEY is required when STORAGE_SECRET_KEY is set (object storage needs both keys)']);
    expect(problems({ STORAGE_ACCESS_KEY: 'voiceplatform', STORAGE_SECRET_KEY: 'voiceplatform-local-secret-change-me' })).toEqual([expect.stringMatching(/^STORAGE_SECRET_KEY is the example value/)]);
    expect(problems({ STORAGE_ACCESS_KEY: 'voiceplatform', STORAGE_SECRET_KEY: 'voiceplatform-local-secret-change-me', LOCAL_DEVELOPMENT: 'true' })).toEqual([]);
    expect(problems({ STORAGE_ENDPOINT: 'http://minio:9000' })).toEqual([expect.stringContaining('STORAGE_ENDPOINT')]);
  });
});

describe('settings: OpenTelemetry', () => {
  it('is off by default; service.name voice-backend, voice-dialler for a dialler-only process, or its own', () => {
    const s = loadSettings(base);
    expect(s).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_BSP_MAX_QUEUE_SIZE: 2048, OTEL_EXPORTER_OTLP_TIMEOUT: 10000 });
    expect(serviceNameFor(s)).toBe('voice-backend');
    expect(serviceNameFor(loadSettings({ ...base, ROLES: 'dialler' }))).toBe('voice-dialler');
    expect(serviceNameFor(loadSettings({ ...base, ROLES: 'api' }))).toBe('voice-backend');
    expect(serviceNameFor(loadSettings({ ...base, ROLES: 'dialler', OTEL_SERVICE_NAME: 'voice-dialler-eu' }))).toBe('voice-dialler-eu');
    expect(loadSettings({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4318');
  });

  it('names a bad endpoint, service name or queue size', () => {
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' })).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT/)]);
    expect(problems({ OTEL_SERVICE_NAME: 'voice backend' })).toEqual([expect.stringMatching(/^OTEL_SERVICE_NAME/)]);
    expect(problems({ OTEL_BSP_MAX_QUEUE_SIZE: '0', OTEL_EXPORTER_OTLP_TIMEOUT: 'soon' })).toEqual([expect.stringMatching(/^OTEL_BSP_MAX_QUEUE_SIZE/), expect.stringMatching(/^OTEL_EXPORTER_OTLP_TIMEOUT/)]);
  });
});
