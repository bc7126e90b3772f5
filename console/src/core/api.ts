// The one API client: base URL from VITE_API_URL, the admin bearer token, error bodies turned into
// ApiError with a readable message, and an expired or rejected token sending the user back to login.
import type { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyUpdate } from '@voice-platform/schemas/apiKeys.js';
import type { Bot, BotCreate, BotToolSecret, BotUpdate, BotVersion, BotVersionList } from '@voice-platform/schemas/bot.js';
import type { Call, CallControl, CallControlAccepted, CallListenToken, CallStatus } from '@voice-platform/schemas/calls.js';
import type { OutboundTrunk, OutboundTrunkCreate, OutboundTrunkUpdate } from '@voice-platform/schemas/trunks.js';
import type { InboundNumber, InboundNumberCreate, InboundNumberUpdate } from '@voice-platform/schemas/inbound.js';
import type { WidgetRequest, WidgetResponse } from '@voice-platform/schemas/dialout.js';
import type { Webhook, WebhookCreate, WebhookCreated, WebhookDeliveryAttempt, WebhookEventQueued, WebhookUpdate } from '@voice-platform/schemas/webhooks.js';
import type { User, UserCreate, UserCreated, UserUpdate } from '@voice-platform/schemas/users.js';
import type { Campaign, CampaignCreate, CampaignDetail, CampaignStatus, Contact, ContactsResult, ContactStatus } from '@voice-platform/schemas/campaigns.js';
import type { CallAnalytics } from '@voice-platform/schemas/analytics.js';
import type { AuditPage } from '@voice-platform/schemas/audit.js';
import type { FleetStatus } from '@voice-platform/schemas/fleetStatus.js';
import type { KnowledgeBase, KnowledgeBaseCreate, KnowledgeDocument } from '@voice-platform/schemas/knowledge.js';
import type { TestCase, TestCaseCreate, TestRun, TestRunCreate } from '@voice-platform/schemas/botTests.js';
import type { AuditFilters } from './audit.js';
import { currentToken, endSession, saveToken } from './session.js';
import { navigate } from './router.js';
import { ErrorResponse, parseErrorBody } from '@voice-platform/schemas/errors.js';
import { readableMessage } from './errorMessage.js';
import { detailFieldErrors, type FieldErrors } from './validation.js';

const API_URL: string = (import.meta.env.VITE_API_URL as string | undefined)?.replace(/\/+$/, '') ?? 'http://127.0.0.1:8080';

/** An error answer (or no answer: status 0), its message made readable (errorMessage.ts). */
export class ApiError extends ErrorResponse {
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(status, code, message, details);
    this.name = 'ApiError';
  }

  /** 422 details by field path, for the form that sent the request. */
  get fieldErrors(): FieldErrors {
    return detailFieldErrors(this.details);
  }
}

/** Until a one-time password is changed every other route answers 403 password_change_required: the
 *  user goes to choose a new password, then back to where they were. */
function toPasswordChange(): void {
  if (location.pathname === '/change-password') return;
  navigate(`/change-password?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
}

function backToLogin(notice: string): void {
  // Parallel requests of one page all fail alike: the first one sends the user away, the rest are no-ops.
  if (location.pathname === '/login') return;
  endSession(notice);
  navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
}

/** The Authorization header of an admin request; without a session the user is sent to sign in. */
function authHeader(): Record<string, string> {
  const token = currentToken();
  if (!token) {
    backToLogin('Your session has expired. Please sign in again.');
    throw new ApiError(401, 'token_expired', 'Your session has expired. Please sign in again.');
  }
  return { Authorization: `Bearer ${token}` };
}

async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${API_URL}${path}`, init);
  } catch {
    throw new ApiError(0, 'network_error', `Cannot reach the API at ${API_URL}. Check that the backend is running.`);
  }
}

