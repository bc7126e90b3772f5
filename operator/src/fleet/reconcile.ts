// VoiceFleet → Deployment + Service + PodDisruptionBudget, scaled on the live calls and load its workers report.
// Each pass: read every worker's /metrics, decide (scaling.ts), set deletion costs so idle workers go
// first, server-side apply the children, then write status (only when it changed).
import type * as k8s from '@kubernetes/client-node';
import { DEFAULT_TARGET_LOAD, type VoiceFleetStatus } from '@voice-platform/schemas';
import { rfc3339, setCondition } from '../core/conditions.js';
import type { FleetContext } from './context.js';
import {
  DELETION_COST,
  GROUP_VERSION,
  LABEL_FLEET,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  apply,
  customObjectPath,
  deleteIgnoringMissing,
  isStatus,
  mergePatch,
  objectKey,
} from '../core/kube.js';
import { errorMessage } from '../core/log.js';
import { forgetFleet, initFleetCounters } from '../core/metrics.js';
import { decideScale, type ScaleDecision, type WorkerSample } from './scaling.js';
import { buildDeployment, buildPdb, buildService } from './resources.js';
import { FLEET_PLURAL, type VoiceFleet } from './types.js';

export interface FleetResult {
  requeueAfterMs?: number;
  decision?: ScaleDecision;
}

/** Deployments as last applied by this process: the informer cache may not have caught up yet. */
const appliedDeployments = new WeakMap<FleetContext, Map<string, k8s.V1Deployment>>();

function latestDeployment(ctx: FleetContext, key: string, cached: k8s.V1Deployment | undefined): k8s.V1Deployment | undefined {
  const applied = appliedDeployments.get(ctx)?.get(key);
  if (!applied) return cached;
  if (!cached) return undefined; // deleted since we applied it
  if (cached.metadata?.uid !== applied.metadata?.uid) return cached;
  return (applied.metadata?.generation ?? 0) > (cached.metadata?.generation ?? 0) ? applied : cached;
}

export function fleetPods(ctx: FleetContext, namespace: string, name: string): k8s.V1Pod[] {
  return ctx.caches.pods.list(namespace).filter((p) => p.metadata?.labels?.[LABEL_FLEET] === name);
}

