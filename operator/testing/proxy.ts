// A real HTTP proxy in front of the backend that a test can break: 'down' drops every connection
// (backend unreachable); 'lose-create-response' forwards the next POST /api/v1/bots and then drops the
// connection instead of answering, so the bot exists in the backend but its id never reaches the client.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'pass' | 'down' | 'lose-create-response';

export interface BackendProxy {
  url: string;
  mode: ProxyMode;
  /** Ids of bots whose create response was dropped. */
  lostCreates: string[];
  close(): Promise<void>;
}

export async function startBackendProxy(target: string): Promise<BackendProxy> {
  const proxy = { mode: 'pass', lostCreates: [] } as unknown as BackendProxy;
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (proxy.mode === 'down') {
        req.socket.destroy();
        return;
      }
      const headers: Record<string, string> = {};
      for (const h of ['accept', 'authorization', 'content-type']) {
        const v = req.headers[h];
        if (typeof v === 'string') headers[h] = v;
      }
      const upstream = await fetch(new URL(req.url ?? '/', target), {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const text = await upstream.text();
      if (proxy.mode === 'lose-create-response' && req.method === 'POST' && req.url === '/api/v1/bots' && upstream.status === 201) {
        proxy.mode = 'pass';
        proxy.lostCreates.push((JSON.parse(text) as { id: string }).id);
        req.socket.destroy();
        return;
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(text);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
