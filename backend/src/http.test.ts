// Cross-cutting HTTP behaviour: the OpenAPI document against the real router, the error shape, body
// limits, CORS, request ids, metrics, and logs free of secrets.
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CURSOR_PATTERN, ERROR_CODES, ErrorBody, isErrorCode, RESOURCE_ID_PATTERN } from '@voice-platform/schemas';
import { adminToken, createKey, startHarness, WORKER_TOKEN, ADMIN, type Harness } from '../testing/harness.js';
import { DATE_TIME_PATTERN, parseDateTime } from './core/validate.js';

let h: Harness;
let auth: string;

/** Any method Node's parser accepts, sent as is to the app (supertest has no QUERY). */
async function rawRequest(method: string, path: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const server = http.createServer(h.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    server.close();
  }
}

beforeAll(async () => {
  h = await startHarness();
  auth = await adminToken(h);
});
afterAll(() => h.close());

describe('OpenAPI', () => {
  it('documents every route and only routes that exist', async () => {
    const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) if (method !== 'parameters') documented.add(`${method.toUpperCase()} ${path}`);
    }
    const served = new Set<string>();
    for (const layer of h.app.router.stack) {
      const path = String(layer.path).replace(/:([A-Za-z_]+)/g, '{$1}');
      // `/mcp` speaks the Model Context Protocol (JSON-RPC over Streamable HTTP, docs/design.md §18), not REST: its
      // contract is the MCP specification's, and the SDK's client is what tests it (mcp/mcp.test.ts).
      if (path === '/mcp') continue;
      for (const method of layer.methods) if (method !== 'HEAD') served.add(`${method} ${path}`);
    }
    expect([...served].sort()).toEqual([...documented].sort());
    expect(served.size).toBeGreaterThanOrEqual(18);
  });

  it('declares an operation id, responses and the error schema for each operation', async () => {
    const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body;
    for (const item of Object.values(doc.paths) as Array<Record<string, { operationId?: string; responses?: Record<string, unknown> }>>) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        expect(op.operationId).toEqual(expect.any(String));
        expect(Object.keys(op.responses ?? {}).length).toBeGreaterThan(0);
      }
    }
    const dialout = doc.paths['/api/v1/sip/dialout'].post;
    // 403: a key outside its scopes (dialout).
    expect(Object.keys(dialout.responses).sort()).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '422', '429', '503']);
    // Any text a person may type a number in: libphonenumber reads it (E.164, or national in default_region).
    expect(dialout.requestBody.content['application/json'].schema.properties.to_number).toMatchObject({ type: 'string', minLength: 1, maxLength: 64 });
  });

  it('takes its error answers from the catalogue: every code it names has the catalogue status, and every code is named', async () => {
    type Response = { description: string; content?: Record<string, { schema?: { $ref?: string }; examples?: Record<string, { value: { error: { code: string } } }> }> };
    const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body as {
      info: { description: string };
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<string, { description?: string; responses: Record<string, Response> }>>;
    };
    expect(doc.components.schemas.Error).toEqual(JSON.parse(JSON.stringify(ErrorBody)));
    const STATUS_AND_CODE = /(?:^|[\s(])([1-5][0-9]{2}) `([a-z_]+)`/g;
    const named = new Set<string>();
    const wrong: string[] = [];
    const check = (where: string, status: string, code: string) => {
      named.add(code);
      if (!isErrorCode(code) || String(ERROR_CODES[code].status) !== status) wrong.push(`${where}: ${status} ${code}`);
    };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        const where = `${method.toUpperCase()} ${path}`;
        for (const [status, res] of Object.entries(op.responses)) {
          const json = res.content?.['application/json'];
          if (json?.schema?.$ref !== '#/components/schemas/Error') continue;
          // Each error response names its codes and has an example body of each, nothing else.
          const examples = Object.entries(json.examples ?? {});
          expect([where, status, examples.length > 0]).toEqual([where, status, true]);
          const inText = [...res.description.matchAll(/`([a-z_]+)` \(/g)].map((m) => m[1]);
          expect([where, status, inText]).toEqual([where, status, examples.map(([name]) => name)]);
          for (const [name, ex] of examples) {
            expect([where, name]).toEqual([where, ex.value.error.code]);
            check(where, status, name);
          }
        }
        // Codes named in prose with their status ("409 `conflict`").
        for (const m of (op.description ?? '').matchAll(STATUS_AND_CODE)) check(`${where} description`, m[1]!, m[2]!);
      }
    }
    for (const m of doc.info.description.matchAll(STATUS_AND_CODE)) check('info', m[1]!, m[2]!);
    expect(wrong).toEqual([]);
    // Every code of the catalogue is named somewhere, except those it keeps internal (never sent to a client).
    const unnamed = Object.entries(ERROR_CODES).filter(([code, e]) => !named.has(code) && (e as { scope?: string }).scope !== 'internal');
    expect(unnamed.map(([code]) => code)).toEqual([]);
  });

  it('states the rules the server enforces beyond types, so a generated client and a fuzzer agree with it', async () => {
    const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body;
    const reqSchema = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
    const param = (path: string, method: string, name: string) =>
      [...(doc.paths[path].parameters ?? []), ...(doc.paths[path][method].parameters ?? [])].find((p: { name: string }) => p.name === name).schema;
    // Ids: what the server makes and looks up.
    for (const path of Object.keys(doc.paths).filter((p) => p.includes('{id}'))) expect([path, doc.paths[path].parameters[0].schema.pattern]).toEqual([path, RESOURCE_ID_PATTERN]);
    expect(param('/api/v1/calls', 'get', 'bot_id').pattern).toBe(RESOURCE_ID_PATTERN);
    expect(param('/api/v1/config', 'get', 'bot_id').pattern).toBe(RESOURCE_ID_PATTERN);
    expect(param('/api/v1/config', 'get', 'call_id').pattern).toBe(RESOURCE_ID_PATTERN);
    expect(reqSchema('/api/v1/sip/dialout', 'post').properties.bot_id.pattern).toBe(RESOURCE_ID_PATTERN);
    expect(reqSchema('/api/v1/calls', 'post').properties.bot_id.pattern).toBe(RESOURCE_ID_PATTERN);
    // The list cursor's format.
    expect(param('/api/v1/calls', 'get', 'cursor').pattern).toBe(CURSOR_PATTERN);
    // Cross-field rules: variables xor connected_event; a trunk password needs a username; call variables are named.
    const dialout = reqSchema('/api/v1/sip/dialout', 'post');
    expect(dialout.not).toEqual({ required: ['variables', 'connected_event'] });
    expect(dialout.properties.variables).toMatchObject({ additionalProperties: false, maxProperties: 50 });
    expect(reqSchema('/api/v1/sip/outbound-trunks', 'post').dependentRequired).toEqual({ auth_password: ['auth_username'] });
    // Rules no keyword can hold are stated in words.
    expect(reqSchema('/api/v1/api-keys', 'post').properties.expires_at.description).toMatch(/future/);
    expect(reqSchema('/api/v1/bots', 'post').properties.variables.description).toMatch(/unique/);
    expect(reqSchema('/api/v1/bots', 'post').properties.tools.items.properties.parameters.description).toMatch(/32 levels/);
    // Every date-time a request carries has the server's stricter reading (no leap second, no space for T, years 0001–9998).
    const times: unknown[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        if ((v as { format?: string }).format === 'date-time') times.push(v);
        Object.values(v).forEach(walk);
      }
    };
    for (const item of Object.values(doc.paths) as Array<Record<string, { requestBody?: unknown; parameters?: unknown }>>) {
      for (const op of Object.values(item)) walk([op.requestBody, op.parameters]);
    }
    expect(times.length).toBeGreaterThanOrEqual(6);
    for (const t of times) expect(t).toMatchObject({ pattern: DATE_TIME_PATTERN });
    const pattern = new RegExp(DATE_TIME_PATTERN);
    const samples = ['2030-01-01T00:00:00Z', '2030-01-01t00:00:00.5+01:00', '0001-01-01T00:00:00Z', '9998-12-31T23:59:59-23:59', '2099-12-31T23:59:60Z', '2030-01-01 00:00:00Z', '0000-06-01T00:00:00Z', '9999-06-01T00:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T00:00:00+24:00'];
    // Beside `format: date-time` (which rules out Feb 30), the pattern accepts exactly what the server parses.
    for (const v of samples) expect([v, pattern.test(v)]).toEqual([v, parseDateTime(v) !== null]);
  });
});

