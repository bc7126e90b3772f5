// What each role may do: ONE table, keyed by operation (method and OpenAPI path), consulted by the one admin
// middleware (admin.ts authenticateAdmin, behind every route that takes an admin token) and rendered into
// docs/roles.md (permissions.test.ts checks the file is this table, and walks every operation of the OpenAPI
// document with a token of each role against it).
//
// `user`: the least role that may call the operation with an admin token (roles are ordered owner > admin >
// editor > viewer; each may do what those below it may), null: no admin token is taken there.
// `key`: the operations an API key (X-API-Key) may call, with the scope the key needs (apiKeys/keys.ts
// authenticateKey, the one check every route that takes a key goes through: 403 forbidden without it); null: no
// API key is taken there.
// Rules that depend on the data, not on the operation, stay in the route and are named in `note` (an admin
// may not change an owner nor make one: users/routes.ts).
import { USER_ROLES, type ApiKeyScope, type UserRole } from '@voice-platform/schemas';

export type Role = UserRole;
/** The scopes API keys carry (docs/design.md §12). */
export type KeyScope = ApiKeyScope;

export interface Permission {
  operationId: string;
  user: Role | null;
  key: KeyScope | null;
  note?: string;
}

const R = (operationId: string, user: Role, note?: string): Permission => ({ operationId, user, key: null, ...(note ? { note } : {}) });
const RK = (operationId: string, user: Role | null, key: KeyScope): Permission => ({ operationId, user, key });

/** `METHOD /path/{param}` (the OpenAPI document's spelling) → who may call it. */
export const PERMISSIONS: Readonly<Record<string, Permission>> = {
  'GET /api/v1/auth/me': R('me', 'viewer'),
  'POST /api/v1/auth/password': R('changePassword', 'viewer', 'the only operation open while the password must be changed'),

  'GET /api/v1/users': R('listUsers', 'admin'),
  'POST /api/v1/users': R('createUser', 'admin', 'only an owner may create an owner'),
  'GET /api/v1/users/{id}': R('getUser', 'admin'),
  'PATCH /api/v1/users/{id}': R('updateUser', 'admin', 'only an owner may change an owner or make one; never the last active owner (409 last_owner)'),

  'GET /api/v1/api-keys': R('listApiKeys', 'viewer'),
  'POST /api/v1/api-keys': R('createApiKey', 'admin'),
  'GET /api/v1/api-keys/{id}': R('getApiKey', 'viewer'),
  'PATCH /api/v1/api-keys/{id}': R('updateApiKey', 'admin'),

  'GET /api/v1/bots': R('listBots', 'viewer'),
  'POST /api/v1/bots': R('createBot', 'editor'),
  'GET /api/v1/bots/{id}': R('getBot', 'viewer'),
  'PATCH /api/v1/bots/{id}': R('updateBot', 'editor'),
  'POST /api/v1/bots/{id}/tool-secret': R('rotateBotToolSecret', 'editor'),
  'GET /api/v1/bots/{id}/versions': R('listBotVersions', 'viewer'),
  'GET /api/v1/bots/{id}/versions/{version}': R('getBotVersion', 'viewer'),
  'POST /api/v1/bots/{id}/publish': R('publishBot', 'editor'),
  'GET /api/v1/bots/{id}/tests': R('listBotTests', 'viewer'),
  'POST /api/v1/bots/{id}/tests': R('createBotTest', 'editor'),
  'GET /api/v1/bots/{id}/tests/{case_id}': R('getBotTest', 'viewer'),
  'PUT /api/v1/bots/{id}/tests/{case_id}': R('updateBotTest', 'editor'),
  'DELETE /api/v1/bots/{id}/tests/{case_id}': R('deleteBotTest', 'editor'),
  'POST /api/v1/bots/{id}/test-runs': RK('createBotTestRun', 'editor', 'test_calls'),
  'GET /api/v1/bots/{id}/test-runs': RK('listBotTestRuns', 'viewer', 'test_calls'),
  'GET /api/v1/bots/{id}/test-runs/{run_id}': RK('getBotTestRun', 'viewer', 'test_calls'),

  'GET /api/v1/knowledge-bases': R('listKnowledgeBases', 'viewer'),
  'POST /api/v1/knowledge-bases': R('createKnowledgeBase', 'editor'),
  'GET /api/v1/knowledge-bases/{id}': R('getKnowledgeBase', 'viewer'),
  'PATCH /api/v1/knowledge-bases/{id}': R('updateKnowledgeBase', 'editor'),
  'DELETE /api/v1/knowledge-bases/{id}': R('deleteKnowledgeBase', 'editor', 'refused (409 conflict) while a bot names the base'),
  'GET /api/v1/knowledge-bases/{id}/documents': R('listKnowledgeDocuments', 'viewer'),
  'POST /api/v1/knowledge-bases/{id}/documents': R('uploadKnowledgeDocument', 'editor'),
  'DELETE /api/v1/knowledge-bases/{id}/documents/{documentId}': R('deleteKnowledgeDocument', 'editor'),

  'POST /api/v1/sip/dialout': RK('dialout', null, 'dialout'),
  'GET /api/v1/calls': R('listCalls', 'viewer'),
  'GET /api/v1/calls/{id}': RK('getCall', 'viewer', 'calls:read'),
  'GET /api/v1/calls/{id}/recording': RK('getCallRecording', 'viewer', 'calls:read'),
  'POST /api/v1/calls/{id}/control': RK('controlCall', 'editor', 'calls:control'),
  'GET /api/v1/calls/{id}/listen': RK('listenCall', 'editor', 'calls:control'),
  'POST /api/v1/calls/{id}/listen-token': R('createCallListenToken', 'editor'),
  'GET /api/v1/analytics/calls': RK('getCallAnalytics', 'viewer', 'calls:read'),
  'GET /api/v1/fleet': RK('getFleet', 'viewer', 'calls:read'),
  'POST /api/v1/test-calls/token': RK('createTestCallToken', 'editor', 'test_calls'),
  'POST /livekit/widget': RK('createWidgetCall', 'editor', 'test_calls'),

  'GET /api/v1/campaigns': R('listCampaigns', 'viewer'),
  'POST /api/v1/campaigns': R('createCampaign', 'editor'),
  'GET /api/v1/campaigns/{id}': R('getCampaign', 'viewer'),
  'GET /api/v1/campaigns/{id}/contacts': R('listCampaignContacts', 'viewer'),
  'POST /api/v1/campaigns/{id}/contacts': R('addCampaignContacts', 'editor'),
  'GET /api/v1/campaigns/{id}/contacts.csv': R('exportCampaignContacts', 'viewer'),
  'POST /api/v1/campaigns/{id}/start': R('startCampaign', 'editor'),
  'POST /api/v1/campaigns/{id}/pause': R('pauseCampaign', 'editor'),
  'POST /api/v1/campaigns/{id}/resume': R('resumeCampaign', 'editor'),
  'POST /api/v1/campaigns/{id}/cancel': R('cancelCampaign', 'editor'),
  'GET /api/v1/dnc': R('listDoNotCall', 'viewer'),
  'POST /api/v1/dnc': R('addDoNotCall', 'editor'),
  'DELETE /api/v1/dnc/{number}': R('deleteDoNotCall', 'editor'),

  'GET /api/v1/sip/outbound-trunks': R('listOutboundTrunks', 'viewer'),
  'POST /api/v1/sip/outbound-trunks': R('createOutboundTrunk', 'admin'),
  'GET /api/v1/sip/outbound-trunks/{id}': R('getOutboundTrunk', 'viewer'),
  'PATCH /api/v1/sip/outbound-trunks/{id}': R('updateOutboundTrunk', 'admin'),
  'DELETE /api/v1/sip/outbound-trunks/{id}': R('deleteOutboundTrunk', 'admin'),
  'GET /api/v1/sip/inbound-numbers': R('listInboundNumbers', 'viewer'),
  'POST /api/v1/sip/inbound-numbers': R('createInboundNumber', 'admin'),
  'GET /api/v1/sip/inbound-numbers/{id}': R('getInboundNumber', 'viewer'),
  'PATCH /api/v1/sip/inbound-numbers/{id}': R('updateInboundNumber', 'admin'),
  'DELETE /api/v1/sip/inbound-numbers/{id}': R('deleteInboundNumber', 'admin'),

  'GET /api/v1/webhooks': R('listWebhooks', 'viewer'),
  'POST /api/v1/webhooks': R('createWebhook', 'admin'),
  'GET /api/v1/webhooks/{id}': R('getWebhook', 'viewer'),
  'PATCH /api/v1/webhooks/{id}': R('updateWebhook', 'admin'),
  'DELETE /api/v1/webhooks/{id}': R('deleteWebhook', 'admin'),
  'GET /api/v1/webhooks/{id}/deliveries': R('listWebhookDeliveries', 'viewer'),
  'POST /api/v1/webhooks/{id}/test': R('testWebhook', 'admin'),

  'GET /api/v1/audit': R('listAuditEntries', 'admin', 'append-only: no operation changes or deletes an entry'),
};

