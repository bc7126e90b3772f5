// The chart on a real cluster (make test-k8s; docs/kind.md): the images of docker/, installed by
// `make kind-up` with ci/kind-values.yaml, exercised as users do: kubectl for resources, a CRM's
// dial-out through the Ingress with an API key, real calls to the in-cluster test phone through
// livekit-server and livekit-sip, the operator scaling worker pods on their live calls, and a
// Prometheus scraping it all. Steps run in order and build on each other.
import { load as loadYaml } from 'js-yaml';
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { holdNumber, PHONE_NUMBERS } from '../infra/src/telephony.js';
import {
  adminToken,
  api,
  apply,
  helm,
  isReady,
  kubectl,
  kubectlJson,
  NAMESPACE,
  pods,
  proxyGet,
  RELEASE,
  repoRoot,
  TEST_NAMESPACE,
  until,
  workerActiveCalls,
  type Pod,
} from './cluster.js';
import { PHONE_SERVICE, phoneObjects, prometheusObjects, type ServiceMonitor } from './fixtures.js';

const CHART = path.join(repoRoot, 'charts', 'voice-platform');
const KIND_VALUES = path.join(CHART, 'ci', 'kind-values.yaml');
const values = loadYaml(readFileSync(KIND_VALUES, 'utf8')) as { fleet: { callsPerWorker: number; scaleDownDelaySeconds: number } };
const TERMINAL = new Set(['completed', 'failed', 'busy', 'no_answer', 'canceled']);
const FROM_NUMBER = '+15550001000';
const BOT_RESOURCE = 'k8s-reminder';
const ARTIFACTS = path.join(repoRoot, 'test-artifacts', 'k8s');

interface CallRecord {
  call_id: string;
  status: string;
  end_reason: string | null;
  status_times: Record<string, string>;
  transcript: Array<{ role: string; text: string }>;
  recording_key?: string | null;
}

let token = '';
let apiKey = '';
let botId = '';
let fleetName = '';
/** Every call the suite placed, to check at the end that none was cut. */
const placed: Array<{ id: string; to: string; step: string }> = [];

const fleet = () => kubectlJson<{ status: Record<string, any>; spec: Record<string, any> }>(['-n', NAMESPACE, 'get', 'voicefleet', fleetName]);
const deploymentReplicas = async () =>
  (await kubectlJson<{ spec: { replicas: number } }>(['-n', NAMESPACE, 'get', 'deployment', fleetName])).spec.replicas;
const workerPods = () => pods(NAMESPACE, `voiceplatform.io/fleet=${fleetName}`);
const readyWorkers = async () => (await workerPods()).filter((p) => isReady(p) && !p.metadata.deletionTimestamp);

async function dial(to: string, step: string): Promise<string> {
  const r = await api('POST', '/api/v1/sip/dialout', { apiKey, body: { bot_id: botId, to_number: to, variables: { customer_name: 'Kay' } } });
  if (r.status !== 201) throw new Error(`dial-out to ${to}: ${r.status} ${JSON.stringify(r.body)}`);
  placed.push({ id: r.body.call_id, to, step });
  return r.body.call_id as string;
}
const call = async (id: string) => (await api<CallRecord>('GET', `/api/v1/calls/${id}`, { token })).body;
const untilStatus = (id: string, ok: (c: CallRecord) => boolean, what: string, timeoutMs: number) =>
  until(`call ${id} ${what}`, async () => {
    const c = await call(id);
    return ok(c) ? c : undefined;
  }, timeoutMs);
const answered = (id: string) => untilStatus(id, (c) => c.status === 'in_progress' || TERMINAL.has(c.status), 'answered', 90_000);
const ended = (id: string, timeoutMs: number) => untilStatus(id, (c) => TERMINAL.has(c.status), 'ended', timeoutMs);

/**
 * Watches the fleet's pods once a second: each pod's live calls (its /metrics) and when it was told to
 * stop (deletionTimestamp), so a test can tell which pods were removed while holding calls.
 */
