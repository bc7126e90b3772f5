// ElevenLabs streaming TTS: `POST {base}/v1/text-to-speech/{voice_id}/stream?output_format=pcm_16000`
// with the `xi-api-key` header and `{text, model_id, voice_settings}`; the body streams raw 16 kHz
// PCM16LE mono as it is synthesised.
//
// Why HTTP streaming and not the `stream-input` WebSocket: the pipeline hands TTS one whole sentence
// at a time, and the WebSocket is built for text that arrives in pieces (ElevenLabs' own docs say it
// is not the best fit when the whole text is known). Over HTTP one request carries the sentence: no
// extra handshake, no initial `{"text":" "}` message, no `chunk_length_schedule` buffering or
// `flush` before the first audio, so first audio comes soonest.
//
// Retries: a new request is a new generation (no sample-exact resume; `seed` is only best effort), so
// skipping the samples already played could cut into a different rendition. A sentence is therefore
// retried from its start only while none of its audio was delivered; a stream that breaks after
// that fails with `tts_unavailable` rather than repeat speech the caller already heard.
//
// `voice.speed` maps to `voice_settings.speed`, which ElevenLabs accepts in 0.7–1.2 (it rejects
// other values): bot speeds outside that range are clamped.
import { setTimeout as delay } from 'node:timers/promises';
import { PcmBytes } from '../audio/pcm.js';
import { httpError, idleAbort, ProviderError } from '../providers/retry.js';
import { TtsError, type TtsProvider } from './tts.js';

export interface ElevenLabsTtsOptions {
  /** e.g. https://api.elevenlabs.io (no /v1). */
  baseUrl: string;
  apiKey: string;
  voiceId: string;
  speed: number;
  model?: string;
  timeoutMs: number;
  retries: number;
}

export const ELEVENLABS_SPEED_RANGE = [0.7, 1.2] as const;
/** Flash: ElevenLabs' lowest-latency model, the one they recommend for agents. */
export const ELEVENLABS_DEFAULT_MODEL = 'eleven_flash_v2_5';

export class ElevenLabsTts implements TtsProvider {
  readonly name = 'elevenlabs';
  readonly sampleRate = 16000;
  constructor(private readonly opts: ElevenLabsTtsOptions) {}

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    for (let attempt = 0; ; attempt++) {
      let delivered = false;
      try {
        for await (const pcm of this.attempt(text, signal)) {
          delivered = true;
          yield pcm;
        }
        return;
      } catch (err) {
        if (signal.aborted) return;
        const why = err instanceof Error ? err.message : String(err);
        if (err instanceof TtsError) throw err;
        if (err instanceof ProviderError && !err.retryable) throw new TtsError(err.code, err.message);
        if (delivered) throw new TtsError('tts_unavailable', `${why} (after audio was played; not retried, to avoid repeating speech)`);
        if (attempt >= this.opts.retries) throw new TtsError('tts_unavailable', `failed after ${attempt + 1} attempts: ${why}`);
        await delay(Math.min(100 * 2 ** attempt, 1000), undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
      }
    }
  }

  private async *attempt(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    const what = 'elevenlabs stream';
    const idle = idleAbort(signal, this.opts.timeoutMs, what);
    const [lo, hi] = ELEVENLABS_SPEED_RANGE;
    const url = `${this.opts.baseUrl.replace(/\/$/, '')}/v1/text-to-speech/${encodeURIComponent(this.opts.voiceId)}/stream?output_format=pcm_${this.sampleRate}`;
    try {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'xi-api-key': this.opts.apiKey, 'Content-Type': 'application/json', Accept: 'audio/pcm' },
          body: JSON.stringify({
            text,
            model_id: this.opts.model ?? ELEVENLABS_DEFAULT_MODEL,
            voice_settings: { stability: 0.5, similarity_boost: 0.75, speed: Math.min(hi, Math.max(lo, this.opts.speed)) },
          }),
          signal: idle.signal,
        });
      } catch (err) {
        throw new ProviderError('tts_unavailable', `${what}: ${err instanceof Error ? err.message : String(err)}`, true);
      }
      if (res.status === 401 || res.status === 403) {
        // A bad or unauthorised key will not get better on retry.
        throw new TtsError('tts_auth', `${what}: HTTP ${res.status} ${(await res.text().catch(() => '')).slice(0, 200)}`);
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
        throw new ProviderError('tts_unavailable', `${what} broke: ${err instanceof Error ? err.message : String(err)}`, true);
      }
    } finally {
      idle.done();
    }
  }
}
