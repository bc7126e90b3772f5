import { loadSettings, SettingsError } from './settings.js';

const good = { SERVICE_CONFIG_URL: 'http://127.0.0.1:8080/api/v1/config', WORKER_AUTH_TOKEN: 'a-worker-token-of-enough-length' };

describe('worker settings', () => {
  it('applies the documented defaults', () => {
    const s = loadSettings(good);
    expect(s).toMatchObject({ PORT: 8000, AUDIO_SAMPLE_RATE: 16000, MAX_CONCURRENT_CALLS: 30, STORAGE_BUCKET: 'recordings', STORAGE_SECURE: false, LOG_LEVEL: 'info' });
    expect(s.ELEVENLABS_BASE_URL).toBe('https://api.elevenlabs.io');
    expect(s).toMatchObject({ TEST_CALL_SHARE: 0.5, TEST_CALL_IDLE_TIMEOUT_SECONDS: 30 });
  });

  it('bounds the test calls share to 0–1 and their idle timeout to at least 5 s', () => {
    expect(loadSettings({ ...good, TEST_CALL_SHARE: '0.25', TEST_CALL_IDLE_TIMEOUT_SECONDS: '5' })).toMatchObject({ TEST_CALL_SHARE: 0.25, TEST_CALL_IDLE_TIMEOUT_SECONDS: 5 });
    let err: unknown;
    try {
      loadSettings({ ...good, TEST_CALL_SHARE: '1.5', TEST_CALL_IDLE_TIMEOUT_SECONDS: '4' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    const problems = (err as SettingsError).problems;
    expect(problems).toHaveLength(2);
    for (const name of ['TEST_CALL_SHARE', 'TEST_CALL_IDLE_TIMEOUT_SECONDS']) expect(problems.some((p) => p.startsWith(name))).toBe(true);
  });

  it('takes LOAD_THRESHOLD in (0, 1] (default 0.7) and refuses 0, above 1 or words, naming it', () => {
    expect(loadSettings(good)).toMatchObject({ LOAD_THRESHOLD: 0.7, LOAD_ADMISSION: true, CPU_ALLOWANCE_CORES: 0, CALL_CPU_ESTIMATE_CORES: 0.1, LOAD_SAMPLE_INTERVAL_MS: 1000 });
    expect(loadSettings({ ...good, LOAD_THRESHOLD: '1', CPU_ALLOWANCE_CORES: '1.5' })).toMatchObject({ LOAD_THRESHOLD: 1, CPU_ALLOWANCE_CORES: 1.5 });
    for (const bad of ['0', '-0.2', '1.01', 'high']) {
      let err: unknown;
      try {
        loadSettings({ ...good, LOAD_THRESHOLD: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SettingsError);
      expect((err as SettingsError).problems).toEqual([expect.stringMatching(/^LOAD_THRESHOLD /)]);
    }
    expect(() => loadSettings({ ...good, CALL_CPU_ESTIMATE_CORES: '0' })).toThrow(/CALL_CPU_ESTIMATE_CORES/);
  });

  it('names every bad setting at once and never echoes secrets', () => {
    let err: unknown;
    try {
      loadSettings({ WORKER_AUTH_TOKEN: 'short', AUDIO_SAMPLE_RATE: '11025', MAX_CONCURRENT_CALLS: '0', STORAGE_SECURE: 'maybe', PORT: 'eighty' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    const problems = (err as SettingsError).problems;
    for (const name of ['SERVICE_CONFIG_URL', 'WORKER_AUTH_TOKEN', 'AUDIO_SAMPLE_RATE', 'MAX_CONCURRENT_CALLS', 'STORAGE_SECURE', 'PORT']) {
      expect(problems.some((p) => p.startsWith(name))).toBe(true);
    }
    expect(problems.length).toBe(6);
    expect((err as Error).message).not.toContain('short');
  });

  it('decodes pocketsphinx live by default, with Debian’s Python; a bad switch is named', () => {
    expect(loadSettings(good)).toMatchObject({ POCKETSPHINX_LIVE: true, POCKETSPHINX_PYTHON: '/usr/bin/python3' });
    expect(loadSettings({ ...good, POCKETSPHINX_LIVE: 'false', POCKETSPHINX_PYTHON: '/opt/ps/bin/python' })).toMatchObject({ POCKETSPHINX_LIVE: false, POCKETSPHINX_PYTHON: '/opt/ps/bin/python' });
    expect(() => loadSettings({ ...good, POCKETSPHINX_LIVE: 'sometimes' })).toThrow(/POCKETSPHINX_LIVE must be boolean/);
  });

  it('coerces numbers and booleans from the environment', () => {
    const s = loadSettings({ ...good, MAX_CONCURRENT_CALLS: '5', STORAGE_SECURE: 'true', AUDIO_SAMPLE_RATE: '24000' });
    expect([s.MAX_CONCURRENT_CALLS, s.STORAGE_SECURE, s.AUDIO_SAMPLE_RATE]).toEqual([5, true, 24000]);
  });
});

describe('worker settings: the example secrets of .env.example', () => {
  const example = { ...good, WORKER_AUTH_TOKEN: 'local-dev-worker-token-change-me-0123456789', LIVEKIT_API_SECRET: 'vp-dev-livekit-secret-change-me-0123456789abcdef' };
  it('are refused outside local development and accepted with LOCAL_DEVELOPMENT=true', () => {
    expect(() => loadSettings(example)).toThrow(SettingsError);
    try {
      loadSettings(example);
    } catch (err) {
      expect((err as SettingsError).problems).toEqual([
        expect.stringMatching(/^WORKER_AUTH_TOKEN is the example value/),
        expect.stringMatching(/^LIVEKIT_API_SECRET is the example value/),
      ]);
    }
    expect(loadSettings({ ...example, LOCAL_DEVELOPMENT: 'true' }).LOCAL_DEVELOPMENT).toBe(true);
  });
});

describe('worker settings: OpenTelemetry', () => {
  it('is off by default, service.name voice-worker; an endpoint, name and bounds are taken', () => {
    expect(loadSettings(good)).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SERVICE_NAME: 'voice-worker', OTEL_BSP_MAX_QUEUE_SIZE: 2048, OTEL_EXPORTER_OTLP_TIMEOUT: 10000 });
    expect(loadSettings({ ...good, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318', OTEL_SERVICE_NAME: 'voice-worker-gpu', OTEL_BSP_MAX_QUEUE_SIZE: '64' })).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318', OTEL_SERVICE_NAME: 'voice-worker-gpu', OTEL_BSP_MAX_QUEUE_SIZE: 64 });
  });

  it('names a bad endpoint, service name or queue size', () => {
    let err: unknown;
    try {
      loadSettings({ ...good, OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317', OTEL_SERVICE_NAME: 'voice worker', OTEL_BSP_MAX_QUEUE_SIZE: '8' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as SettingsError).problems).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT/), expect.stringMatching(/^OTEL_SERVICE_NAME/), expect.stringMatching(/^OTEL_BSP_MAX_QUEUE_SIZE/)]);
  });
});