describe('errors and bodies', () => {
  it('answers unknown routes and methods in the error shape', async () => {
    expect((await h.http.get('/nope').expect(404)).body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    const res = await h.http.delete('/api/v1/bots').set('Authorization', auth).expect(405);
    expect(res.body.error.code).toBe('method_not_allowed');
  });

  it('answers methods the router does not know (TRACE, QUERY) with 405 in the error shape and an Allow header', async () => {
    const allowed = (res: { headers: IncomingHttpHeaders }) => String(res.headers.allow).split(', ').sort();
    for (const method of ['TRACE', 'QUERY', 'PROPFIND']) {
      const res = await rawRequest(method, '/api/v1/bots');
      expect([method, res.status, res.headers['content-type'], allowed(res)]).toEqual([method, 405, 'application/json; charset=utf-8', ['GET', 'HEAD', 'POST']]);
      expect(JSON.parse(res.body)).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });
    }
    const one = await rawRequest('TRACE', '/api/v1/bots/some-id');
    expect([one.status, allowed(one)]).toEqual([405, ['GET', 'HEAD', 'PATCH']]);
    // No route at all: the same 404 as any other method gets.
    const none = await rawRequest('TRACE', '/nope');
    expect([none.status, JSON.parse(none.body)]).toEqual([404, { error: { code: 'not_found', message: expect.any(String) } }]);
  });

  it('refuses bodies that are not JSON, not parseable, or over 64 KiB', async () => {
    const post = () => h.http.post('/api/v1/bots').set('Authorization', auth);
    expect((await post().set('Content-Type', 'text/plain').send('hello').expect(415)).body.error.code).toBe('unsupported_media_type');
    expect((await post().set('Content-Type', 'application/json').send('{"name":').expect(400)).body.error.code).toBe('invalid_json');
    const big = JSON.stringify({ name: 'x', prompt: 'p'.repeat(65 * 1024) });
    expect((await post().set('Content-Type', 'application/json').send(big).expect(413)).body.error.code).toBe('payload_too_large');
    const justUnder = JSON.stringify({ name: 'x', prompt: 'p'.repeat(19_000) });
    await post().set('Content-Type', 'application/json').send(justUnder).expect(201);
  });
});