class PodWatch {
  private timer: NodeJS.Timeout | null = null;
  readonly lastCalls = new Map<string, number>();
  /** Pods seen terminating, with the live calls they held at the last reading before. */
  readonly removed = new Map<string, { callsBefore: number | undefined; at: number }>();
  maxReplicasSeen = 0;

  start(): void {
    const tick = async () => {
      try {
        const list = await workerPods();
        // An idle pod may be gone between two readings: removed all the same.
        const present = new Set(list.map((p) => p.metadata.name));
        for (const name of this.lastCalls.keys()) {
          if (!present.has(name) && !this.removed.has(name)) this.note(name, 'gone');
        }
        this.maxReplicasSeen = Math.max(this.maxReplicasSeen, list.filter((p) => !p.metadata.deletionTimestamp).length);
        await Promise.all(
          list.map(async (p) => {
            const name = p.metadata.name;
            if (p.metadata.deletionTimestamp) {
              if (!this.removed.has(name)) this.note(name, 'terminating');
              return;
            }
            if (isReady(p)) {
              const calls = await workerActiveCalls(name).catch(() => this.lastCalls.get(name) ?? 0);
              if (calls !== this.lastCalls.get(name)) this.log(`${name} ${calls} calls`);
              this.lastCalls.set(name, calls);
            }
          }),
        );
      } catch {
        // the API server busy for a moment: next tick
      }
      if (this.timer) this.timer = setTimeout(() => void tick(), 1000);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }
  private note(name: string, how: string): void {
    const callsBefore = this.lastCalls.get(name);
    this.removed.set(name, { callsBefore, at: Date.now() });
    this.log(`${name} ${how} (last reading: ${callsBefore ?? 'none'} calls)`);
  }
  /** What the watch saw, for the run's artifacts (test-artifacts/k8s/pods.log). */
  private log(line: string): void {
    mkdirSync(ARTIFACTS, { recursive: true });
    appendFileSync(path.join(ARTIFACTS, 'pods.log'), `${new Date().toISOString()} ${line}\n`);
  }
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
  removedSince(t: number): Array<[string, { callsBefore: number | undefined; at: number }]> {
    return [...this.removed].filter(([, r]) => r.at >= t);
  }
}
const watch = new PodWatch();

beforeAll(async () => {
  token = await adminToken();
  const fleets = await kubectlJson<{ items: Array<{ metadata: { name: string } }> }>(['-n', NAMESPACE, 'get', 'voicefleets']);
  fleetName = fleets.items[0]!.metadata.name;
  // The suite's fixtures, afresh: the test phone and Prometheus with the chart's rules as rendered.
  await kubectl(['delete', 'namespace', TEST_NAMESPACE, '--ignore-not-found', '--wait=true']);
  await kubectl(['create', 'namespace', TEST_NAMESPACE]);
  const { monitors, rules } = await renderedMonitoring();
  await apply([...phoneObjects(), ...prometheusObjects(monitors, rules)]);
  await kubectl(['-n', TEST_NAMESPACE, 'rollout', 'status', 'deployment/vp-phone', 'deployment/vp-prometheus', '--timeout=180s']);
  rmSync(path.join(ARTIFACTS, 'pods.log'), { force: true });
  watch.start();
}, 300_000);

afterAll(() => watch.stop());

/**
 * The chart's monitoring objects as it renders them where the Prometheus Operator's CRDs exist: the
 * ServiceMonitors and the alert rules of its PrometheusRule (as a Prometheus rule file).
 */
async function renderedMonitoring(): Promise<{ monitors: ServiceMonitor[]; rules: string }> {
  const out = await helm([
    'template', RELEASE, CHART, '-n', NAMESPACE, '-f', KIND_VALUES,
    '--api-versions', 'monitoring.coreos.com/v1/PrometheusRule', '--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor',
    '--show-only', 'templates/monitoring.yaml',
  ]);
  const docs = out.split(/^---$/m).map((d) => loadYaml(d) as { kind?: string; spec?: { groups?: unknown[] } } | null);
  const monitors = docs.filter((d) => d?.kind === 'ServiceMonitor') as unknown as ServiceMonitor[];
  const rule = docs.find((d) => d?.kind === 'PrometheusRule');
  if (!rule?.spec?.groups || monitors.length !== 2) throw new Error('the chart rendered no PrometheusRule or not its two ServiceMonitors');
  return { monitors, rules: JSON.stringify({ groups: rule.spec.groups }, null, 2) };
}

describe('1. helm install', () => {
  it('every pod of the cluster is Ready (Jobs succeeded)', async () => {
    // A reused cluster's pods restart with the Docker engine, and a worker may still be starting after the
    // Ingress answers: wait for the cluster to settle, then name whatever never became Ready.
    let notReady: string[] = [];
    let all: Pod[] = [];
    await until('every pod Ready', async () => {
      all = (await kubectlJson<{ items: Pod[] }>(['get', 'pods', '-A'])).items;
      notReady = all.filter((p) => p.status.phase !== 'Succeeded' && !isReady(p)).map((p) => p.metadata.name);
      return notReady.length === 0;
    }, 180_000, 2000).catch(() => undefined);
    expect(notReady).toEqual([]);
    const names = all.map((p) => p.metadata.name).join(' ');
    for (const part of ['backend', 'dialler', 'console', 'operator', 'livekit', 'livekit-sip', 'mongodb', 'redis', 'minio']) {
      expect(names).toContain(part);
    }
    expect((await readyWorkers()).length).toBeGreaterThanOrEqual(1);
  });
});

describe('2. a Bot applied with kubectl, a dial-out through the Ingress', () => {
  it('the Bot is synced to the backend and kubectl shows the printer columns filled', async () => {
    await apply([
      {
        apiVersion: 'voiceplatform.io/v1alpha1',
        kind: 'Bot',
        metadata: { name: BOT_RESOURCE, namespace: NAMESPACE },
        spec: {
          name: 'k8s payment reminder',
          active: true,
          language: 'en-US',
          prompt: 'You remind {{customer_name}} about an open invoice.',
          greeting: 'Hello {{customer_name}}, this is a reminder from Example Company.',
          variables: [{ name: 'customer_name', required: true }],
          policy: {
            intents: [{ name: 'pay', examples: ['yes', 'i will pay'], reply: 'Thank you, goodbye.', end_call: true }],
            fallback: { reply: 'Will you pay the open amount?' },
          },
          max_call_seconds: 600,
          fleetRef: { name: fleetName },
        },
      },
    ]);
    const bot = await until('the Bot synced', async () => {
      const b = await kubectlJson<{ status?: { botId?: string; conditions?: Array<{ type: string; status: string }> } }>(['-n', NAMESPACE, 'get', 'bot', BOT_RESOURCE]);
      return b.status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True') && b.status.botId ? b : undefined;
    }, 60_000);
    botId = bot.status!.botId!;
    const stored = await api('GET', `/api/v1/bots/${botId}`, { token });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ id: botId, name: 'k8s payment reminder', active: true, language: 'en-US' });

    // Printer columns: every column of both kinds has a value (kubectl prints <none> for an empty one).
    const table = await kubectl(['-n', NAMESPACE, 'get', 'voicefleets,bots']);
    const lines = table.trim().split('\n');
    expect(lines.filter((l) => /^NAME\s/.test(l))).toEqual([
      expect.stringMatching(/^NAME\s+REPLICAS\s+DESIRED\s+ACTIVE CALLS\s+CAPACITY\s+LOAD\s+READY\s+AGE$/),
      expect.stringMatching(/^NAME\s+BOT ID\s+FLEET\s+ACTIVE\s+SYNCED\s+AGE$/),
    ]);
    expect(table).not.toContain('<none>');
    expect(table).toMatch(new RegExp(`voicefleet[^\\s]*/${fleetName}\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+\\s+[\\d.]+\\s+True\\s`));
    expect(table).toMatch(new RegExp(`bot[^\\s]*/${BOT_RESOURCE}\\s+${botId}\\s+${fleetName}\\s+true\\s+True\\s`));
  });

