// The permissions table (permissions.ts) against the API: every operation of the OpenAPI document, called with
// a token of each role, answers as the table says (allowed → the usual answer, never 403; not allowed → 403
// `forbidden` in the documented error shape); a viewer never receives a secret-bearing field; the table covers
// exactly the operations that take an admin token or an API key; docs/roles.md holds the same table.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { USER_ROLES, WEBHOOK_EVENT_TYPES, type UserRole } from '@voice-platform/schemas';
import { bodyText, createBot, createKey, createTrunk, useAdminHarness, type Harness } from '../../testing/harness.js';
import { userOfRole } from '../../testing/users.js';
import { PERMISSIONS, permissionsMarkdown, userMay } from './permissions.js';

let h: Harness;
let ownerAuth: string;
useAdminHarness((harness, token) => ([h, ownerAuth] = [harness, token]), { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });

const ROLES_DOC = fileURLToPath(new URL('../../../docs/roles.md', import.meta.url));
const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;
/** Field names that carry a secret (a key, a signing secret, a password, a token). */
const SECRET_FIELDS = new Set(['key', 'secret', 'password', 'auth_password', 'password_hash', 'key_hash', 'token', 'access_token']);
const NO_ID = '0123456789abcdef01234567';

interface Operation {
  key: string;
  method: (typeof METHODS)[number];
  path: string;
  operationId: string;
  security: Record<string, unknown>[];
}

async function operations(): Promise<Operation[]> {
  const doc = (await h.http.get('/api/v1/openapi.json').expect(200)).body as { paths: Record<string, Record<string, { operationId: string; security?: Record<string, unknown>[] }>> };
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) out.push({ key: `${method.toUpperCase()} ${path}`, method, path, operationId: op.operationId, security: op.security ?? [] });
    }
  }
  return out;
}

const takes = (op: Operation, scheme: string) => op.security.some((s) => scheme in s);

