// OpenAI TTS: `POST /v1/audio/speech` with response_format `pcm` streams raw 24 kHz 16-bit mono
// little-endian audio as it is synthesised.
//
// Resume: `none`. A new request is a new rendition (OpenAI has no sample-exact resume), so audio after
// a break must not be spliced from it into the sentence being played: the stage retries only a
// failure before the first audio (providers/retry.ts).
import { streamPostPcm } from '../providers/http.js';
import type { TtsProvider } from './tts.js';

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey: string;
  voice: string;
  speed: number;
  model?: string;
  timeoutMs: number;
}

export class OpenAiTts implements TtsProvider {
  readonly name = 'openai';
  readonly sampleRate = 24000;
  readonly resume = 'none' as const;
  constructor(private readonly opts: OpenAiTtsOptions) {}

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    yield* streamPostPcm({
      stage: 'tts',
      what: 'audio/speech',
      url: `${this.opts.baseUrl.replace(/\/$/, '')}/audio/speech`,
      headers: { Authorization: `Bearer ${this.opts.apiKey}` },
      body: { model: this.opts.model ?? 'tts-1', input: text, voice: this.opts.voice, response_format: 'pcm', speed: this.opts.speed },
      signal,
      timeoutMs: this.opts.timeoutMs,
    });
  }
}
