// The Helm chart: lint-clean, and every object it renders (default and production-like values) is
// accepted by the real kube-apiserver (server-side apply, dry run, strict field validation).
// Installs and upgrades the release to show generated secrets survive an upgrade.
import type * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { repoRoot } from './crds/generate.js';
import { createNamespace, installCrds, testClients } from './testing/kube.js';
import { rawApply } from './testing/raw.js';

const run = promisify(execFile);
const chart = path.join(repoRoot, 'charts', 'voice-platform');
const clients = testClients();
const helm = (...args: string[]) => {
  const bin = process.env.HELM_BIN;
  if (!bin) throw new Error('HELM_BIN is not set (globalSetup)');
  return run(bin, args, { env: { ...process.env, HELM_CACHE_HOME: path.join(process.env.VP_TEST_DIR ?? '/tmp', 'helm-cache'), HELM_CONFIG_HOME: path.join(process.env.VP_TEST_DIR ?? '/tmp', 'helm-config') }, maxBuffer: 32 << 20 });
};
const PROD = ['-f', path.join(chart, 'ci', 'production-values.yaml')];
const MONITORING = ['--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor', '--api-versions', 'monitoring.coreos.com/v1/PrometheusRule'];

/** Minimal stand-ins for the Prometheus Operator's CRDs, so its objects can be dry-run too. */
async function installMonitoringCrds(): Promise<void> {
  for (const [kind, plural] of [['ServiceMonitor', 'servicemonitors'], ['PrometheusRule', 'prometheusrules']] as const) {
    const res = await rawApply(clients.kc, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.monitoring.coreos.com` },
      spec: {
        group: 'monitoring.coreos.com',
        scope: 'Namespaced',
        names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    } as k8s.KubernetesObject);
    expect([200, 201]).toContain(res.status);
  }
}

async function dryRunAll(manifest: string, namespace: string): Promise<Array<{ obj: string; status: number; message?: string }>> {
  const docs = yaml.loadAll(manifest).filter((d): d is k8s.KubernetesObject => Boolean(d && typeof d === 'object'));
  const results = [];
  for (const obj of docs) {
    let res = await rawApply(clients.kc, obj, { namespace, dryRun: true });
    // A freshly applied CRD can take a moment to be served.
    for (let i = 0; i < 50 && res.status === 404; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await rawApply(clients.kc, obj, { namespace, dryRun: true });
    }
    results.push({ obj: `${obj.kind}/${obj.metadata?.name}`, status: res.status, message: (res.body as { message?: string }).message });
  }
  return results;
}

beforeAll(async () => {
  await installCrds(clients);
  await installMonitoringCrds();
});

describe('Helm chart', () => {
  it('passes helm lint --strict with default and production values', async () => {
    for (const extra of [[], PROD]) {
      const { stdout } = await helm('lint', chart, '--strict', ...extra);
      expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  it('renders objects the API server accepts, with default values', async () => {
    const namespace = await createNamespace(clients, 'chart-default');
    const { stdout } = await helm('template', 'vp', chart, '-n', namespace);
    const results = await dryRunAll(stdout, namespace);
    expect(results.filter((r) => r.status !== 200 && r.status !== 201)).toEqual([]);
    const kinds = results.map((r) => r.obj.split('/')[0]);
    for (const k of ['Deployment', 'StatefulSet', 'Service', 'Secret', 'VoiceFleet', 'NetworkPolicy', 'PodDisruptionBudget', 'ClusterRole', 'ConfigMap']) {
      expect(kinds).toContain(k);
    }
    expect(results.map((r) => r.obj)).toEqual(expect.arrayContaining(['Deployment/vp-voice-platform-backend', 'Deployment/vp-voice-platform-dialler', 'Deployment/vp-voice-platform-operator', 'VoiceFleet/default']));
  });

  it('renders objects the API server accepts, with production-like values and monitoring', async () => {
    const namespace = await createNamespace(clients, 'chart-prod');
    const { stdout } = await helm('template', 'vp', chart, '-n', namespace, ...PROD, ...MONITORING);
    const results = await dryRunAll(stdout, namespace);
    expect(results.filter((r) => r.status !== 200 && r.status !== 201)).toEqual([]);
    const names = results.map((r) => r.obj);
    expect(names).toEqual(expect.arrayContaining(['Ingress/vp-voice-platform', 'ServiceMonitor/vp-voice-platform-workers', 'PrometheusRule/vp-voice-platform', 'StatefulSet/vp-voice-platform-minio', 'VoiceFleet/production']));
    // External stores: no in-chart MongoDB or Redis; the existing Secret is used, not generated.
    expect(names).not.toContain('StatefulSet/vp-voice-platform-mongodb');
    expect(names).not.toContain('Secret/vp-voice-platform-secrets');
  });

  it('generates missing secrets once and keeps them across upgrades', async () => {
    const namespace = await createNamespace(clients, 'chart-install');
    // No kubelet or controllers here: hooks (the admin seed Job) would never finish.
    await helm('install', 'vp', chart, '-n', namespace, '--no-hooks');
    const read = async () => (await clients.core.readNamespacedSecret({ name: 'vp-voice-platform-secrets', namespace })).data!;
    const first = await read();
    const decoded = (k: string) => Buffer.from(first[k]!, 'base64').toString();
    expect(decoded('JWT_SECRET')).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(decoded('WORKER_AUTH_TOKEN')).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(decoded('ADMIN_PASSWORD')).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(decoded('ADMIN_EMAIL')).toBe('admin@example.com');
    await helm('upgrade', 'vp', chart, '-n', namespace, '--no-hooks', '--set', 'fleet.maxReplicas=20');
    expect(await read()).toEqual(first);
    const fleet = (await clients.custom.getNamespacedCustomObject({ group: 'voiceplatform.io', version: 'v1alpha1', plural: 'voicefleets', namespace, name: 'default' })) as { spec: { maxReplicas: number } };
    expect(fleet.spec.maxReplicas).toBe(20);
  });
});
