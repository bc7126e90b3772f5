// The worker's only client of the backend: create WebSocket calls, fetch a bot's runtime config, and
// report call lifecycle events. Every request carries the worker token and a deadline.
import { setTimeout as delay } from 'node:timers/promises';
import { parseErrorBody, type CallEvent, type RuntimeConfig } from '@voice-platform/schemas';
import { tracingOff, WorkerTracing } from './tracing.js';

export type BackendErrorCode = 'bot_not_found' | 'bot_inactive' | 'call_not_found' | 'variables_mismatch' | 'config_unreachable' | 'invalid_config';

export class BackendError extends Error {
  constructor(
    readonly code: BackendErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'BackendError';
  }
}

export interface BackendOptions {
  configUrl: string;
  token: string;
  timeoutMs: number;
  /** Each request a client span of its call's trace, with `traceparent` (the backend continues the trace). */
  tracing?: WorkerTracing;
}

const KNOWN: Record<string, BackendErrorCode> = {
  bot_not_found: 'bot_not_found',
  bot_inactive: 'bot_inactive',
  call_not_found: 'call_not_found',
  variables_mismatch: 'variables_mismatch',
};

export class BackendClient {
  private readonly callsUrl: string;
  constructor(private readonly opts: BackendOptions) {
    // SERVICE_CONFIG_URL is …/api/v1/config; the calls API is its sibling.
    this.callsUrl = new URL('calls', opts.configUrl).toString();
  }

  private request(method: string, url: string, body?: unknown, callId?: string): Promise<{ status: number; json: unknown }> {
    const tracing = this.opts.tracing ?? tracingOff;
    return tracing.request(`backend ${method}`, { 'http.request.method': method, 'url.path': new URL(url).pathname }, callId, (traceHeaders) => this.send(method, url, body, traceHeaders));
  }

  private async send(method: string, url: string, body: unknown, traceHeaders: Record<string, string>): Promise<{ status: number; json: unknown }> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          ...traceHeaders,
          Authorization: `Bearer ${this.opts.token}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (err) {
      throw new BackendError('config_unreachable', `backend unreachable: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`);
    }
    WorkerTracing.answered(res.status);
    let json: unknown = null;
    try {
      json = await res.json();
    } catch {
      /* a body that is not JSON: judged by status below */
    }
    return { status: res.status, json };
  }

  private fail(status: number, json: unknown, what: string): never {
    const err = parseErrorBody(status, json);
    const code = err?.code;
    if (code && KNOWN[code]) throw new BackendError(KNOWN[code], err.message, status);
    // 401 (bad token), 5xx, anything else: the worker cannot get what it needs.
    throw new BackendError('config_unreachable', `${what}: backend answered ${status}${code ? ` ${code}` : ''}`, status);
  }

  /** Creates the call record of a WebSocket (or web) call: `POST /api/v1/calls`. */
  async createCall(botId: string, variables: Record<string, string>, test?: { run_id: string; case_id: string }): Promise<{ call_id: string }> {
    const { status, json } = await this.request('POST', this.callsUrl, { bot_id: botId, direction: 'websocket', variables, ...(test ? { test } : {}) });
    if (status !== 201) this.fail(status, json, 'create call');
    return { call_id: (json as { call_id: string }).call_id };
  }

  /**
   * A bot's runtime config. Retried with backoff while the backend is unreachable, busy (5xx, 429) or slow,
   * for up to `waitMs` (at least one quick retry: a restart of the backend must not fail a call); any other
   * answer is final at once.
   */
  async fetchConfig(botId: string, callId?: string, waitMs = 100, opts: { rawTemplates?: boolean } = {}): Promise<RuntimeConfig> {
    const url = new URL(this.opts.configUrl);
    url.searchParams.set('bot_id', botId);
    if (callId) url.searchParams.set('call_id', callId);
    if (opts.rawTemplates) url.searchParams.set('templates', 'raw');
    const deadline = Date.now() + waitMs;
    let wait = 100;
    for (let attempt = 0; ; attempt++) {
      try {
        const { status, json } = await this.request('GET', url.toString(), undefined, callId);
        if (status !== 200) this.fail(status, json, 'config');
        const cfg = json as RuntimeConfig;
        if (!cfg?.bot?.id || !cfg.audio) throw new BackendError('invalid_config', 'config reply is missing fields');
        return cfg;
      } catch (err) {
        const s = err instanceof BackendError ? err.status : undefined;
        const busy = err instanceof BackendError && err.code === 'config_unreachable' && (s === undefined || s >= 500 || s === 429 || s === 408);
        if (!busy || (attempt > 0 && Date.now() + wait > deadline)) throw err;
        await delay(wait);
        wait = Math.min(wait * 2, 2000);
      }
    }
  }

  /**
   * The best passages of a bot's knowledge bases for the caller's words (GET /api/v1/config/knowledge), one
   * attempt within `timeoutMs`: a turn never waits long for knowledge, and answers without it when the backend
   * cannot give it (an empty list).
   */
  async knowledge(botId: string, query: string, timeoutMs: number, limit = 3): Promise<string[]> {
    const url = new URL('config/knowledge', this.opts.configUrl);
    url.searchParams.set('bot_id', botId);
    url.searchParams.set('q', query.slice(0, 2000));
    url.searchParams.set('limit', String(limit));
    try {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${this.opts.token}`, Accept: 'application/json' }, signal: AbortSignal.timeout(Math.min(timeoutMs, this.opts.timeoutMs)) });
      if (res.status !== 200) {
        await res.body?.cancel();
        return [];
      }
      const json = (await res.json()) as { passages?: Array<{ text?: unknown }> };
      return (json.passages ?? []).flatMap((p) => (typeof p.text === 'string' ? [p.text] : []));
    } catch {
      return [];
    }
  }

  /**
   * One attempt at reporting a call event (the outbox, call/outbox.ts, retries): 200 taken; another 4xx
   * (not 408 or 429) refused for good, e.g. 409 for a move that already happened or cannot; anything else,
   * or no answer within the deadline, is worth another try with the same event id.
   */
  async sendEvent(callId: string, event: CallEvent & { event_id: string }): Promise<'accepted' | 'refused' | 'retry'> {
    const url = `${this.callsUrl}/${encodeURIComponent(callId)}/events`;
    try {
      const { status } = await this.request('POST', url, event, callId);
      if (status === 200) return 'accepted';
      if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'refused';
    } catch {
      /* unreachable or timed out */
    }
    return 'retry';
  }
}
