// The objects a VoiceFleet owns: the worker Deployment, its Service and its PodDisruptionBudget.
import type * as k8s from '@kubernetes/client-node';
import type { FleetEnvVar } from '@voice-platform/schemas';
import { LABEL_FLEET, LABEL_MANAGED_BY, MANAGED_BY, ownerReference } from '../core/kube.js';
import type { VoiceFleet } from './types.js';

/** Time the preStop hook and the kubelet get beyond the drain itself. */
export const TERMINATION_MARGIN_SECONDS = 30;

function fleetLabels(fleet: VoiceFleet): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'voice-worker',
    'app.kubernetes.io/instance': fleet.metadata!.name!,
    'app.kubernetes.io/component': 'worker',
    'app.kubernetes.io/part-of': 'voice-platform',
    [LABEL_MANAGED_BY]: MANAGED_BY,
    [LABEL_FLEET]: fleet.metadata!.name!,
  };
}

function selectorLabels(fleet: VoiceFleet): Record<string, string> {
  return { [LABEL_FLEET]: fleet.metadata!.name!, 'app.kubernetes.io/component': 'worker' };
}

function metadata(fleet: VoiceFleet): k8s.V1ObjectMeta {
  return {
    name: fleet.metadata!.name!,
    namespace: fleet.metadata!.namespace!,
    labels: fleetLabels(fleet),
    ownerReferences: [ownerReference(fleet)],
  };
}

/** Operator-set variables first; an entry of the same name in spec.env replaces it. */
function workerEnv(fleet: VoiceFleet): k8s.V1EnvVar[] {
  const { spec } = fleet;
  const base: k8s.V1EnvVar[] = [
    { name: 'PORT', value: String(spec.port) },
    { name: 'MAX_CONCURRENT_CALLS', value: String(spec.callsPerWorker) },
    { name: 'DRAIN_TIMEOUT_MS', value: String(spec.drainTimeoutSeconds * 1000) },
    // The pod name is the worker's id in its Redis heartbeat, so fleet views match pods.
    { name: 'WORKER_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'FLEET_NAME', value: fleet.metadata!.name! },
  ];
  const user = (spec.env ?? []) as FleetEnvVar[];
  const names = new Set(user.map((e) => e.name));
  return [...base.filter((e) => !names.has(e.name)), ...(user as k8s.V1EnvVar[])];
}

/** preStop: start the drain (SIGTERM to the worker) and wait until its calls end or the drain timeout. */
function preStopCommand(drainTimeoutSeconds: number): string[] {
  return [
    '/bin/sh',
    '-c',
    `kill -TERM 1 2>/dev/null; i=0; while kill -0 1 2>/dev/null && [ "$i" -lt ${drainTimeoutSeconds} ]; do sleep 1; i=$((i+1)); done`,
  ];
}

export function buildDeployment(fleet: VoiceFleet, replicas: number): k8s.V1Deployment {
  const { spec } = fleet;
  const container: k8s.V1Container = {
    name: 'worker',
    image: spec.image,
    ports: [{ name: 'http', containerPort: spec.port, protocol: 'TCP' }],
    env: workerEnv(fleet),
    readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 5, failureThreshold: 2 },
    // /health turns 503 while draining (readiness: no new calls); liveness must not, or the kubelet
    // would restart a draining worker and cut its calls.
    livenessProbe: { httpGet: { path: '/health/live', port: 'http' }, periodSeconds: 10, failureThreshold: 6, initialDelaySeconds: 10 },
    lifecycle: { preStop: { exec: { command: preStopCommand(spec.drainTimeoutSeconds) } } },
  };
  if (spec.imagePullPolicy) container.imagePullPolicy = spec.imagePullPolicy;
  if (spec.envFrom) container.envFrom = spec.envFrom as k8s.V1EnvFromSource[];
  if (spec.resources) container.resources = spec.resources as k8s.V1ResourceRequirements;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(fleet),
    spec: {
      replicas,
      selector: { matchLabels: selectorLabels(fleet) },
      // Rollouts add a worker before removing one: capacity never dips while calls are live.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      template: {
        metadata: {
          labels: fleetLabels(fleet),
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(spec.port),
            'prometheus.io/path': '/metrics',
          },
        },
        spec: {
          terminationGracePeriodSeconds: spec.drainTimeoutSeconds + TERMINATION_MARGIN_SECONDS,
          containers: [container],
        },
      },
    },
  };
}

export function buildService(fleet: VoiceFleet): k8s.V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(fleet),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(fleet),
      ports: [{ name: 'http', port: fleet.spec.port, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

export function buildPdb(fleet: VoiceFleet): k8s.V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: metadata(fleet),
    // One worker at a time through voluntary disruptions (node drains); each one drains its calls.
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(fleet) } },
  };
}
