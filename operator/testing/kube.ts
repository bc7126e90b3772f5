// Test helpers for the real kube-apiserver started by the suite's globalSetup (KUBECONFIG).
import * as k8s from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { OperatorSettings } from '../src/core/context.js';
import { allCrds } from '../src/crds/definitions.js';
import { FIELD_MANAGER, isStatus, kubeClients, type KubeClients } from '../src/core/kube.js';
import { rawApply } from './raw.js';

export function testKubeConfig(): k8s.KubeConfig {
  const path = process.env.KUBECONFIG;
  if (!path) throw new Error('KUBECONFIG is not set: run through the operator jest config (globalSetup)');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export function testClients(): KubeClients {
  return kubeClients(testKubeConfig());
}

/** Polls `fn` until it returns a value other than undefined/false; fails with the last value seen. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await delay(intervalMs);
  }
}

/** Whether the object `read` reads is gone: false while it still reads, true once that is a 404. */
export async function gone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (err) {
    return isStatus(err, 404);
  }
}

/** Applies the generated CRDs and waits until the API server serves them. */
export async function installCrds(clients: KubeClients): Promise<void> {
  const api = clients.kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const crd of allCrds()) {
    const res = await rawApply(clients.kc, crd as k8s.KubernetesObject, { fieldManager: FIELD_MANAGER });
    if (res.status !== 200 && res.status !== 201) throw new Error(`CRD not applied: ${JSON.stringify(res.body)}`);
    const name = (crd.metadata as { name: string }).name;
    await waitFor(`CRD ${name} established`, async () => {
      const got = await api.readCustomResourceDefinition({ name });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
}

export async function createNamespace(clients: KubeClients, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await clients.core.createNamespace({ body: { metadata: { name } } });
  return name;
}

export function testSettings(namespace: string, over: Partial<OperatorSettings> = {}): OperatorSettings {
  return {
    watchNamespace: namespace,
    operatorNamespace: namespace,
    scrapeIntervalMs: 500,
    scrapeTimeoutMs: 1000,
    botResyncMs: 300_000,
    backendUrl: 'http://127.0.0.1:9', // replaced by tests that sync bots
    backendCredentialsSecret: 'voice-platform-admin',
    concurrency: 2,
    ...over,
  };
}
