// The Helm chart: lint-clean, and every object it renders (default and production-like values) is
// accepted by the real kube-apiserver (server-side apply, dry run, strict field validation).
// Installs and upgrades the release to show generated secrets survive an upgrade.
import type * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { repoRoot } from './crds/generate.js';
import { createNamespace, installCrds, testClients } from '../testing/kube.js';
import { rawApply } from '../testing/raw.js';

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

type Doc = k8s.KubernetesObject & { spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };

/** `helm template vp` with extra args, parsed into objects. */
async function render(...args: string[]): Promise<Doc[]> {
  const { stdout } = await helm('template', 'vp', chart, ...args);
  return yaml.loadAll(stdout).filter((d): d is Doc => Boolean(d && typeof d === 'object'));
}
const find = (docs: Doc[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata?.name === name);
const names = (docs: Doc[]) => docs.map((d) => `${d.kind}/${d.metadata?.name}`);
/** Env of the first container of a Deployment, or of a VoiceFleet. */
function envOf(doc: Doc | undefined): EnvVar[] {
  if (!doc) throw new Error('object not rendered');
  return (doc.kind === 'VoiceFleet' ? doc.spec.env : doc.spec.template.spec.containers[0].env) ?? [];
}
const envVar = (doc: Doc | undefined, name: string) => envOf(doc).find((e) => e.name === name);
const fromSecret = (secret: string, key: string) => ({ name: key, valueFrom: { secretKeyRef: { name: secret, key } } });
/** Every object that gets LiveKit's URL and key pair in the default release. */
const LIVEKIT_CONSUMERS: Array<[string, string]> = [['Deployment', 'vp-voice-platform-backend'], ['Deployment', 'vp-voice-platform-dialler'], ['VoiceFleet', 'default']];
const LIVEKIT_OBJECTS = ['Deployment/vp-voice-platform-livekit', 'Deployment/vp-voice-platform-livekit-sip', 'Service/vp-voice-platform-livekit', 'Service/vp-voice-platform-livekit-sip', 'Secret/vp-voice-platform-livekit', 'NetworkPolicy/vp-voice-platform-livekit', 'NetworkPolicy/vp-voice-platform-livekit-sip'];
const secretText = (d: Doc, key: string) => d.stringData?.[key] ?? Buffer.from(d.data?.[key] ?? '', 'base64').toString();

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
  it("gives the console the LiveKit URL its Content-Security-Policy allows, and the workers none of the backend's settings", async () => {
    const docs = await render();
    const consoleEnv = (d: Doc[]) => envVar(find(d, 'Deployment', 'vp-voice-platform-console'), 'LIVEKIT_PUBLIC_URL');
    // The URL the backend answers test calls with: LIVEKIT_PUBLIC_URL, else the LiveKit URL it uses.
    expect(consoleEnv(docs)).toEqual({ name: 'LIVEKIT_PUBLIC_URL', value: 'ws://vp-voice-platform-livekit:7880' });
    expect(consoleEnv(await render('--set', 'backend.settings.LIVEKIT_PUBLIC_URL=wss://lk.example.com'))).toEqual({ name: 'LIVEKIT_PUBLIC_URL', value: 'wss://lk.example.com' });
    for (const d of [docs, await render(...PROD)]) {
      const fleet = d.find((x) => x.kind === 'VoiceFleet');
      const envNames = envOf(fleet).map((e) => e.name);
      expect(envNames).toEqual(expect.arrayContaining(['SERVICE_CONFIG_URL', 'WORKER_AUTH_TOKEN', 'REDIS_URL']));
      expect(envNames.filter((n) => ['ADMIN_PASSWORD', 'ADMIN_EMAIL', 'JWT_SECRET', 'MONGODB_URI'].includes(n))).toEqual([]);
    }
  });

  it('gives the default VoiceFleet its targetLoad, refused by the API server outside (0, 1], and Grafana the per-worker load and admittable panels', async () => {
    const fleetOf = (d: Doc[]) => d.find((x) => x.kind === 'VoiceFleet')!;
    const docs = await render();
    expect(fleetOf(docs).spec.targetLoad).toBe(0.6);
    const over = fleetOf(await render('--set', 'fleet.targetLoad=1.5'));
    expect(over.spec.targetLoad).toBe(1.5);
    const namespace = await createNamespace(clients, 'chart-load');
    const [refused] = await dryRunAll(yaml.dump(over), namespace);
    expect(refused).toMatchObject({ obj: 'VoiceFleet/default', status: 422 });
    expect(refused!.message).toContain('spec.targetLoad');
    const dashboard = JSON.parse(find(docs, 'ConfigMap', 'vp-voice-platform-dashboard')!.data!['voice-platform.json']!);
    const exprs = (dashboard.panels as Array<{ targets: Array<{ expr: string }> }>).flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs).toEqual(expect.arrayContaining(['max by (pod) (voice_worker_load{namespace=~"$namespace"})', 'sum by (pod) (voice_worker_admittable_calls{namespace=~"$namespace"})']));
  });

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
    expect(results.map((r) => r.obj)).toEqual(expect.arrayContaining(['Deployment/vp-voice-platform-backend', 'Deployment/vp-voice-platform-dialler', 'Deployment/vp-voice-platform-operator', 'VoiceFleet/default', ...LIVEKIT_OBJECTS]));
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
    // LiveKit on the host network, two of each, on database 1 of the external Redis (TLS).
    expect(names).toEqual(expect.arrayContaining(['Deployment/vp-voice-platform-livekit', 'Deployment/vp-voice-platform-livekit-sip', 'PodDisruptionBudget/vp-voice-platform-livekit', 'PodDisruptionBudget/vp-voice-platform-livekit-sip']));
    const docs = yaml.loadAll(stdout) as Doc[];
    for (const name of ['vp-voice-platform-livekit', 'vp-voice-platform-livekit-sip']) expect(find(docs, 'Deployment', name)!.spec.template.spec.hostNetwork).toBe(true);
    const cfg = find(docs, 'Secret', 'vp-voice-platform-livekit')!;
    expect((yaml.load(secretText(cfg, 'livekit.yaml')) as { redis: unknown }).redis).toEqual({ address: 'redis.example.com:6380', db: 1, use_tls: true });
    expect(envVar(find(docs, 'VoiceFleet', 'production'), 'LIVEKIT_API_SECRET')).toEqual(fromSecret('voice-platform-prod-secrets', 'LIVEKIT_API_SECRET'));
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
    // LiveKit's pair: the backend and LiveKit refuse secrets under 32 characters.
    expect(decoded('LIVEKIT_API_KEY')).toMatch(/^API[A-Za-z0-9]{12}$/);
    expect(decoded('LIVEKIT_API_SECRET')).toMatch(/^[A-Za-z0-9]{48}$/);
    await helm('upgrade', 'vp', chart, '-n', namespace, '--no-hooks', '--set', 'fleet.maxReplicas=20');
    expect(await read()).toEqual(first);
    const fleet = (await clients.custom.getNamespacedCustomObject({ group: 'voiceplatform.io', version: 'v1alpha1', plural: 'voicefleets', namespace, name: 'default' })) as { spec: { maxReplicas: number } };
    expect(fleet.spec.maxReplicas).toBe(20);
  });
});