function isReady(pod: k8s.V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function sampleWorker(ctx: FleetContext, fleet: VoiceFleet, pod: k8s.V1Pod): Promise<WorkerSample> {
  const name = pod.metadata!.name!;
  const terminating = Boolean(pod.metadata?.deletionTimestamp);
  const ready = isReady(pod);
  const ip = pod.status?.podIP;
  const unknown = { load: null, admittableCalls: null };
  if (terminating) return { name, activeCalls: null, maxCalls: null, ...unknown, ready, terminating };
  // Not started yet: no calls, no capacity.
  if (!ip || pod.status?.phase !== 'Running') return { name, activeCalls: 0, maxCalls: 0, ...unknown, ready: false, terminating };
  const port = Number(pod.metadata?.annotations?.['prometheus.io/port'] ?? fleet.spec.port);
  const host = ip.includes(':') ? `[${ip}]` : ip;
  try {
    const m = await ctx.scrape(`http://${host}:${port}/metrics`, ctx.settings.scrapeTimeoutMs);
    return { name, activeCalls: m.activeCalls, maxCalls: m.maxCalls, load: m.load ?? null, admittableCalls: m.admittableCalls ?? null, ready, terminating };
  } catch (err) {
    ctx.metrics.scrapeFailures.inc({ namespace: fleet.metadata!.namespace!, fleet: fleet.metadata!.name! });
    ctx.logger.warn('worker metrics unreadable', { pod: name, namespace: fleet.metadata!.namespace, error: errorMessage(err) });
    return { name, activeCalls: null, maxCalls: null, ...unknown, ready, terminating };
  }
}

/** Annotates each worker with its live calls: the ReplicaSet removes the lowest cost first. */
async function applyDeletionCosts(ctx: FleetContext, pods: k8s.V1Pod[], costs: Map<string, number>): Promise<void> {
  await Promise.all(
    pods.map(async (pod) => {
      const cost = costs.get(pod.metadata!.name!);
      if (cost === undefined || pod.metadata?.annotations?.[DELETION_COST] === String(cost)) return;
      try {
        await ctx.clients.core.patchNamespacedPod(
          { name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { metadata: { annotations: { [DELETION_COST]: String(cost) } } } },
          mergePatch,
        );
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
    }),
  );
}

export async function reconcileFleet(ctx: FleetContext, namespace: string, name: string): Promise<FleetResult> {
  const key = objectKey('fleet', namespace, name);
  const cached = ctx.caches.fleets.get(name, namespace);
  if (!cached || cached.metadata?.deletionTimestamp) {
    await cleanupFleet(ctx, namespace, name, cached?.metadata?.uid);
    return {};
  }
  // List items may lack apiVersion/kind; owner references and events need both.
  const fleet: VoiceFleet = { ...cached, apiVersion: GROUP_VERSION, kind: 'VoiceFleet' };
  const uid = fleet.metadata!.uid!;
  const pods = fleetPods(ctx, namespace, name);
  initFleetCounters(ctx.metrics, namespace, name);
  const samples = await Promise.all(pods.map((p) => sampleWorker(ctx, fleet, p)));
  const deployment = latestDeployment(ctx, key, ctx.caches.deployments.get(name, namespace));
  const currentReplicas = deployment?.spec?.replicas;
  const nowMs = ctx.now();
  const decision = decideScale({
    policy: {
      minReplicas: fleet.spec.minReplicas,
      maxReplicas: fleet.spec.maxReplicas,
      callsPerWorker: fleet.spec.callsPerWorker,
      // Absent when the CRD in the cluster predates targetLoad (Helm does not upgrade CRDs).
      targetLoad: fleet.spec.targetLoad ?? DEFAULT_TARGET_LOAD,
      bufferCalls: fleet.spec.buffer?.calls ?? 0,
      bufferPercent: fleet.spec.buffer?.percent ?? 0,
      scaleDownDelayMs: fleet.spec.scaleDownDelaySeconds * 1000,
    },
    workers: samples,
    currentReplicas,
    nowMs,
    memory: ctx.scaleMemory.get(`${key}/${uid}`) ?? null,
  });
  if (decision.memory) ctx.scaleMemory.set(`${key}/${uid}`, decision.memory);
  else ctx.scaleMemory.delete(`${key}/${uid}`);

  // Costs first: when the replica count drops, the ReplicaSet already knows which workers are idle.
  await applyDeletionCosts(ctx, pods, decision.deletionCosts);
  const appliedDeployment = await apply(ctx.clients, buildDeployment(fleet, decision.replicas));
  let perFleet = appliedDeployments.get(ctx);
  if (!perFleet) appliedDeployments.set(ctx, (perFleet = new Map()));
  perFleet.set(key, appliedDeployment);
  await apply(ctx.clients, buildService(fleet));
  await apply(ctx.clients, buildPdb(fleet));

  const scaled = currentReplicas !== undefined && decision.replicas !== currentReplicas;
  if (scaled) {
    const direction = decision.replicas > currentReplicas ? 'up' : 'down';
    ctx.metrics.scaleEvents.inc({ namespace, fleet: name, direction });
    const message = `Scaled ${direction} from ${currentReplicas} to ${decision.replicas}: ${decision.reason}`;
    ctx.logger.info('fleet scaled', { namespace, fleet: name, from: currentReplicas, to: decision.replicas, reason: decision.reason });
    await ctx.recordEvent(fleet, 'Normal', direction === 'up' ? 'ScaledUp' : 'ScaledDown', message);
  }

  const live = pods.filter((p) => !p.metadata?.deletionTimestamp);
  const labels = { namespace, fleet: name };
  ctx.metrics.fleetDesiredReplicas.set(labels, decision.replicas);
  ctx.metrics.fleetActualReplicas.set(labels, live.length);
  ctx.metrics.fleetActiveCalls.set(labels, decision.activeCalls);
  ctx.metrics.fleetCapacity.set(labels, decision.capacity);
  // No series while no worker reports them (older workers): unknown is not 0.
  if (decision.load === null) ctx.metrics.fleetLoad.remove(labels);
  else ctx.metrics.fleetLoad.set(labels, decision.load);
  if (decision.admittableCalls === null) ctx.metrics.fleetAdmittableCalls.remove(labels);
  else ctx.metrics.fleetAdmittableCalls.set(labels, decision.admittableCalls);

  await writeFleetStatus(ctx, fleet, (prev) => {
    const now = new Date(nowMs);
    const readyReplicas = live.filter(isReady).length;
    let conditions = setCondition(
      prev.conditions,
      readyReplicas >= decision.replicas
        ? { type: 'Ready', status: 'True', reason: 'WorkersReady', message: `${readyReplicas}/${decision.replicas} workers ready` }
        : { type: 'Ready', status: 'False', reason: 'WorkersNotReady', message: `${readyReplicas}/${decision.replicas} workers ready` },
      now,
    );
    const scaling =
      decision.action === 'hold'
        ? { status: 'True' as const, reason: 'ScaleDownPending' }
        : live.length !== decision.replicas
          ? { status: 'True' as const, reason: live.length < decision.replicas ? 'ScalingUp' : 'ScalingDown' }
          : { status: 'False' as const, reason: 'Steady' };
    conditions = setCondition(conditions, { type: 'Scaling', ...scaling, message: decision.reason }, now);
    conditions = setCondition(
      conditions,
      decision.scrapeFailures > 0
        ? { type: 'Degraded', status: 'True', reason: 'MetricsUnreadable', message: `${decision.scrapeFailures} workers' /metrics unreadable` }
        : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
      now,
    );
    return {
      observedGeneration: fleet.metadata!.generation,
      replicas: live.length,
      readyReplicas,
      desiredReplicas: decision.replicas,
      recommendedReplicas: decision.recommendedReplicas,
      activeCalls: decision.activeCalls,
      capacity: decision.capacity,
      bufferCalls: decision.bufferCalls,
      // Two decimals: a status write per pass for every jitter of the gauge would be noise.
      load: decision.load === null ? undefined : Math.round(decision.load * 100) / 100,
      admittableCalls: decision.admittableCalls ?? undefined,
      loadWorkers: decision.loadWorkers,
      busyWorkers: decision.busyWorkers,
      scrapeFailures: decision.scrapeFailures,
      scaleDownPendingSince: decision.memory ? rfc3339(new Date(decision.memory.belowSinceMs)) : undefined,
      lastScaleTime: scaled ? rfc3339(now) : prev.lastScaleTime,
      lastScaleReason: scaled ? decision.reason : prev.lastScaleReason,
      conditions,
    };
  });
  return { requeueAfterMs: ctx.settings.scrapeIntervalMs, decision };
}

/** The status this operator last wrote per fleet, with the resourceVersion the write produced. */
const writtenStatus = new WeakMap<FleetContext, Map<string, { uid: string; resourceVersion: bigint; status: VoiceFleetStatus }>>();

function rvOf(obj: { metadata?: { resourceVersion?: string } } | undefined): bigint | null {
  const rv = obj?.metadata?.resourceVersion;
  return rv && /^[0-9]+$/.test(rv) ? BigInt(rv) : null;
}

/**
 * The status to build on: the informer's copy, unless our own last write is newer than it. The watch
 * event of a write can lag the next pass; building on the older copy would undo that write (e.g. put
 * an earlier lastScaleTime back).
 */
function latestStatus(ctx: FleetContext, fleet: VoiceFleet): VoiceFleetStatus {
  const key = `${fleet.metadata!.namespace}/${fleet.metadata!.name}`;
  const written = writtenStatus.get(ctx)?.get(key);
  const cachedRv = rvOf(fleet);
  if (written && written.uid === fleet.metadata!.uid && cachedRv !== null && written.resourceVersion > cachedRv) return written.status;
  return fleet.status ?? {};
}

/** Merge-patches status through the status subresource when it differs from the latest known one. */
export async function writeFleetStatus(
  ctx: FleetContext,
  fleet: VoiceFleet,
  build: (prev: VoiceFleetStatus) => VoiceFleetStatus,
): Promise<void> {
  const prev = latestStatus(ctx, fleet);
  const next = build(prev);
  if (sameJson(prev, next)) return;
  // Merge patch: keys absent from `next` must be sent as null to be removed.
  const body: Record<string, unknown> = { ...next };
  for (const k of Object.keys(prev)) if (!(k in body) || body[k] === undefined) body[k] = null;
  const updated = (await ctx.clients.custom.patchNamespacedCustomObjectStatus(
    { ...customObjectPath(FLEET_PLURAL, fleet), body: { status: body } },
    mergePatch,
  )) as VoiceFleet;
  const rv = rvOf(updated);
  if (rv !== null) {
    let perFleet = writtenStatus.get(ctx);
    if (!perFleet) writtenStatus.set(ctx, (perFleet = new Map()));
    perFleet.set(`${fleet.metadata!.namespace}/${fleet.metadata!.name}`, { uid: fleet.metadata!.uid!, resourceVersion: rv, status: updated.status ?? next });
  }
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalize(a)) === JSON.stringify(normalize(b));
}

function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => x !== undefined && x !== null)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, normalize(x)]),
    );
  }
  return v;
}

