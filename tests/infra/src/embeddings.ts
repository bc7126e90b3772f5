// A local stand-in for OpenAI's embeddings API (POST /v1/embeddings), speaking its documented protocol: a
// Bearer key; `{model, input: string | string[], encoding_format?: "float", dimensions?}` → `{object: "list",
// data: [{object: "embedding", index, embedding: number[]}], model, usage: {prompt_tokens, total_tokens}}`; a bad
// body → 400 `{error: {message, type: "invalid_request_error", param, code}}`, no key → 401. Embeddings are
// deterministic and carry a little meaning: each word's concept (a small synonym table, so "money back" and
// "refunds" meet) hashed into EMBEDDING_DIMS dimensions, normalised. The worker's cloud stand-in answers the same.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const EMBEDDING_DIMS = 64;
/** Words that mean one thing to the stand-in (its "semantics"). */
const CONCEPTS: Record<string, string> = { money: 'refund', back: 'refund', refunds: 'refund', refunded: 'refund', reimburse: 'refund', hours: 'open', open: 'open', opening: 'open', closed: 'open' };

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The stand-in's embedding of `text`. */
export function standInEmbedding(text: string, dims = EMBEDDING_DIMS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = CONCEPTS[w] ?? w;
    v[hash(concept) % dims]! += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** The answer to one embeddings request body: its HTTP status and JSON. */
export function embeddingsAnswer(body: unknown): { status: number; json: unknown } {
  const bad = (message: string, param: string) => ({ status: 400, json: { error: { message, type: 'invalid_request_error', param, code: null } } });
  const b = body as { model?: unknown; input?: unknown; encoding_format?: unknown; dimensions?: unknown } | null;
  if (!b || typeof b !== 'object') return bad('We could not parse the JSON body of your request.', 'body');
  if (typeof b.model !== 'string' || !b.model) return bad("you must provide a model parameter", 'model');
  const inputs = typeof b.input === 'string' ? [b.input] : b.input;
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > 2048 || inputs.some((i) => typeof i !== 'string' || i === '')) return bad("'$.input' is invalid.", 'input');
  if (b.encoding_format !== undefined && b.encoding_format !== 'float') return bad("encoding_format must be 'float' here", 'encoding_format');
  const dims = b.dimensions === undefined ? EMBEDDING_DIMS : Number(b.dimensions);
  if (!Number.isInteger(dims) || dims < 1 || dims > 3072) return bad('dimensions is invalid', 'dimensions');
  const tokens = (inputs as string[]).reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
  return {
    status: 200,
    json: { object: 'list', data: (inputs as string[]).map((t, index) => ({ object: 'embedding', index, embedding: standInEmbedding(t, dims) })), model: b.model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
  };
}

export interface EmbeddingsStandIn {
  /** The API root (…/v1). */
  url: string;
  requests: Array<{ authorization: string | undefined; body: unknown }>;
  /** Answer every request 500 (a provider down) while true. */
  failing: boolean;
  close(): Promise<void>;
}

export async function startEmbeddingsStandIn(): Promise<EmbeddingsStandIn> {
  const out: EmbeddingsStandIn = { url: '', requests: [], failing: false, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        /* judged below */
      }
      out.requests.push({ authorization: req.headers.authorization, body });
      const send = (status: number, json: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(json));
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found', type: 'invalid_request_error', param: null, code: null } });
      if (!/^Bearer \S+$/.test(req.headers.authorization ?? '')) return send(401, { error: { message: 'You didn\'t provide an API key.', type: 'invalid_request_error', param: null, code: null } });
      if (out.failing) return send(500, { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });
      const a = embeddingsAnswer(body);
      send(a.status, a.json);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  out.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  out.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return out;
}