describe('Helm chart: tracing (OpenTelemetry)', () => {
  it('points the backend, the dialler and the default fleet\'s workers at tracing.otlpEndpoint, and nothing at all when it is empty', async () => {
    const on = await render('--set', 'tracing.otlpEndpoint=http://otel-collector.observability:4318');
    for (const [kind, name] of LIVEKIT_CONSUMERS) {
      expect(envOf(find(on, kind, name)).filter((e) => e.name.startsWith('OTEL_'))).toEqual([{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability:4318' }]);
    }
    // service.name follows each Deployment's ROLES (voice-backend, voice-dialler); the workers' is voice-worker.
    expect(envVar(find(on, 'Deployment', 'vp-voice-platform-dialler'), 'ROLES')).toEqual({ name: 'ROLES', value: 'dialler' });
    // Off by default, production-like values included (their fleet has its own name).
    for (const docs of [await render(), await render(...PROD)]) {
      const parts = docs.filter((d) => d.kind === 'VoiceFleet' || (d.kind === 'Deployment' && /-(backend|dialler)$/.test(d.metadata!.name!)));
      expect(parts).toHaveLength(3);
      for (const d of parts) expect(envOf(d).filter((e) => e.name.startsWith('OTEL_'))).toEqual([]);
    }
  });

  it('refuses an endpoint the parts would refuse at start', async () => {
    for (const bad of ['otel-collector:4318', 'grpc://otel-collector:4317']) {
      await expect(render('--set', `tracing.otlpEndpoint=${bad}`)).rejects.toThrow(/tracing.otlpEndpoint must be an http\(s\) URL/);
    }
  });
});

describe('Helm chart: bot test runs', () => {
  const dialler = (docs: Doc[]) => envVar(find(docs, 'Deployment', 'vp-voice-platform-dialler'), 'TEST_RUNNER_WORKER_URL');
  it("the dialler places test calls at the default fleet's Service (the operator names it after the fleet), or at botTests.workerUrl", async () => {
    expect(dialler(await render())).toEqual({ name: 'TEST_RUNNER_WORKER_URL', value: 'http://default:8000' });
    // The production-like fleet has its own name and port.
    expect(dialler(await render(...PROD, '--set', 'fleet.port=8100'))).toEqual({ name: 'TEST_RUNNER_WORKER_URL', value: 'http://production:8100' });
    expect(dialler(await render('--set', 'botTests.workerUrl=http://eu-fleet.voice:8000'))).toEqual({ name: 'TEST_RUNNER_WORKER_URL', value: 'http://eu-fleet.voice:8000' });
    // No fleet and no URL: no tests run (the dialler logs it), rather than calls to a Service that does not exist.
    expect(dialler(await render('--set', 'fleet.enabled=false'))).toBeUndefined();
    // Only the dialler runs tests.
    expect(envVar(find(await render(), 'Deployment', 'vp-voice-platform-backend'), 'TEST_RUNNER_WORKER_URL')).toBeUndefined();
  });

  it("sip cases: the dialler's simulated phone on its pod's IP, the API told there is one, and only livekit-sip may reach it", async () => {
    const docs = await render();
    for (const name of ['vp-voice-platform-dialler', 'vp-voice-platform-backend']) {
      const d = find(docs, 'Deployment', name);
      expect(envVar(d, 'POD_IP')).toEqual({ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } });
      expect(envVar(d, 'TEST_PHONE_SIP_ADDRESS')).toEqual({ name: 'TEST_PHONE_SIP_ADDRESS', value: '$(POD_IP):5090' });
      // Defined before it is used: Kubernetes expands $(POD_IP) only from variables above it.
      const names = envOf(d).map((e) => e.name);
      expect(names.indexOf('POD_IP')).toBeLessThan(names.indexOf('TEST_PHONE_SIP_ADDRESS'));
    }
    const policy = find(docs, 'NetworkPolicy', 'vp-voice-platform-dialler-phone');
    expect(policy?.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'vp', 'app.kubernetes.io/component': 'dialler' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'vp', 'app.kubernetes.io/component': 'livekit-sip' } } }], ports: [{ port: 1024, endPort: 65535, protocol: 'UDP' }] }],
    });
    // Off, or no livekit-sip: no phone, no policy (the API then refuses sip cases with 422 transport_unavailable).
    for (const off of [['--set', 'botTests.simulatedPhone.enabled=false'], ['--set', 'livekit.sip.enabled=false']]) {
      const d = await render(...off);
      expect(envVar(find(d, 'Deployment', 'vp-voice-platform-dialler'), 'TEST_PHONE_SIP_ADDRESS')).toBeUndefined();
      expect(find(d, 'NetworkPolicy', 'vp-voice-platform-dialler-phone')).toBeUndefined();
    }
  });

  it('refuses a workerUrl the dialler would refuse at start', async () => {
    for (const bad of ['default:8000', 'grpc://default:8000']) {
      await expect(render('--set', `botTests.workerUrl=${bad}`)).rejects.toThrow(/botTests.workerUrl must be an http\(s\) or ws\(s\) URL/);
    }
  });
});