/** An error answer as an ApiError (an expired or rejected admin token also sends the user to sign in). */
function failure(res: Response, text: string, auth: boolean): ApiError {
  const err = parseErrorBody(res.status, text);
  const code = err?.code ?? `http_${res.status}`;
  const message = readableMessage(code, err?.message ?? `The server answered ${res.status}`, err?.details);
  if (auth && res.status === 401 && (code === 'token_expired' || code === 'unauthorized')) {
    backToLogin(code === 'token_expired' ? 'Your session has expired. Please sign in again.' : 'Your session is no longer valid. Please sign in again.');
  }
  if (auth && res.status === 403 && code === 'password_change_required') toPasswordChange();
  return new ApiError(res.status, code, message, err?.details);
}

/** `contentType`: the body is that text as it is (a CSV upload); else it is sent as JSON. */
async function request<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, opts: { auth?: boolean; contentType?: string } = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
  if (opts.auth !== false) Object.assign(headers, authHeader());
  const res = await send(path, { method, headers, body: body === undefined ? undefined : opts.contentType ? String(body) : JSON.stringify(body) });
  const text = await res.text();
  if (res.ok) {
    try {
      return (text ? JSON.parse(text) : undefined) as T;
    } catch {
      return undefined as T;
    }
  }
  throw failure(res, text, opts.auth !== false);
}

/** A document upload (POST /api/v1/knowledge-bases/{id}/documents): the file as the raw body, its name in X-Filename. */
async function uploadFile<T>(path: string, file: File): Promise<T> {
  // A header value is ASCII: other characters of the name become "_".
  const filename = file.name.replace(/[^\x20-\x7e]/g, '_');
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': file.type || 'application/octet-stream', 'X-Filename': filename, ...authHeader() };
  const res = await send(path, { method: 'POST', headers, body: file });
  const text = await res.text();
  if (res.ok) return JSON.parse(text) as T;
  throw failure(res, text, true);
}

/** A file the API answers (a recording, a CSV export), read whole with the admin token, and its headers. */
export interface Download {
  blob: Blob;
  headers: Headers;
}

/**
 * GET of a file with the admin token. Media elements and links cannot send an Authorization header, so files
 * are fetched here and handed to them as object URLs (download.ts). `HEAD`: the headers only (blob empty).
 */
async function requestFile(path: string, method: 'GET' | 'HEAD' = 'GET'): Promise<Download> {
  const res = await send(path, { method, headers: authHeader() });
  if (!res.ok) throw failure(res, method === 'HEAD' ? '' : await res.text(), true);
  return { blob: method === 'HEAD' ? new Blob([]) : await res.blob(), headers: res.headers };
}

/** One do-not-call entry (GET /api/v1/dnc). */
export interface DncEntry {
  number: string;
  created_at: string;
}

interface TokenAnswer {
  access_token: string;
  expires_in: number;
  must_change_password?: boolean;
}

/** `?a=1&b=2` of the filters that are set, or ''. */
function queryString(filters: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return qs ? `?${qs}` : '';
}

interface CallFilters {
  status?: CallStatus | '';
  bot_id?: string;
  cursor?: string;
  limit?: number;
}

