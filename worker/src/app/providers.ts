// Picks each stage's provider for a bot from the stages' registries (stt/, llm/, tts/ providers.ts) and
// builds the rest of what a call runs on (VAD, noise suppression, the retry policy). Offline providers need
// nothing; cloud ones need their key, and a bot that asks for a cloud provider without a key (or for one no
// registry has) fails at call start, by name (`provider_unavailable`). The stages' retry policy comes from
// PROVIDER_RETRIES.
import type { RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';
import type { CallProviders } from '../call/session.js';
import type { LlmProvider } from '../llm/llm.js';
import { llmProviders, type LlmSettings } from '../llm/providers.js';
import { NoiseSuppressor } from '../noise/rnnoise.js';
import type { ProcessRunner } from '../proc/scheduler.js';
import { ProviderError } from '../providers/errors.js';
import { providerFactory } from '../providers/registry.js';
import { retryPolicy } from '../providers/retry.js';
import type { LiveDecoder } from '../stt/live-decoder.js';
import { sttProviders, type SttSettings } from '../stt/providers.js';
import type { SttProvider } from '../stt/stt.js';
import { ttsProviders, type TtsSettings } from '../tts/providers.js';
import type { TtsProvider } from '../tts/tts.js';
import { createWebRtcVad } from '../vad/webrtc.js';

export type ProviderSettings = SttSettings & LlmSettings & TtsSettings & Pick<Settings, 'PROVIDER_RETRIES' | 'TOOLS_ALLOW_PRIVATE_ADDRESSES' | 'AUDIO_SAMPLE_RATE'>;

export function sttFor(cfg: RuntimeConfig, s: SttSettings, spawner?: ProcessRunner, live?: LiveDecoder | null): SttProvider {
  return providerFactory(sttProviders, 'stt', cfg.bot.stt.provider)({ cfg, settings: s, spawner, live });
}

export function llmFor(cfg: RuntimeConfig, s: LlmSettings): LlmProvider {
  return providerFactory(llmProviders, 'llm', cfg.bot.llm.provider)({ cfg, settings: s });
}

export function ttsFor(cfg: RuntimeConfig, s: TtsSettings, spawner?: ProcessRunner): TtsProvider {
  return providerFactory(ttsProviders, 'tts', cfg.bot.voice.provider)({ cfg, settings: s, spawner });
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
