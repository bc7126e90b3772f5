// Deepgram live streaming STT over its WebSocket API (`wss://api.deepgram.com/v1/listen`): raw
// linear16 audio goes up as binary messages; `Results` messages come back with
// `channel.alternatives[0].transcript`, `is_final` and `speech_final`. At the end of a turn (our VAD's
// decision) a `Finalize` message flushes what Deepgram still holds. Interim results (`is_final:
// false`) go to the listener as the turn's hypothesis so far. A dropped socket is reopened at once in
// the background and the current turn's audio is sent again, so a reconnect loses no words; when the
// reconnects fail the listener hears it right away, not at the end of the turn.
import WebSocket from 'ws';
import { pcmToBytes } from '../audio/pcm.js';
import { SttError, type SttListener, type SttProvider, type SttSession } from './stt.js';

export interface DeepgramOptions {
  url: string;
  apiKey: string;
  model: string;
  language: string;
  sampleRate: number;
  timeoutMs: number;
  retries: number;
  /** How long to wait for the `from_finalize` result after `Finalize`. */
  finalizeWaitMs?: number;
}

interface ResultsMessage {
  type: 'Results';
  is_final?: boolean;
  speech_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: Array<{ transcript?: string }> };
}

const MAX_TURN_BYTES = 30 * 32000;

export class DeepgramStt implements SttProvider {
  readonly name = 'deepgram';
  readonly sampleRate: number;
  constructor(private readonly opts: DeepgramOptions) {
    this.sampleRate = opts.sampleRate;
  }

  private listenUrl(): string {
    const u = new URL(this.opts.url);
    const params: Record<string, string> = {
      model: this.opts.model === 'en-us' ? 'nova-2' : this.opts.model,
      language: this.opts.language,
      encoding: 'linear16',
      sample_rate: String(this.sampleRate),
      channels: '1',
      interim_results: 'true',
      punctuate: 'true',
    };
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u.toString();
  }

  private connect(): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.listenUrl(), { headers: { Authorization: `Token ${this.opts.apiKey}` }, handshakeTimeout: this.opts.timeoutMs });
      const fail = (err: Error) => {
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        reject(new SttError('stt_unavailable', `deepgram: ${err.message}`));
      };
      ws.once('open', () => {
        ws.removeListener('error', fail);
        ws.removeListener('unexpected-response', onResponse);
        resolve(ws);
      });
      const onResponse = (_req: unknown, res: { statusCode?: number }) => fail(new Error(`handshake answered HTTP ${res.statusCode}`));
      ws.once('unexpected-response', onResponse);
      ws.once('error', fail);
    });
  }

  async open(listener: SttListener = {}): Promise<SttSession> {
    const provider = this;
    let ws = await this.connect();
    let closed = false;
    let failed: SttError | null = null;
    let finals: string[] = [];
    /** Last hypothesis handed to the listener, so repeats are skipped. */
    let lastInterim = '';
    let turnAudio: Buffer[] = [];
    let turnBytes = 0;
    let finalizeWaiter: (() => void) | null = null;
    let reconnecting: Promise<void> | null = null;
    /** Sockets lost in a row without a final result in between: a server that drops every stream fails. */
    let drops = 0;
    const fail = (why: string) => {
      if (failed || closed) return;
      failed = new SttError('stt_unavailable', `deepgram: ${why}`);
      finalizeWaiter?.();
      listener.error?.(failed);
    };

    const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return;
      let msg: ResultsMessage;
      try {
        msg = JSON.parse(data.toString()) as ResultsMessage;
      } catch {
        return;
      }
      if (msg.type !== 'Results' || closed || failed) return;
      if (msg.is_final) drops = 0;
      const text = msg.channel?.alternatives?.[0]?.transcript?.trim() ?? '';
      if (msg.is_final && text) finals.push(text);
      if (!msg.is_final && text) {
        // An interim covers only the audio since the last final segment: the turn so far is both.
        const hypothesis = [...finals, text].join(' ');
        if (hypothesis !== lastInterim) {
          lastInterim = hypothesis;
          listener.interim?.(hypothesis);
        }
      }
      if (msg.from_finalize) finalizeWaiter?.();
    };

    const wire = (sock: WebSocket) => {
      sock.on('message', onMessage);
      sock.on('error', () => undefined); // 'close' follows and decides
      sock.once('close', () => {
        if (closed || sock !== ws) return;
        if (++drops > provider.opts.retries) return fail(`connection lost ${drops} times in a row`);
        reconnecting = reconnect();
      });
    };

    const reconnect = async (): Promise<void> => {
      let lastErr = '';
      for (let attempt = 1; attempt <= provider.opts.retries && !closed; attempt++) {
        try {
          const sock = await provider.connect();
          if (closed) {
            sock.terminate();
            return;
          }
          ws = sock;
          wire(ws);
          // Results of the lost socket for this turn are dropped: the replay produces them again
          // (`lastInterim` stays, so the caller is not sent the same hypothesis twice).
          finals = [];
          for (const chunk of turnAudio) ws.send(chunk);
          if (finalizeWaiter) ws.send(JSON.stringify({ type: 'Finalize' }));
          reconnecting = null;
          return;
        } catch (err) {
          lastErr = err instanceof Error ? err.message : String(err);
          // No wait after the last attempt: the failure is reported at once.
          if (attempt < provider.opts.retries) await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 1000)));
        }
      }
      reconnecting = null;
      fail(`connection lost and ${provider.opts.retries} reconnects failed (${lastErr.replace(/^deepgram: /, '')})`);
    };

    wire(ws);
    return {
      push(pcm) {
        if (closed || failed) return;
        const bytes = pcmToBytes(pcm);
        if (turnBytes < MAX_TURN_BYTES) {
          turnAudio.push(bytes);
          turnBytes += bytes.length;
        }
        if (ws.readyState === WebSocket.OPEN) ws.send(bytes);
      },
      speechStarted() {},
      async endOfTurn(signal) {
        if (failed) throw failed;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, provider.opts.finalizeWaitMs ?? 1500);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            finalizeWaiter = null;
            resolve();
          }
          finalizeWaiter = done;
          signal.addEventListener('abort', done, { once: true });
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'Finalize' }));
        });
        if (reconnecting) await reconnecting;
        if (failed) throw failed;
        const text = finals.join(' ');
        finals = [];
        lastInterim = '';
        turnAudio = [];
        turnBytes = 0;
        return text;
      },
      close() {
        closed = true;
        finalizeWaiter?.();
        try {
          if (ws.readyState === WebSocket.OPEN) {
            ws.send(JSON.stringify({ type: 'CloseStream' }));
            ws.close(1000);
          } else ws.terminate();
        } catch {
          /* already gone */
        }
      },
    };
  }
}
