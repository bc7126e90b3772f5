// VoiceFleet reconcile against the real kube-apiserver: children, owner references, status, updates,
// deletion, and scaling driven by real HTTP /metrics endpoints standing in for worker pods.
import { VOICE_API_GROUP, VOICE_API_VERSION, type VoiceFleetStatus } from '@voice-platform/schemas';
import { createOperator, type Operator } from '../controller.js';
import { DELETION_COST, GROUP_VERSION, mergePatch } from '../core/kube.js';
import { createNamespace, gone, installCrds, testClients, testKubeConfig, testSettings, waitFor } from '../../testing/kube.js';
import { createWorkerPod, startFakeWorker, type FakeWorker } from '../../testing/workers.js';
import { TERMINATION_MARGIN_SECONDS } from './resources.js';
import type { VoiceFleet } from './types.js';

const clients = testClients();
let namespace = '';
let operator: Operator;
const workers: FakeWorker[] = [];

beforeAll(async () => {
  await installCrds(clients);
  namespace = await createNamespace(clients, 'fleet');
  operator = createOperator({ kc: testKubeConfig(), settings: testSettings(namespace) });
  await operator.start();
});

afterAll(async () => {
  const h = (await operator.context.metrics.reconcileDuration.get()).values;
  const sum = h.find((v) => v.metricName?.endsWith('_sum') && v.labels.kind === 'fleet' && v.labels.result === 'success')?.value ?? 0;
  const count = h.find((v) => v.metricName?.endsWith('_count') && v.labels.kind === 'fleet' && v.labels.result === 'success')?.value ?? 0;
  process.stdout.write(`fleet reconcile passes: ${count}, mean ${((sum / Math.max(1, count)) * 1000).toFixed(1)} ms\n`);
  await operator?.stop();
  await Promise.all(workers.map((w) => w.close()));
});

const custom = { group: VOICE_API_GROUP, version: VOICE_API_VERSION, plural: 'voicefleets' };
const getFleet = async (name: string): Promise<VoiceFleet> =>
  (await clients.custom.getNamespacedCustomObject({ ...custom, namespace, name })) as VoiceFleet;
const getDeployment = (name: string) => clients.apps.readNamespacedDeployment({ name, namespace });
async function mergePatchFleet(name: string, spec: Record<string, unknown>): Promise<void> {
  await clients.custom.patchNamespacedCustomObject({ ...custom, namespace, name, body: { spec } }, mergePatch);
}

async function createFleet(name: string, spec: Record<string, unknown>): Promise<VoiceFleet> {
  return (await clients.custom.createNamespacedCustomObject({
    ...custom,
    namespace,
    body: { apiVersion: GROUP_VERSION, kind: 'VoiceFleet', metadata: { name, namespace }, spec },
  })) as VoiceFleet;
}

function statusOf(f: VoiceFleet): VoiceFleetStatus {
  return f.status ?? {};
}

