// A small typed client of the API on fetch: dial-outs, calls and campaigns. Every failure is an ApiError
// carrying the API's catalogue code. Requests that are safe to repeat (GETs, and POSTs sent with an
// Idempotency-Key: every dial-out, by default) are retried on 429 and 503 after the answer's Retry-After
// (else a growing backoff), and on network errors; a POST without a key is never sent twice.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { ApiError } from './errors.js';
import type {
  Bot,
  BotVersion,
  BotVersionListQuery,
  BotVersionPage,
  Call,
  CallListQuery,
  CallPage,
  Campaign,
  CampaignContactListQuery,
  CampaignContactPage,
  CampaignContactsAdd,
  CampaignContactsAdded,
  CampaignCreate,
  CampaignListQuery,
  CampaignPage,
  DialoutRequest,
  DialoutResponse,
  ErrorBody,
} from './types.js';

export interface ClientOptions {
  /** The backend's URL, e.g. `https://voice.example.com` (the API is under /api/v1). */
  baseUrl: string;
  /** An API key (`X-API-Key`): dial-outs, reading a call. */
  apiKey?: string;
  /** An admin access token (`POST /api/v1/auth/login`), sent as `Authorization: Bearer`: the calls list and campaigns take only this. */
  token?: string;
  /** Retries after the first attempt of a request that may be repeated; default 3. */
  retries?: number;
  /** The longest wait before a retry, in ms; an answer asking for a longer Retry-After is not waited for
   *  (its ApiError, with retryAfterSeconds, is thrown). Default 30 000. */
  maxRetryDelayMs?: number;
  /** How long one attempt may take before it counts as a network error, in ms; default 30 000. */
  timeoutMs?: number;
  /** The fetch to use (default: the global one), e.g. one with a proxy agent, or one that records requests. */
  fetch?: typeof fetch;
}

export interface DialoutOptions {
  /** Makes the dial-out safe to repeat for 24 h: a repeat of the same body answers the first call, placing
   *  no second one. Default: a random key per dialout() call, sent unchanged on each of its retries. */
  idempotencyKey?: string;
}

export interface WaitOptions {
  /** Default 120 000 (a dial-out that no worker claims fails after the backend's QUEUED_CALL_TIMEOUT_SECONDS). */
  timeoutMs?: number;
  /** Default 1000. */
  intervalMs?: number;
}

/** The statuses a call ends in. */
export const TERMINAL_CALL_STATUSES: ReadonlySet<Call['status']> = new Set(['completed', 'failed', 'busy', 'no_answer', 'canceled']);

export interface Client {
  /** POST /api/v1/sip/dialout (API key with scope `dialout`): the queued call. */
  dialout(body: DialoutRequest, opts?: DialoutOptions): Promise<DialoutResponse>;
  calls: {
    /** GET /api/v1/calls/{id} (API key with `calls:read`, or an admin token). */
    get(id: string): Promise<Call>;
    /** GET /api/v1/calls (admin token): one page, newest first; pass its `next_cursor` as `cursor` for the next. */
    list(query?: CallListQuery): Promise<CallPage>;
    /** Every call the filters match, page after page. */
    iterate(query?: Omit<CallListQuery, 'cursor'>): AsyncIterable<Call>;
    /** Reads the call until `until` holds (default: it has ended); an ApiError `wait_timeout` after timeoutMs. */
    wait(id: string, until?: (call: Call) => boolean, opts?: WaitOptions): Promise<Call>;
  };
  /** Campaigns (admin token). */
  campaigns: {
    create(body: CampaignCreate): Promise<Campaign>;
    get(id: string): Promise<Campaign>;
    list(query?: CampaignListQuery): Promise<CampaignPage>;
    iterate(query?: Omit<CampaignListQuery, 'cursor'>): AsyncIterable<CampaignPage['items'][number]>;
    addContacts(id: string, contacts: CampaignContactsAdd['contacts']): Promise<CampaignContactsAdded>;
    listContacts(id: string, query?: CampaignContactListQuery): Promise<CampaignContactPage>;
    start(id: string): Promise<Campaign>;
    pause(id: string): Promise<Campaign>;
    resume(id: string): Promise<Campaign>;
    cancel(id: string): Promise<Campaign>;
  };
  /** A bot's versions and publishing (admin token; publish: editor or above). */
  bots: {
    /** GET /api/v1/bots/{id}/versions: one page, newest first (without snapshots). */
    versions(id: string, query?: BotVersionListQuery): Promise<BotVersionPage>;
    /** GET /api/v1/bots/{id}/versions/{version}: the behaviour snapshot. */
    version(id: string, version: number): Promise<BotVersion>;
    /** POST /api/v1/bots/{id}/publish: the version calls run (an older one: the rollback); 409 `tests_failing`
     *  when the bot requires passing tests and that version's last run is not all green. */
    publish(id: string, version: number): Promise<Bot>;
  };
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface Request {
  method: Method;
  path: string;
  query?: object;
  body?: unknown;
  idempotencyKey?: string;
}

const FIRST_BACKOFF_MS = 500;

/**
 * Seconds a Retry-After value asks for: delta-seconds or an HTTP date (RFC 9110 §10.2.3), null when absent or
 * unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** Waits until `ms` have passed by the wall clock (a timer may fire a little early). */
async function waitAtLeast(ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (let left = ms; left > 0; left = until - Date.now()) await delay(left);
}

const isErrorBody = (b: unknown): b is ErrorBody =>
  typeof b === 'object' && b !== null && typeof (b as ErrorBody).error === 'object' && (b as ErrorBody).error !== null && typeof (b as ErrorBody).error.code === 'string';

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (a proxy's page): the status speaks
  }
  const e = isErrorBody(body) ? body.error : null;
  const code = e?.code ?? `http_${res.status}`;
  const retryAfter = parseRetryAfter(res.headers.get('Retry-After'));
  // 409 `conflict` with Retry-After: the same Idempotency-Key (or document) is busy in another request.
  const retryable = res.status === 429 || res.status === 503 || (res.status === 409 && code === 'conflict' && retryAfter !== null);
  return new ApiError(res.status, code, e?.message ?? (res.statusText || `HTTP ${res.status}`), e?.details ?? null, retryAfter, retryable, res.headers.get('X-Request-Id'));
}

