// Bot → the real backend (node backend/dist/main.js on FerretDB + Redis from globalSetup).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { VOICE_API_GROUP, VOICE_API_VERSION } from '@voice-platform/schemas';
import { freePort, startProcess, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { createOperator, type Operator } from '../controller.js';
import { repoRoot } from '../crds/generate.js';
import { GROUP_VERSION, mergePatch } from '../kube.js';
import { createNamespace, installCrds, testClients, testKubeConfig, testSettings, waitFor } from '../testing/kube.js';
import type { BotResource } from './types.js';

const clients = testClients();
const ADMIN = { email: 'ops-admin@example.com', password: 'operator-test-password-1' };
let namespace = '';
let backend: ManagedProcess;
let backendUrl = '';
let operator: Operator;

beforeAll(async () => {
  const main = path.join(repoRoot, 'backend', 'dist', 'main.js');
  if (!existsSync(main)) throw new Error('backend/dist/main.js missing: build the backend first (npx tsc -b backend)');
  const port = await freePort();
  backendUrl = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    PORT: String(port),
    MONGODB_DB: `operator_bot_test_${port}`,
    JWT_SECRET: 'operator-test-jwt-secret-0123456789abcdef',
    WORKER_AUTH_TOKEN: 'operator-test-worker-token-0123456789',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
  };
  await promisify(execFile)('node', [path.join(repoRoot, 'backend', 'dist', 'seed.js'), 'admin'], { env });
  const dir = mkdtempSync(path.join(process.env.VP_TEST_DIR ?? tmpdir(), 'backend-'));
  backend = startProcess('backend', 'node', [main], { env, cwd: dir, logFile: path.join(dir, 'backend.log') });
  await waitUntil(async () => (await fetch(`${backendUrl}/health`)).status === 200, { what: 'backend', proc: backend });

  await installCrds(clients);
  namespace = await createNamespace(clients, 'bots');
  await clients.core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: 'voice-platform-admin' }, stringData: { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password } },
  });
  operator = createOperator({ kc: testKubeConfig(), settings: testSettings(namespace, { backendUrl }) });
  await operator.start();
});

afterAll(async () => {
  await operator?.stop();
  await backend?.stop();
});

async function adminGet(p: string): Promise<Record<string, unknown>> {
  const login = await fetch(`${backendUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const { access_token } = (await login.json()) as { access_token: string };
  const res = await fetch(`${backendUrl}${p}`, { headers: { authorization: `Bearer ${access_token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const custom = { group: VOICE_API_GROUP, version: VOICE_API_VERSION, plural: 'bots' };
const getBot = async (name: string) => (await clients.custom.getNamespacedCustomObject({ ...custom, namespace, name })) as BotResource;
const synced = (b: BotResource) => b.status?.conditions?.find((c) => c.type === 'Synced');

const spec = {
  name: 'Renewals bot',
  language: 'en-US',
  prompt: 'You remind {{first_name}} about the renewal.',
  greeting: 'Hello {{first_name}}, this is a renewal reminder.',
  variables: [{ name: 'first_name', required: true, description: 'callee first name' }],
  policy: {
    intents: [{ name: 'yes', examples: ['yes', 'sure'], reply: 'Great, {{first_name}}. Goodbye.', end_call: true }],
    fallback: { reply: 'Sorry, could you repeat that?' },
  },
  max_call_seconds: 120,
  fleetRef: { name: 'default' },
};

describe('Bot sync into the backend', () => {
  it('creates the bot, reports its id and Synced, and keeps it updated', async () => {
    await clients.custom.createNamespacedCustomObject({
      ...custom,
      namespace,
      body: { apiVersion: GROUP_VERSION, kind: 'Bot', metadata: { name: 'renewals' }, spec },
    });
    const bot = await waitFor('bot synced', async () => {
      const b = await getBot('renewals');
      return synced(b)?.status === 'True' ? b : undefined;
    });
    const botId = bot.status!.botId!;
    expect(bot.status).toMatchObject({ observedGeneration: 1, botId: expect.stringMatching(/^[0-9a-f]{24}$/) });
    expect(synced(bot)).toMatchObject({ reason: 'Synced', message: `backend bot ${botId} up to date`, observedGeneration: 1 });

    const stored = await adminGet(`/api/v1/bots/${botId}`);
    const { fleetRef: _f, ...fields } = spec;
    expect(stored).toMatchObject({ ...fields, id: botId, active: true, tools: [], voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 } });

    await clients.custom.patchNamespacedCustomObject({ ...custom, namespace, name: 'renewals', body: { spec: { prompt: 'Be brief with {{first_name}}.' } } }, mergePatch);
    const updated = await waitFor('generation 2 synced', async () => {
      const b = await getBot('renewals');
      return b.status?.observedGeneration === 2 && synced(b)?.status === 'True' ? b : undefined;
    });
    expect(updated.status!.botId).toBe(botId);
    expect((await adminGet(`/api/v1/bots/${botId}`)).prompt).toBe('Be brief with {{first_name}}.');
  });

  it('reports the backend error message on Synced and retries', async () => {
    await clients.custom.patchNamespacedCustomObject(
      { ...custom, namespace, name: 'renewals', body: { spec: { greeting: 'Hi {{nickname}}' } } },
      mergePatch,
    );
    const failed = await waitFor('sync failure reported', async () => {
      const b = await getBot('renewals');
      return b.status?.observedGeneration === 3 && synced(b)?.status === 'False' ? b : undefined;
    });
    expect(synced(failed)).toMatchObject({
      reason: 'BackendRejected',
      message: 'validation_failed: the bot is invalid (greeting: {{nickname}} is not a declared variable)',
    });
    // Fixing the spec (declaring the variable) heals it on the next attempt.
    await clients.custom.patchNamespacedCustomObject(
      { ...custom, namespace, name: 'renewals', body: { spec: { variables: [...spec.variables, { name: 'nickname', required: false }] } } },
      mergePatch,
    );
    const healed = await waitFor('synced again', async () => {
      const b = await getBot('renewals');
      return b.status?.observedGeneration === 4 && synced(b)?.status === 'True' ? b : undefined;
    });
    expect((await adminGet(`/api/v1/bots/${healed.status!.botId!}`)).greeting).toBe('Hi {{nickname}}');
  });

  it('deactivates the backend bot when the Bot is deleted', async () => {
    const botId = (await getBot('renewals')).status!.botId!;
    await clients.custom.deleteNamespacedCustomObject({ ...custom, namespace, name: 'renewals' });
    await waitFor('backend bot inactive', async () => (await adminGet(`/api/v1/bots/${botId}`)).active === false);
  });
});
