// A small local CRM for `make up`: the demo bot's `record_promise` HTTP tool calls it (docs/design.md §9).
// It checks each request's X-Voice-Signature against the demo bot's tool secret (the file the stack's seed
// writes), records the promise (one JSON line in promises.jsonl) and answers a reference the bot speaks.
// `GET /promises` lists what it recorded. Listens on 127.0.0.1 only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import http from 'node:http';

/** A signature older (or newer) than this is refused: a replayed request is not a new promise. */
const SIGNATURE_TOLERANCE_S = 300;
const MAX_BODY_BYTES = 64 * 1024;

export interface CrmOptions {
  port: number;
  /** Holds the demo bot's tool secret (whsec_…); read on every request, so a rotation needs no restart. */
  secretFile: string;
  /** Each recorded promise, one JSON line. */
  promisesFile: string;
}

/** True when `header` (t=<unix s>,v1=<hex>) signs `body` with `secret` within the tolerance. */
export function verifySignature(secret: string, header: string, body: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > SIGNATURE_TOLERANCE_S || !parts.v1) return false;
  const want = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex'));
  const got = Buffer.from(parts.v1);
  return got.length === want.length && timingSafeEqual(got, want);
}

export function startCrm(opts: CrmOptions): Promise<http.Server> {
  const promises: unknown[] = [];
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path === '/healthz') return send(res, 200, { status: 'ok' });
      if (req.method === 'GET' && path === '/promises') return send(res, 200, { items: promises });
      if (req.method !== 'POST' || path !== '/promises') return send(res, 404, { error: 'not_found' });
      if (size > MAX_BODY_BYTES) return send(res, 413, { error: 'payload_too_large' });
      const body = Buffer.concat(chunks).toString('utf8');
      let secret: string;
      try {
        secret = readFileSync(opts.secretFile, 'utf8').trim();
      } catch {
        return send(res, 503, { error: 'no tool secret yet' });
      }
      if (!verifySignature(secret, String(req.headers['x-voice-signature'] ?? ''), body)) return send(res, 401, { error: 'bad_signature' });
      let call: { tool?: string; arguments?: Record<string, unknown>; call?: { call_id?: string } };
      try {
        call = JSON.parse(body) as typeof call;
      } catch {
        return send(res, 400, { error: 'not_json' });
      }
      const reference = `PTP-${1001 + promises.length}`;
      const promise = { reference, arguments: call.arguments ?? {}, call_id: call.call?.call_id ?? null, tool_call_id: req.headers['x-voice-tool-call-id'] ?? null, at: new Date().toISOString() };
      promises.push(promise);
      appendFileSync(opts.promisesFile, JSON.stringify(promise) + '\n');
      send(res, 200, { reference, recorded: true });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolve(server));
  });
}

// As a process (the stack's `crm` entry): CRM_PORT, CRM_SECRET_FILE, CRM_PROMISES_FILE.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const port = Number(process.env.CRM_PORT);
  void startCrm({ port, secretFile: process.env.CRM_SECRET_FILE!, promisesFile: process.env.CRM_PROMISES_FILE! }).then(() => {
    console.log(`crm listening on 127.0.0.1:${port}`);
  });
}