/** Role → rank: owner 3 … viewer 0. */
const RANK: Record<Role, number> = Object.fromEntries(USER_ROLES.map((r, i) => [r, USER_ROLES.length - 1 - i])) as Record<Role, number>;

export const atLeast = (role: Role, min: Role): boolean => RANK[role] >= RANK[min];

/** The table's key of a request: HEAD reads as GET; a router path `/x/:id` as `/x/{id}`. */
export function operationKey(method: string, routePath: string): string {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return `${m} ${routePath.replace(/:(\w+)/g, '{$1}')}`;
}

export function permissionFor(method: string, routePath: string): Permission | undefined {
  return PERMISSIONS[operationKey(method, routePath)];
}

/** Whether `role` may call the operation with an admin token. An operation not in the table: nobody. */
export function userMay(role: Role, permission: Permission | undefined): boolean {
  return !!permission?.user && atLeast(role, permission.user);
}

/** Whether a key of `scopes` may call the operation. An operation that takes no key: no key may. */
export function keyMay(scopes: readonly KeyScope[], permission: Permission | undefined): boolean {
  return !!permission?.key && scopes.includes(permission.key);
}

export const ROLES_DOC_BEGIN = '<!-- permissions table: generated from backend/src/auth/permissions.ts (permissions.test.ts checks it) -->';
export const ROLES_DOC_END = '<!-- end of permissions table -->';

/** The table as Markdown (docs/roles.md holds it between the two markers). */
export function permissionsMarkdown(): string {
  const roles = [...USER_ROLES];
  const head = `| Operation | operationId | ${roles.join(' | ')} | API key | Note |`;
  const sep = `|---|---|${roles.map(() => ':-:').join('|')}|---|---|`;
  const rows = Object.entries(PERMISSIONS).map(([op, p]) => {
    const cells = roles.map((r) => (p.user && atLeast(r, p.user) ? '✓' : '—'));
    const key = p.key ? `scope \`${p.key}\`` : '—';
    return `| \`${op}\` | ${p.operationId} | ${cells.join(' | ')} | ${key} | ${p.note ?? ''} |`;
  });
  return [ROLES_DOC_BEGIN, head, sep, ...rows, ROLES_DOC_END].join('\n');
}
