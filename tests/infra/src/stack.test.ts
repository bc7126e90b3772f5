// The `make up` stack's worker environment: the worker's settings, none of the backend's own (its JWT
// secret and admin password among them), whatever the shell that ran `make up` exported.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BACKEND_ONLY_SETTINGS, workerEnv } from './stack.js';
import { parseEnvFile, repoRoot } from './versions.js';

describe('make up: the worker environment', () => {
  it('carries the worker settings and none of the backend-only ones (ADMIN_PASSWORD, JWT_SECRET, …)', () => {
    const settings = parseEnvFile(readFileSync(path.join(repoRoot, '.env.example'), 'utf8'));
    expect([typeof settings.ADMIN_PASSWORD, typeof settings.JWT_SECRET]).toEqual(['string', 'string']);
    const saved = { JWT_SECRET: process.env.JWT_SECRET, ADMIN_PASSWORD: process.env.ADMIN_PASSWORD };
    // Exported by the shell too: still not the worker's.
    Object.assign(process.env, { JWT_SECRET: 'exported-by-the-shell-0123456789abcdef', ADMIN_PASSWORD: 'exported-by-the-shell' });
    try {
      const env = workerEnv(settings);
      expect(Object.keys(env).filter((n) => (BACKEND_ONLY_SETTINGS as readonly string[]).includes(n))).toEqual([]);
      expect([env.ADMIN_PASSWORD, env.JWT_SECRET]).toEqual([undefined, undefined]);
      expect(env).toMatchObject({
        WORKER_AUTH_TOKEN: settings.WORKER_AUTH_TOKEN,
        SERVICE_CONFIG_URL: 'http://127.0.0.1:8080/api/v1/config',
        REDIS_URL: 'redis://127.0.0.1:6379',
        LIVEKIT_URL: 'ws://127.0.0.1:7880',
        LIVEKIT_API_SECRET: settings.LIVEKIT_API_SECRET,
        STORAGE_SECRET_KEY: settings.STORAGE_SECRET_KEY,
        PORT: '8000',
        NODE_ENV: 'production',
      });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
