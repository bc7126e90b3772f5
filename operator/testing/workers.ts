// Small real HTTP servers that expose a worker's call metrics under the worker's metric names
// (docs/design.md §4), standing in for worker pods: the API server here runs no kubelet.
import type * as k8s from '@kubernetes/client-node';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import { LABEL_FLEET, mergePatch, type KubeClients } from '../src/core/kube.js';

export interface FakeWorker {
  port: number;
  scrapes: number;
  setActiveCalls(n: number): void;
  /** voice_worker_load and voice_worker_admittable_calls: absent (an older worker) until first set. */
  setLoad(load: number, admittableCalls: number): void;
  close(): Promise<void>;
}

export async function startFakeWorker(maxCalls: number): Promise<FakeWorker> {
  const registry = new Registry();
  const active = new Gauge({ name: 'voice_worker_active_calls', help: 'Live calls', registers: [registry] });
  const max = new Gauge({ name: 'voice_worker_max_calls', help: 'MAX_CONCURRENT_CALLS', registers: [registry] });
  max.set(maxCalls);
  active.set(0);
  const worker = { scrapes: 0 } as FakeWorker;
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    worker.scrapes++;
    void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  worker.port = (server.address() as AddressInfo).port;
  worker.setActiveCalls = (n) => active.set(n);
  let load: Gauge | undefined;
  let admittable: Gauge | undefined;
  worker.setLoad = (l, a) => {
    load ??= new Gauge({ name: 'voice_worker_load', help: 'Load 0..1', registers: [registry] });
    admittable ??= new Gauge({ name: 'voice_worker_admittable_calls', help: 'Calls admittable within LOAD_THRESHOLD', registers: [registry] });
    load.set(l);
    admittable.set(a);
  };
  worker.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return worker;
}

/** A Running, Ready worker pod of `fleet` whose /metrics is served on 127.0.0.1:`port`. */
export async function createWorkerPod(clients: KubeClients, namespace: string, fleet: string, name: string, port: number): Promise<k8s.V1Pod> {
  await clients.core.createNamespacedPod({
    namespace,
    body: {
      metadata: {
        name,
        labels: { [LABEL_FLEET]: fleet, 'app.kubernetes.io/component': 'worker' },
        annotations: { 'prometheus.io/port': String(port) },
      },
      spec: { containers: [{ name: 'worker', image: 'voice-worker:test' }] },
    },
  });
  return clients.core.patchNamespacedPodStatus(
    {
      name,
      namespace,
      body: {
        status: {
          phase: 'Running',
          podIP: '127.0.0.1',
          podIPs: [{ ip: '127.0.0.1' }],
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
        },
      },
    },
    mergePatch,
  );
}
