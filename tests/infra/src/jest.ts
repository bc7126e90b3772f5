// Jest global setup/teardown: start a suite's services once, export their URLs through process.env
// (inherited by the test workers), and stop them when the run ends.
import { startTestEnv, type TestEnv } from './env.js';
import type { ServiceName } from './services.js';

const KEY = Symbol.for('voice-platform.test-env');
type Holder = { [KEY]?: TestEnv };

export function jestGlobalSetup(names: ServiceName[]): () => Promise<void> {
  return async () => {
    // The platform's own processes a suite starts listen on loopback only, like every service here.
    process.env.HOST ??= '127.0.0.1';
    const env = await startTestEnv(names);
    (globalThis as Holder)[KEY] = env;
    Object.assign(process.env, env.env);
    process.env.VP_TEST_DIR = env.dir;
    // Logs the tests hold in memory are written there (saveLogs), beside the services' logs.
    process.env.VP_TEST_LOG_DIR = env.logDir;
  };
}

export async function jestGlobalTeardown(): Promise<void> {
  await (globalThis as Holder)[KEY]?.stop();
}
