// The chart's least-privilege RBAC, for real: the operator's ServiceAccount, ClusterRole(Binding) and
// Role(Binding) as `helm template` renders them are applied to the kube-apiserver, a token is minted
// for that ServiceAccount (TokenRequest), and the real operator process (dist/main.js) runs with only
// that token against the real backend. It must lead, reconcile fleets and bots, annotate pods and
// record Events without a single forbidden request; and the same token must be refused what the
// operator has no business doing.
import * as k8s from '@kubernetes/client-node';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { VOICE_API_GROUP, VOICE_API_VERSION } from '@voice-platform/schemas';
import { freePort } from '@voice-platform/tests/infra';
import { BOT_FINALIZER } from './bot/reconcile.js';
import type { BotResource } from './bot/types.js';
import { repoRoot } from './crds/generate.js';
import type { VoiceFleet } from './fleet/types.js';
import { DELETION_COST, GROUP_VERSION, kubeClients, type KubeClients } from './core/kube.js';
import { startTestBackend, type TestBackend } from '../testing/backend.js';
import { createNamespace, gone, installCrds, testClients, waitFor } from '../testing/kube.js';
import { rawApply, rawRequest } from '../testing/raw.js';
import { createWorkerPod, startFakeWorker, type FakeWorker } from '../testing/workers.js';

const run = promisify(execFile);
const chart = path.join(repoRoot, 'charts', 'voice-platform');
const mainJs = path.join(repoRoot, 'operator', 'dist', 'main.js');
const testDir = process.env.VP_TEST_DIR ?? tmpdir();
const admin = testClients();
const ADMIN = { email: 'rbac-admin@example.com', password: 'operator-rbac-password-1' };
const RBAC_KINDS = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

const helm = (...args: string[]) => {
  const bin = process.env.HELM_BIN;
  if (!bin) throw new Error('HELM_BIN is not set (globalSetup)');
  return run(bin, args, {
    env: { ...process.env, HELM_CACHE_HOME: path.join(testDir, 'helm-cache'), HELM_CONFIG_HOME: path.join(testDir, 'helm-config') },
    maxBuffer: 32 << 20,
  });
};

// The release: its namespace doubles as the release name, so cluster-scoped names never collide.
let namespace = '';
let operatorName = ''; // <fullname>-operator: ServiceAccount, roles, bindings and the Lease
let secretName = '';
let rbacObjects: k8s.KubernetesObject[] = [];
/** API clients that authenticate with the operator ServiceAccount's token only. */
let sa: KubeClients;
let kubeconfigPath = '';
let backend: TestBackend;
let metricsPort = 0;
let operator: ReturnType<typeof startMain>;
const workers: FakeWorker[] = [];
const POD_NAME = 'operator-rbac-0';

