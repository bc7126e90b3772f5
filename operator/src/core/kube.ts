// The Kubernetes API clients the operator uses, and the few helpers every reconciler needs.
import * as k8s from '@kubernetes/client-node';
import { VOICE_API_GROUP, VOICE_API_VERSION } from '@voice-platform/schemas';

export const FIELD_MANAGER = 'voice-platform-operator';
export const GROUP_VERSION = `${VOICE_API_GROUP}/${VOICE_API_VERSION}`;
export const LABEL_FLEET = `${VOICE_API_GROUP}/fleet`;
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'voice-platform-operator';
export const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

export interface KubeClients {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  policy: k8s.PolicyV1Api;
  custom: k8s.CustomObjectsApi;
  coordination: k8s.CoordinationV1Api;
  objects: k8s.KubernetesObjectApi;
}

export function kubeClients(kc: k8s.KubeConfig): KubeClients {
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    policy: kc.makeApiClient(k8s.PolicyV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    coordination: kc.makeApiClient(k8s.CoordinationV1Api),
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
  };
}

/** The generated clients send JSON Patch by default; merge patches need the header set. */
export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
export const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);

export function isStatus(err: unknown, code: number): boolean {
  return err instanceof k8s.ApiException && err.code === code;
}

/** Server-side apply: the operator owns exactly the fields it sends, and takes them back if changed. */
export async function apply<T extends k8s.KubernetesObject>(clients: KubeClients, obj: T): Promise<T> {
  return clients.objects.patch(obj, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
}

/** Deletes, treating "already gone" as success. */
export async function deleteIgnoringMissing(fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    if (isStatus(err, 404)) return false;
    throw err;
  }
}

export interface CustomObject<Spec, Status> extends k8s.KubernetesObject {
  spec: Spec;
  status?: Status;
}

export const objectKey = (kind: 'fleet' | 'bot', namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

export function parseKey(key: string): { kind: 'fleet' | 'bot'; namespace: string; name: string } {
  const [kind, namespace, name] = key.split('/');
  if ((kind !== 'fleet' && kind !== 'bot') || !namespace || !name) throw new Error(`bad queue key ${key}`);
  return { kind, namespace, name };
}

/** Where a voice-platform custom object (`plural`: voicefleets or bots) is, for the custom objects API. */
export function customObjectPath(plural: string, obj: k8s.KubernetesObject) {
  return { group: VOICE_API_GROUP, version: VOICE_API_VERSION, namespace: obj.metadata!.namespace!, plural, name: obj.metadata!.name! };
}

export function ownerReference(obj: k8s.KubernetesObject): k8s.V1OwnerReference {
  return {
    apiVersion: obj.apiVersion!,
    kind: obj.kind!,
    name: obj.metadata!.name!,
    uid: obj.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A short, readable message from an API error (the Status message when there is one). */
export function apiErrorMessage(err: unknown): string {
  if (err instanceof k8s.ApiException) {
    try {
      const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      if (body && typeof body.message === 'string') return `${err.code}: ${body.message}`;
    } catch {
      /* not JSON */
    }
    return `HTTP ${err.code}`;
  }
  return err instanceof Error ? err.message : String(err);
}
