// Operator metrics (prom-client) and the HTTP server for /metrics, /healthz and /readyz.
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface OperatorMetrics {
  registry: Registry;
  reconcileDuration: Histogram<'kind' | 'result'>;
  reconcileErrors: Counter<'kind'>;
  fleetDesiredReplicas: Gauge<'namespace' | 'fleet'>;
  fleetActualReplicas: Gauge<'namespace' | 'fleet'>;
  fleetActiveCalls: Gauge<'namespace' | 'fleet'>;
  fleetCapacity: Gauge<'namespace' | 'fleet'>;
  fleetLoad: Gauge<'namespace' | 'fleet'>;
  fleetAdmittableCalls: Gauge<'namespace' | 'fleet'>;
  scrapeFailures: Counter<'namespace' | 'fleet'>;
  scaleEvents: Counter<'namespace' | 'fleet' | 'direction'>;
  botSyncs: Counter<'result'>;
  isLeader: Gauge;
  queueDepth: Gauge;
}

export function createMetrics(registry = new Registry(), withDefaults = false): OperatorMetrics {
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'voice_operator_' });
  const fleet = ['namespace', 'fleet'] as const;
  const metrics: OperatorMetrics = {
    registry,
    reconcileDuration: new Histogram({
      name: 'voice_operator_reconcile_duration_seconds',
      help: 'Time of one reconcile pass',
      labelNames: ['kind', 'result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    reconcileErrors: new Counter({ name: 'voice_operator_reconcile_errors_total', help: 'Failed reconcile passes', labelNames: ['kind'], registers: [registry] }),
    fleetDesiredReplicas: new Gauge({ name: 'voice_operator_fleet_desired_replicas', help: 'Replicas the operator set on a fleet', labelNames: fleet, registers: [registry] }),
    fleetActualReplicas: new Gauge({ name: 'voice_operator_fleet_replicas', help: 'Worker pods of a fleet that exist and are not terminating', labelNames: fleet, registers: [registry] }),
    fleetActiveCalls: new Gauge({ name: 'voice_operator_fleet_active_calls', help: 'Live calls on a fleet, from its workers', labelNames: fleet, registers: [registry] }),
    fleetCapacity: new Gauge({ name: 'voice_operator_fleet_capacity_calls', help: 'Call slots of a fleet, from its workers', labelNames: fleet, registers: [registry] }),
    fleetLoad: new Gauge({ name: 'voice_operator_fleet_load', help: 'Sum of voice_worker_load of a fleet\'s workers that report it', labelNames: fleet, registers: [registry] }),
    fleetAdmittableCalls: new Gauge({ name: 'voice_operator_fleet_admittable_calls', help: 'Calls a fleet\'s workers can still take within their load threshold (those that report it)', labelNames: fleet, registers: [registry] }),
    scrapeFailures: new Counter({ name: 'voice_operator_scrape_failures_total', help: 'Worker /metrics reads that failed', labelNames: fleet, registers: [registry] }),
    scaleEvents: new Counter({ name: 'voice_operator_scale_events_total', help: 'Replica changes made by the operator', labelNames: ['namespace', 'fleet', 'direction'], registers: [registry] }),
    botSyncs: new Counter({ name: 'voice_operator_bot_syncs_total', help: 'Bot upserts into the backend', labelNames: ['result'], registers: [registry] }),
    isLeader: new Gauge({ name: 'voice_operator_leader', help: '1 while this replica holds the leader Lease', registers: [registry] }),
    queueDepth: new Gauge({ name: 'voice_operator_queue_depth', help: 'Keys waiting in the work queue', registers: [registry] }),
  };
  // Counters exist at 0 from the start, so rate() and the dashboard show a quiet operator, not no data.
  for (const kind of ['fleet', 'bot']) metrics.reconcileErrors.inc({ kind }, 0);
  return metrics;
}

/** A fleet's counters at 0 from its first pass (scrape failures, scale events each way). */
export function initFleetCounters(metrics: OperatorMetrics, namespace: string, fleet: string): void {
  metrics.scrapeFailures.inc({ namespace, fleet }, 0);
  for (const direction of ['up', 'down']) metrics.scaleEvents.inc({ namespace, fleet, direction }, 0);
}

export function forgetFleet(metrics: OperatorMetrics, namespace: string, fleet: string): void {
  for (const g of [metrics.fleetDesiredReplicas, metrics.fleetActualReplicas, metrics.fleetActiveCalls, metrics.fleetCapacity, metrics.fleetLoad, metrics.fleetAdmittableCalls, metrics.scrapeFailures]) {
    g.remove({ namespace, fleet });
  }
  for (const direction of ['up', 'down']) metrics.scaleEvents.remove({ namespace, fleet, direction });
}

export function serveMetrics(
  metrics: OperatorMetrics,
  port: number,
  ready: () => boolean,
  host = '0.0.0.0',
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/metrics') {
      metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    } else if (url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    } else if (url === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(ok ? 'ok' : 'not ready');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