export const api = {
  /** Signs in; `must_change_password`: the password is a one-time one, to be changed before anything else. */
  async login(email: string, password: string): Promise<{ must_change_password: boolean }> {
    const r = await request<TokenAnswer>('POST', '/api/v1/auth/login', { email, password }, { auth: false });
    saveToken(r.access_token, r.expires_in);
    return { must_change_password: r.must_change_password === true };
  },
  /** Changes the signed-in user's password; the old token is revoked, the new one answered is kept. */
  async changePassword(current_password: string, new_password: string): Promise<void> {
    const r = await request<TokenAnswer>('POST', '/api/v1/auth/password', { current_password, new_password });
    saveToken(r.access_token, r.expires_in);
  },
  me: () => request<User>('GET', '/api/v1/auth/me'),

  // Users of the console and admin API (owners and admins). The one-time password is in the create answer only.
  listUsers: () => request<{ items: User[] }>('GET', '/api/v1/users'),
  createUser: (body: UserCreate) => request<UserCreated>('POST', '/api/v1/users', body),
  updateUser: (id: string, body: UserUpdate) => request<User>('PATCH', `/api/v1/users/${encodeURIComponent(id)}`, body),

  listApiKeys: () => request<{ items: ApiKey[] }>('GET', '/api/v1/api-keys'),
  createApiKey: (body: ApiKeyCreate) => request<ApiKeyCreated>('POST', '/api/v1/api-keys', body),
  updateApiKey: (id: string, body: ApiKeyUpdate) => request<ApiKey>('PATCH', `/api/v1/api-keys/${encodeURIComponent(id)}`, body),

  listBots: () => request<{ items: Bot[] }>('GET', '/api/v1/bots'),
  getBot: (id: string) => request<Bot>('GET', `/api/v1/bots/${encodeURIComponent(id)}`),
  createBot: (body: BotCreate) => request<Bot>('POST', '/api/v1/bots', body),
  updateBot: (id: string, body: BotUpdate) => request<Bot>('PATCH', `/api/v1/bots/${encodeURIComponent(id)}`, body),
  /** Creates or replaces the secret HTTP tool requests are signed with; this answer is the only one holding it. */
  rotateToolSecret: (id: string) => request<BotToolSecret>('POST', `/api/v1/bots/${encodeURIComponent(id)}/tool-secret`),
  /** The bot's versions, newest first (without their snapshots). */
  listBotVersions: (id: string) => request<BotVersionList>('GET', `/api/v1/bots/${encodeURIComponent(id)}/versions?limit=100`),
  getBotVersion: (id: string, version: number) => request<BotVersion>('GET', `/api/v1/bots/${encodeURIComponent(id)}/versions/${version}`),
  /** Makes `version` the one calls run (an older one: the rollback); 409 tests_failing while its tests are not green. */
  publishBot: (id: string, version: number) => request<Bot>('POST', `/api/v1/bots/${encodeURIComponent(id)}/publish`, { version }),

  // Bot tests (docs/design.md §17): the bot's cases, and runs that place each case as a real call.
  listTestCases: (botId: string) => request<{ items: TestCase[] }>('GET', `/api/v1/bots/${encodeURIComponent(botId)}/tests`),
  createTestCase: (botId: string, body: TestCaseCreate) => request<TestCase>('POST', `/api/v1/bots/${encodeURIComponent(botId)}/tests`, body),
  updateTestCase: (botId: string, caseId: string, body: TestCaseCreate) => request<TestCase>('PUT', `/api/v1/bots/${encodeURIComponent(botId)}/tests/${encodeURIComponent(caseId)}`, body),
  deleteTestCase: (botId: string, caseId: string) => request<void>('DELETE', `/api/v1/bots/${encodeURIComponent(botId)}/tests/${encodeURIComponent(caseId)}`),
  /** Queues a run (202): every case, or those named; the runner places the calls. */
  startTestRun: (botId: string, body: TestRunCreate) => request<TestRun>('POST', `/api/v1/bots/${encodeURIComponent(botId)}/test-runs`, body),
  /** The bot's runs, newest first. */
  listTestRuns: (botId: string) => request<{ items: TestRun[] }>('GET', `/api/v1/bots/${encodeURIComponent(botId)}/test-runs`),
  getTestRun: (botId: string, runId: string) => request<TestRun>('GET', `/api/v1/bots/${encodeURIComponent(botId)}/test-runs/${encodeURIComponent(runId)}`),

  listCalls(filters: CallFilters = {}) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v !== undefined && v !== '') q.set(k, String(v));
    const qs = q.toString();
    return request<{ items: Call[]; next_cursor: string | null }>('GET', `/api/v1/calls${qs ? `?${qs}` : ''}`);
  },
  /** Ended calls counted in buckets (`query`: from, to, interval, bot_id; dashboard.ts analyticsQuery). */
  callAnalytics: (query: URLSearchParams) => request<CallAnalytics>('GET', `/api/v1/analytics/calls?${query}`),
  /** The live workers (calls, load, admittable) and the fleet's totals. */
  fleet: () => request<FleetStatus>('GET', '/api/v1/fleet'),
  /** The audit log, newest first (owners and admins). */
  listAudit: (filters: AuditFilters = {}) => request<AuditPage>('GET', `/api/v1/audit${queryString(filters)}`),
  getCall: (id: string) => request<Call>('GET', `/api/v1/calls/${encodeURIComponent(id)}`),
  /** A supervisor's control of a call in progress (docs/design.md §16). */
  controlCall: (id: string, body: CallControl) => request<CallControlAccepted>('POST', `/api/v1/calls/${encodeURIComponent(id)}/control`, body),
  /** A hidden, subscribe-only LiveKit token for the call's room (Listen). */
  listenToken: (id: string) => request<CallListenToken>('POST', `/api/v1/calls/${encodeURIComponent(id)}/listen-token`),
  /** The call's recording (WAV): HEAD for its size (`Content-Length`), GET for the file. */
  recordingInfo: (id: string) => requestFile(`/api/v1/calls/${encodeURIComponent(id)}/recording`, 'HEAD'),
  recording: (id: string) => requestFile(`/api/v1/calls/${encodeURIComponent(id)}/recording`),

  // Outbound SIP trunks. `auth_password` goes out in a create or update body only; no answer carries it.
  listTrunks: () => request<{ items: OutboundTrunk[] }>('GET', '/api/v1/sip/outbound-trunks'),
  createTrunk: (body: OutboundTrunkCreate) => request<OutboundTrunk>('POST', '/api/v1/sip/outbound-trunks', body),
  updateTrunk: (id: string, body: OutboundTrunkUpdate) => request<OutboundTrunk>('PATCH', `/api/v1/sip/outbound-trunks/${encodeURIComponent(id)}`, body),
  deleteTrunk: (id: string) => request<void>('DELETE', `/api/v1/sip/outbound-trunks/${encodeURIComponent(id)}`),
  // Inbound numbers: which bot answers calls to a number of ours.
  listInboundNumbers: () => request<{ items: InboundNumber[] }>('GET', '/api/v1/sip/inbound-numbers'),
  createInboundNumber: (body: InboundNumberCreate) => request<InboundNumber>('POST', '/api/v1/sip/inbound-numbers', body),
  updateInboundNumber: (id: string, body: InboundNumberUpdate) => request<InboundNumber>('PATCH', `/api/v1/sip/inbound-numbers/${encodeURIComponent(id)}`, body),
  deleteInboundNumber: (id: string) => request<void>('DELETE', `/api/v1/sip/inbound-numbers/${encodeURIComponent(id)}`),
  // A browser test call: a `web` call queued for the fleet, and a LiveKit token for its room.
  startTestCall: (body: WidgetRequest) => request<WidgetResponse>('POST', '/livekit/widget', body),
  // Webhooks: endpoints for call and campaign events. The secret is in the create answer only.
  listWebhooks: () => request<{ items: Webhook[] }>('GET', '/api/v1/webhooks'),
  createWebhook: (body: WebhookCreate) => request<WebhookCreated>('POST', '/api/v1/webhooks', body),
  updateWebhook: (id: string, body: WebhookUpdate) => request<Webhook>('PATCH', `/api/v1/webhooks/${encodeURIComponent(id)}`, body),
  deleteWebhook: (id: string) => request<void>('DELETE', `/api/v1/webhooks/${encodeURIComponent(id)}`),
  testWebhook: (id: string) => request<WebhookEventQueued>('POST', `/api/v1/webhooks/${encodeURIComponent(id)}/test`),
  // Do-not-call: numbers campaigns never dial.
  listDnc(q: { cursor?: string; number?: string } = {}) {
    const p = new URLSearchParams();
    if (q.cursor) p.set('cursor', q.cursor);
    if (q.number) p.set('number', q.number);
    p.set('limit', '100');
    return request<{ items: DncEntry[]; next_cursor: string | null }>('GET', `/api/v1/dnc?${p}`);
  },
  addDnc: (numbers: string[]) => request<{ added: number; duplicates: number }>('POST', '/api/v1/dnc', { numbers }),
  listKnowledgeBases: () => request<{ items: KnowledgeBase[] }>('GET', '/api/v1/knowledge-bases'),
  createKnowledgeBase: (body: KnowledgeBaseCreate) => request<KnowledgeBase>('POST', '/api/v1/knowledge-bases', body),
  deleteKnowledgeBase: (id: string) => request<void>('DELETE', `/api/v1/knowledge-bases/${encodeURIComponent(id)}`),
  listKnowledgeDocuments: (id: string) => request<{ items: KnowledgeDocument[] }>('GET', `/api/v1/knowledge-bases/${encodeURIComponent(id)}/documents`),
  uploadKnowledgeDocument: (id: string, file: File) => uploadFile<KnowledgeDocument>(`/api/v1/knowledge-bases/${encodeURIComponent(id)}/documents`, file),
  deleteKnowledgeDocument: (id: string, documentId: string) => request<void>('DELETE', `/api/v1/knowledge-bases/${encodeURIComponent(id)}/documents/${encodeURIComponent(documentId)}`),
  removeDnc: (number: string) => request<void>('DELETE', `/api/v1/dnc/${encodeURIComponent(number)}`),
  // Campaigns: a bot dialling a list of contacts; the backend's dialler role runs them.
  listCampaigns(q: { cursor?: string; status?: CampaignStatus } = {}) {
    const p = new URLSearchParams({ limit: '20' });
    if (q.cursor) p.set('cursor', q.cursor);
    if (q.status) p.set('status', q.status);
    return request<{ items: Campaign[]; next_cursor: string | null }>('GET', `/api/v1/campaigns?${p}`);
  },
  getCampaign: (id: string) => request<CampaignDetail>('GET', `/api/v1/campaigns/${encodeURIComponent(id)}`),
  createCampaign: (body: CampaignCreate) => request<CampaignDetail>('POST', '/api/v1/campaigns', body),
  campaignAction: (id: string, action: 'start' | 'pause' | 'resume' | 'cancel') => request<CampaignDetail>('POST', `/api/v1/campaigns/${encodeURIComponent(id)}/${action}`),
  /** A CSV body with the backend's column names (`to_number`, `timezone`, the bot's variables). */
  uploadContactsCsv: (id: string, csv: string) => request<ContactsResult>('POST', `/api/v1/campaigns/${encodeURIComponent(id)}/contacts`, csv, { contentType: 'text/csv' }),
  listContacts(id: string, q: { cursor?: string; status?: ContactStatus } = {}) {
    const p = new URLSearchParams({ limit: '100' });
    if (q.cursor) p.set('cursor', q.cursor);
    if (q.status) p.set('status', q.status);
    return request<{ items: Contact[]; next_cursor: string | null }>('GET', `/api/v1/campaigns/${encodeURIComponent(id)}/contacts?${p}`);
  },
  /** Every contact with its last call's outcome, as the backend's CSV file (GET …/contacts.csv). */
  contactsCsv: (id: string) => requestFile(`/api/v1/campaigns/${encodeURIComponent(id)}/contacts.csv`),
  webhookDeliveries: (id: string) => request<{ items: WebhookDeliveryAttempt[]; next_cursor: string | null }>('GET', `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries`),
};
