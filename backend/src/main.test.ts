// Boot of the real entry point (dist/main.js, built by `tsc -b` before jest runs).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntil } from '@voice-platform/tests/infra';

const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));

function boot(env: Record<string, string>) {
  const child = spawn(process.execPath, [mainJs], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

const stores = () => ({ MONGODB_URI: process.env.MONGODB_URI!, REDIS_URL: process.env.REDIS_URL!, MONGODB_DB: `boot_${process.pid}` });
const secrets = { JWT_SECRET: 'boot-test-jwt-secret-0123456789-0123456789', WORKER_AUTH_TOKEN: 'boot-test-worker-token-0123456789' };

describe('boot', () => {
  it('refuses to start without JWT_SECRET and WORKER_AUTH_TOKEN, naming every bad setting at once', async () => {
    const p = boot({ ...stores(), PORT: 'eighty', JWT_ALGORITHM: 'none' });
    expect(await p.exited).not.toBe(0);
    for (const name of ['JWT_SECRET is required', 'WORKER_AUTH_TOKEN is required', 'PORT', 'JWT_ALGORITHM']) expect(p.err()).toContain(name);
  });

  it('refuses a short JWT_SECRET without echoing it', async () => {
    const p = boot({ ...stores(), ...secrets, JWT_SECRET: 'short-secret' });
    expect(await p.exited).not.toBe(0);
    expect(p.err()).toContain('JWT_SECRET');
    expect(p.err()).not.toContain('short-secret');
  });

  it('gives up on an unreachable store after retrying, naming it', async () => {
    const dead = await freePort();
    const p = boot({ ...stores(), ...secrets, MONGODB_URI: `mongodb://127.0.0.1:${dead}/`, BOOT_TIMEOUT_SECONDS: '2' });
    expect(await p.exited).toBe(3);
    expect(p.err()).toContain('mongodb is unreachable');
    expect(p.out()).toContain('store not reachable yet');
  });

  it('boots on real stores, serves /health, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const p = boot({ ...stores(), ...secrets, PORT: String(port), LOG_LEVEL: 'INFO' });
    try {
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200, { what: 'backend', timeoutMs: 30_000 });
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
      expect(res.status).toBe(200);
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      const lines = p.out().trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['backend listening', 'stopped']));
    } finally {
      p.child.kill('SIGKILL');
    }
  });
});