  it('a CRM dials out with an API key: the test phone answers, hears the greeting, the call completes with a recording', async () => {
    // An outbound trunk to the in-cluster phone (by its Service's DNS name), made the default.
    const trunks = await api<{ items: Array<{ id: string; name: string }> }>('GET', '/api/v1/sip/outbound-trunks', { token });
    for (const t of trunks.body.items.filter((x) => x.name === 'k8s test phone')) {
      await api('DELETE', `/api/v1/sip/outbound-trunks/${t.id}`, { token });
    }
    const trunk = await api('POST', '/api/v1/sip/outbound-trunks', {
      token,
      body: { name: 'k8s test phone', address: `${PHONE_SERVICE}:5060`, numbers: [FROM_NUMBER], default: true },
    });
    expect(trunk.status).toBe(201);
    const key = await api('POST', '/api/v1/api-keys', { token, body: { name: `k8s suite ${Date.now()}` } });
    expect(key.status).toBe(201);
    apiKey = key.body.key;

    const id = await dial(PHONE_NUMBERS.answers, 'dial-out');
    // The record is complete once the recording is uploaded, just after the call ends.
    const c = await untilStatus(id, (x) => TERMINAL.has(x.status) && (x.status !== 'completed' || !!x.recording_key), 'ended and recorded', 120_000);
    expect(c).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
    expect(Object.keys(c.status_times)).toEqual(expect.arrayContaining(['queued', 'dialing', 'ringing', 'in_progress', 'completed']));
    // The greeting, what the phone said (recognised as one of the intent's examples), the intent's reply.
    expect(c.transcript[0]).toMatchObject({ role: 'bot', text: 'Hello Kay, this is a reminder from Example Company.' });
    expect(c.transcript.at(-2)).toMatchObject({ role: 'user', text: expect.stringMatching(/yes|pay/) });
    expect(c.transcript.at(-1)).toMatchObject({ role: 'bot', text: 'Thank you, goodbye.' });
    expect(c.recording_key).toMatch(/\.wav$/);
  }, 180_000);
});

