// Bot → the real backend (node backend/dist/main.js on FerretDB + Redis from globalSetup).
import { VOICE_API_GROUP, VOICE_API_VERSION } from '@voice-platform/schemas';
import { createOperator, type Operator } from '../controller.js';
import { GROUP_VERSION, mergePatch } from '../core/kube.js';
import { startTestBackend, type TestBackend } from '../../testing/backend.js';
import { createNamespace, gone, installCrds, testClients, testKubeConfig, testSettings, waitFor } from '../../testing/kube.js';
import { startBackendProxy, type BackendProxy } from '../../testing/proxy.js';
import { BOT_FINALIZER, CREATING_ANNOTATION } from './reconcile.js';
import type { BotResource } from './types.js';

const clients = testClients();
const ADMIN = { email: 'ops-admin@example.com', password: 'operator-test-password-1' };
let namespace = '';
let backend: TestBackend;
let operator: Operator;
// The operator reaches the backend through this proxy, so a test can cut it off.
let proxy: BackendProxy;
const startOperator = async () => {
  operator = createOperator({ kc: testKubeConfig(), settings: testSettings(namespace, { backendUrl: proxy.url }) });
  await operator.start();
};

beforeAll(async () => {
  backend = await startTestBackend('bot', ADMIN);

  await installCrds(clients);
  namespace = await createNamespace(clients, 'bots');
  await clients.core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: 'voice-platform-admin' }, stringData: { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password } },
  });
  proxy = await startBackendProxy(backend.url);
  await startOperator();
});

afterAll(async () => {
  await operator?.stop();
  await proxy?.close();
  await backend?.stop();
});

const custom = { group: VOICE_API_GROUP, version: VOICE_API_VERSION, plural: 'bots' };
const getBot = async (name: string) => (await clients.custom.getNamespacedCustomObject({ ...custom, namespace, name })) as BotResource;
const synced = (b: BotResource) => b.status?.conditions?.find((c) => c.type === 'Synced');
const fleetFound = (b: BotResource) => b.status?.conditions?.find((c) => c.type === 'FleetFound');
const backendBotsNamed = async (name: string) => ((await backend.adminGet('/api/v1/bots')).items as Array<{ id: string; name: string }>).filter((b) => b.name === name);