function secretFields(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => secretFields(v, `${at}/${i}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [...(SECRET_FIELDS.has(k) ? [`${at}/${k}`] : []), ...secretFields(v, `${at}/${k}`)]);
}

describe('the permissions table', () => {
  it('covers exactly the operations that take an admin token or an API key, by their operationIds', async () => {
    const ops = await operations();
    const guarded = ops.filter((op) => takes(op, 'adminJwt') || takes(op, 'apiKey'));
    expect(Object.keys(PERMISSIONS).sort()).toEqual(guarded.map((op) => op.key).sort());
    for (const op of guarded) {
      const p = PERMISSIONS[op.key]!;
      expect([op.key, p.operationId]).toEqual([op.key, op.operationId]);
      // Who the table lets in is who the document says may come: an admin token, an API key.
      expect([op.key, p.user !== null, p.key !== null]).toEqual([op.key, takes(op, 'adminJwt'), takes(op, 'apiKey')]);
    }
  });

  it('says what docs/design.md §12 says of each role', () => {
    for (const [op, p] of Object.entries(PERMISSIONS)) {
      const [method, path] = op.split(' ') as [string, string];
      if (p.user === null) continue;
      // A viewer reads (all but the users: they are managed, and read, by admins and owners) and changes its own
      // password (listening in is supervision, not a read); an editor also writes bots, campaigns, contacts, DNC and
      // test calls, and supervises live calls
      // (docs/design.md §16); everything is open to an admin.
      // (nor the audit log: owners and admins only).
      const reads = method === 'GET' && !path.startsWith('/api/v1/users') && path !== '/api/v1/audit' && !path.endsWith('/listen');
      expect([op, userMay('viewer', p)]).toEqual([op, reads || op === 'POST /api/v1/auth/password']);
      const editorWrites = /^\/api\/v1\/(bots|campaigns|dnc|test-calls|knowledge-bases)(\/|$)|^\/livekit\/widget$|^\/api\/v1\/calls\/\{id\}\/(control|listen|listen-token)$/.test(path);
      expect([op, userMay('editor', p)]).toEqual([op, reads || editorWrites || op === 'POST /api/v1/auth/password']);
      expect([op, userMay('admin', p), userMay('owner', p)]).toEqual([op, true, true]);
    }
  });

  it('is the table of docs/roles.md', () => {
    const doc = readFileSync(ROLES_DOC, 'utf8');
    if (!doc.includes(permissionsMarkdown())) {
      throw new Error(`docs/roles.md does not hold the table of backend/src/auth/permissions.ts; put this between its markers:\n${permissionsMarkdown()}`);
    }
  });

  it('each role against each operation: allowed → the usual answer, not allowed → 403 forbidden; a viewer gets no secret', async () => {
    const tokens: Record<UserRole, string> = {
      owner: ownerAuth,
      admin: (await userOfRole(h, ownerAuth, 'admin')).auth,
      editor: (await userOfRole(h, ownerAuth, 'editor')).auth,
      viewer: (await userOfRole(h, ownerAuth, 'viewer')).auth,
    };
    // Real resources for the reads (so an allowed read answers 200); writes go to ids that name nothing, with
    // an empty body, so that no call of the walk changes what another reads (an allowed write answers 404 or 422).
    // Each holds a secret a viewer must never see: the key, a webhook's and a bot's signing secrets, a tool's
    // header value, a trunk's password (and the users' one-time passwords).
    const HEADER_VALUE = 'Bearer crm-token-only-for-the-crm';
    const TRUNK_PASSWORD = 'trunk-password-never-shown';
    const tool = { name: 'crm', description: 'CRM', type: 'http', url: 'https://93.184.216.34/x', headers: { Authorization: HEADER_VALUE }, parameters: { type: 'object', properties: {} } };
    const bot = await createBot(h, ownerAuth, { tools: [tool] } as object);
    const toolSecret = (await h.http.post(`/api/v1/bots/${bot}/tool-secret`).set('Authorization', ownerAuth).expect(200)).body.secret as string;
    const key = await createKey(h, ownerAuth);
    const webhook = (await h.http.post('/api/v1/webhooks').set('Authorization', ownerAuth).send({ url: 'http://127.0.0.1:9/hook', events: [WEBHOOK_EVENT_TYPES[0]] }).expect(201)).body as { id: string; secret: string };
    const trunk = await createTrunk(h, ownerAuth, { auth_username: 'carrier-user', auth_password: TRUNK_PASSWORD });
    const campaign = await h.http.post('/api/v1/campaigns').set('Authorization', ownerAuth)
      .send({ name: 'walk', bot_id: bot, timezone: 'Europe/Berlin', windows: [], max_concurrency: 1, calls_per_second: 1, retry: { max_attempts: 1, delay_seconds: 60, on: [] } }).expect(201);
    const userId = (await h.http.get('/api/v1/auth/me').set('Authorization', tokens.viewer).expect(200)).body.id as string;
    const readIds: Record<string, string> = {
      '/api/v1/bots/{id}': bot,
      '/api/v1/api-keys/{id}': key.id,
      '/api/v1/users/{id}': userId,
      '/api/v1/webhooks/{id}': webhook.id,
      '/api/v1/webhooks/{id}/deliveries': webhook.id,
      '/api/v1/sip/outbound-trunks/{id}': trunk.id,
      '/api/v1/campaigns/{id}': campaign.body.id as string,
      '/api/v1/campaigns/{id}/contacts': campaign.body.id as string,
      '/api/v1/campaigns/{id}/contacts.csv': campaign.body.id as string,
    };
    const secrets = [key.key, webhook.secret, toolSecret, HEADER_VALUE, TRUNK_PASSWORD];

    const ops = await operations();
    const seen: string[] = [];
    for (const op of ops) {
      if (!takes(op, 'adminJwt')) continue;
      const perm = PERMISSIONS[op.key];
      for (const role of USER_ROLES) {
        const id = op.method === 'get' ? (readIds[op.path] ?? NO_ID) : NO_ID;
        const path = op.path.replace('{id}', id).replace('{number}', encodeURIComponent('+15550001234'));
        let req = h.http[op.method](path).set('Authorization', tokens[role]);
        if (op.method === 'post' || op.method === 'patch') req = req.send({});
        const res = await req;
        const what = `${role} ${op.key} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
        if (userMay(role, perm)) {
          expect([what, res.status !== 403 && res.status !== 401 && res.status < 500]).toEqual([what, true]);
          if (op.method === 'get' && readIds[op.path] !== undefined) expect([what, res.status]).toEqual([what, 200]);
          if (op.method === 'get' && op.path.match(/^\/api\/v1\/[a-z-]+$|\/sip\/[a-z-]+$/)) expect([what, res.status]).toEqual([what, 200]);
          if (role === 'viewer' && res.status < 300) {
            expect([what, secretFields(res.body)]).toEqual([what, []]);
            expect([what, secrets.filter((x) => bodyText(res).includes(x))]).toEqual([what, []]);
          }
        } else {
          expect([what, res.status, res.body]).toEqual([what, 403, { error: { code: 'forbidden', message: expect.any(String) } }]);
        }
        seen.push(`${role} ${op.key}`);
      }
    }
    // Every admin operation walked with every role.
    expect(seen.length).toBe(ops.filter((op) => takes(op, 'adminJwt')).length * USER_ROLES.length);
  });
});