describe('CORS and request ids', () => {
  it('allows the console origin only', async () => {
    const pre = await h.http
      .options('/api/v1/bots')
      .set('Origin', 'http://localhost:5173')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type')
      .expect(204);
    expect(pre.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(pre.headers['access-control-allow-headers']).toContain('Authorization');
    const evil = await h.http.get('/health').set('Origin', 'http://evil.example').expect(200);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const err = await h.http.get('/api/v1/bots').set('Origin', 'http://localhost:5173').expect(401);
    expect(err.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('echoes a sane X-Request-Id and makes one otherwise', async () => {
    expect((await h.http.get('/health').set('X-Request-Id', 'crm-123').expect(200)).headers['x-request-id']).toBe('crm-123');
    const made = (await h.http.get('/health').set('X-Request-Id', 'bad id\twith junk').expect(200)).headers['x-request-id'];
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('metrics and logs', () => {
  it('exports latency by route and status, dial-outs by result and key failures by reason', async () => {
    await h.http.post('/api/v1/sip/dialout').send({}).expect(401);
    await h.http.post('/api/v1/sip/dialout').set('X-API-Key', 'vx_nope').send({}).expect(401);
    const text = (await h.http.get('/metrics').expect(200)).text;
    expect(text).toMatch(/backend_http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/sip\/dialout",status="401"\} 2/);
    expect(text).toMatch(/backend_dialout_requests_total\{result="missing_api_key"\} 1/);
    expect(text).toMatch(/backend_api_key_auth_failures_total\{reason="invalid_api_key"\} 1/);
  });

  it('writes JSON logs with the request id and never a secret', async () => {
    const { key } = await createKey(h, auth);
    await h.http.post('/api/v1/auth/login').send(ADMIN).set('X-Request-Id', 'login-req').expect(200);
    await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: 'x', to_number: '+4915112345678' }).set('X-Request-Id', 'dial-req').expect(404);
    await h.http.get('/api/v1/config').query({ bot_id: 'x' }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(404);
    const lines = h.logs.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ req_id: 'dial-req', route: '/api/v1/sip/dialout', status: 404, level: 'info' }));
    expect(lines).toContainEqual(expect.objectContaining({ req_id: 'login-req', msg: 'admin login' }));
    const all = h.logs.join('');
    for (const secret of [key, key.slice(7), ADMIN.password, WORKER_TOKEN, auth.slice(7), h.settings.JWT_SECRET]) expect(all).not.toContain(secret);
  });
});