async function createSyncedBot(name: string, over: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Promise<BotResource> {
  await clients.custom.createNamespacedCustomObject({
    ...custom,
    namespace,
    body: { apiVersion: GROUP_VERSION, kind: 'Bot', metadata: { name, ...metadata }, spec: { ...spec, ...over } },
  });
  return waitFor(`bot ${name} synced`, async () => {
    const b = await getBot(name);
    return synced(b)?.status === 'True' ? b : undefined;
  });
}

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
    expect(bot.metadata?.finalizers).toEqual([BOT_FINALIZER]);
    expect(fleetFound(bot)).toMatchObject({ status: 'False', reason: 'FleetNotFound', message: `VoiceFleet default not found in namespace ${namespace}` });
    const marker = await waitFor('create marker cleared', async () => !(await getBot('renewals')).metadata?.annotations?.[CREATING_ANNOTATION]);
    expect(marker).toBe(true);

    const stored = await backend.adminGet(`/api/v1/bots/${botId}`);
    const { fleetRef: _f, ...fields } = spec;
    expect(stored).toMatchObject({ ...fields, id: botId, active: true, tools: [], voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 } });

    await clients.custom.patchNamespacedCustomObject({ ...custom, namespace, name: 'renewals', body: { spec: { prompt: 'Be brief with {{first_name}}.' } } }, mergePatch);
    const updated = await waitFor('generation 2 synced', async () => {
      const b = await getBot('renewals');
      return b.status?.observedGeneration === 2 && synced(b)?.status === 'True' ? b : undefined;
    });
    expect(updated.status!.botId).toBe(botId);
    // The applied spec is a new version, published (shared/DESIGN.md §17).
    expect(await backend.adminGet(`/api/v1/bots/${botId}`)).toMatchObject({ prompt: 'Be brief with {{first_name}}.', version: 2, published_version: 2 });
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
    expect((await backend.adminGet(`/api/v1/bots/${healed.status!.botId!}`)).greeting).toBe('Hi {{nickname}}');
  });

  it('keeps the finalizer while the backend is unreachable, then deactivates the bot and releases the Bot', async () => {
    const botId = (await getBot('renewals')).status!.botId!;
    proxy.mode = 'down';
    try {
      await clients.custom.deleteNamespacedCustomObject({ ...custom, namespace, name: 'renewals' });
      const failing = await waitFor('deactivation failure reported', async () => {
        const b = await getBot('renewals');
        return synced(b)?.status === 'False' && synced(b)?.message.startsWith('deactivating') ? b : undefined;
      });
      expect(failing.metadata?.deletionTimestamp).toBeDefined();
      expect(failing.metadata?.finalizers).toEqual([BOT_FINALIZER]);
      expect(synced(failing)).toMatchObject({ reason: 'BackendUnavailable', message: expect.stringContaining(`deactivating backend bot ${botId}: unreachable: backend unreachable`) });
      expect((await backend.adminGet(`/api/v1/bots/${botId}`)).active).toBe(true);
    } finally {
      proxy.mode = 'pass';
    }
    await waitFor('Bot removed', () => gone(() => getBot('renewals')));
    expect((await backend.adminGet(`/api/v1/bots/${botId}`)).active).toBe(false);
  });

  it('deactivates a Bot deleted while the operator is stopped once an operator runs again', async () => {
    const botId = (await createSyncedBot('offline')).status!.botId!;
    await operator.stop();
    try {
      await clients.custom.deleteNamespacedCustomObject({ ...custom, namespace, name: 'offline' });
      // Nothing else removes the finalizer: the Bot stays, marked for deletion, and the backend bot active.
      const held = await getBot('offline');
      expect(held.metadata).toMatchObject({ deletionTimestamp: expect.any(String), finalizers: [BOT_FINALIZER] });
      expect((await backend.adminGet(`/api/v1/bots/${botId}`)).active).toBe(true);
    } finally {
      await startOperator();
    }
    await waitFor('Bot removed', () => gone(() => getBot('offline')));
    expect((await backend.adminGet(`/api/v1/bots/${botId}`)).active).toBe(false);
  });

  it("keeps another controller's finalizer", async () => {
    const other = 'example.com/audit';
    const bot = await createSyncedBot('shared', {}, { finalizers: [other] });
    expect(bot.metadata?.finalizers).toEqual([other, BOT_FINALIZER]);
    await clients.custom.deleteNamespacedCustomObject({ ...custom, namespace, name: 'shared' });
    const released = await waitFor('our finalizer released', async () => {
      const b = await getBot('shared');
      return b.metadata?.finalizers?.length === 1 ? b : undefined;
    });
    expect(released.metadata?.finalizers).toEqual([other]);
    expect((await backend.adminGet(`/api/v1/bots/${bot.status!.botId!}`)).active).toBe(false);
    // The other controller finishes: the Bot goes.
    await clients.custom.patchNamespacedCustomObject({ ...custom, namespace, name: 'shared', body: { metadata: { finalizers: null } } }, mergePatch);
    await waitFor('Bot removed', () => gone(() => getBot('shared')));
  });

  it('reports FleetFound from the VoiceFleet named by fleetRef, following it as it comes and goes', async () => {
    const missing = await createSyncedBot('fleeted', { fleetRef: { name: 'sales' } });
    expect(fleetFound(missing)).toMatchObject({ status: 'False', reason: 'FleetNotFound', message: `VoiceFleet sales not found in namespace ${namespace}` });
    const fleets = { group: VOICE_API_GROUP, version: VOICE_API_VERSION, plural: 'voicefleets' };
    await clients.custom.createNamespacedCustomObject({
      ...fleets,
      namespace,
      body: { apiVersion: GROUP_VERSION, kind: 'VoiceFleet', metadata: { name: 'sales' }, spec: { image: 'voice-worker:test', minReplicas: 0 } },
    });
    const found = await waitFor('FleetFound True', async () => {
      const b = await getBot('fleeted');
      return fleetFound(b)?.status === 'True' ? b : undefined;
    });
    expect(fleetFound(found)).toMatchObject({ reason: 'FleetFound', message: 'VoiceFleet sales exists' });
    // Only status changed: the spec is the user's.
    expect(found.metadata?.generation).toBe(1);
    expect(found.spec).toEqual(missing.spec);
    expect(synced(found)?.status).toBe('True');
    await clients.custom.deleteNamespacedCustomObject({ ...fleets, namespace, name: 'sales' });
    await waitFor('FleetFound False again', async () => fleetFound(await getBot('fleeted'))?.reason === 'FleetNotFound');
  });

  it('publishes what it applies: a bot requiring passing tests reports TestsFailing until it may publish', async () => {
    const created = await createSyncedBot('gated', { name: `Gated bot ${namespace}`, require_passing_tests: true });
    const botId = created.status!.botId!;
    expect(await backend.adminGet(`/api/v1/bots/${botId}`)).toMatchObject({ version: 1, published_version: 1, require_passing_tests: true });

    // The change is a draft in the backend; no test run is green, so the publish is refused and reported.
    await clients.custom.patchNamespacedCustomObject({ ...custom, namespace, name: 'gated', body: { spec: { prompt: 'Gated {{first_name}}.' } } }, mergePatch);
    const failing = await waitFor('TestsFailing reported', async () => {
      const b = await getBot('gated');
      return b.status?.observedGeneration === 2 && synced(b)?.status === 'False' ? b : undefined;
    });
    expect(synced(failing)).toMatchObject({ reason: 'TestsFailing', message: expect.stringMatching(/^tests_failing: /) });
    expect(await backend.adminGet(`/api/v1/bots/${botId}`)).toMatchObject({ prompt: 'Gated {{first_name}}.', version: 2, published_version: 1 });

    // Without the requirement (it acts at once, no new version) the applied version is published.
    await clients.custom.patchNamespacedCustomObject({ ...custom, namespace, name: 'gated', body: { spec: { require_passing_tests: false } } }, mergePatch);
    await waitFor('synced again', async () => {
      const b = await getBot('gated');
      return b.status?.observedGeneration === 3 && synced(b)?.status === 'True' ? b : undefined;
    });
    expect(await backend.adminGet(`/api/v1/bots/${botId}`)).toMatchObject({ version: 2, published_version: 2, require_passing_tests: false });
  });

  it('adopts the backend bot of a create whose response was lost instead of creating a second one', async () => {
    const botName = `Lost response bot ${namespace}`;
    proxy.mode = 'lose-create-response';
    await clients.custom.createNamespacedCustomObject({
      ...custom,
      namespace,
      body: { apiVersion: GROUP_VERSION, kind: 'Bot', metadata: { name: 'lost' }, spec: { ...spec, name: botName } },
    });
    // The backend made the bot but the operator never learnt its id; the retry finds it.
    const adopted = await waitFor('bot synced', async () => {
      const b = await getBot('lost');
      return synced(b)?.status === 'True' ? b : undefined;
    });
    expect(proxy.lostCreates).toHaveLength(1);
    expect(adopted.status!.botId).toBe(proxy.lostCreates[0]);
    expect((await backendBotsNamed(botName)).map((b) => b.id)).toEqual([proxy.lostCreates[0]]);
    await waitFor('create marker cleared', async () => !(await getBot('lost')).metadata?.annotations?.[CREATING_ANNOTATION]);
  });
});
