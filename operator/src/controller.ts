// createOperator: informers → work queue → reconcilers. Runs only while this replica leads (main.ts).
import * as k8s from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { BotSyncClient } from './bot/backend.js';
import { ReportedError, reconcileBot, secretCredentials, type BotSync } from './bot/reconcile.js';
import { setCondition } from './core/conditions.js';
import type { Context } from './context.js';
import type { OperatorSettings } from './core/context.js';
import { eventRecorder } from './events.js';
import { reconcileFleet, writeFleetStatus } from './fleet/reconcile.js';
import { httpScraper, type Scraper } from './fleet/scrape.js';
import { createInformers, startInformers, type Informers } from './informers.js';
import { LABEL_FLEET, apiErrorMessage, kubeClients, objectKey, parseKey } from './core/kube.js';
import { silentLogger, type Logger } from './core/log.js';
import { createMetrics, type OperatorMetrics } from './core/metrics.js';
import { WorkQueue, runWorkers } from './queue.js';

interface OperatorDeps {
  kc: k8s.KubeConfig;
  settings: OperatorSettings;
  logger?: Logger;
  metrics?: OperatorMetrics;
  scrape?: Scraper;
  now?: () => number;
  identity?: string;
  queue?: WorkQueue;
}

export interface Operator {
  readonly context: Context;
  readonly queue: WorkQueue;
  readonly informers: Informers;
  /** Reconcile passes run by this instance (a standby runs none). */
  readonly stats: { reconciles: number; errors: number };
  /** Starts the informers (resolves once their caches are filled) and the queue workers. */
  start(): Promise<void>;
  /** Stops watching, lets in-flight reconciles finish, and resolves when all workers have stopped. */
  stop(): Promise<void>;
  ready(): boolean;
}

export function createOperator(deps: OperatorDeps): Operator {
  const logger = deps.logger ?? silentLogger;
  const metrics = deps.metrics ?? createMetrics();
  const clients = kubeClients(deps.kc);
  const identity = deps.identity ?? hostname();
  const queue = deps.queue ?? new WorkQueue();
  const informers = createInformers(clients, deps.settings.watchNamespace);
  const context: Context = {
    clients,
    settings: deps.settings,
    logger,
    metrics,
    now: deps.now ?? Date.now,
    scrape: deps.scrape ?? httpScraper,
    caches: informers,
    scaleMemory: new Map(),
    recordEvent: eventRecorder(clients, logger, identity),
  };
  const botSync: BotSync = {
    backend: new BotSyncClient(deps.settings.backendUrl, secretCredentials(context)),
  };
  const stats = { reconciles: 0, errors: 0 };
  let stopInformers: (() => Promise<void>) | undefined;
  let workers: Promise<void> | undefined;
  let running = false;

  const meta = (o: k8s.KubernetesObject) => ({ ns: o.metadata?.namespace ?? '', name: o.metadata?.name ?? '' });
  const enqueueFleet = (o: k8s.KubernetesObject) => queue.add(objectKey('fleet', meta(o).ns, meta(o).name));
  const enqueueOwnerFleet = (o: k8s.KubernetesObject) => {
    const fleet = o.metadata?.labels?.[LABEL_FLEET];
    if (fleet) queue.add(objectKey('fleet', meta(o).ns, fleet));
  };
  const enqueueBot = (o: k8s.KubernetesObject) => queue.add(objectKey('bot', meta(o).ns, meta(o).name));
  // Bots whose spec.fleetRef names this fleet: their FleetFound changes when it comes or goes.
  const enqueueFleetBots = (o: k8s.KubernetesObject) => {
    const { ns, name } = meta(o);
    for (const bot of informers.bots.list(ns)) if (bot.spec?.fleetRef?.name === name) enqueueBot(bot);
  };
  informers.fleets.on('change', enqueueFleet);
  informers.fleets.on('add', enqueueFleetBots);
  informers.fleets.on('delete', enqueueFleetBots);
  // No delete handler for Bots: a deletion is seen as an update setting deletionTimestamp (the finalizer
  // holds the object), also after a restart, when the initial list adds it.
  informers.bots.on('add', enqueueBot);
  informers.bots.on('update', enqueueBot);
  informers.deployments.on('change', enqueueOwnerFleet);
  informers.pods.on('change', enqueueOwnerFleet);

  async function handle(key: string): Promise<void> {
    const { kind, namespace, name } = parseKey(key);
    const end = metrics.reconcileDuration.startTimer({ kind });
    stats.reconciles++;
    try {
      const result =
        kind === 'fleet' ? await reconcileFleet(context, namespace, name) : await reconcileBot(context, botSync, namespace, name);
      end({ result: 'success' });
      queue.forget(key);
      if (result.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      end({ result: 'error' });
      stats.errors++;
      metrics.reconcileErrors.inc({ kind });
      const retryInMs = queue.addRateLimited(key);
      const message = apiErrorMessage(err);
      logger.warn('reconcile failed', { resource: key, retryInMs, error: message }); // not `key`: the logs redact that name
      if (kind === 'fleet' && !(err instanceof ReportedError)) await reportFleetError(namespace, name, message);
    } finally {
      metrics.queueDepth.set(queue.length);
    }
  }

  async function reportFleetError(namespace: string, name: string, message: string): Promise<void> {
    const fleet = informers.fleets.get(name, namespace);
    if (!fleet) return;
    try {
      await writeFleetStatus(context, fleet, (prev) => ({
        ...prev,
        conditions: setCondition(prev.conditions, { type: 'Degraded', status: 'True', reason: 'ReconcileError', message }, new Date(context.now())),
      }));
    } catch (err) {
      logger.warn('status not written', { namespace, fleet: name, error: apiErrorMessage(err) });
    }
  }

  return {
    context,
    queue,
    informers,
    stats,
    async start() {
      stopInformers = await startInformers(informers, logger);
      running = true;
      workers = runWorkers(queue, deps.settings.concurrency, handle);
      logger.info('operator started', { identity, namespace: deps.settings.watchNamespace || '(all)' });
    },
    async stop() {
      running = false;
      await stopInformers?.();
      queue.shutDown();
      await workers;
      logger.info('operator stopped', { identity });
    },
    ready: () => running,
  };
}