describe('VoiceFleet reconcile', () => {
  it('creates the Deployment, Service and PDB with owner references, env and drain settings', async () => {
    const fleet = await createFleet('alpha', {
      image: 'voice-worker:1.2.3',
      minReplicas: 2,
      maxReplicas: 6,
      callsPerWorker: 12,
      drainTimeoutSeconds: 120,
      env: [
        { name: 'LOG_LEVEL', value: 'DEBUG' },
        { name: 'WORKER_AUTH_TOKEN', valueFrom: { secretKeyRef: { name: 'tok', key: 'token' } } },
      ],
      resources: { requests: { cpu: '500m', memory: '512Mi' } },
    });
    const owner = { apiVersion: GROUP_VERSION, kind: 'VoiceFleet', name: 'alpha', uid: fleet.metadata!.uid!, controller: true, blockOwnerDeletion: true };

    const dep = await waitFor('alpha Deployment', () => getDeployment('alpha').catch(() => undefined));
    expect(dep.metadata!.ownerReferences).toEqual([owner]);
    expect(dep.spec!.replicas).toBe(2);
    const pod = dep.spec!.template.spec!;
    expect(pod.terminationGracePeriodSeconds).toBe(120 + TERMINATION_MARGIN_SECONDS);
    const c = pod.containers[0]!;
    expect(c.image).toBe('voice-worker:1.2.3');
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
    expect(c.env).toEqual([
      { name: 'PORT', value: '8000' },
      { name: 'MAX_CONCURRENT_CALLS', value: '12' },
      { name: 'DRAIN_TIMEOUT_MS', value: '120000' },
      { name: 'WORKER_ID', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'FLEET_NAME', value: 'alpha' },
      { name: 'LOG_LEVEL', value: 'DEBUG' },
      { name: 'WORKER_AUTH_TOKEN', valueFrom: { secretKeyRef: { name: 'tok', key: 'token' } } },
    ]);
    expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '512Mi' } });
    expect(c.lifecycle!.preStop!.exec!.command!.join(' ')).toContain('kill -TERM 1');
    expect(c.lifecycle!.preStop!.exec!.command!.join(' ')).toContain('-lt 120');
    // Readiness drops a draining worker from the Service; liveness must not restart it mid-drain.
    expect(c.readinessProbe!.httpGet!.path).toBe('/health');
    expect(c.livenessProbe!.httpGet!.path).toBe('/health/live');

    // The reconcile applies the Deployment, then the Service, then the PDB: each is awaited, not assumed there.
    const svc = await waitFor('alpha Service', () => clients.core.readNamespacedService({ name: 'alpha', namespace }));
    expect(svc.metadata!.ownerReferences).toEqual([owner]);
    expect(svc.spec!.ports).toEqual([{ name: 'http', port: 8000, targetPort: 'http', protocol: 'TCP' }]);
    expect(svc.spec!.selector).toEqual(dep.spec!.selector.matchLabels);
    const pdb = await waitFor('alpha PDB', () => clients.policy.readNamespacedPodDisruptionBudget({ name: 'alpha', namespace }));
    expect(pdb.metadata!.ownerReferences).toEqual([owner]);
    expect(pdb.spec!.maxUnavailable).toBe(1);

    const status = statusOf(await waitFor('alpha status', async () => {
      const f = await getFleet('alpha');
      return f.status?.observedGeneration === 1 ? f : undefined;
    }));
    expect(status).toMatchObject({ replicas: 0, readyReplicas: 0, desiredReplicas: 2, recommendedReplicas: 2, activeCalls: 0, capacity: 0 });
    const types = Object.fromEntries((status.conditions ?? []).map((x) => [x.type, [x.status, x.reason]]));
    expect(types).toEqual({ Ready: ['False', 'WorkersNotReady'], Scaling: ['True', 'ScalingUp'], Degraded: ['False', 'AsExpected'] });
  });

  it('applies spec changes to the children and advances observedGeneration', async () => {
    await mergePatchFleet('alpha', { image: 'voice-worker:1.3.0', minReplicas: 3, port: 8100 });
    // observedGeneration is written after every child of that generation was applied.
    const fleet = await waitFor('observedGeneration 2', async () => {
      const f = await getFleet('alpha');
      return f.status?.observedGeneration === 2 ? f : undefined;
    });
    expect(fleet.metadata!.generation).toBe(2);
    const dep = await getDeployment('alpha');
    expect(dep.spec!.template.spec!.containers[0]!.image).toBe('voice-worker:1.3.0');
    expect(dep.spec!.replicas).toBe(3);
    expect(dep.spec!.template.spec!.containers[0]!.ports![0]!.containerPort).toBe(8100);
    // The reconcile applies the Deployment, then the Service, then the PDB: each is awaited, not assumed there.
    const svc = await waitFor('alpha Service', () => clients.core.readNamespacedService({ name: 'alpha', namespace }).catch(() => undefined));
    expect(svc.spec!.ports![0]!.port).toBe(8100);
    expect(statusOf(fleet).desiredReplicas).toBe(3);
  });

  it('takes back a field changed by someone else', async () => {
    await clients.apps.patchNamespacedDeployment(
      { name: 'alpha', namespace, body: { spec: { template: { spec: { terminationGracePeriodSeconds: 5 } } } } },
      mergePatch,
    );
    await waitFor('grace period restored', async () => (await getDeployment('alpha')).spec!.template.spec!.terminationGracePeriodSeconds === 120 + TERMINATION_MARGIN_SECONDS);
  });

  it('deletes the children when the fleet is deleted', async () => {
    await clients.custom.deleteNamespacedCustomObject({ ...custom, namespace, name: 'alpha' });
    await waitFor('children deleted', async () =>
      (await gone(() => getDeployment('alpha'))) &&
      (await gone(() => clients.core.readNamespacedService({ name: 'alpha', namespace }))) &&
      (await gone(() => clients.policy.readNamespacedPodDisruptionBudget({ name: 'alpha', namespace }))),
    );
  });
});