describe('3. live calls scale the fleet; scale-down removes only idle workers', () => {
  const { callsPerWorker, scaleDownDelaySeconds } = values.fleet;
  const longCalls: string[] = [];
  const shortCalls: string[] = [];
  let t0 = 0;

  it(`calls beyond one worker's ${callsPerWorker} slots (with the buffer) raise the replicas`, async () => {
    await until('one idle worker', async () => (await deploymentReplicas()) === 1 && (await readyWorkers()).length === 1, 300_000, 2000);
    t0 = Date.now();
    // 4 live + 2 buffer calls need 2 workers; later 9 + 2 need 3.
    for (let i = 0; i < 4; i++) longCalls.push(await dial(holdNumber(150), 'scale'));
    await Promise.all(longCalls.map(answered));
    await until('2 ready workers', async () => (await readyWorkers()).length >= 2, 180_000);
    for (let i = 0; i < 5; i++) shortCalls.push(await dial(holdNumber(40), 'scale'));
    await Promise.all(shortCalls.map(answered));
    const f = await until('3 replicas', async () => ((await fleet()).status.desiredReplicas >= 3 ? fleet() : undefined), 60_000);
    expect(f.status.activeCalls).toBe(9);
    await until('3 ready workers', async () => (await readyWorkers()).length >= 3, 180_000);
  }, 600_000);

  it(`when calls end the fleet scales down after ${scaleDownDelaySeconds} s, never removing a worker with live calls`, async () => {
    // The delay runs from when the recommendation dropped below 3 workers: as the short calls end, not
    // necessarily when the last of them does (a straggler whose hang-up livekit-sip reports late does not
    // change the recommendation). Seen here, or by the operator's own mark if it dropped before this looked.
    const dropped = await until('the recommendation below 3', async () => {
      const f = await fleet();
      return f.status.recommendedReplicas < 3 ? { seenAt: Date.now(), pendingSince: f.status.scaleDownPendingSince } : undefined;
    }, 180_000, 1000);
    const droppedAt = Math.min(dropped.seenAt, dropped.pendingSince ? new Date(dropped.pendingSince).getTime() : Infinity);
    for (const id of shortCalls) expect(await ended(id, 120_000)).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
    await until('scaled down to 2', async () => (await deploymentReplicas()) === 2, (scaleDownDelaySeconds + 60) * 1000, 2000);
    // Not before the delay.
    expect(Date.now() - droppedAt).toBeGreaterThanOrEqual((scaleDownDelaySeconds - 10) * 1000);
    for (const id of longCalls) expect(await ended(id, 200_000)).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
    await until('scaled down to 1', async () => (await deploymentReplicas()) === 1 && (await readyWorkers()).length === 1, (scaleDownDelaySeconds + 90) * 1000, 2000);
    // The watch reads the pods once a second: it sees the second removal a moment after the Deployment.
    const removed = await until('the watch to see both removals (3 → 2 → 1)', async () => {
      const r = watch.removedSince(t0);
      return r.length >= 2 ? r : undefined;
    }, 30_000);
    expect(removed.length).toBe(2);
    expect(removed.map(([name, r]) => [name, r.callsBefore ?? 0])).toEqual(removed.map(([name]) => [name, 0]));
    expect(watch.maxReplicasSeen).toBeGreaterThanOrEqual(3);
  }, 900_000);
});