/**
 * The fleet is gone: delete what it owned. A cluster's garbage collector does the same through the
 * owner references; doing it here as well covers clusters (and test servers) without one.
 */
export async function cleanupFleet(ctx: FleetContext, namespace: string, name: string, keepUid?: string): Promise<void> {
  const labelSelector = `${LABEL_FLEET}=${name},${LABEL_MANAGED_BY}=${MANAGED_BY}`;
  const stale = (o: k8s.KubernetesObject) =>
    o.metadata?.labels?.[LABEL_FLEET] === name &&
    o.metadata?.labels?.[LABEL_MANAGED_BY] === MANAGED_BY &&
    !(keepUid && o.metadata?.ownerReferences?.some((r) => r.uid === keepUid));
  const [services, pdbs, deployments] = await Promise.all([
    ctx.clients.core.listNamespacedService({ namespace, labelSelector }),
    ctx.clients.policy.listNamespacedPodDisruptionBudget({ namespace, labelSelector }),
    ctx.clients.apps.listNamespacedDeployment({ namespace, labelSelector }),
  ]);
  const deletions: Array<Promise<boolean>> = [];
  for (const d of deployments.items.filter(stale)) {
    deletions.push(deleteIgnoringMissing(() => ctx.clients.apps.deleteNamespacedDeployment({ name: d.metadata!.name!, namespace, propagationPolicy: 'Background' })));
  }
  for (const s of services.items.filter(stale)) {
    deletions.push(deleteIgnoringMissing(() => ctx.clients.core.deleteNamespacedService({ name: s.metadata!.name!, namespace })));
  }
  for (const p of pdbs.items.filter(stale)) {
    deletions.push(deleteIgnoringMissing(() => ctx.clients.policy.deleteNamespacedPodDisruptionBudget({ name: p.metadata!.name!, namespace })));
  }
  const deleted = (await Promise.all(deletions)).filter(Boolean).length;
  if (deleted > 0) ctx.logger.info('fleet children removed', { namespace, fleet: name, deleted });
  for (const k of ctx.scaleMemory.keys()) if (k.startsWith(`${objectKey('fleet', namespace, name)}/`)) ctx.scaleMemory.delete(k);
  appliedDeployments.get(ctx)?.delete(objectKey('fleet', namespace, name));
  forgetFleet(ctx.metrics, namespace, name);
}
