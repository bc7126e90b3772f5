// Raw API requests for tests that must send objects exactly as written: the client's typed
// serializer drops fields it does not model (a CRD schema's `default`, `x-kubernetes-*`) and would
// hide unknown fields from the API server's strict field validation.
import type * as k8s from '@kubernetes/client-node';
import https from 'node:https';

export interface RawResponse {
  status: number;
  body: unknown;
}

export async function rawRequest(kc: k8s.KubeConfig, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<RawResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster');
  const url = new URL(path, cluster.server);
  const opts: https.RequestOptions = { method, headers: { accept: 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) opts.headers = { ...opts.headers, 'content-type': contentType, 'content-length': Buffer.byteLength(payload) };
  return new Promise((resolve, reject) => {
    const req = https.request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.once('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

const discovery = new Map<string, Array<{ name: string; kind: string; namespaced: boolean }>>();

/** The REST path of an object, found through API discovery (like kubectl does). */
export async function objectPath(kc: k8s.KubeConfig, obj: k8s.KubernetesObject, defaultNamespace: string): Promise<string> {
  const apiVersion = obj.apiVersion ?? 'v1';
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  let resources = discovery.get(base);
  if (!resources) {
    const res = await rawRequest(kc, 'GET', base);
    if (res.status !== 200) throw new Error(`discovery of ${apiVersion} failed: ${res.status}`);
    resources = (res.body as { resources: Array<{ name: string; kind: string; namespaced: boolean }> }).resources;
    discovery.set(base, resources);
  }
  const r = resources.find((x) => x.kind === obj.kind && !x.name.includes('/'));
  if (!r) throw new Error(`${apiVersion} ${obj.kind} is not served`);
  const ns = r.namespaced ? `/namespaces/${obj.metadata?.namespace ?? defaultNamespace}` : '';
  return `${base}${ns}/${r.name}/${obj.metadata!.name!}`;
}

/** Server-side apply; with dryRun nothing is stored, but every admission and validation step runs. */
export async function rawApply(
  kc: k8s.KubeConfig,
  obj: k8s.KubernetesObject,
  { namespace = 'default', dryRun = false, fieldManager = 'voice-platform-tests' } = {},
): Promise<RawResponse> {
  const path = await objectPath(kc, obj, namespace);
  const query = new URLSearchParams({ fieldManager, force: 'true', fieldValidation: 'Strict' });
  if (dryRun) query.set('dryRun', 'All');
  return rawRequest(kc, 'PATCH', `${path}?${query}`, obj, 'application/apply-patch+yaml');
}