describe('3b. helm upgrade rolls the workers without cutting a call', () => {
  it('calls live during the rollout all end as the callee hangs up', async () => {
    const calls: string[] = [];
    for (let i = 0; i < 3; i++) calls.push(await dial(holdNumber(60), 'upgrade'));
    await Promise.all(calls.map(answered));
    const before = new Set((await readyWorkers()).map((p) => p.metadata.name));
    // A change to the workers' pod template (their log level), alternating so every run rolls them.
    const current = JSON.parse(await helm(['-n', NAMESPACE, 'get', 'values', RELEASE, '-o', 'json'])) as { fleet?: { settings?: { LOG_LEVEL?: string } } };
    const level = current.fleet?.settings?.LOG_LEVEL === 'DEBUG' ? 'INFO' : 'DEBUG';
    await helm(['upgrade', RELEASE, CHART, '-n', NAMESPACE, '--reuse-values', '--set', `fleet.settings.LOG_LEVEL=${level}`, '--wait', '--timeout', '5m']);
    const rolled = await until('every worker on the new template', async () => {
      const list = await workerPods();
      const fresh = list.filter((p) => p.spec.containers[0]!.env?.some((e) => e.name === 'LOG_LEVEL' && e.value === level));
      return list.length === fresh.length && fresh.length > 0 && fresh.every(isReady) ? fresh : undefined;
    }, 300_000, 2000);
    expect(rolled.some((p) => before.has(p.metadata.name))).toBe(false);
    for (const id of calls) expect(await ended(id, 120_000)).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
  }, 600_000);
});