describe('Helm chart: telephony plane (LiveKit)', () => {
  it('runs livekit-server and livekit-sip on the in-chart Redis, and gives the backend and workers its URL and key pair from the Secret', async () => {
    const docs = await render();
    expect(names(docs)).toEqual(expect.arrayContaining(LIVEKIT_OBJECTS));
    for (const [kind, name] of LIVEKIT_CONSUMERS) {
      const obj = find(docs, kind, name);
      expect(envVar(obj, 'LIVEKIT_URL')).toEqual({ name: 'LIVEKIT_URL', value: 'ws://vp-voice-platform-livekit:7880' });
      expect(envVar(obj, 'LIVEKIT_API_KEY')).toEqual(fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_KEY'));
      expect(envVar(obj, 'LIVEKIT_API_SECRET')).toEqual(fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_SECRET'));
    }

    // The server takes its keys only from the Secret (LIVEKIT_KEYS expanded by the kubelet), SIP likewise.
    const server = find(docs, 'Deployment', 'vp-voice-platform-livekit')!;
    expect(envOf(server)).toEqual([
      fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_KEY'),
      fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_SECRET'),
      { name: 'LIVEKIT_KEYS', value: '$(LIVEKIT_API_KEY): $(LIVEKIT_API_SECRET)\nvp-webhook: $(LIVEKIT_API_SECRET)' },
    ]);
    const sip = find(docs, 'Deployment', 'vp-voice-platform-livekit-sip')!;
    expect(envOf(sip)).toEqual([fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_KEY'), fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_SECRET')]);
    for (const d of [server, sip]) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
      expect(pod.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(pod.containers[0].readinessProbe.httpGet.path).toBe('/');
      expect(pod.hostNetwork).toBeUndefined();
    }
    expect(server.spec.template.spec.containers[0].ports).toEqual(expect.arrayContaining([expect.objectContaining({ containerPort: 7880, protocol: 'TCP' }), expect.objectContaining({ containerPort: 7881, protocol: 'TCP' }), expect.objectContaining({ containerPort: 7882, protocol: 'UDP' })]));

    // Config: Redis of the chart on its own database, RTC on one UDP and one TCP port, SIP pointed at the server.
    const cfg = find(docs, 'Secret', 'vp-voice-platform-livekit')!;
    const serverCfg = yaml.load(secretText(cfg, 'livekit.yaml')) as Record<string, any>;
    expect(serverCfg).toMatchObject({ port: 7880, redis: { address: 'vp-voice-platform-redis:6379', db: 1 }, rtc: { udp_port: 7882, tcp_port: 7881, use_external_ip: false } });
    // Inbound calls: LiveKit's webhooks go to the backend, signed as the second key name (LIVEKIT_KEYS), which the backend is told.
    expect(serverCfg.webhook).toEqual({ api_key: 'vp-webhook', urls: ['http://vp-voice-platform-backend:8080/livekit/webhook'] });
    expect(envVar(find(docs, 'Deployment', 'vp-voice-platform-backend'), 'LIVEKIT_WEBHOOK_API_KEY')).toEqual({ name: 'LIVEKIT_WEBHOOK_API_KEY', value: 'vp-webhook' });
    expect(serverCfg.keys).toBeUndefined();
    const sipCfg = yaml.load(secretText(cfg, 'sip.yaml')) as Record<string, any>;
    expect(sipCfg).toMatchObject({ ws_url: 'ws://vp-voice-platform-livekit:7880', redis: { address: 'vp-voice-platform-redis:6379', db: 1 }, sip_port: 5060, rtp_port: '10000-20000', health_port: 8080, max_cpu_utilization: 0.9 });
    expect(sipCfg.api_key).toBeUndefined();
    expect(sipCfg.api_secret).toBeUndefined();

    // No generated secret appears in a ConfigMap, nor the API key pair in LiveKit's config.
    const secrets = find(docs, 'Secret', 'vp-voice-platform-secrets')!;
    const values = Object.keys(secrets.data!).filter((k) => k !== 'ADMIN_EMAIL').map((k) => secretText(secrets, k));
    expect(values.length).toBeGreaterThanOrEqual(7);
    const configMaps = docs.filter((d) => d.kind === 'ConfigMap').map((d) => JSON.stringify(d));
    expect(configMaps.length).toBeGreaterThan(0);
    for (const v of values) {
      for (const text of [...configMaps, secretText(cfg, 'livekit.yaml'), secretText(cfg, 'sip.yaml'), JSON.stringify(server), JSON.stringify(sip)]) expect(text).not.toContain(v);
    }

    // Network: signalling only from the platform's pods; media and SIP/RTP from anywhere.
    const np = find(docs, 'NetworkPolicy', 'vp-voice-platform-livekit')!;
    expect(np.spec.ingress[0].ports).toEqual([{ port: 'http', protocol: 'TCP' }]);
    expect(np.spec.ingress[0].from).toEqual([
      { podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: ['backend', 'dialler', 'livekit-sip'] }, { key: 'app.kubernetes.io/instance', operator: 'In', values: ['vp'] }] } },
      { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'worker', 'app.kubernetes.io/part-of': 'voice-platform' } } },
    ]);
    expect(np.spec.ingress[1]).toEqual({ ports: [{ port: 'rtc-tcp', protocol: 'TCP' }, { port: 'rtc-udp', protocol: 'UDP' }] });
    const npSip = find(docs, 'NetworkPolicy', 'vp-voice-platform-livekit-sip')!;
    expect(npSip.spec.ingress).toEqual([{ ports: [{ port: 'sip-udp', protocol: 'UDP' }, { port: 'sip-tcp', protocol: 'TCP' }, { port: 10000, endPort: 20000, protocol: 'UDP' }] }]);
    // One replica each: no PodDisruptionBudget.
    expect(names(docs)).not.toContain('PodDisruptionBudget/vp-voice-platform-livekit');
  });

  it('uses an external LiveKit when livekit.enabled is false, and none at all without its URL', async () => {
    const docs = await render('--set', 'livekit.enabled=false', '--set', 'livekit.external.url=wss://lk.example.com');
    const rendered = names(docs);
    expect(rendered.filter((n) => n.includes('livekit'))).toEqual([]);
    expect(docs.filter((d) => d.kind === 'Deployment').map((d) => d.metadata!.name)).toEqual(['vp-voice-platform-backend', 'vp-voice-platform-dialler', 'vp-voice-platform-console', 'vp-voice-platform-operator']);
    for (const [kind, name] of LIVEKIT_CONSUMERS) {
      const obj = find(docs, kind, name);
      expect(envVar(obj, 'LIVEKIT_URL')).toEqual({ name: 'LIVEKIT_URL', value: 'wss://lk.example.com' });
      expect(envVar(obj, 'LIVEKIT_API_KEY')).toEqual(fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_KEY'));
      expect(envVar(obj, 'LIVEKIT_API_SECRET')).toEqual(fromSecret('vp-voice-platform-secrets', 'LIVEKIT_API_SECRET'));
    }
    // The key pair of the external LiveKit, given in values, lands in the Secret only.
    const given = await render('--set', 'livekit.enabled=false', '--set', 'livekit.external.url=wss://lk.example.com', '--set', 'secrets.livekitApiKey=APIexternal', '--set', `secrets.livekitApiSecret=${'s'.repeat(40)}`);
    expect(secretText(find(given, 'Secret', 'vp-voice-platform-secrets')!, 'LIVEKIT_API_KEY')).toBe('APIexternal');
    expect(secretText(find(given, 'Secret', 'vp-voice-platform-secrets')!, 'LIVEKIT_API_SECRET')).toBe('s'.repeat(40));

    const off = await render('--set', 'livekit.enabled=false');
    for (const [kind, name] of LIVEKIT_CONSUMERS) expect(envOf(find(off, kind, name)).filter((e) => e.name.startsWith('LIVEKIT_'))).toEqual([]);
    expect(names(off).filter((n) => n.includes('livekit'))).toEqual([]);

    // livekit.sip.enabled=false: the server alone.
    const noSip = names(await render('--set', 'livekit.sip.enabled=false'));
    expect(noSip).toContain('Deployment/vp-voice-platform-livekit');
    expect(noSip.filter((n) => n.includes('livekit-sip'))).toEqual([]);
  });

  it('refuses values LiveKit would refuse at start', async () => {
    const fails = async (args: string[], message: RegExp) => {
      await expect(helm('template', 'vp', chart, ...args)).rejects.toMatchObject({ stderr: expect.stringMatching(message) });
    };
    await fails(['--set', 'livekit.enabled=false', '--set', 'livekit.external.url=https://lk.example.com'], /livekit.external.url must be a ws:\/\/ or wss:\/\/ URL/);
    await fails(['--set', 'secrets.livekitApiSecret=too-short'], /at least 32 characters/);
    await fails(['--set', 'livekit.sip.useExternalIp=true', '--set', 'livekit.sip.nat1To1Ip=203.0.113.7'], /useExternalIp or nat1To1Ip, not both/);
    await fails(['--set', 'livekit.sip.rtpPortRange=20000-10000'], /rtpPortRange must be "start-end"/);
    // A load balancer lists every RTP port: 10001 would be too many.
    await fails(['--set', 'livekit.sip.service.type=LoadBalancer'], /narrow livekit.sip.rtpPortRange/);
    await fails(['--set', 'redis.enabled=false', '--set', 'externalDatabase.redisUrl=http://redis.example.com'], /redis:\/\/ or rediss:\/\/ URL/);
  });

  it('takes LiveKit\'s Redis from the external Redis URL, credentials into the config Secret only', async () => {
    const docs = await render('--set', 'redis.enabled=false', '--set', 'externalDatabase.redisUrl=rediss://lk:Pa55word@redis.example.com/0');
    const cfg = find(docs, 'Secret', 'vp-voice-platform-livekit')!;
    for (const file of ['livekit.yaml', 'sip.yaml']) {
      expect((yaml.load(secretText(cfg, file)) as { redis: unknown }).redis).toEqual({ address: 'redis.example.com:6379', db: 1, use_tls: true, username: 'lk', password: 'Pa55word' });
    }
    for (const d of docs.filter((x) => x.kind !== 'Secret')) expect(JSON.stringify(d)).not.toContain('Pa55word');
  });

  it('exposes SIP and RTP through a LoadBalancer or the host network, accepted by the API server', async () => {
    const namespace = await createNamespace(clients, 'chart-livekit');
    const lb = await helm('template', 'vp', chart, '-n', namespace, '--set', 'livekit.sip.service.type=LoadBalancer', '--set', 'livekit.sip.rtpPortRange=10000-10009', '--set', 'livekit.sip.nat1To1Ip=203.0.113.7', '--set', 'livekit.sip.allowedCidrs={198.51.100.0/24}', '--set', 'livekit.server.replicas=2', '--set', 'livekit.server.signalFrom[0].namespaceSelector.matchLabels.team=edge');
    let results = await dryRunAll(lb.stdout, namespace);
    expect(results.filter((r) => r.status !== 200 && r.status !== 201)).toEqual([]);
    const lbDocs = yaml.loadAll(lb.stdout) as Doc[];
    const svc = find(lbDocs, 'Service', 'vp-voice-platform-livekit-sip')!;
    expect(svc.spec).toMatchObject({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', loadBalancerSourceRanges: ['198.51.100.0/24'] });
    const ports = svc.spec.ports as Array<{ port: number; targetPort: number | string; protocol: string }>;
    expect(ports).toHaveLength(2 + 10);
    expect(ports.filter((p) => p.protocol === 'UDP' && p.port >= 10000).every((p) => p.targetPort === p.port)).toBe(true);
    expect(yaml.load(secretText(find(lbDocs, 'Secret', 'vp-voice-platform-livekit')!, 'sip.yaml'))).toMatchObject({ nat_1_to_1_ip: '203.0.113.7', rtp_port: '10000-10009' });
    expect(find(lbDocs, 'NetworkPolicy', 'vp-voice-platform-livekit-sip')!.spec.ingress[0].from).toEqual([{ ipBlock: { cidr: '198.51.100.0/24' } }]);
    expect(find(lbDocs, 'NetworkPolicy', 'vp-voice-platform-livekit')!.spec.ingress[0].from).toContainEqual({ namespaceSelector: { matchLabels: { team: 'edge' } } });
    expect(names(lbDocs)).toContain('PodDisruptionBudget/vp-voice-platform-livekit');

    const host = await helm('template', 'vp', chart, '-n', namespace, '--set', 'livekit.sip.hostNetwork=true', '--set', 'livekit.sip.useExternalIp=true', '--set', 'livekit.sip.replicas=2', '--set', 'livekit.nodeCidrs={10.0.0.0/16}');
    results = await dryRunAll(host.stdout, namespace);
    expect(results.filter((r) => r.status !== 200 && r.status !== 201)).toEqual([]);
    const hostDocs = yaml.loadAll(host.stdout) as Doc[];
    const pod = find(hostDocs, 'Deployment', 'vp-voice-platform-livekit-sip')!.spec.template.spec;
    expect(pod).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe('kubernetes.io/hostname');
    expect(names(hostDocs)).toEqual(expect.arrayContaining(['PodDisruptionBudget/vp-voice-platform-livekit-sip', 'NetworkPolicy/vp-voice-platform-redis-livekit-nodes']));
    expect(find(hostDocs, 'NetworkPolicy', 'vp-voice-platform-livekit')!.spec.ingress[0].from).toContainEqual({ ipBlock: { cidr: '10.0.0.0/16' } });
  });
});
