// The backend's admin API (docs/design.md §2): login for a JWT, then create and update bots.
import { ErrorResponse, parseErrorBody } from '@voice-platform/schemas';

/** The backend's error answer (status 0: no answer). */
export class BackendError extends ErrorResponse {
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(status, code, message, details);
    this.name = 'BackendError';
  }
}

export interface Credentials {
  email: string;
  password: string;
}

interface BackendBot {
  id: string;
  name: string;
  /** The latest version and the one calls run (shared/DESIGN.md §17). */
  version?: number;
  published_version?: number;
  [field: string]: unknown;
}

/** Keeps Bot resources and the backend's bots in step: the admin bot API, logging in (and renewing the JWT) as needed. */
export class BotSyncClient {
  private token: { value: string; expiresAtMs: number } | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: () => Promise<Credentials>,
    private readonly timeoutMs = 10_000,
  ) {}

  createBot(body: Record<string, unknown>): Promise<BackendBot> {
    return this.request('POST', '/api/v1/bots', body) as Promise<BackendBot>;
  }

  updateBot(id: string, body: Record<string, unknown>): Promise<BackendBot> {
    return this.request('PATCH', `/api/v1/bots/${encodeURIComponent(id)}`, body) as Promise<BackendBot>;
  }

  /** Makes `version` the one calls run; 409 `tests_failing` when the bot requires passing tests and that version's last run is not all green. */
  publishBot(id: string, version: number): Promise<BackendBot> {
    return this.request('POST', `/api/v1/bots/${encodeURIComponent(id)}/publish`, { version }) as Promise<BackendBot>;
  }

  /** The newest 1000 bots (the backend's cap), newest first. */
  async listBots(): Promise<BackendBot[]> {
    return ((await this.request('GET', '/api/v1/bots')) as { items: BackendBot[] }).items;
  }

  getBot(id: string): Promise<BackendBot> {
    return this.request('GET', `/api/v1/bots/${encodeURIComponent(id)}`) as Promise<BackendBot>;
  }

  private async login(): Promise<string> {
    const creds = await this.credentials();
    const res = (await this.send('POST', '/api/v1/auth/login', creds)) as { access_token: string; expires_in: number };
    // Renew a minute early so a token never expires between check and use.
    this.token = { value: res.access_token, expiresAtMs: Date.now() + Math.max(0, res.expires_in - 60) * 1000 };
    return res.access_token;
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const token = this.token && this.token.expiresAtMs > Date.now() ? this.token.value : await this.login();
    try {
      return await this.send(method, path, body, token);
    } catch (err) {
      // Secret rotated or token revoked: log in again once.
      if (err instanceof BackendError && err.status === 401) {
        this.token = undefined;
        return this.send(method, path, body, await this.login());
      }
      throw err;
    }
  }

  private async send(method: string, path: string, body?: unknown, token?: string): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new BackendError(0, 'unreachable', `backend unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = await res.text();
    if (!res.ok) {
      const e = parseErrorBody(res.status, text);
      throw new BackendError(res.status, e?.code ?? 'http_error', e?.message ?? `HTTP ${res.status}`, e?.details);
    }
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      return undefined;
    }
  }
}