describe('4. the operator leader fails over mid-scale', () => {
  it('the other replica takes the Lease and finishes the scale-up, once', async () => {
    await until('one idle worker', async () => (await deploymentReplicas()) === 1 && (await readyWorkers()).length === 1, 400_000, 2000);
    const leases = await kubectlJson<{ items: Array<{ metadata: { name: string }; spec: { holderIdentity?: string } }> }>(['-n', NAMESPACE, 'get', 'leases']);
    const operators = (await pods(NAMESPACE, 'app.kubernetes.io/component=operator')).map((p) => p.metadata.name);
    const lease = leases.items.find((l) => operators.includes(l.spec.holderIdentity ?? ''));
    expect(lease).toBeDefined();
    const leader = lease!.spec.holderIdentity!;
    const since = new Date();
    const calls: string[] = [];
    for (let i = 0; i < 4; i++) calls.push(await dial(holdNumber(60), 'failover'));
    await kubectl(['-n', NAMESPACE, 'delete', 'pod', leader, '--wait=false']);
    const next = await until('a new leader', async () => {
      const l = await kubectlJson<{ spec: { holderIdentity?: string } }>(['-n', NAMESPACE, 'get', 'lease', lease!.metadata.name]);
      return l.spec.holderIdentity && l.spec.holderIdentity !== leader ? l.spec.holderIdentity : undefined;
    }, 90_000);
    expect(operators).toContain(next);
    await Promise.all(calls.map(answered));
    await until('scaled up to 2', async () => (await deploymentReplicas()) === 2 && (await readyWorkers()).length === 2, 180_000, 2000);
    // One scale-up from 1 to 2, whichever replica made it (Events aggregate repeats into count).
    const events = await kubectlJson<{ items: Array<{ reason: string; message: string; count?: number; lastTimestamp?: string; eventTime?: string; involvedObject: { name: string } }> }>(
      ['-n', NAMESPACE, 'get', 'events', '--field-selector', `involvedObject.name=${fleetName},reason=ScaledUp`],
    );
    const recent = events.items.filter((e) => new Date(e.lastTimestamp ?? e.eventTime ?? 0) >= new Date(since.getTime() - 1000));
    expect(recent.map((e) => [e.message.replace(/:.*/, ''), e.count ?? 1])).toEqual([['Scaled up from 1 to 2', 1]]);
    for (const id of calls) expect(await ended(id, 120_000)).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
  }, 900_000);
});

describe('5. Prometheus scrapes the platform', () => {
  const query = async (expr: string) => {
    const out = JSON.parse(await proxyGet(TEST_NAMESPACE, 'services/vp-prometheus:9090', `api/v1/query?query=${encodeURIComponent(expr)}`));
    return out.data.result as Array<{ metric: Record<string, string>; value: [number, string] }>;
  };

  it('every target the ServiceMonitors select is up: backend, both operators, the workers', async () => {
    const up = await until('targets scraped', async () => {
      const r = await query('up');
      return r.length > 0 && r.every((s) => s.value[1] === '1') ? r : undefined;
    }, 60_000, 2000);
    const jobs = new Set(up.map((s) => s.metric.container));
    expect([...jobs].sort()).toEqual(expect.arrayContaining(['backend', 'operator', 'worker']));
    expect(up.filter((s) => s.metric.container === 'operator')).toHaveLength(2);
  }, 120_000);

  it('every PromQL expression of the Grafana dashboard returns series', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(CHART, 'files', 'dashboard.json'), 'utf8'));
    const exprs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'expr' && typeof x === 'string') exprs.push(x);
          else walk(x);
        }
      }
    };
    walk(dashboard);
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    const empty: string[] = [];
    for (const expr of exprs) {
      const r = await query(expr.replaceAll('$namespace', NAMESPACE));
      if (r.length === 0) empty.push(expr);
    }
    expect(empty).toEqual([]);
  }, 120_000);

  it('the chart\'s alert rules pass promtool and load into Prometheus', async () => {
    const out = await kubectl(['-n', TEST_NAMESPACE, 'exec', 'deploy/vp-prometheus', '--', 'promtool', 'check', 'rules', '/etc/prometheus/rules/voice-platform.yml']);
    expect(out).toMatch(/SUCCESS: 4 rules found/);
    const rules = JSON.parse(await proxyGet(TEST_NAMESPACE, 'services/vp-prometheus:9090', 'api/v1/rules')).data.groups as Array<{
      name: string;
      rules: Array<{ name: string; health: string }>;
    }>;
    const group = rules.find((g) => g.name === 'voice-platform');
    expect(group?.rules.map((r) => [r.name, r.health])).toEqual([
      ['VoiceFleetAtCapacity', 'ok'],
      ['VoiceHighTurnLatency', 'ok'],
      ['VoiceWorkersDown', 'ok'],
      ['VoiceOperatorScrapeFailures', 'ok'],
    ]);
    // The workers-down alert's target selector matches every worker pod (job="voice-worker", any fleet).
    const workers = (await readyWorkers()).map((p) => p.metadata.name).sort();
    expect((await query('up{job="voice-worker"}')).map((s) => s.metric.pod).sort()).toEqual(workers);
  }, 60_000);
});