function startMain(env: Record<string, string>) {
  const child = spawn('node', [mainJs], { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** The operator's RBAC objects exactly as the chart renders them for this release. */
async function renderOperatorRbac(): Promise<k8s.KubernetesObject[]> {
  const { stdout } = await helm('template', namespace, chart, '-n', namespace);
  const docs = yaml.loadAll(stdout).filter((d): d is k8s.KubernetesObject => Boolean(d && typeof d === 'object'));
  const fullname = `${namespace}-voice-platform`;
  operatorName = `${fullname}-operator`;
  secretName = `${fullname}-secrets`;
  const picked = docs.filter((d) => RBAC_KINDS.includes(d.kind!) && d.metadata?.name === operatorName);
  expect(picked.map((d) => d.kind).sort()).toEqual([...RBAC_KINDS].sort());
  // The Deployment runs as that ServiceAccount, with the Lease and Secret names the Role is about.
  const deployment = docs.find((d) => d.kind === 'Deployment' && d.metadata?.name === operatorName) as k8s.V1Deployment;
  const podSpec = deployment.spec!.template.spec!;
  expect(podSpec.serviceAccountName).toBe(operatorName);
  const env = Object.fromEntries(podSpec.containers[0]!.env!.map((e) => [e.name, e.value]));
  expect(env).toMatchObject({ LEADER_ELECTION_ID: operatorName, BACKEND_CREDENTIALS_SECRET: secretName });
  return picked;
}

/** A kubeconfig file (and clients) for the API server holding nothing but the ServiceAccount token. */
async function serviceAccountKubeConfig(): Promise<void> {
  const tr = await admin.core.createNamespacedServiceAccountToken({
    namespace,
    name: operatorName,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  const token = tr.status!.token;
  expect(token).toMatch(/^ey/);
  const cluster = admin.kc.getCurrentCluster()!;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name: 'operator', user: { token } }],
    contexts: [{ name: 'operator', context: { cluster: 'test', user: 'operator', namespace } }],
    'current-context': 'operator',
  };
  kubeconfigPath = path.join(mkdtempSync(path.join(testDir, 'rbac-')), 'kubeconfig');
  writeFileSync(kubeconfigPath, yaml.dump(config), { mode: 0o600 });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  expect(kc.getCurrentUser()).toEqual(expect.objectContaining({ token }));
  expect(kc.getCurrentUser()?.certData).toBeUndefined();
  sa = kubeClients(kc);
}

beforeAll(async () => {
  if (!existsSync(mainJs)) throw new Error('operator/dist/main.js missing: build the operator first (npx tsc -b operator)');
  await installCrds(admin);
  namespace = await createNamespace(admin, 'rbac');
  rbacObjects = await renderOperatorRbac();
  for (const obj of rbacObjects) {
    const res = await rawApply(admin.kc, obj, { namespace });
    expect([`${obj.kind}/${obj.metadata!.name}`, res.status === 200 || res.status === 201 ? 'applied' : JSON.stringify(res.body)]).toEqual([`${obj.kind}/${obj.metadata!.name}`, 'applied']);
  }
  await serviceAccountKubeConfig();
  backend = await startTestBackend('rbac', ADMIN);
  // The chart's generated Secret carries the backend admin login the operator signs in with.
  await admin.core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: secretName }, stringData: { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password } },
  });
  metricsPort = await freePort();
  operator = startMain({
    KUBECONFIG: kubeconfigPath,
    OPERATOR_NAMESPACE: namespace,
    // Only this namespace: other suites' fleets and bots live in the same API server.
    WATCH_NAMESPACE: namespace,
    POD_NAME,
    METRICS_PORT: String(metricsPort),
    LEADER_ELECTION_ID: operatorName,
    BACKEND_URL: backend.url,
    BACKEND_CREDENTIALS_SECRET: secretName,
    LEASE_DURATION_MS: '4000',
    LEASE_RENEW_DEADLINE_MS: '3000',
    LEASE_RETRY_PERIOD_MS: '300',
    SCRAPE_INTERVAL_MS: '500',
    SCRAPE_TIMEOUT_MS: '1000',
  });
}, 120_000);

afterAll(async () => {
  operator?.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.close()));
  await backend?.stop();
  // Cluster-scoped leftovers of this release.
  const rbac = admin.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  if (operatorName) {
    await rbac.deleteClusterRoleBinding({ name: operatorName }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: operatorName }).catch(() => undefined);
  }
});

const fleets = { group: VOICE_API_GROUP, version: VOICE_API_VERSION, plural: 'voicefleets' };
const bots = { group: VOICE_API_GROUP, version: VOICE_API_VERSION, plural: 'bots' };
const getFleet = async (name: string) => (await admin.custom.getNamespacedCustomObject({ ...fleets, namespace, name })) as VoiceFleet;
const getBot = async (name: string) => (await admin.custom.getNamespacedCustomObject({ ...bots, namespace, name })) as BotResource;

type Access = { verb: string; resource: string; group?: string; subresource?: string; namespace?: string; name?: string };
const describeAccess = (a: Access) =>
  `${a.verb} ${a.group ? `${a.group}/` : ''}${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.name ? ` ${a.name}` : ''} in ${a.namespace ?? '(cluster)'}`;

/** What the API server's authorizer answers for the ServiceAccount token. */
async function allowed(a: Access): Promise<boolean> {
  const authz = sa.kc.makeApiClient(k8s.AuthorizationV1Api);
  const review = await authz.createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { verb: a.verb, resource: a.resource, group: a.group ?? '', subresource: a.subresource, namespace: a.namespace, name: a.name } } },
  });
  return review.status!.allowed;
}

