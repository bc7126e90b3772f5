// The suite's own objects in the cluster (namespace vp-test): the test phone (sipp with the magic numbers
// of docs/design.md §7, images from scripts/kind/test-images.sh) and a Prometheus that scrapes the
// platform as the chart's ServiceMonitors select it and loads the chart's alert rules.
import { NAMESPACE, TEST_NAMESPACE } from './cluster.js';

const ns = TEST_NAMESPACE;
const restricted = {
  runAsNonRoot: true,
  runAsUser: 10001,
  runAsGroup: 10001,
  seccompProfile: { type: 'RuntimeDefault' },
};
const container = {
  imagePullPolicy: 'Never',
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
};

/** A one-replica Deployment and its Service (ports as given) of the suite's namespace. */
function workload(name: string, podSpec: object, ports: Array<{ name: string; port: number; protocol?: string }>): object[] {
  const labels = { app: name };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns, labels },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec } },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns, labels },
      spec: { selector: labels, ports: ports.map((p) => ({ ...p, targetPort: p.name })) },
    },
  ];
}

export const PHONE_SERVICE = `vp-phone.${ns}.svc.cluster.local`;

export function phoneObjects(): object[] {
  return workload(
    'vp-phone',
    {
      // sipp plays its RTP (play_pcap_audio) through a raw socket: root with only CAP_NET_RAW.
      securityContext: { runAsUser: 0, runAsGroup: 0, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          ...container,
          securityContext: { ...container.securityContext, capabilities: { drop: ['ALL'], add: ['NET_RAW'] } },
          name: 'sipp',
          image: 'voice-test-phone:dev',
          env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          ports: [{ name: 'sip', containerPort: 5060, protocol: 'UDP' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    },
    [{ name: 'sip', port: 5060, protocol: 'UDP' }],
  );
}

export interface ServiceMonitor {
  metadata: { name: string; namespace?: string };
  spec: {
    selector: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values: string[] }> };
    namespaceSelector?: { any?: boolean; matchNames?: string[] };
    jobLabel?: string;
    targetLabels?: string[];
    endpoints: Array<{ port: string; path?: string; interval?: string }>;
  };
}

const sanitize = (label: string) => label.replace(/[^a-zA-Z0-9_]/g, '_');
const serviceLabel = (label: string) => `__meta_kubernetes_service_label_${sanitize(label)}`;
const keep = (label: string, regex: string) => ({ source_labels: [label], regex, action: 'keep' });

/**
 * Scrape jobs equivalent to what the Prometheus Operator generates for these ServiceMonitors (one job per
 * endpoint, the Service selected by labels, job from `jobLabel` or the Service name, `targetLabels`
 * copied), so the suite checks the chart's own ServiceMonitors on a Prometheus without that operator.
 */
export function prometheusConfig(monitors: ServiceMonitor[]): object {
  const jobs = monitors.flatMap((m) => {
    const sel = m.spec.selector;
    const ns = m.spec.namespaceSelector;
    const sd = ns?.any ? { role: 'endpoints' } : { role: 'endpoints', namespaces: { names: ns?.matchNames ?? [m.metadata.namespace ?? NAMESPACE] } };
    const selection = [
      ...Object.entries(sel.matchLabels ?? {}).map(([k, v]) => keep(serviceLabel(k), v)),
      ...(sel.matchExpressions ?? []).map((e) => {
        if (e.operator !== 'In') throw new Error(`ServiceMonitor ${m.metadata.name}: matchExpressions operator ${e.operator} not translated`);
        return keep(serviceLabel(e.key), e.values.join('|'));
      }),
    ];
    return m.spec.endpoints.map((ep, i) => ({
      job_name: `serviceMonitor/${m.metadata.namespace ?? NAMESPACE}/${m.metadata.name}/${i}`,
      metrics_path: ep.path ?? '/metrics',
      ...(ep.interval ? { scrape_interval: ep.interval } : {}),
      kubernetes_sd_configs: [sd],
      relabel_configs: [
        ...selection,
        keep('__meta_kubernetes_endpoint_port_name', ep.port),
        { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
        { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
        { source_labels: ['__meta_kubernetes_pod_container_name'], target_label: 'container' },
        { source_labels: ['__meta_kubernetes_service_name'], target_label: 'service' },
        { source_labels: ['__meta_kubernetes_service_name'], target_label: 'job' },
        ...(m.spec.jobLabel ? [{ source_labels: [serviceLabel(m.spec.jobLabel)], regex: '(.+)', target_label: 'job' }] : []),
        { target_label: 'endpoint', replacement: ep.port },
        ...(m.spec.targetLabels ?? []).map((l) => ({ source_labels: [serviceLabel(l)], regex: '(.+)', target_label: sanitize(l) })),
      ],
    }));
  });
  return { global: { scrape_interval: '5s', evaluation_interval: '5s' }, rule_files: ['/etc/prometheus/rules/*.yml'], scrape_configs: jobs };
}

export function prometheusObjects(monitors: ServiceMonitor[], rulesYaml: string): object[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'vp-prometheus', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'vp-test-prometheus' },
      rules: [{ apiGroups: [''], resources: ['endpoints', 'services', 'pods'], verbs: ['get', 'list', 'watch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'vp-test-prometheus' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vp-test-prometheus' },
      subjects: [{ kind: 'ServiceAccount', name: 'vp-prometheus', namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'vp-prometheus', namespace: ns },
      data: { 'prometheus.yml': JSON.stringify(prometheusConfig(monitors), null, 2) },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'vp-prometheus-rules', namespace: ns }, data: { 'voice-platform.yml': rulesYaml } },
    ...workload(
      'vp-prometheus',
      {
        serviceAccountName: 'vp-prometheus',
        securityContext: restricted,
        containers: [
          {
            ...container,
            name: 'prometheus',
            image: 'voice-test-prometheus:dev',
            ports: [{ name: 'http', containerPort: 9090 }],
            readinessProbe: { httpGet: { path: '/-/ready', port: 'http' }, periodSeconds: 2 },
            volumeMounts: [
              ...container.volumeMounts,
              { name: 'config', mountPath: '/etc/prometheus/config' },
              { name: 'rules', mountPath: '/etc/prometheus/rules' },
            ],
          },
        ],
        volumes: [
          { name: 'tmp', emptyDir: {} },
          { name: 'config', configMap: { name: 'vp-prometheus' } },
          { name: 'rules', configMap: { name: 'vp-prometheus-rules' } },
        ],
      },
      [{ name: 'http', port: 9090 }],
    ),
  ];
}
