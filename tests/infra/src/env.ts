// A test environment: the real services a suite needs, on free ports in a temp folder, started once
// per suite and always stopped afterwards, even when the run is interrupted (see guardian.sh).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keepLogs, newLogFolder } from './logs.js';
import { createService, type Service, type ServiceName, type ServiceOptions } from './services.js';
import { binary, repoRoot } from './versions.js';

export interface TestEnv {
  readonly dir: string;
  /** Where this environment's logs are kept after it stops (under test-artifacts/logs/, see logs.ts). */
  readonly logDir: string;
  /** Variables for clients and for the platform's own processes (MONGODB_URI, REDIS_URL, …). */
  readonly env: Record<string, string>;
  readonly services: Partial<Record<ServiceName, Service>>;
  /** Start another service in this environment (e.g. a second Redis to stop mid-test). */
  add(name: ServiceName, subdir?: string, options?: Pick<ServiceOptions, 'durable'>): Promise<Service>;
  stop(): Promise<void>;
}

export async function startTestEnv(names: ServiceName[]): Promise<TestEnv> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vp-test-'));
  const logDir = newLogFolder();
  const stateFile = path.join(dir, 'guardian.state');
  const all: Service[] = [];
  const writeState = () => {
    const pgids = all.flatMap((s) => s.processes().map((p) => p.pid));
    writeFileSync(stateFile, [dir, ...pgids].join('\n') + '\n');
  };
  writeState();
  spawn(path.join(repoRoot, 'tests', 'infra', 'guardian.sh'), [String(process.pid), stateFile], {
    detached: true,
    stdio: 'ignore',
  }).unref();

  // Keep the guardian's list current whenever a service (re)starts or stops.
  const tracked = (svc: Service): Service => {
    const start = svc.start.bind(svc);
    const stop = svc.stop.bind(svc);
    svc.start = async () => {
      try {
        await start();
      } finally {
        writeState();
      }
    };
    svc.stop = async () => {
      await stop();
      writeState();
    };
    return svc;
  };

  const services: Partial<Record<ServiceName, Service>> = {};
  const env: Record<string, string> = {};
  const add = async (name: ServiceName, subdir: string = name, options: Pick<ServiceOptions, 'durable'> = {}): Promise<Service> => {
    const svc = tracked(await createService(name, { ...options, dir: path.join(dir, subdir) }));
    all.push(svc);
    await svc.start();
    return svc;
  };

  const stop = async () => {
    await Promise.allSettled(all.map((s) => s.stop()));
    keepLogs(dir, logDir); // the services' logs and those of the processes the suite started here
    rmSync(dir, { recursive: true, force: true }); // also removes the state file: the guardian exits
  };

  try {
    const started = await Promise.all(names.map((name) => add(name)));
    for (const svc of started) {
      services[svc.name] = svc;
      Object.assign(env, svc.env);
    }
    env.HELM_BIN = binary('helm');
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, logDir, env, services, add, stop };
}