describe("the operator with the chart's RBAC only", () => {
  it('acts as the ServiceAccount, not as an admin', async () => {
    const authn = sa.kc.makeApiClient(k8s.AuthenticationV1Api);
    const review = await authn.createSelfSubjectReview({ body: {} });
    expect(review.status!.userInfo!.username).toBe(`system:serviceaccount:${namespace}:${operatorName}`);
    expect(review.status!.userInfo!.groups).not.toContain('system:masters');
  });

  it('acquires the leader Lease', async () => {
    // The sample line, not the HELP text ("# HELP voice_operator_leader 1 while this replica holds...").
    await waitFor('leader metric', async () => /^voice_operator_leader 1$/m.test(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()), {
      timeoutMs: 20_000,
    });
    const lease = await admin.coordination.readNamespacedLease({ name: operatorName, namespace });
    expect(lease.spec!.holderIdentity).toBe(POD_NAME);
  });

  it('reconciles a VoiceFleet: children, status, deletion costs from worker /metrics, and a scale Event', async () => {
    const w = await Promise.all([startFakeWorker(10), startFakeWorker(10)]);
    workers.push(...w);
    const fleet = (await admin.custom.createNamespacedCustomObject({
      ...fleets,
      namespace,
      body: {
        apiVersion: GROUP_VERSION,
        kind: 'VoiceFleet',
        metadata: { name: 'calls' },
        spec: { image: 'voice-worker:1', minReplicas: 1, maxReplicas: 3, callsPerWorker: 10, buffer: { calls: 2 }, scaleDownDelaySeconds: 300 },
      },
    })) as VoiceFleet;
    const uid = fleet.metadata!.uid!;
    const dep = await waitFor('Deployment at 1 replica', async () => {
      const d = await admin.apps.readNamespacedDeployment({ name: 'calls', namespace });
      return d.spec!.replicas === 1 ? d : undefined;
    });
    expect(dep.metadata!.ownerReferences?.[0]?.uid).toBe(uid);
    const svc = await waitFor('Service', () => admin.core.readNamespacedService({ name: 'calls', namespace }));
    expect(svc.metadata!.ownerReferences?.[0]?.uid).toBe(uid);
    const pdb = await waitFor('PDB', () => admin.policy.readNamespacedPodDisruptionBudget({ name: 'calls', namespace }));
    expect(pdb.metadata!.ownerReferences?.[0]?.uid).toBe(uid);
    await waitFor('status written', async () => (await getFleet('calls')).status?.observedGeneration === 1);

    await createWorkerPod(admin, namespace, 'calls', 'calls-w0', w[0]!.port);
    await createWorkerPod(admin, namespace, 'calls', 'calls-w1', w[1]!.port);
    await waitFor('both workers scraped', async () => {
      const s = (await getFleet('calls')).status;
      return s?.replicas === 2 && s.readyReplicas === 2 && s.capacity === 20;
    });
    // 17 live calls + 2 buffer at 10 per worker → 2 workers.
    w[0]!.setActiveCalls(9);
    w[1]!.setActiveCalls(8);
    await waitFor('scaled up to 2', async () => (await admin.apps.readNamespacedDeployment({ name: 'calls', namespace })).spec!.replicas === 2);
    await waitFor('status after scale up', async () => {
      const s = (await getFleet('calls')).status;
      return s?.desiredReplicas === 2 && s.activeCalls === 17;
    });
    await waitFor('deletion costs from active calls', async () => {
      const pods = await admin.core.listNamespacedPod({ namespace, labelSelector: 'voiceplatform.io/fleet=calls' });
      const costs = Object.fromEntries(pods.items.map((p) => [p.metadata!.name, p.metadata!.annotations?.[DELETION_COST]]));
      return costs['calls-w0'] === '9' && costs['calls-w1'] === '8';
    });
    const events = await waitFor('ScaledUp event', async () => {
      const list = await admin.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=calls' });
      const up = list.items.filter((e) => e.reason === 'ScaledUp');
      return up.length ? up : undefined;
    });
    expect(events[0]).toMatchObject({ type: 'Normal', message: 'Scaled up from 1 to 2: 17 active + 2 buffer calls at 10/worker need 2 workers', reportingInstance: POD_NAME });
    expect(events[0]!.involvedObject.uid).toBe(uid);
  });

  it('removes a deleted VoiceFleet’s children itself', async () => {
    await admin.custom.deleteNamespacedCustomObject({ ...fleets, namespace, name: 'calls' });
    // No garbage collector runs here: only the operator's own deletes can remove them.
    await waitFor('children deleted', async () =>
      (await gone(() => admin.apps.readNamespacedDeployment({ name: 'calls', namespace }))) &&
      (await gone(() => admin.core.readNamespacedService({ name: 'calls', namespace }))) &&
      (await gone(() => admin.policy.readNamespacedPodDisruptionBudget({ name: 'calls', namespace }))),
    );
  });

  it('syncs a Bot into the backend and, on deletion, deactivates it and releases the finalizer', async () => {
    await admin.custom.createNamespacedCustomObject({
      ...bots,
      namespace,
      body: {
        apiVersion: GROUP_VERSION,
        kind: 'Bot',
        metadata: { name: 'renewals' },
        spec: {
          name: `RBAC bot ${namespace}`,
          language: 'en-US',
          prompt: 'You remind {{first_name}} about the renewal.',
          greeting: 'Hello {{first_name}}.',
          variables: [{ name: 'first_name', required: true }],
          policy: { intents: [{ name: 'yes', examples: ['yes'], reply: 'Goodbye.', end_call: true }], fallback: { reply: 'Sorry?' } },
          max_call_seconds: 60,
        },
      },
    });
    const bot = await waitFor('bot synced', async () => {
      const b = await getBot('renewals');
      return b.status?.conditions?.find((c) => c.type === 'Synced')?.status === 'True' ? b : undefined;
    });
    const botId = bot.status!.botId!;
    expect(botId).toMatch(/^[0-9a-f]{24}$/);
    expect(bot.metadata!.finalizers).toEqual([BOT_FINALIZER]);
    expect((await backend.adminGet(`/api/v1/bots/${botId}`)).active).toBe(true);

    await admin.custom.deleteNamespacedCustomObject({ ...bots, namespace, name: 'renewals' });
    await waitFor('Bot removed', () => gone(() => getBot('renewals')));
    expect((await backend.adminGet(`/api/v1/bots/${botId}`)).active).toBe(false);
  });

  it('holds, for the all-namespaces default (WATCH_NAMESPACE=""), the cluster-wide reads it needs', async () => {
    const needed: Access[] = [
      { verb: 'list', group: VOICE_API_GROUP, resource: 'voicefleets' },
      { verb: 'watch', group: VOICE_API_GROUP, resource: 'voicefleets' },
      { verb: 'list', group: VOICE_API_GROUP, resource: 'bots' },
      { verb: 'watch', group: VOICE_API_GROUP, resource: 'bots' },
      { verb: 'list', group: 'apps', resource: 'deployments' },
      { verb: 'watch', group: 'apps', resource: 'deployments' },
      { verb: 'list', resource: 'pods' },
      { verb: 'watch', resource: 'pods' },
    ];
    const answers = await Promise.all(needed.map(async (a) => [describeAccess(a), await allowed(a)] as const));
    expect(answers.filter(([, ok]) => !ok)).toEqual([]);
    // And the informers' actual cluster-wide list calls go through.
    await sa.custom.listClusterCustomObject({ ...fleets });
    await sa.custom.listClusterCustomObject({ ...bots });
    await sa.apps.listDeploymentForAllNamespaces({ labelSelector: 'app.kubernetes.io/managed-by=voice-platform-operator' });
    await sa.core.listPodForAllNamespaces({ labelSelector: 'voiceplatform.io/fleet' });
  });

  it('is refused (403) what the operator must not do', async () => {
    const other = await createNamespace(admin, 'rbac-other');
    await admin.core.createNamespacedSecret({ namespace: other, body: { metadata: { name: secretName }, stringData: { ADMIN_PASSWORD: 'not-yours' } } });
    await admin.core.createNamespacedSecret({ namespace, body: { metadata: { name: 'unrelated' }, stringData: { K: 'v' } } });
    const expect403 = async (what: string, call: () => Promise<unknown>) => {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect([what, err instanceof k8s.ApiException ? err.code : String(err)]).toEqual([what, 403]);
    };
    // Direct calls with the token.
    await expect403('read a Secret in another namespace', () => sa.core.readNamespacedSecret({ name: secretName, namespace: other }));
    await expect403('read another Secret in its own namespace', () => sa.core.readNamespacedSecret({ name: 'unrelated', namespace }));
    await expect403('list Secrets in its own namespace', () => sa.core.listNamespacedSecret({ namespace }));
    await expect403('delete a namespace', () => sa.core.deleteNamespace({ name: other }));
    await expect403('list nodes', () => sa.core.listNode());
    await expect403('create a ClusterRole', () =>
      sa.kc.makeApiClient(k8s.RbacAuthorizationV1Api).createClusterRole({ body: { metadata: { name: `${namespace}-escalate` }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } }),
    );
    await expect403('bind cluster-admin to itself', () =>
      sa.kc.makeApiClient(k8s.RbacAuthorizationV1Api).createNamespacedRoleBinding({
        namespace,
        body: {
          metadata: { name: 'escalate' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: operatorName, namespace }],
        },
      }),
    );
    const res = await rawRequest(sa.kc, 'DELETE', `/apis/${VOICE_API_GROUP}/${VOICE_API_VERSION}/namespaces/${namespace}/voicefleets/nothing`);
    expect(res.status).toBe(403);

    // The authorizer's answers for the rest.
    const forbidden: Access[] = [
      { verb: 'get', resource: 'secrets', namespace: other, name: secretName },
      { verb: 'list', resource: 'secrets' },
      { verb: 'update', resource: 'secrets', namespace, name: secretName },
      { verb: 'delete', resource: 'namespaces', name: other },
      { verb: 'list', resource: 'nodes' },
      { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespace },
      { verb: 'create', resource: 'pods', namespace },
      { verb: 'delete', resource: 'pods', namespace },
      { verb: 'create', resource: 'pods', subresource: 'exec', namespace },
      { verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace, name: operatorName },
      { verb: 'create', resource: 'configmaps', namespace },
      { verb: 'create', group: VOICE_API_GROUP, resource: 'voicefleets', namespace },
      { verb: 'delete', group: VOICE_API_GROUP, resource: 'bots', namespace },
      { verb: 'update', group: VOICE_API_GROUP, resource: 'bots', namespace },
      { verb: 'patch', group: VOICE_API_GROUP, resource: 'voicefleets', namespace },
      { verb: 'delete', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
      { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', namespace, name: operatorName },
      { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: other },
      { verb: 'delete', resource: 'events', namespace },
      // Verbs the chart once granted but the operator never uses: it patches and server-side applies.
      { verb: 'update', group: 'apps', resource: 'deployments', namespace },
      { verb: 'update', resource: 'services', namespace },
      { verb: 'update', group: 'policy', resource: 'poddisruptionbudgets', namespace },
      { verb: 'update', group: VOICE_API_GROUP, resource: 'voicefleets', subresource: 'status', namespace },
      { verb: 'update', group: VOICE_API_GROUP, resource: 'bots', subresource: 'status', namespace },
      { verb: 'patch', resource: 'events', namespace },
    ];
    const answers = await Promise.all(forbidden.map(async (a) => [describeAccess(a), await allowed(a)] as const));
    expect(answers.filter(([, ok]) => ok)).toEqual([]);
    await admin.core.deleteNamespace({ name: other });
  });

  it('made no forbidden request, and on SIGTERM releases the Lease and exits 0', async () => {
    operator.child.kill('SIGTERM');
    expect(await operator.exited).toBe(0);
    const released = await admin.coordination.readNamespacedLease({ name: operatorName, namespace });
    expect(released.spec!.holderIdentity).toBeUndefined();
    expect(operator.output()).toContain('"msg":"operator stopped"');
    const forbiddenLines = operator.output().split('\n').filter((l) => /forbidden/i.test(l));
    expect(forbiddenLines).toEqual([]);
  });
});
