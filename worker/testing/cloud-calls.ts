// WebSocket call tests whose providers are the cloud stand-in (testing/cloud.ts): a stand-in, a worker on
// it and a policy bot per test file, set up and torn down by that file's jest hooks.
import type { BotCreate } from '@voice-platform/schemas';
import { createPolicyBot } from './backend.js';
import { startCall, type TestCaller } from './client.js';
import { startCloudStandIn, type CloudStandIn } from './cloud.js';
import { startWorker, type TestWorker } from './worker.js';

export interface CloudCalls {
  /** Reset to its defaults before each test. */
  cloud: CloudStandIn;
  w: TestWorker;
  bot: string;
  /** A started WebSocket call to the bot. */
  call(): Promise<{ caller: TestCaller; callId: string }>;
}

/**
 * Registers the hooks; the fields are set once `beforeAll` has run. `workerEnv` gets the stand-in's URL
 * and names the providers; calls start with `variables`.
 */
export function useCloudCalls(
  bot: Partial<BotCreate> & { name: string },
  workerEnv: (cloudUrl: string) => Record<string, string>,
  variables: Record<string, string>,
): CloudCalls {
  const s = { call: () => startCall(s.w.wsUrl, s.bot, variables) } as CloudCalls;
  beforeAll(async () => {
    s.cloud = await startCloudStandIn();
    s.bot = await createPolicyBot(bot);
    // A short timeout and two retries: the injected faults play out well within a test.
    s.w = await startWorker({ ...workerEnv(s.cloud.url), PROVIDER_TIMEOUT_MS: '2000', PROVIDER_RETRIES: '2' });
  });
  afterAll(async () => {
    await s.w?.stop();
    await s.cloud?.close();
  });
  beforeEach(() => s.cloud.reset());
  return s;
}