export function createClient(options: ClientOptions): Client {
  const base = options.baseUrl.replace(/\/+$/, '');
  const retries = options.retries ?? 3;
  const maxDelayMs = options.maxRetryDelayMs ?? 30_000;
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const auth: Record<string, string> = {};
  if (options.apiKey) auth['X-API-Key'] = options.apiKey;
  if (options.token) auth.Authorization = options.token.startsWith('Bearer ') ? options.token : `Bearer ${options.token}`;

  async function request<T>(r: Request): Promise<T> {
    const url = new URL(base + r.path);
    for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { Accept: 'application/json', ...auth };
    if (r.body !== undefined) headers['Content-Type'] = 'application/json';
    if (r.idempotencyKey !== undefined) headers['Idempotency-Key'] = r.idempotencyKey;
    const payload = r.body === undefined ? undefined : JSON.stringify(r.body);
    // Only a request the server can tell apart from its repeat may be sent again.
    const repeatable = r.method === 'GET' || r.idempotencyKey !== undefined;
    for (let attempt = 0; ; attempt++) {
      const backoffMs = Math.min(maxDelayMs, FIRST_BACKOFF_MS * 2 ** attempt * (0.5 + Math.random() / 2));
      let res: Response;
      try {
        res = await doFetch(url, { method: r.method, headers, body: payload, signal: AbortSignal.timeout(timeoutMs) });
      } catch (cause) {
        const err = new ApiError(0, 'network_error', `no answer from ${url.origin}: ${(cause as Error).message}`, null, null, repeatable, null, { cause });
        if (!repeatable || attempt >= retries) throw err;
        await waitAtLeast(backoffMs);
        continue;
      }
      if (res.ok) return (res.status === 204 ? undefined : await res.json()) as T;
      const err = await errorOf(res);
      const waitMs = err.retryAfterSeconds !== null ? err.retryAfterSeconds * 1000 : backoffMs;
      if (!err.retryable || !repeatable || attempt >= retries || waitMs > maxDelayMs) throw err;
      await waitAtLeast(waitMs);
    }
  }

  const id = (v: string) => encodeURIComponent(v);
  async function* pages<Item, Q extends { cursor?: string }>(list: (q: Q) => Promise<{ items: Item[]; next_cursor?: string | null }>, query: Q): AsyncIterable<Item> {
    for (let q = query; ; ) {
      const page = await list(q);
      yield* page.items;
      if (!page.next_cursor) return;
      q = { ...q, cursor: page.next_cursor };
    }
  }

  const calls: Client['calls'] = {
    get: (callId) => request({ method: 'GET', path: `/api/v1/calls/${id(callId)}` }),
    list: (query = {}) => request({ method: 'GET', path: '/api/v1/calls', query }),
    iterate: (query = {}) => pages(calls.list, query as CallListQuery),
    async wait(callId, until = (c) => TERMINAL_CALL_STATUSES.has(c.status), opts = {}) {
      const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
      for (;;) {
        const call = await calls.get(callId);
        if (until(call)) return call;
        if (Date.now() >= deadline) {
          throw new ApiError(0, 'wait_timeout', `call ${callId} did not reach the awaited state in time (status ${call.status})`, { call }, null, false);
        }
        await delay(opts.intervalMs ?? 1000);
      }
    },
  };

  const campaignAction = (action: 'start' | 'pause' | 'resume' | 'cancel') => (campaignId: string) =>
    request<Campaign>({ method: 'POST', path: `/api/v1/campaigns/${id(campaignId)}/${action}` });
  const campaigns: Client['campaigns'] = {
    create: (body) => request({ method: 'POST', path: '/api/v1/campaigns', body }),
    get: (campaignId) => request({ method: 'GET', path: `/api/v1/campaigns/${id(campaignId)}` }),
    list: (query = {}) => request({ method: 'GET', path: '/api/v1/campaigns', query }),
    iterate: (query = {}) => pages(campaigns.list, query as CampaignListQuery),
    addContacts: (campaignId, contacts) => request({ method: 'POST', path: `/api/v1/campaigns/${id(campaignId)}/contacts`, body: { contacts } }),
    listContacts: (campaignId, query = {}) => request({ method: 'GET', path: `/api/v1/campaigns/${id(campaignId)}/contacts`, query }),
    start: campaignAction('start'),
    pause: campaignAction('pause'),
    resume: campaignAction('resume'),
    cancel: campaignAction('cancel'),
  };

  const bots: Client['bots'] = {
    versions: (botId, query = {}) => request({ method: 'GET', path: `/api/v1/bots/${id(botId)}/versions`, query }),
    version: (botId, version) => request({ method: 'GET', path: `/api/v1/bots/${id(botId)}/versions/${encodeURIComponent(String(version))}` }),
    publish: (botId, version) => request({ method: 'POST', path: `/api/v1/bots/${id(botId)}/publish`, body: { version } }),
  };

  return {
    dialout: (body, opts = {}) => request({ method: 'POST', path: '/api/v1/sip/dialout', body, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
    calls,
    campaigns,
    bots,
  };
}
