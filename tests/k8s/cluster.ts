// What the kind suite (tests/k8s) talks to: the cluster of `make kind-up` through kubectl and helm, and
// the platform through its Traefik Ingress as a CRM would (docs/kind.md). Nothing here starts services:
// `make test-k8s` brings the cluster up first.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheDir as cache, repoRoot, versions } from '../infra/src/versions.js';

const run = promisify(execFile);
export const CLUSTER = process.env.KIND_CLUSTER ?? 'voice-platform';
export const NAMESPACE = process.env.KIND_NAMESPACE ?? 'voice';
export const RELEASE = process.env.KIND_RELEASE ?? 'vp';
/** The namespace of the suite's own fixtures (test phone, Prometheus); deleted and made afresh per run. */
export const TEST_NAMESPACE = 'vp-test';
const HTTP_PORT = Number(process.env.KIND_HTTP_PORT ?? 18080);
export const KUBECONFIG = process.env.KIND_KUBECONFIG ?? path.join(cache, 'kind', CLUSTER, 'kubeconfig');

function tool(name: 'kubectl' | 'helm'): string {
  const cached =
    name === 'helm'
      ? path.join(cache, 'bin', `helm-${versions.HELM_VERSION}`, 'helm')
      : path.join(cache, 'bin', `kubelet-${versions.KUBE_VERSION}`, 'kubectl');
  return existsSync(cached) ? cached : name;
}

async function exec(bin: string, args: string[], input?: string): Promise<string> {
  const env = { ...process.env, KUBECONFIG };
  if (input === undefined) {
    try {
      return (await run(bin, args, { env, maxBuffer: 64 * 1024 * 1024 })).stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`${path.basename(bin)} ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
    }
  }
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env });
    let out = '';
    let errOut = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (errOut += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${path.basename(bin)} ${args.join(' ')}: ${errOut.trim()}`))));
    child.stdin.end(input);
  });
}

export const kubectl = (args: string[], input?: string): Promise<string> => exec(tool('kubectl'), args, input);
export const helm = (args: string[]): Promise<string> => exec(tool('helm'), args);
export const kubectlJson = async <T = any>(args: string[]): Promise<T> => JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
/** kubectl apply of objects (as JSON, which kubectl reads like YAML). */
export const apply = (objects: object[]): Promise<string> =>
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
/** A GET through the API server's proxy to a pod or service port (no port-forward process). */
export const proxyGet = (ns: string, target: string, rest: string): Promise<string> =>
  kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/${target}/proxy/${rest.replace(/^\//, '')}`]);

export async function secret(key: string): Promise<string> {
  const s = await kubectlJson<{ data: Record<string, string> }>(['-n', NAMESPACE, 'get', 'secret', `${RELEASE}-voice-platform-secrets`]);
  return Buffer.from(s.data[key] ?? '', 'base64').toString();
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

/**
 * The platform's API through the Ingress, for Host `localhost` as the console and a CRM reach it (by
 * node:http: fetch does not send a Host header of its own choosing).
 */
export function api<T = any>(method: string, urlPath: string, opts: { token?: string; apiKey?: string; body?: unknown } = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { Host: 'localhost' };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers['X-API-Key'] = opts.apiKey;
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (payload !== undefined) headers['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: HTTP_PORT, path: urlPath, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text for the assertion message
        }
        resolve({ status: res.statusCode ?? 0, body: body as T });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export async function adminToken(): Promise<string> {
  const r = await api<{ access_token: string }>('POST', '/api/v1/auth/login', {
    body: { email: await secret('ADMIN_EMAIL'), password: await secret('ADMIN_PASSWORD') },
  });
  if (r.status !== 200) throw new Error(`admin login: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token;
}

export interface Pod {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string; creationTimestamp: string };
  spec: { containers: Array<{ image: string; env?: Array<{ name: string; value?: string }> }> };
  status: { phase: string; podIP?: string; conditions?: Array<{ type: string; status: string }> };
}
export const isReady = (p: Pod): boolean => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export async function pods(ns: string, selector?: string): Promise<Pod[]> {
  return (await kubectlJson<{ items: Pod[] }>(['-n', ns, 'get', 'pods', ...(selector ? ['-l', selector] : [])])).items;
}

/** A worker pod's live calls, from its own /metrics (the gauge the operator scales on). */
export async function workerActiveCalls(pod: string): Promise<number> {
  const text = await proxyGet(NAMESPACE, `pods/${pod}:8000`, 'metrics');
  const m = /^voice_worker_active_calls(?:\{[^}]*\})? (\d+)/m.exec(text);
  if (!m) throw new Error(`no voice_worker_active_calls in ${pod}'s /metrics`);
  return Number(m[1]);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `intervalMs` until it returns a value other than undefined/false. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs = 1000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) throw new Error(`${what}: not after ${Math.round(timeoutMs / 1000)} s${last ? ` (last error: ${last})` : ''}`);
    await sleep(intervalMs);
  }
}

export { repoRoot };