describe('scaling on live calls', () => {
  const scaleEvents = async (fleet: string) =>
    (await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${fleet}` })).items
      .filter((e) => e.reason === 'ScaledUp' || e.reason === 'ScaledDown')
      .sort((a, b) => String(a.metadata!.creationTimestamp).localeCompare(String(b.metadata!.creationTimestamp)));

  it('scales up at once, down only after the delay, and never picks a busy worker', async () => {
    const w = await Promise.all([startFakeWorker(10), startFakeWorker(10)]);
    workers.push(...w);
    await createFleet('beta', {
      image: 'voice-worker:1',
      minReplicas: 1,
      maxReplicas: 5,
      callsPerWorker: 10,
      buffer: { calls: 2 },
      scaleDownDelaySeconds: 3,
    });
    await waitFor('beta Deployment at 1', async () => (await getDeployment('beta')).spec!.replicas === 1);
    await createWorkerPod(clients, namespace, 'beta', 'beta-w0', w[0]!.port);
    await createWorkerPod(clients, namespace, 'beta', 'beta-w1', w[1]!.port);
    // Both idle workers seen: 0 calls + 2 buffer still fit one worker.
    await waitFor('two idle workers observed', async () => {
      const s = (await getFleet('beta')).status;
      return s?.replicas === 2 && s.readyReplicas === 2 && s.capacity === 20 && s.desiredReplicas === 1;
    });

    // 17 live calls + 2 buffer at 10 per worker → 2 workers, applied at the next pass.
    w[0]!.setActiveCalls(9);
    w[1]!.setActiveCalls(8);
    const upAt = Date.now();
    await waitFor('scaled up to 2', async () => (await getDeployment('beta')).spec!.replicas === 2);
    const upLatencyMs = Date.now() - upAt;
    const up = statusOf(await waitFor('status after scale up', async () => {
      const f = await getFleet('beta');
      return f.status?.desiredReplicas === 2 && f.status.activeCalls === 17 ? f : undefined;
    }));
    expect(up).toMatchObject({ replicas: 2, readyReplicas: 2, activeCalls: 17, capacity: 20, bufferCalls: 2, recommendedReplicas: 2, busyWorkers: 2, lastScaleReason: '17 active + 2 buffer calls at 10/worker need 2 workers' });
    expect(up.lastScaleTime).toEqual(expect.any(String));
    // These stand-ins are older workers (no load gauges): no load in the status, the calls rule alone.
    expect(up).toMatchObject({ loadWorkers: 0 });
    expect(up.load).toBeUndefined();
    expect(up.admittableCalls).toBeUndefined();
    await waitFor('deletion costs from active calls', async () => {
      const pods = await clients.core.listNamespacedPod({ namespace, labelSelector: 'voiceplatform.io/fleet=beta' });
      const costs = Object.fromEntries(pods.items.map((p) => [p.metadata!.name, p.metadata!.annotations?.[DELETION_COST]]));
      return costs['beta-w0'] === '9' && costs['beta-w1'] === '8';
    });
    const upEvents = await scaleEvents('beta');
    expect(upEvents.map((e) => [e.reason, e.type])).toEqual([['ScaledUp', 'Normal']]);
    expect(upEvents[0]!.message).toBe('Scaled up from 1 to 2: 17 active + 2 buffer calls at 10/worker need 2 workers');

    // The calls on w1 end; w0 keeps one. 1 + 2 buffer → 1 worker, but only after the delay.
    w[0]!.setActiveCalls(1);
    w[1]!.setActiveCalls(0);
    const pending = statusOf(await waitFor('scale-down pending', async () => {
      const f = await getFleet('beta');
      return f.status?.scaleDownPendingSince && f.status.activeCalls === 1 ? f : undefined;
    }));
    expect(pending).toMatchObject({ desiredReplicas: 2, recommendedReplicas: 1 });
    expect((await getDeployment('beta')).spec!.replicas).toBe(2);
    // The idle worker is the cheaper one to delete: the ReplicaSet removes it, not the busy one.
    await waitFor('idle worker cost 0', async () => {
      const pods = await clients.core.listNamespacedPod({ namespace, labelSelector: 'voiceplatform.io/fleet=beta' });
      const costs = Object.fromEntries(pods.items.map((p) => [p.metadata!.name, p.metadata!.annotations?.[DELETION_COST]]));
      return costs['beta-w0'] === '1' && costs['beta-w1'] === '0';
    });

    const down = statusOf(await waitFor('scaled down to 1', async () => {
      const f = await getFleet('beta');
      return f.status?.desiredReplicas === 1 ? f : undefined;
    }, { timeoutMs: 30_000 }));
    expect((await getDeployment('beta')).spec!.replicas).toBe(1);
    expect(down.scaleDownPendingSince).toBeUndefined();
    // Recorded by the operator: the scale-down came no sooner than the delay after it became pending.
    expect(Date.parse(down.lastScaleTime!) - Date.parse(pending.scaleDownPendingSince!)).toBeGreaterThanOrEqual(3000 - 1000);
    const events = await scaleEvents('beta');
    expect(events.map((e) => e.reason)).toEqual(['ScaledUp', 'ScaledDown']);
    expect(events[1]!.message).toMatch(/^Scaled down from 2 to 1: 1 active \+ 2 buffer calls at 10\/worker need 1 for \d+s$/);
    process.stdout.write(`scale-up latency (calls rose → Deployment replicas updated): ${upLatencyMs} ms\n`);
  });

  it('keeps a worker whose metrics cannot be read and reports it as Degraded', async () => {
    const gone = await startFakeWorker(10);
    await createFleet('gamma', { image: 'voice-worker:1', minReplicas: 1, maxReplicas: 3, callsPerWorker: 10, scaleDownDelaySeconds: 0 });
    await createWorkerPod(clients, namespace, 'gamma', 'gamma-w0', gone.port);
    await gone.close();
    const f = await waitFor('gamma degraded', async () => {
      const x = await getFleet('gamma');
      return x.status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True') ? x : undefined;
    });
    expect(statusOf(f)).toMatchObject({ scrapeFailures: 1, busyWorkers: 1, desiredReplicas: 1 });
    expect(f.status!.conditions!.find((c) => c.type === 'Degraded')).toMatchObject({ reason: 'MetricsUnreadable', message: "1 workers' /metrics unreadable" });
    const pod = await clients.core.readNamespacedPod({ name: 'gamma-w0', namespace });
    expect(pod.metadata!.annotations?.[DELETION_COST]).toBeUndefined();
  });

  it('scales up on load with the calls well below the slot count, and by one more when admittable calls run out', async () => {
    const w = await Promise.all([startFakeWorker(10), startFakeWorker(10), startFakeWorker(10)]);
    workers.push(...w);
    const [w0, w1, w2] = w as [FakeWorker, FakeWorker, FakeWorker];
    await createFleet('delta', { image: 'voice-worker:1', minReplicas: 1, maxReplicas: 5, callsPerWorker: 10, targetLoad: 0.5, scaleDownDelaySeconds: 600 });
    await waitFor('delta Deployment at 1', async () => (await getDeployment('delta')).spec!.replicas === 1);
    w0.setActiveCalls(2);
    w0.setLoad(0.3, 3);
    w1.setActiveCalls(1);
    w1.setLoad(0.2, 4);
    await createWorkerPod(clients, namespace, 'delta', 'delta-w0', w0.port);
    await createWorkerPod(clients, namespace, 'delta', 'delta-w1', w1.port);
    // 3 calls of 20 slots and a load of 0.5 at 0.5 per worker: one worker is enough.
    const calm = statusOf(await waitFor('load read from both workers', async () => {
      const f = await getFleet('delta');
      return f.status?.loadWorkers === 2 && f.status.activeCalls === 3 ? f : undefined;
    }));
    expect(calm).toMatchObject({ desiredReplicas: 1, recommendedReplicas: 1, load: 0.5, admittableCalls: 7, capacity: 20 });

    // The calls stay at 3 of 20 slots; one worker's load rises, 1.2 in all: ceil(1.2 / 0.5) = 3 workers.
    w0.setLoad(1, 0);
    await waitFor('scaled up to 3 on load', async () => (await getDeployment('delta')).spec!.replicas === 3);
    const hot = statusOf(await waitFor('status after the scale-up', async () => {
      const f = await getFleet('delta');
      return f.status?.desiredReplicas === 3 ? f : undefined;
    }));
    const reason = 'load 1.2 of 2 workers at targetLoad 0.5 need 3 workers';
    expect(hot).toMatchObject({ activeCalls: 3, capacity: 20, load: 1.2, admittableCalls: 4, lastScaleReason: reason });
    const text = await operator.context.metrics.registry.metrics();
    expect(text).toContain(`voice_operator_fleet_load{namespace="${namespace}",fleet="delta"} 1.2`);
    expect(text).toContain(`voice_operator_fleet_admittable_calls{namespace="${namespace}",fleet="delta"} 4`);
    expect((await scaleEvents('delta')).map((e) => e.message)).toEqual([`Scaled up from 1 to 3: ${reason}`]);

    // A third worker comes up; then all three are out of admittable calls at a load that fits 2 workers.
    w2.setLoad(0.2, 0);
    await createWorkerPod(clients, namespace, 'delta', 'delta-w2', w2.port);
    await waitFor('third worker read', async () => (await getFleet('delta')).status?.loadWorkers === 3);
    w0.setLoad(0.2, 0);
    w1.setLoad(0.2, 0);
    await waitFor('scaled up to 4 on admittable', async () => (await getDeployment('delta')).spec!.replicas === 4);
    // The operator applies the Deployment before it records the event: await the event, not the replicas.
    // Sorted by message: the two events may share a creation second.
    const events = await waitFor('second scale event', async () => {
      const e = await scaleEvents('delta');
      return e.length >= 2 ? e : undefined;
    });
    expect(events.map((e) => e.message).sort()).toEqual([
      `Scaled up from 1 to 3: ${reason}`,
      'Scaled up from 3 to 4: 0 admittable calls on 3 ready workers need 4 workers',
    ]);
    // The fourth worker is not there yet: the fleet waits for it instead of adding more.
    const scrapes = w0.scrapes;
    await waitFor('three more passes', () => w0.scrapes >= scrapes + 3);
    expect((await getDeployment('delta')).spec!.replicas).toBe(4);
    expect(statusOf(await getFleet('delta'))).toMatchObject({ desiredReplicas: 4, admittableCalls: 0, load: 0.6 });
  });
});