describe('6. load scales the fleet before its slots run out', () => {
  it('a worker one call fills reports no admittable room, and the operator adds a worker with calls far below the slots', async () => {
    await until('one idle worker', async () => (await deploymentReplicas()) === 1 && (await readyWorkers()).length === 1, 400_000, 2000);
    // A small CPU allowance: the estimate of a call (0.1 core) is half of it, so one live call leaves no room
    // under LOAD_THRESHOLD (0.7) though the worker has slots for five (callsPerWorker) and more.
    await helm(['upgrade', RELEASE, CHART, '-n', NAMESPACE, '--reuse-values', '--set', 'fleet.settings.CPU_ALLOWANCE_CORES=0.2', '--wait', '--timeout', '5m']);
    await until('the one worker on the small allowance', async () => {
      const list = (await workerPods()).filter((p) => !p.metadata.deletionTimestamp);
      return list.length === 1 && isReady(list[0]!) && list[0]!.spec.containers[0]!.env?.some((e) => e.name === 'CPU_ALLOWANCE_CORES' && e.value === '0.2');
    }, 300_000, 2000);
    await until('the fleet at one replica', async () => (await deploymentReplicas()) === 1, 120_000, 2000);
    const since = new Date();
    const id = await dial(holdNumber(90), 'load');
    await answered(id);
    const f = await until('a scale-up on load', async () => {
      const x = await fleet();
      return x.status.desiredReplicas >= 2 ? x : undefined;
    }, 120_000, 1000);
    // The calls rule asks for one worker (1 call + a buffer of 2 ≤ 5): the room the load leaves decided it.
    expect(f.status.activeCalls).toBe(1);
    const events = await kubectlJson<{ items: Array<{ message: string; lastTimestamp?: string; eventTime?: string }> }>(
      ['-n', NAMESPACE, 'get', 'events', '--field-selector', `involvedObject.name=${fleetName},reason=ScaledUp`],
    );
    const recent = events.items.filter((e) => new Date(e.lastTimestamp ?? e.eventTime ?? 0) >= new Date(since.getTime() - 1000));
    // Either load rule: no admittable room left, or the measured load itself over targetLoad.
    expect(recent.map((e) => e.message)).toEqual([expect.stringMatching(/^Scaled up from 1 to 2: (0 admittable calls on 1 ready workers|load [\d.]+ of 1 workers at targetLoad 0\.6) need 2 workers/)]);
    await until('2 ready workers', async () => (await readyWorkers()).length >= 2, 180_000, 2000);
    expect(await ended(id, 150_000)).toMatchObject({ status: 'completed', end_reason: 'callee_hangup' });
  }, 900_000);
});

describe('no call was cut', () => {
  it('every call the suite placed completed', async () => {
    const outcomes = await Promise.all(placed.map(async (p) => [p.step, p.to, (await call(p.id)).status] as const));
    expect(outcomes.filter(([, , s]) => s !== 'completed')).toEqual([]);
    // 1 dial-out, 9 scaling, 3 during the upgrade, 4 during the failover, 1 on load.
    expect(outcomes.length).toBe(18);
  });
});
