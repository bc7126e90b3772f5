// Picks each stage's provider from the bot's config. Offline providers need nothing; cloud ones need
// their key, and a bot that asks for a cloud provider without a key fails at call start, by name
// (`provider_unavailable`). The stages' retry policy comes from PROVIDER_RETRIES.
import type { RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from './settings.js';
import type { SttProvider } from './stt/stt.js';
import type { LlmProvider } from './llm/llm.js';
import type { TtsProvider } from './tts/tts.js';
import type { VadEngine } from './vad/vad.js';
import { PocketsphinxStt } from './stt/pocketsphinx.js';
import { DeepgramStt } from './stt/deepgram.js';
import { ScriptedLlm } from './llm/scripted.js';
import { OpenAiLlm } from './llm/openai.js';
import { EspeakTts } from './tts/espeak.js';
import { OpenAiTts } from './tts/openai.js';
import { ElevenLabsTts } from './tts/elevenlabs.js';
import { createWebRtcVad } from './vad/webrtc.js';
import type { ProcessRunner } from './proc/scheduler.js';
import { NoiseSuppressor } from './noise/rnnoise.js';
import type { LiveDecoder } from './stt/live-decoder.js';
import { ProviderError, type Stage } from './providers/errors.js';
import { retryPolicy, type RetryPolicy } from './providers/retry.js';

/** The worker cannot run this provider (no key, unknown name): `provider_unavailable`. */
const unavailable = (stage: Stage, message: string) => new ProviderError(stage, 'config', message);

export interface CallProviders {
  vad: VadEngine;
  stt: SttProvider;
  llm: LlmProvider;
  tts: TtsProvider;
  /** The bot's `audio.noise_suppression`: this call's RNNoise state (absent: the caller's audio goes to the VAD as is). */
  noise?: NoiseSuppressor;
  /** How every stage retries its provider. */
  retry: RetryPolicy;
  /** The bot's HTTP tools may call non-public addresses (TOOLS_ALLOW_PRIVATE_ADDRESSES; absent: no). */
  toolsAllowPrivate?: boolean;
}

type ProviderSettings = Pick<
  Settings,
  | 'OPENAI_API_KEY'
  | 'OPENAI_BASE_URL'
  | 'DEEPGRAM_API_KEY'
  | 'DEEPGRAM_URL'
  | 'ELEVENLABS_API_KEY'
  | 'ELEVENLABS_BASE_URL'
  | 'PROVIDER_TIMEOUT_MS'
  | 'PROVIDER_RETRIES'
  | 'TOOLS_ALLOW_PRIVATE_ADDRESSES'
  | 'ESPEAK_BINARY'
  | 'POCKETSPHINX_BINARY'
  | 'POCKETSPHINX_MODEL_DIR'
  | 'POCKETSPHINX_LIVE'
  | 'POCKETSPHINX_PYTHON'
  | 'AUDIO_SAMPLE_RATE'
>;

const need = (stage: Stage, value: string, what: string): string => {
  if (!value) throw unavailable(stage, `${what} is not set on this worker`);
  return value;
};

export function sttFor(cfg: RuntimeConfig, s: ProviderSettings, spawner?: ProcessRunner, live?: LiveDecoder | null): SttProvider {
  const { provider, model, language } = cfg.bot.stt;
  switch (provider) {
    case 'pocketsphinx': {
      const phrases = cfg.bot.policy?.intents.flatMap((i) => i.examples ?? []) ?? [];
      return new PocketsphinxStt({ binary: s.POCKETSPHINX_BINARY, modelDir: s.POCKETSPHINX_MODEL_DIR, phrases, spawner, live: s.POCKETSPHINX_LIVE ? live : null });
    }
    case 'deepgram':
      return new DeepgramStt({
        url: s.DEEPGRAM_URL,
        apiKey: need('stt', s.DEEPGRAM_API_KEY, 'DEEPGRAM_API_KEY'),
        model,
        language,
        sampleRate: s.AUDIO_SAMPLE_RATE,
        timeoutMs: s.PROVIDER_TIMEOUT_MS,
      });
    default:
      throw unavailable('stt', `unknown STT provider ${JSON.stringify(provider)}`);
  }
}

export function llmFor(cfg: RuntimeConfig, s: ProviderSettings): LlmProvider {
  const { provider, model, temperature } = cfg.bot.llm;
  switch (provider) {
    case 'scripted':
      return new ScriptedLlm(cfg.bot.policy, cfg.call?.variables ?? {});
    case 'openai': {
      // A bot's own server (vLLM, Ollama, llama.cpp) gets no key: the worker's OPENAI_API_KEY is never sent
      // to an address whoever edits a bot chose.
      const own = cfg.bot.llm.base_url;
      const baseUrl = typeof own === 'string' && own ? own : null;
      return new OpenAiLlm({
        baseUrl: baseUrl ?? s.OPENAI_BASE_URL,
        apiKey: baseUrl ? '' : need('llm', s.OPENAI_API_KEY, 'OPENAI_API_KEY'),
        model,
        temperature,
        timeoutMs: s.PROVIDER_TIMEOUT_MS,
      });
    }
    default:
      throw unavailable('llm', `unknown LLM provider ${JSON.stringify(provider)}`);
  }
}

export function ttsFor(cfg: RuntimeConfig, s: ProviderSettings, spawner?: ProcessRunner): TtsProvider {
  const { provider, voice_id, speed } = cfg.bot.voice;
  switch (provider) {
    case 'espeak-ng':
    case 'espeak':
      return new EspeakTts({ binary: s.ESPEAK_BINARY, voice: voice_id, speed, spawner });
    case 'openai':
      return new OpenAiTts({
        baseUrl: s.OPENAI_BASE_URL,
        apiKey: need('tts', s.OPENAI_API_KEY, 'OPENAI_API_KEY'),
        voice: voice_id,
        speed,
        timeoutMs: s.PROVIDER_TIMEOUT_MS,
      });
    case 'elevenlabs':
      return new ElevenLabsTts({
        baseUrl: s.ELEVENLABS_BASE_URL,
        apiKey: need('tts', s.ELEVENLABS_API_KEY, 'ELEVENLABS_API_KEY'),
        voiceId: voice_id,
        speed,
        timeoutMs: s.PROVIDER_TIMEOUT_MS,
      });
    default:
      throw unavailable('tts', `unknown TTS provider ${JSON.stringify(provider)}`);
  }
}

/**
 * `spawner` starts the offline providers' processes (the call's share of the worker's own); default: the process-wide
 * one. `live`: the worker's live pocketsphinx decoders (none: each turn decoded whole).
 */
export async function createProviders(cfg: RuntimeConfig, s: ProviderSettings, spawner?: ProcessRunner, live?: LiveDecoder | null): Promise<CallProviders> {
  const stt = sttFor(cfg, s, spawner, live);
  const llm = llmFor(cfg, s);
  const tts = ttsFor(cfg, s, spawner);
  const vad = await createWebRtcVad(3, 16000);
  // Configs from before the setting existed (a cached one, an older backend) have none: off.
  const audio = cfg.bot.audio as typeof cfg.bot.audio | undefined;
  let noise: NoiseSuppressor | undefined;
  if (audio?.noise_suppression) {
    try {
      noise = await NoiseSuppressor.create(s.AUDIO_SAMPLE_RATE);
    } catch (err) {
      vad.close();
      // The bot asked for it: the call does not start without it (never a silent pass-through).
      throw new ProviderError('stt', 'config', err instanceof Error ? err.message : String(err), { cause: err });
    }
  }
  return { vad, stt, llm, tts, noise, retry: retryPolicy(s.PROVIDER_RETRIES), toolsAllowPrivate: s.TOOLS_ALLOW_PRIVATE_ADDRESSES };
}
