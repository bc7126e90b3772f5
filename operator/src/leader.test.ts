// Two operator replicas on one Lease: only the holder reconciles; when it stops, the other takes over.
import { VOICE_API_GROUP, VOICE_API_VERSION } from '@voice-platform/schemas';
import { createOperator, type Operator } from './controller.js';
import { GROUP_VERSION } from './core/kube.js';
import { LeaderElector } from './leader.js';
import { createNamespace, installCrds, testClients, testKubeConfig, testSettings, waitFor } from '../testing/kube.js';

const clients = testClients();

interface Replica {
  identity: string;
  operator: Operator;
  elector: LeaderElector;
}

function replica(namespace: string, identity: string): Replica {
  const operator = createOperator({ kc: testKubeConfig(), settings: testSettings(namespace), identity });
  const elector = new LeaderElector({
    kc: testKubeConfig(),
    namespace,
    name: 'voice-platform-operator',
    identity,
    leaseDurationMs: 4000,
    renewDeadlineMs: 3000,
    retryPeriodMs: 300,
    onStartedLeading: () => operator.start(),
    onStoppedLeading: () => operator.stop(),
  });
  return { identity, operator, elector };
}

describe('leader election', () => {
  let namespace = '';
  let a: Replica;
  let b: Replica;

  beforeAll(async () => {
    await installCrds(clients);
    namespace = await createNamespace(clients, 'leader');
    a = replica(namespace, 'operator-a');
    b = replica(namespace, 'operator-b');
  });
  afterAll(async () => {
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  });

  const createFleet = (name: string) =>
    clients.custom.createNamespacedCustomObject({
      group: VOICE_API_GROUP,
      version: VOICE_API_VERSION,
      plural: 'voicefleets',
      namespace,
      body: { apiVersion: GROUP_VERSION, kind: 'VoiceFleet', metadata: { name }, spec: { image: 'w:1', minReplicas: 1 } },
    });

  it('lets only the Lease holder act, and hands over when it stops', async () => {
    a.elector.start();
    await waitFor('a leads', () => a.elector.leading);
    b.elector.start();
    const lease = await waitFor('lease held by a', async () => {
      const l = await clients.coordination.readNamespacedLease({ name: 'voice-platform-operator', namespace });
      return l.spec?.holderIdentity === 'operator-a' ? l : undefined;
    });
    expect(lease.spec!.leaseDurationSeconds).toBe(4);

    await createFleet('one');
    await waitFor('a reconciled fleet one', async () => (await clients.apps.readNamespacedDeployment({ name: 'one', namespace })).spec!.replicas === 1);
    // b has been campaigning for several retry periods by now and must not have acted.
    await waitFor('b tried the lease', async () => {
      const l = await clients.coordination.readNamespacedLease({ name: 'voice-platform-operator', namespace });
      return (Date.now() - new Date(l.spec!.renewTime as unknown as string).getTime() < 4000) && a.operator.stats.reconciles > 0;
    });
    expect(b.elector.leading).toBe(false);
    expect(b.operator.ready()).toBe(false);
    expect(b.operator.stats.reconciles).toBe(0);

    // a shuts down gracefully: it releases the Lease and b takes over.
    await a.elector.stop();
    expect(a.operator.ready()).toBe(false);
    await waitFor('b leads', () => b.elector.leading, { timeoutMs: 10_000 });
    const after = await clients.coordination.readNamespacedLease({ name: 'voice-platform-operator', namespace });
    expect(after.spec!.holderIdentity).toBe('operator-b');
    expect(after.spec!.leaseTransitions).toBe(1);
    const aReconciles = a.operator.stats.reconciles;
    await createFleet('two');
    await waitFor('b reconciled fleet two', async () => (await clients.apps.readNamespacedDeployment({ name: 'two', namespace })).spec!.replicas === 1);
    expect(b.operator.stats.reconciles).toBeGreaterThan(0);
    expect(a.operator.stats.reconciles).toBe(aReconciles);
  });
});
