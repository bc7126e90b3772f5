// Kubernetes Events (core/v1) so `kubectl describe` shows what the operator did and why.
import type * as k8s from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { FIELD_MANAGER, type KubeClients } from './core/kube.js';
import { errorMessage, type Logger } from './core/log.js';

export function eventRecorder(clients: KubeClients, logger: Logger, identity: string) {
  return async (obj: k8s.KubernetesObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> => {
    const now = new Date();
    const meta = obj.metadata!;
    try {
      await clients.core.createNamespacedEvent({
        namespace: meta.namespace!,
        body: {
          metadata: { name: `${meta.name}.${now.getTime().toString(16)}${randomBytes(3).toString('hex')}`, namespace: meta.namespace! },
          involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: meta.name, namespace: meta.namespace, uid: meta.uid },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: FIELD_MANAGER, host: identity },
          reportingComponent: FIELD_MANAGER,
          reportingInstance: identity,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (err) {
      // An event is informational: losing one must not fail the reconcile that made the change.
      logger.warn('event not recorded', { reason, error: errorMessage(err) });
    }
  };
}
