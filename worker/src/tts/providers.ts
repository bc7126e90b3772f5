// The TTS providers a bot's `voice.provider` may name (providers/registry.ts): offline espeak-ng, OpenAI, ElevenLabs.
import type { RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';
import type { ProcessRunner } from '../proc/scheduler.js';
import { requireSetting, type ProviderRegistry } from '../providers/registry.js';
import { ElevenLabsTts } from './elevenlabs.js';
import { EspeakTts } from './espeak.js';
import { OpenAiTts } from './openai.js';
import type { TtsProvider } from './tts.js';

export type TtsSettings = Pick<Settings, 'ESPEAK_BINARY' | 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'ELEVENLABS_API_KEY' | 'ELEVENLABS_BASE_URL' | 'PROVIDER_TIMEOUT_MS'>;

export interface TtsContext {
  cfg: RuntimeConfig;
  settings: TtsSettings;
  /** Starts the offline synthesiser's processes (the call's share of the worker's own); default: the process-wide one. */
  spawner?: ProcessRunner;
}

const espeak = ({ cfg, settings: s, spawner }: TtsContext): TtsProvider =>
  new EspeakTts({ binary: s.ESPEAK_BINARY, voice: cfg.bot.voice.voice_id, speed: cfg.bot.voice.speed, spawner });

export const ttsProviders: ProviderRegistry<TtsContext, TtsProvider> = {
  'espeak-ng': espeak,
  espeak,
  openai: ({ cfg, settings: s }) =>
    new OpenAiTts({
      baseUrl: s.OPENAI_BASE_URL,
      apiKey: requireSetting('tts', s.OPENAI_API_KEY, 'OPENAI_API_KEY'),
      voice: cfg.bot.voice.voice_id,
      speed: cfg.bot.voice.speed,
      timeoutMs: s.PROVIDER_TIMEOUT_MS,
    }),
  elevenlabs: ({ cfg, settings: s }) =>
    new ElevenLabsTts({
      baseUrl: s.ELEVENLABS_BASE_URL,
      apiKey: requireSetting('tts', s.ELEVENLABS_API_KEY, 'ELEVENLABS_API_KEY'),
      voiceId: cfg.bot.voice.voice_id,
      speed: cfg.bot.voice.speed,
      timeoutMs: s.PROVIDER_TIMEOUT_MS,
    }),
};
