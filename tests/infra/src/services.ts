// The real services of docs/design.md §6, each started from its real binary on loopback, with readiness
// checks that speak the service's own protocol. A service can be stopped and started again on the
// same port and data (tests of outages use that).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { binary } from './versions.js';
import { Jaeger } from './jaeger.js';
import { redisPing, waitUntil } from './process.js';
import { ports, ProcessService, type Service, type ServiceName, type ServiceOptions } from './processService.js';
import { LiveKit, Phone } from './telephony.js';

export { allServices, ports, ProcessService, type Service, type ServiceName, type ServiceOptions } from './processService.js';

/** FerretDB v1 on SQLite: the MongoDB wire protocol. */
export class FerretDB extends ProcessService {
  readonly name = 'mongodb' as const;
  env: Record<string, string> = {};
  private port = 0;
  private started = false;
  static async create(opts: ServiceOptions): Promise<FerretDB> {
    const svc = new FerretDB(opts);
    [svc.port] = await ports(opts, 1);
    svc.env = { MONGODB_URI: `mongodb://127.0.0.1:${svc.port}/` };
    return svc;
  }
  async start(): Promise<void> {
    const data = path.join(this.opts.dir, 'data');
    mkdirSync(data, { recursive: true });
    for (let attempt = 1; ; attempt++) {
      const proc = this.launch('ferretdb', binary('ferretdb'), [
        `--listen-addr=127.0.0.1:${this.port}`,
        '--handler=sqlite',
        `--sqlite-url=file:${data}/`,
        `--state-dir=${this.opts.dir}`,
        '--debug-addr=-', // no metrics/pprof listener: nothing reads it, and it was one more port to race for
        '--telemetry=disable',
        '--log-level=WARN',
      ]);
      try {
        await waitUntil(() => mongoPing(this.env.MONGODB_URI!), { what: 'FerretDB', proc });
        this.started = true;
        return;
      } catch (err) {
        // Another process bound the free port between its pick and FerretDB's bind (suites run side by side):
        // a first start picks another. A restart keeps its port (clients hold it), as does a port asked for.
        if (this.started || this.opts.ports?.[0] !== undefined || attempt >= 3 || !/address already in use/.test(String(err))) throw err;
        [this.port] = await ports({ ...this.opts, ports: undefined }, 1);
        this.env = { MONGODB_URI: `mongodb://127.0.0.1:${this.port}/` };
      }
    }
  }
}

export async function mongoPing(uri: string): Promise<boolean> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
  try {
    await client.connect();
    const res = await client.db('admin').command({ ping: 1 });
    return res.ok === 1;
  } finally {
    await client.close();
  }
}

/** Debian's redis-server, in memory only unless `durable` (then an append-only file in its folder). */
export class Redis extends ProcessService {
  readonly name = 'redis' as const;
  env: Record<string, string> = {};
  port = 0;
  static async create(opts: ServiceOptions): Promise<Redis> {
    const svc = new Redis(opts);
    [svc.port] = await ports(opts, 1);
    svc.env = { REDIS_URL: `redis://127.0.0.1:${svc.port}` };
    return svc;
  }
  async start(): Promise<void> {
    const proc = this.launch('redis', binary('redis-server'), [
      '--port', String(this.port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', this.opts.durable ? 'yes' : 'no',
      '--dir', this.opts.dir,
      '--daemonize', 'no',
    ]);
    await waitUntil(() => redisPing(this.port), { what: 'Redis', proc });
  }
}

/** MinIO: S3-compatible object storage. */
export class MinIO extends ProcessService {
  readonly name = 'minio' as const;
  env: Record<string, string> = {};
  private port = 0;
  private consolePort = 0;
  static readonly accessKey = 'vp-test-access';
  static readonly secretKey = 'vp-test-secret-key-0123456789';
  static async create(opts: ServiceOptions & { accessKey?: string; secretKey?: string }): Promise<MinIO> {
    const svc = new MinIO(opts);
    [svc.port, svc.consolePort] = await ports(opts, 2);
    svc.env = {
      STORAGE_ENDPOINT: `127.0.0.1:${svc.port}`,
      STORAGE_ACCESS_KEY: opts.accessKey ?? MinIO.accessKey,
      STORAGE_SECRET_KEY: opts.secretKey ?? MinIO.secretKey,
      STORAGE_SECURE: 'false',
    };
    return svc;
  }
  async start(): Promise<void> {
    const data = path.join(this.opts.dir, 'data');
    mkdirSync(data, { recursive: true });
    const proc = this.launch(
      'minio',
      binary('minio'),
      ['server', data, '--address', `127.0.0.1:${this.port}`, '--console-address', `127.0.0.1:${this.consolePort}`, '--quiet'],
      {
        MINIO_ROOT_USER: this.env.STORAGE_ACCESS_KEY,
        MINIO_ROOT_PASSWORD: this.env.STORAGE_SECRET_KEY,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
        MINIO_CI_CD: '1', // no network look-ups, no update checks
      },
    );
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${this.port}/minio/health/ready`)).status === 200,
      { what: 'MinIO', proc },
    );
  }
}

/**
 * etcd + kube-apiserver started the way controller-runtime's envtest does: a throwaway CA and
 * serving certificate, an admin client certificate in `system:masters`, service-account keys, and a
 * kubeconfig for the tests. No controller-manager or scheduler runs.
 */
export class Kube extends ProcessService {
  readonly name = 'kube' as const;
  env: Record<string, string> = {};
  private etcdPort = 0;
  private etcdPeerPort = 0;
  private apiPort = 0;
  private pki = '';
  static async create(opts: ServiceOptions): Promise<Kube> {
    const svc = new Kube(opts);
    [svc.etcdPort, svc.etcdPeerPort, svc.apiPort] = await ports(opts, 3);
    svc.pki = path.join(opts.dir, 'pki');
    svc.env = { KUBECONFIG: path.join(opts.dir, 'kubeconfig'), KUBE_API_URL: `https://127.0.0.1:${svc.apiPort}` };
    return svc;
  }

