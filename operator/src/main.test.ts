// The operator process itself (dist/main.js): settings checked at boot, leads, reconciles, and on
// SIGTERM releases its Lease and exits 0.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { VOICE_API_GROUP, VOICE_API_VERSION } from '@voice-platform/schemas';
import { freePort, LOG_LINE_SHAPE, logLineShape, parseLogLines, saveLogs } from '@voice-platform/tests/infra';
import { repoRoot } from './crds/generate.js';
import { GROUP_VERSION } from './core/kube.js';
import { SettingsError, loadSettings } from './settings.js';
import { createNamespace, installCrds, testClients, waitFor } from '../testing/kube.js';

const mainJs = path.join(repoRoot, 'operator', 'dist', 'main.js');
const clients = testClients();

function startMain(env: Record<string, string>) {
  const child = spawn('node', [mainJs], { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      saveLogs('operator', output); // kept for the secrets check after `make test`
      resolve(code);
    }),
  );
  return { child, exited, output: () => output };
}

describe('settings', () => {
  it('applies defaults and converts numbers and booleans', () => {
    const s = loadSettings({ SCRAPE_INTERVAL_MS: '3000', LEADER_ELECTION: 'false' });
    expect(s).toMatchObject({ SCRAPE_INTERVAL_MS: 3000, LEADER_ELECTION: false, METRICS_PORT: 8080, BACKEND_CREDENTIALS_SECRET: 'voice-platform-admin' });
  });

  it('reports every bad setting at once', () => {
    let problems: string[] = [];
    try {
      loadSettings({ SCRAPE_INTERVAL_MS: '10', BACKEND_URL: 'ftp://x', LOG_LEVEL: 'LOUD' });
    } catch (err) {
      expect(err).toBeInstanceOf(SettingsError);
      problems = (err as SettingsError).problems;
    }
    expect(new Set(problems.map((p) => p.split(' ')[0]))).toEqual(new Set(['SCRAPE_INTERVAL_MS', 'BACKEND_URL', 'LOG_LEVEL']));
  });
});

describe('operator process', () => {
  it('exits 2 naming the bad settings', async () => {
    const p = startMain({ KUBECONFIG: process.env.KUBECONFIG!, METRICS_PORT: 'x', LEASE_DURATION_MS: '5' });
    expect(await p.exited).toBe(2);
    expect(p.output()).toContain('METRICS_PORT');
    expect(p.output()).toContain('LEASE_DURATION_MS');
  });

  it('leads, reconciles, and on SIGTERM releases the Lease and exits 0', async () => {
    await installCrds(clients);
    const namespace = await createNamespace(clients, 'main');
    const port = await freePort();
    const p = startMain({
      KUBECONFIG: process.env.KUBECONFIG!,
      OPERATOR_NAMESPACE: namespace,
      WATCH_NAMESPACE: namespace,
      POD_NAME: 'operator-main-0',
      METRICS_PORT: String(port),
      LEASE_DURATION_MS: '4000',
      LEASE_RENEW_DEADLINE_MS: '3000',
      LEASE_RETRY_PERIOD_MS: '300',
      SCRAPE_INTERVAL_MS: '1000',
    });
    try {
      await waitFor('leader metric', async () => (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).includes('voice_operator_leader 1'));
      await clients.custom.createNamespacedCustomObject({
        group: VOICE_API_GROUP,
        version: VOICE_API_VERSION,
        plural: 'voicefleets',
        namespace,
        body: { apiVersion: GROUP_VERSION, kind: 'VoiceFleet', metadata: { name: 'main' }, spec: { image: 'w:1', minReplicas: 2, maxReplicas: 4 } },
      });
      await waitFor('deployment', async () => (await clients.apps.readNamespacedDeployment({ name: 'main', namespace })).spec!.replicas === 2);
      const lease = await clients.coordination.readNamespacedLease({ name: 'voice-platform-operator', namespace });
      expect(lease.spec!.holderIdentity).toBe('operator-main-0');
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      const released = await clients.coordination.readNamespacedLease({ name: 'voice-platform-operator', namespace });
      expect(released.spec!.holderIdentity).toBeUndefined();
      expect(p.output()).toContain('"msg":"operator stopped"');
      // The format the backend's and the worker's first lines have too (their main.test).
      const [first] = parseLogLines(p.output());
      expect(logLineShape(first!)).toEqual(LOG_LINE_SHAPE);
      expect(first).toMatchObject({ service: 'operator', component: 'operator', identity: 'operator-main-0' });
    } finally {
      p.child.kill('SIGKILL');
    }
  });
});
