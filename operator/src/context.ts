// What the reconcilers share: API clients, informer caches, metrics, settings and the clock.
import type * as k8s from '@kubernetes/client-node';
import type { KubeClients } from './kube.js';
import type { Logger } from './log.js';
import type { OperatorMetrics } from './metrics.js';
import type { ScaleMemory } from './scaling.js';
import type { Scraper } from './fleet/scrape.js';
import type { VoiceFleet } from './fleet/types.js';
import type { BotResource } from './bot/types.js';

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

export interface Context {
  clients: KubeClients;
  settings: OperatorSettings;
  logger: Logger;
  metrics: OperatorMetrics;
  now: () => number;
  scrape: Scraper;
  caches: {
    fleets: Cache<VoiceFleet>;
    bots: Cache<BotResource>;
    deployments: Cache<k8s.V1Deployment>;
    pods: Cache<k8s.V1Pod>;
  };
  /** Per fleet key: the pending scale-down carried between passes. */
  scaleMemory: Map<string, ScaleMemory>;
  /** Recorder of Kubernetes Events on an object. */
  recordEvent(obj: k8s.KubernetesObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}
