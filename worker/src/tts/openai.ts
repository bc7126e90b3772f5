// OpenAI TTS: `POST /v1/audio/speech` with response_format `pcm` streams raw 24 kHz 16-bit mono
// little-endian audio as it is synthesised.
//
// Resume: `none`. A new request is a new rendition (OpenAI has no sample-exact resume), so audio after
// a break must not be spliced from it into the sentence being played: the stage retries only a
// failure before the first audio (providers/retry.ts).
import { HttpPcmTts } from './tts.js';

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey: string;
  voice: string;
  speed: number;
  model?: string;
  timeoutMs: number;
}

export class OpenAiTts extends HttpPcmTts<OpenAiTtsOptions> {
  readonly name = 'openai';
  readonly sampleRate = 24000;

  protected request(text: string) {
    return {
      what: 'audio/speech',
      path: '/audio/speech',
      headers: { Authorization: `Bearer ${this.opts.apiKey}` },
      body: { model: this.opts.model ?? 'tts-1', input: text, voice: this.opts.voice, response_format: 'pcm', speed: this.opts.speed },
    };
  }
}
