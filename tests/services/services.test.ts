// Each real service, started by the launcher in jest's global setup, used for real through the
// client the platform uses for it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { Client as MinioClient } from 'minio';
import { MongoClient, MongoServerError } from 'mongodb';
import { createService } from '../infra/src/services.js';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} not set: the global setup did not start the service`);
  return value;
}

describe('FerretDB (MongoDB wire protocol)', () => {
  let client: MongoClient;
  beforeAll(async () => {
    client = await MongoClient.connect(env('MONGODB_URI'));
  });
  afterAll(() => client.close());

  it('stores and reads back a document', async () => {
    const col = client.db('foundation').collection<{ name: string; n: number }>('docs');
    const { insertedId } = await col.insertOne({ name: 'first', n: 1 });
    const doc = await col.findOne({ _id: insertedId });
    expect(doc).toMatchObject({ name: 'first', n: 1 });
  });

  it('enforces a unique index', async () => {
    const col = client.db('foundation').collection('unique_docs');
    await col.createIndex({ key_hash: 1 }, { unique: true });
    await col.insertOne({ key_hash: 'abc' });
    const err = await col.insertOne({ key_hash: 'abc' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MongoServerError);
    expect((err as MongoServerError).code).toBe(11000);
    expect(await col.countDocuments({ key_hash: 'abc' })).toBe(1);
  });

  // FerretDB v1 (SQLite) applies an update as a read then a write, not atomically, so concurrent
  // conditional updates of one document can both win; the platform serialises those through Redis.
  it('applies conditional updates (compare-and-set) one at a time', async () => {
    const col = client.db('foundation').collection<{ _id: string; status: string }>('calls');
    await col.insertOne({ _id: 'c', status: 'queued' });
    const moved = await col.findOneAndUpdate({ _id: 'c', status: 'queued' }, { $set: { status: 'dialing' } }, { returnDocument: 'after' });
    expect(moved?.status).toBe('dialing');
    const again = await col.findOneAndUpdate({ _id: 'c', status: 'queued' }, { $set: { status: 'dialing' } });
    expect(again).toBeNull();
    const res = await col.updateOne({ _id: 'c', status: 'dialing' }, { $set: { status: 'ringing' }, $inc: { moves: 1 } });
    expect(res.modifiedCount).toBe(1);
    expect(await col.findOne({ _id: 'c' })).toEqual({ _id: 'c', status: 'ringing', moves: 1 });
  });
});

describe('Redis', () => {
  it('SET/GET through ioredis', async () => {
    const redis = new Redis(env('REDIS_URL'));
    try {
      await redis.set('foundation:key', 'value', 'EX', 60);
      expect(await redis.get('foundation:key')).toBe('value');
      expect(await redis.ttl('foundation:key')).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});

describe('MinIO (S3)', () => {
  it('puts and gets an object through the minio client', async () => {
    const [host, port] = env('STORAGE_ENDPOINT').split(':');
    const s3 = new MinioClient({
      endPoint: host!,
      port: Number(port),
      useSSL: false,
      accessKey: env('STORAGE_ACCESS_KEY'),
      secretKey: env('STORAGE_SECRET_KEY'),
    });
    await s3.makeBucket('foundation');
    const body = Buffer.from('RIFF-not-really-a-wav');
    await s3.putObject('foundation', 'recordings/2026/11/21/x.wav', body, body.length, { 'Content-Type': 'audio/wav' });
    const stream = await s3.getObject('foundation', 'recordings/2026/11/21/x.wav');
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
    const stat = await s3.statObject('foundation', 'recordings/2026/11/21/x.wav');
    expect(stat.size).toBe(body.length);
  });
});

describe('kube-apiserver + etcd', () => {
  const kc = new KubeConfig();
  beforeAll(() => kc.loadFromFile(env('KUBECONFIG')));

  it('creates and reads a Namespace and a Deployment', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    await core.createNamespace({ body: { metadata: { name: 'foundation' } } });
    const ns = await core.readNamespace({ name: 'foundation' });
    expect(ns.metadata?.name).toBe('foundation');

    await apps.createNamespacedDeployment({
      namespace: 'foundation',
      body: {
        metadata: { name: 'worker' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'worker' } },
          template: {
            metadata: { labels: { app: 'worker' } },
            spec: { containers: [{ name: 'worker', image: 'voice-platform/worker:test' }] },
          },
        },
      },
    });
    const dep = await apps.readNamespacedDeployment({ namespace: 'foundation', name: 'worker' });
    expect(dep.spec?.replicas).toBe(2);
    expect(dep.spec?.template.spec?.containers[0]?.image).toBe('voice-platform/worker:test');
    expect(dep.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('enforces RBAC for non-admin users', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    // A service account token is not a member of system:masters; the RBAC authorizer must refuse it.
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'nobody' } } });
    const token = await core.createNamespacedServiceAccountToken({
      namespace: 'default',
      name: 'nobody',
      body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 600 } },
    });
    const limited = new KubeConfig();
    limited.loadFromOptions({
      clusters: [{ ...kc.getCurrentCluster()!, name: 'test' }],
      users: [{ name: 'nobody', token: token.status?.token }],
      contexts: [{ name: 'test', cluster: 'test', user: 'nobody' }],
      currentContext: 'test',
    });
    const err = (await limited.makeApiClient(CoreV1Api).listNamespace().catch((e: unknown) => e)) as { code?: number };
    expect(err.code).toBe(403);
  });
});

describe('helm', () => {
  it('runs the pinned version', () => {
    const out = execFileSync(env('HELM_BIN'), ['version', '--short'], { encoding: 'utf8' });
    expect(out.trim()).toMatch(/^v3\.21\.\d+/);
  });
});

describe('a port taken between its pick and the bind', () => {
  it('FerretDB started first picks another free port and says so in its env; one asked for is kept', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vp-port-race-'));
    const svc = await createService('mongodb', { dir: path.join(dir, 'free') });
    const picked = Number(new URL(svc.env.MONGODB_URI!).port);
    // What a suite running beside this one does: binds the port the launcher just found free.
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(picked, '127.0.0.1', resolve));
    try {
      await svc.start();
      const port = Number(new URL(svc.env.MONGODB_URI!).port);
      expect(port).not.toBe(picked);
      const client = await MongoClient.connect(svc.env.MONGODB_URI!);
      expect((await client.db('admin').command({ ping: 1 })).ok).toBe(1);
      await client.close();
      await svc.stop();
      // A port the caller chose (make up's fixed ports) is not changed behind its back: the start fails.
      const fixed = await createService('mongodb', { dir: path.join(dir, 'fixed'), ports: [picked] });
      await expect(fixed.start()).rejects.toThrow(/address already in use/);
      await fixed.stop();
    } finally {
      squatter.close();
      await svc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
