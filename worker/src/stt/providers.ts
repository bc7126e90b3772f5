// The STT providers a bot's `stt.provider` may name (providers/registry.ts): offline pocketsphinx, and Deepgram.
import type { RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';
import type { ProcessRunner } from '../proc/scheduler.js';
import { requireSetting, type ProviderRegistry } from '../providers/registry.js';
import { DeepgramStt } from './deepgram.js';
import type { LiveDecoder } from './live-decoder.js';
import { PocketsphinxStt } from './pocketsphinx.js';
import type { SttProvider } from './stt.js';
import { policyWithFlow } from '../flow/flow.js';

export type SttSettings = Pick<
  Settings,
  'POCKETSPHINX_BINARY' | 'POCKETSPHINX_MODEL_DIR' | 'POCKETSPHINX_LIVE' | 'DEEPGRAM_URL' | 'DEEPGRAM_API_KEY' | 'AUDIO_SAMPLE_RATE' | 'PROVIDER_TIMEOUT_MS'
>;

export interface SttContext {
  cfg: RuntimeConfig;
  settings: SttSettings;
  /** Starts the offline recogniser's processes (the call's share of the worker's own); default: the process-wide one. */
  spawner?: ProcessRunner;
  /** The worker's live pocketsphinx decoders (none: each turn decoded whole). */
  live?: LiveDecoder | null;
}

export const sttProviders: ProviderRegistry<SttContext, SttProvider> = {
  pocketsphinx: ({ cfg, settings: s, spawner, live }) => {
    // A flow's node intents are heard too, and what the bots the call may be handed to listen for (shared/DESIGN.md §18).
    const own = policyWithFlow(cfg.bot.policy, cfg.bot.flow)?.intents.flatMap((i) => i.examples ?? []) ?? [];
    // Only for a bot heard through a grammar (phrases of its own, or the scripted policy): a model's bot hears anything.
    const grammar = own.length > 0 || cfg.bot.llm.provider === 'scripted';
    const phrases = [...new Set([...own, ...(grammar ? (cfg.bot.handoff_phrases ?? []) : [])])];
    return new PocketsphinxStt({ binary: s.POCKETSPHINX_BINARY, modelDir: s.POCKETSPHINX_MODEL_DIR, phrases, spawner, live: s.POCKETSPHINX_LIVE ? live : null });
  },
  deepgram: ({ cfg, settings: s }) =>
    new DeepgramStt({
      url: s.DEEPGRAM_URL,
      apiKey: requireSetting('stt', s.DEEPGRAM_API_KEY, 'DEEPGRAM_API_KEY'),
      model: cfg.bot.stt.model,
      language: cfg.bot.stt.language,
      sampleRate: s.AUDIO_SAMPLE_RATE,
      timeoutMs: s.PROVIDER_TIMEOUT_MS,
    }),
};
