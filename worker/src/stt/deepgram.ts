// Deepgram live streaming STT over its WebSocket API (`wss://api.deepgram.com/v1/listen`): raw
// linear16 audio goes up as binary messages; `Results` messages come back with
// `channel.alternatives[0].transcript`, `is_final` and `speech_final`. At the end of a turn (our VAD's
// decision) a `Finalize` message flushes what Deepgram still holds. Interim results (`is_final:
// false`) go to the listener as the turn's hypothesis so far.
//
// One session is one connection. Resume: `turn`. A dropped socket is reported to the listener at once
// (`stt_stream_broken`); the STT stage opens a new session and sends it the current turn's audio again,
// so a reconnect loses no words (stt.ts).
import WebSocket from 'ws';
import { pcmToBytes } from '../audio/pcm.js';
import { httpError, ProviderError } from '../providers/errors.js';
import type { SttListener, SttProvider, SttSession } from './stt.js';

export interface DeepgramOptions {
  url: string;
  apiKey: string;
  model: string;
  language: string;
  sampleRate: number;
  timeoutMs: number;
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

export class DeepgramStt implements SttProvider {
  readonly name = 'deepgram';
  readonly resume = 'turn' as const;
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
      const fail = (err: ProviderError) => {
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        reject(err);
      };
      ws.once('open', () => {
        ws.removeListener('error', fail);
        ws.removeListener('unexpected-response', onResponse);
        resolve(ws);
      });
      const onResponse = (_req: unknown, res: { statusCode?: number }) => fail(httpError('stt', 'deepgram: handshake', res.statusCode ?? 0, ''));
      ws.once('unexpected-response', onResponse);
      ws.once('error', (err: Error) => fail(new ProviderError('stt', /timed out/i.test(err.message) ? 'timeout' : 'unavailable', `deepgram: ${err.message}`)));
    });
  }

  async open(listener: SttListener = {}): Promise<SttSession> {
    const finalizeWaitMs = this.opts.finalizeWaitMs ?? 1500;
    const ws = await this.connect();
    let closed = false;
    let failed: ProviderError | null = null;
    let finals: string[] = [];
    /** Last hypothesis handed to the listener, so repeats are skipped. */
    let lastInterim = '';
    /** Who waits for the answer to a `Finalize` (a turn's end, a peek). */
    const finalizeWaiters = new Set<() => void>();
    const wake = () => {
      for (const w of [...finalizeWaiters]) w();
    };
    /** Sends `Finalize` and waits for its result (at most finalizeWaitMs, or until `signal` aborts). */
    const finalize = (signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, finalizeWaitMs);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          finalizeWaiters.delete(done);
          resolve();
        }
        finalizeWaiters.add(done);
        signal.addEventListener('abort', done, { once: true });
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'Finalize' }));
      });

    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return;
      let msg: ResultsMessage;
      try {
        msg = JSON.parse(data.toString()) as ResultsMessage;
      } catch {
        return;
      }
      if (msg.type !== 'Results' || closed || failed) return;
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
      if (msg.from_finalize) wake();
    });
    ws.on('error', () => undefined); // 'close' follows and decides
    ws.once('close', (code: number) => {
      if (closed) return;
      failed = new ProviderError('stt', 'stream_broken', `deepgram: connection lost (close ${code})`);
      listener.error?.(failed);
      wake();
    });

    return {
      push(pcm) {
        if (closed || failed) return;
        if (ws.readyState === WebSocket.OPEN) ws.send(pcmToBytes(pcm));
      },
      speechStarted() {},
      async endOfTurn(signal) {
        if (failed) throw failed;
        await finalize(signal);
        if (failed) throw failed;
        const text = finals.join(' ');
        finals = [];
        lastInterim = '';
        return text;
      },
      // Finalize now: what Deepgram returns for it is final; the stream goes on and later words join the turn.
      async peek(signal) {
        if (failed) throw failed;
        await finalize(signal);
        if (failed) throw failed;
        return { text: finals.join(' '), final: true };
      },
      discardTurn() {
        finals = [];
        lastInterim = '';
      },
      close() {
        closed = true;
        wake();
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
