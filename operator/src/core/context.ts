// What every reconciler shares: API clients, settings, logger, metrics, the clock and the Event recorder. Each
// domain folder adds what it reads beyond this (bot/context.ts, fleet/context.ts); the composition root's
// context.ts is the union that controller.ts builds, so the domains need not import the root.
import type * as k8s from '@kubernetes/client-node';
import type { KubeClients } from './kube.js';
import type { Logger } from './log.js';
import type { OperatorMetrics } from './metrics.js';

export interface Cache<T> {
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): ReadonlyArray<T>;
}

export interface OperatorSettings {
  /** Empty: every namespace. */
  watchNamespace: string;
  scrapeIntervalMs: number;
  scrapeTimeoutMs: number;
  /** How often a Bot already in sync is checked against the backend again. */
  botResyncMs: number;
  backendUrl: string;
  /** Secret (in operatorNamespace) with ADMIN_EMAIL and ADMIN_PASSWORD for the backend admin API. */
  backendCredentialsSecret: string;
  operatorNamespace: string;
  concurrency: number;
}

export interface KernelContext {
  clients: KubeClients;
  settings: OperatorSettings;
  logger: Logger;
  metrics: OperatorMetrics;
  now: () => number;
  /** Recorder of Kubernetes Events on an object. */
  recordEvent(obj: k8s.KubernetesObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}
