// OpenAI TTS: `POST /v1/audio/speech` with response_format `pcm` streams raw 24 kHz 16-bit mono
// little-endian audio as it is synthesised.
import { PcmBytes } from '../audio/pcm.js';
import { httpError, idleAbort, ProviderError, resumable } from '../providers/retry.js';
import { TtsError, type TtsProvider } from './tts.js';

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey: string;
  voice: string;
  speed: number;
  model?: string;
  timeoutMs: number;
  retries: number;
}

export class OpenAiTts implements TtsProvider {
  readonly name = 'openai';
  readonly sampleRate = 24000;
  constructor(private readonly opts: OpenAiTtsOptions) {}

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    try {
      yield* resumable<Int16Array>(() => this.attempt(text, signal), {
        retries: this.opts.retries,
        signal,
        size: (pcm) => pcm.length,
        slice: (pcm, n) => pcm.subarray(n),
        exhaustedCode: 'tts_unavailable',
      });
    } catch (err) {
      if (err instanceof ProviderError) throw new TtsError(err.code, err.message);
      throw err;
    }
  }

  private async *attempt(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    const idle = idleAbort(signal, this.opts.timeoutMs, 'audio/speech');
    try {
      let res: Response;
      try {
        res = await fetch(`${this.opts.baseUrl.replace(/\/$/, '')}/audio/speech`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${this.opts.apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: this.opts.model ?? 'tts-1', input: text, voice: this.opts.voice, response_format: 'pcm', speed: this.opts.speed }),
          signal: idle.signal,
        });
      } catch (err) {
        throw new ProviderError('tts_unavailable', `audio/speech: ${err instanceof Error ? err.message : String(err)}`, true);
      }
      if (!res.ok || !res.body) throw httpError('tts', res.status, await res.text().catch(() => ''));
      const pcm = new PcmBytes();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          idle.touch();
          const samples = pcm.push(chunk);
          if (samples.length) yield samples;
        }
      } catch (err) {
        throw new ProviderError('tts_unavailable', `audio/speech stream broke: ${err instanceof Error ? err.message : String(err)}`, true);
      }
    } finally {
      idle.done();
    }
  }
}
