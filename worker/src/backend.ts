// The worker's only client of the backend: create WebSocket calls, fetch a bot's runtime config, and
// report call lifecycle events. Every request carries the worker token and a deadline.
import { setTimeout as delay } from 'node:timers/promises';
import { parseErrorBody, type CallEvent, type RuntimeConfig } from '@voice-platform/schemas';

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

  private async request(method: string, url: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
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
  async createCall(botId: string, variables: Record<string, string>): Promise<{ call_id: string }> {
    const { status, json } = await this.request('POST', this.callsUrl, { bot_id: botId, direction: 'websocket', variables });
    if (status !== 201) this.fail(status, json, 'create call');
    return { call_id: (json as { call_id: string }).call_id };
  }

  async fetchConfig(botId: string, callId?: string): Promise<RuntimeConfig> {
    const url = new URL(this.opts.configUrl);
    url.searchParams.set('bot_id', botId);
    if (callId) url.searchParams.set('call_id', callId);
    // One quick retry: a restart of the backend must not fail a call, a dead one must fail it fast.
    let last: unknown;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const { status, json } = await this.request('GET', url.toString());
        if (status !== 200) this.fail(status, json, 'config');
        const cfg = json as RuntimeConfig;
        if (!cfg?.bot?.id || !cfg.audio) throw new BackendError('invalid_config', 'config reply is missing fields');
        return cfg;
      } catch (err) {
        last = err;
        if (!(err instanceof BackendError) || err.code !== 'config_unreachable' || err.status !== undefined) throw err;
        await delay(100);
      }
    }
    throw last;
  }

  /**
   * Reports a lifecycle move. Retried with backoff (the backend may restart during a call); a 409 means
   * the move already happened or can't, which is final either way.
   */
  async postEvent(callId: string, event: CallEvent, attempts = 4): Promise<boolean> {
    const url = `${this.callsUrl}/${encodeURIComponent(callId)}/events`;
    let wait = 200;
    for (let i = 0; i < attempts; i++) {
      try {
        const { status } = await this.request('POST', url, { at: new Date().toISOString(), ...event });
        if (status === 200) return true;
        if (status >= 400 && status < 500 && status !== 429) return false;
      } catch {
        /* retry */
      }
      if (i < attempts - 1) await delay(wait);
      wait *= 2;
    }
    return false;
  }
}
