// Boot of the real entry point (dist/main.js, built by `tsc -b` before jest runs).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { freePort, LOG_LINE_SHAPE, logLineShape, parseLogLines, saveLogs, waitUntil } from '@voice-platform/tests/infra';

const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));

function boot(env: Record<string, string>) {
  const child = spawn(process.execPath, [mainJs], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      saveLogs('backend-boot', stdout + stderr); // kept for the secrets check after `make test`
      resolve(code);
    }),
  );
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
      const lines = parseLogLines(p.out());
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['backend listening', 'stopped']));
      // The format the worker's and the operator's first lines have too (their main.test).
      expect(logLineShape(lines[0]!)).toEqual(LOG_LINE_SHAPE);
      expect(lines[0]!.service).toBe('backend');
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  it('refuses an unknown or empty ROLES, naming it', async () => {
    for (const roles of ['bogus', 'api,bogus', ' , ']) {
      const p = boot({ ...stores(), ...secrets, ROLES: roles });
      expect(await p.exited).toBe(2);
      expect(p.err()).toContain('ROLES');
      if (roles.includes('bogus')) expect(p.err()).toContain('bogus');
    }
  });

  it('refuses QUEUED_CALL_TIMEOUT_SECONDS not above RESERVATION_TTL_SECONDS', async () => {
    const p = boot({ ...stores(), ...secrets, RESERVATION_TTL_SECONDS: '120', QUEUED_CALL_TIMEOUT_SECONDS: '120' });
    expect(await p.exited).toBe(2);
    expect(p.err()).toContain('QUEUED_CALL_TIMEOUT_SECONDS must be greater than RESERVATION_TTL_SECONDS');
  });

  it('ROLES=dialler serves only the probes and /metrics, sweeps stale calls, and stops on SIGTERM', async () => {
    const port = await freePort();
    const env = { ...stores(), MONGODB_DB: `boot_dialler_${process.pid}` };
    // A dial-out call queued long ago, as if every worker had died after its reservation.
    const mongo = new MongoClient(env.MONGODB_URI);
    await mongo.connect();
    const calls = mongo.db(env.MONGODB_DB).collection<{ _id: string; [k: string]: unknown }>('calls');
    const createdAt = new Date(Date.now() - 3_600_000);
    await calls.insertOne({
      _id: 'stale-call-1',
      bot_id: 'b1',
      direction: 'outbound',
      to_number: '+14155550100',
      status: 'queued',
      variables: {},
      api_key_id: null,
      created_at: createdAt,
      started_at: null,
      ended_at: null,
      end_reason: null,
      recording_key: null,
      recording_error: null,
      status_times: { queued: createdAt },
    });
    const p = boot({ ...env, ...secrets, PORT: String(port), ROLES: 'dialler', SWEEP_INTERVAL_SECONDS: '1' });
    try {
      const url = (path: string) => `http://127.0.0.1:${port}${path}`;
      await waitUntil(async () => (await fetch(url('/health'))).status === 200, { what: 'dialler', timeoutMs: 30_000 });
      expect((await fetch(url('/health/live'))).status).toBe(200);
      for (const path of ['/api/v1/bots', '/api/v1/openapi.json', '/api/v1/config?bot_id=x']) {
        const res = await fetch(url(path));
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
      }
      // The timer-driven pass of the real process fails the stale call.
      await waitUntil(async () => (await calls.findOne({ _id: 'stale-call-1' }))?.status === 'failed', { what: 'sweep', timeoutMs: 30_000 });
      expect(await calls.findOne({ _id: 'stale-call-1' })).toMatchObject({ end_reason: 'not_claimed', ended_at: expect.any(Date) });
      // Counted once the sweep's pass has finished with the call (the store write comes first).
      await waitUntil(async () => /^backend_calls_swept_total 1$/m.test(await (await fetch(url('/metrics'))).text()), { what: 'the swept-calls counter', timeoutMs: 10_000 });
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      const lines = p.out().trim().split('\n').map((l) => JSON.parse(l) as { msg: string; roles?: string[] });
      expect(lines.find((l) => l.msg === 'backend listening')?.roles).toEqual(['dialler']);
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['stale-call sweeper started', 'stale queued calls swept', 'stopped']));
    } finally {
      p.child.kill('SIGKILL');
      await mongo.db(env.MONGODB_DB).dropDatabase().catch(() => undefined);
      await mongo.close();
    }
  });
});
