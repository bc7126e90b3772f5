// Settings checks a schema cannot express: ROLES and the sweeper timeout against the reservation TTL.
import { loadSettings, SettingsError } from './settings.js';

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
