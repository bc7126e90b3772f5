// A WebSocket caller for tests and the bench: streams PCM in real time (20 ms frames) and records what
// the worker sends back.
import WebSocket from 'ws';
import { signTestCallToken } from '@voice-platform/schemas/test-call-token';
import { bytesToPcm, concatPcm, pcmToBytes } from '#worker/audio/pcm.js';

/**
 * `…/ws/{bot_id}` with a fresh test-call token for that bot, signed as the backend signs them (with the
 * worker token: the suite's, or the bench's, in VP_WORKER_TOKEN). Each call needs its own.
 */
export function withTestCallToken(url: string, workerAuthToken = process.env.VP_WORKER_TOKEN ?? '', ttlSeconds = 300): string {
  const u = new URL(url);
  const bot = decodeURIComponent(/\/ws\/([^/]+)\/?$/.exec(u.pathname)?.[1] ?? '');
  u.searchParams.set('token', signTestCallToken(workerAuthToken, { bot_id: bot, sub: 'test', ttlSeconds }).token);
  return u.toString();
}

export type ServerMsg = { type: string; [k: string]: unknown };

export class TestCaller {
  readonly ws: WebSocket;
  readonly messages: ServerMsg[] = [];
  /** Bot audio with the local time each frame arrived. */
  readonly audio: Array<{ pcm: Int16Array; atMs: number }> = [];
  closeCode: number | null = null;
  readonly opened: Promise<void>;
  readonly closed: Promise<number>;
  private waiters: Array<() => void> = [];

  constructor(url: string, opts: { origin?: string } = {}) {
    this.ws = new WebSocket(url, opts.origin ? { origin: opts.origin } : {});
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.ws.once('close', (code) => {
      this.closeCode = code;
      this.notify();
      resolve(code);
    }));
    this.ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.audio.push({ pcm: bytesToPcm(data), atMs: performance.now() });
      else this.messages.push(JSON.parse(data.toString()) as ServerMsg);
      this.notify();
    });
    this.ws.on('error', () => undefined);
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Resolves when `check` holds, re-checked on every message; rejects after `timeoutMs`. */
  async until<T>(check: () => T | undefined | null | false, what: string, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; messages: ${JSON.stringify(this.messages).slice(0, 1500)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  message(type: string, pred: (m: ServerMsg) => boolean = () => true): ServerMsg | undefined {
    return this.messages.find((m) => m.type === type && pred(m));
  }

  send(msg: unknown): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** Streams `pcm` in real time as 20 ms frames; stops early if the socket closes. */
  async stream(pcm: Int16Array, rate = 16000, frameMs = 20): Promise<void> {
    const n = (rate * frameMs) / 1000;
    const start = performance.now();
    for (let i = 0, k = 0; i < pcm.length; i += n, k++) {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      this.ws.send(pcmToBytes(pcm.subarray(i, i + n)));
      const wait = start + (k + 1) * frameMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  botAudio(fromMs = 0): Int16Array {
    return concatPcm(this.audio.filter((a) => a.atMs >= fromMs).map((a) => a.pcm));
  }
}

/** Opens a WebSocket call to a bot, sends `start`, and waits for `started`. */
export async function startCall(wsUrl: string, botId: string, variables?: Record<string, string>): Promise<{ caller: TestCaller; callId: string }> {
  const caller = new TestCaller(withTestCallToken(`${wsUrl}/ws/${botId}`));
  await caller.opened;
  caller.send(variables ? { type: 'start', variables } : { type: 'start' });
  const started = await caller.until(() => caller.message('started'), 'started');
  return { caller, callId: started.call_id as string };
}
