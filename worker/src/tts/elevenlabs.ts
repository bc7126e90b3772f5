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
// Resume: `none`. A new request is a new generation (no sample-exact resume; `seed` is only best
// effort), so skipping the samples already played could cut into a different rendition. The stage
// therefore retries a sentence from its start only while none of its audio was delivered; a stream
// that breaks after that fails (`tts_stream_broken`) rather than repeat or splice speech.
//
// `voice.speed` maps to `voice_settings.speed`, which ElevenLabs accepts in 0.7–1.2 (it rejects
// other values): bot speeds outside that range are clamped.
import { HttpPcmTts } from './tts.js';

export interface ElevenLabsTtsOptions {
  /** e.g. https://api.elevenlabs.io (no /v1). */
  baseUrl: string;
  apiKey: string;
  voiceId: string;
  speed: number;
  model?: string;
  timeoutMs: number;
}

export const ELEVENLABS_SPEED_RANGE = [0.7, 1.2] as const;
/** Flash: ElevenLabs' lowest-latency model, the one they recommend for agents. */
export const ELEVENLABS_DEFAULT_MODEL = 'eleven_flash_v2_5';

export class ElevenLabsTts extends HttpPcmTts<ElevenLabsTtsOptions> {
  readonly name = 'elevenlabs';
  readonly sampleRate = 16000;

  protected request(text: string) {
    const [lo, hi] = ELEVENLABS_SPEED_RANGE;
    return {
      what: 'elevenlabs stream',
      path: `/v1/text-to-speech/${encodeURIComponent(this.opts.voiceId)}/stream?output_format=pcm_${this.sampleRate}`,
      headers: { 'xi-api-key': this.opts.apiKey, Accept: 'audio/pcm' },
      body: {
        text,
        model_id: this.opts.model ?? ELEVENLABS_DEFAULT_MODEL,
        voice_settings: { stability: 0.5, similarity_boost: 0.75, speed: Math.min(hi, Math.max(lo, this.opts.speed)) },
      },
    };
  }
}
