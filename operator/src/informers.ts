// List+watch caches of what the operator reads: its two resources, the Deployments it owns, and the
// worker pods (label voiceplatform.io/fleet). Handlers turn every change into a queue key.
import * as k8s from '@kubernetes/client-node';
import { VOICE_API_GROUP as G, VOICE_API_VERSION as V } from '@voice-platform/schemas';
import type { BotResource } from './bot/types.js';
import type { VoiceFleet } from './fleet/types.js';
import { LABEL_FLEET, LABEL_MANAGED_BY, MANAGED_BY, type KubeClients } from './core/kube.js';
import { errorMessage, type Logger } from './core/log.js';

type Cached<T extends k8s.KubernetesObject> = k8s.Informer<T> & k8s.ObjectCache<T>;

export interface Informers {
  fleets: Cached<VoiceFleet>;
  bots: Cached<BotResource>;
  deployments: Cached<k8s.V1Deployment>;
  pods: Cached<k8s.V1Pod>;
}

export function createInformers(clients: KubeClients, namespace: string): Informers {
  const { kc, custom, apps, core } = clients;
  const customPath = (plural: string) => (namespace ? `/apis/${G}/${V}/namespaces/${namespace}/${plural}` : `/apis/${G}/${V}/${plural}`);
  const listCustom = (plural: string) => () =>
    namespace
      ? custom.listNamespacedCustomObject({ group: G, version: V, namespace, plural })
      : custom.listClusterCustomObject({ group: G, version: V, plural });
  const owned = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;
  return {
    fleets: k8s.makeInformer<VoiceFleet>(kc, customPath('voicefleets'), listCustom('voicefleets')),
    bots: k8s.makeInformer<BotResource>(kc, customPath('bots'), listCustom('bots')),
    deployments: k8s.makeInformer<k8s.V1Deployment>(
      kc,
      namespace ? `/apis/apps/v1/namespaces/${namespace}/deployments` : '/apis/apps/v1/deployments',
      () => (namespace ? apps.listNamespacedDeployment({ namespace, labelSelector: owned }) : apps.listDeploymentForAllNamespaces({ labelSelector: owned })),
      owned,
    ),
    pods: k8s.makeInformer<k8s.V1Pod>(
      kc,
      namespace ? `/api/v1/namespaces/${namespace}/pods` : '/api/v1/pods',
      () => (namespace ? core.listNamespacedPod({ namespace, labelSelector: LABEL_FLEET }) : core.listPodForAllNamespaces({ labelSelector: LABEL_FLEET })),
      LABEL_FLEET,
    ),
  };
}

/**
 * Starts every informer (each resolves once its first list is in the cache) and restarts a watch
 * that fails, after a pause, until stopped.
 */
export async function startInformers(informers: Informers, logger: Logger, restartDelayMs = 2000): Promise<() => Promise<void>> {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  for (const [name, informer] of Object.entries(informers) as Array<[string, Cached<k8s.KubernetesObject>]>) {
    informer.on('error', (err: unknown) => {
      if (stopped) return;
      logger.warn('watch failed; restarting', { informer: name, error: errorMessage(err) });
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopped) informer.start().catch((e: unknown) => logger.error('watch restart failed', { informer: name, error: errorMessage(e) }));
      }, restartDelayMs);
      timers.add(timer);
    });
  }
  await Promise.all(Object.values(informers).map((i: Cached<k8s.KubernetesObject>) => i.start()));
  return async () => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
    await Promise.all(Object.values(informers).map((i: Cached<k8s.KubernetesObject>) => i.stop()));
  };
}
