// The backend as it runs in production, for tests that kill it: the real entry point (dist/main.js, built by
// `tsc -b` before jest runs) as a child process on a harness's stores, its output kept for saveLogs.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntil } from '@voice-platform/tests/infra';
import { JWT_SECRET, WORKER_TOKEN, type Harness } from './harness.js';

const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));

export interface BackendProcess {
  child: ChildProcess;
  port: number;
  /** Everything it wrote to stdout and stderr so far. */
  log(): string;
}

/** Starts dist/main.js with ROLES=dialler (unless `env` says otherwise) on `h`'s database and `redisUrl`,
 *  plus `env`; resolves once it answers /health (else it is killed and the error carries its output). */
export async function startBackendProcess(h: Harness, redisUrl: string, env: Record<string, string> = {}): Promise<BackendProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [mainJs], {
    env: {
      PATH: process.env.PATH ?? '',
      MONGODB_URI: process.env.MONGODB_URI!,
      MONGODB_DB: h.db.databaseName,
      REDIS_URL: redisUrl,
      JWT_SECRET,
      WORKER_AUTH_TOKEN: WORKER_TOKEN,
      HOST: '127.0.0.1',
      PORT: String(port),
      ROLES: 'dialler',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const p: BackendProcess = { child, port, log: () => out };
  try {
    await waitUntil(async () => child.exitCode === null && (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200, {
      what: `backend process (ROLES=${env.ROLES ?? 'dialler'})`,
      timeoutMs: 90_000,
    });
  } catch (err) {
    // Not left running, and what it said is in the failure.
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}; its output ended: ${out.slice(-2000)}`);
  }
  return p;
}