  private writePki(): void {
    const p = (f: string) => path.join(this.pki, f);
    mkdirSync(this.pki, { recursive: true });
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: this.pki, stdio: 'pipe' });
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '7', '-subj', '/CN=voice-platform-test-ca');
    const sign = (name: string, subj: string, ext: string) => {
      writeFileSync(p(`${name}.ext`), ext);
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj);
      ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '7', '-extfile', `${name}.ext`);
    };
    sign(
      'apiserver',
      '/CN=kube-apiserver',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
    );
    sign('admin', '/O=system:masters/CN=admin', 'extendedKeyUsage=clientAuth\n');
    ssl('genrsa', '-out', 'sa.key', '2048');
    ssl('rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
    const b64 = (f: string) => readFileSync(p(f)).toString('base64');
    writeFileSync(
      this.env.KUBECONFIG!,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: test',
        '  cluster:',
        `    server: ${this.env.KUBE_API_URL}`,
        `    certificate-authority-data: ${b64('ca.crt')}`,
        'users:',
        '- name: admin',
        '  user:',
        `    client-certificate-data: ${b64('admin.crt')}`,
        `    client-key-data: ${b64('admin.key')}`,
        'contexts:',
        '- name: test',
        '  context: {cluster: test, user: admin}',
        'current-context: test',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
  }

  async start(): Promise<void> {
    const p = (f: string) => path.join(this.pki, f);
    try {
      readFileSync(p('ca.crt'));
    } catch {
      this.writePki();
    }
    const etcdUrl = `http://127.0.0.1:${this.etcdPort}`;
    const peerUrl = `http://127.0.0.1:${this.etcdPeerPort}`;
    const etcd = this.launch('etcd', binary('etcd'), [
      '--name=vp',
      `--data-dir=${path.join(this.opts.dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=vp=${peerUrl}`,
      '--logger=zap',
      '--log-level=warn',
    ]);
    await waitUntil(async () => ((await (await fetch(`${etcdUrl}/health`)).json()) as { health?: string }).health === 'true', {
      what: 'etcd',
      proc: etcd,
    });
    const api = this.launch('kube-apiserver', binary('kube-apiserver'), [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${this.apiPort}`,
      `--cert-dir=${this.pki}`,
      `--tls-cert-file=${p('apiserver.crt')}`,
      `--tls-private-key-file=${p('apiserver.key')}`,
      `--client-ca-file=${p('ca.crt')}`,
      `--service-account-key-file=${p('sa.pub')}`,
      `--service-account-signing-key-file=${p('sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=RBAC',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--enable-priority-and-fairness=false',
      '--v=0',
    ]);
    const tls = { ca: readFileSync(p('ca.crt')), cert: readFileSync(p('admin.crt')), key: readFileSync(p('admin.key')) };
    await waitUntil(() => httpsOk(`${this.env.KUBE_API_URL}/readyz`, tls), { what: 'kube-apiserver', proc: api, timeoutMs: 120_000, intervalMs: 250 });
  }
}

function httpsOk(url: string, tls: https.RequestOptions): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ...tls, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', reject);
  });
}

export async function createService(name: ServiceName, opts: ServiceOptions): Promise<Service> {
  switch (name) {
    case 'mongodb':
      return FerretDB.create(opts);
    case 'redis':
      return Redis.create(opts);
    case 'minio':
      return MinIO.create(opts);
    case 'kube':
      return Kube.create(opts);
    case 'livekit':
      return LiveKit.create({ ...opts, webhookUrl: process.env.VP_LIVEKIT_WEBHOOK_URL });
    case 'jaeger':
      return Jaeger.create(opts);
    case 'phone':
      return Phone.create({ ...opts, phrase: process.env.VP_PHONE_PHRASE, speakAfterMs: process.env.VP_PHONE_SPEAK_AFTER_MS ? Number(process.env.VP_PHONE_SPEAK_AFTER_MS) : undefined });
  }
}
