// The LLM providers a bot's `llm.provider` may name (providers/registry.ts): the offline scripted policy, and
// OpenAI-compatible servers (OpenAI itself, or the bot's own vLLM, Ollama, llama.cpp at `llm.base_url`).
import type { RuntimeConfig } from '@voice-platform/schemas';
import type { Settings } from '../core/settings.js';
import { requireSetting, type ProviderRegistry } from '../providers/registry.js';
import type { LlmProvider } from './llm.js';
import { OpenAiLlm } from './openai.js';
import { ScriptedLlm } from './scripted.js';

export type LlmSettings = Pick<Settings, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'PROVIDER_TIMEOUT_MS'>;

export interface LlmContext {
  cfg: RuntimeConfig;
  settings: LlmSettings;
}

export const llmProviders: ProviderRegistry<LlmContext, LlmProvider> = {
  scripted: ({ cfg }) => new ScriptedLlm(cfg.bot.policy, cfg.call?.variables ?? {}),
  openai: ({ cfg, settings: s }) => {
    // A bot's own server gets no key: the worker's OPENAI_API_KEY is never sent to an address whoever edits a bot chose.
    const own = cfg.bot.llm.base_url;
    const baseUrl = typeof own === 'string' && own ? own : null;
    return new OpenAiLlm({
      baseUrl: baseUrl ?? s.OPENAI_BASE_URL,
      apiKey: baseUrl ? '' : requireSetting('llm', s.OPENAI_API_KEY, 'OPENAI_API_KEY'),
      model: cfg.bot.llm.model,
      temperature: cfg.bot.llm.temperature,
      timeoutMs: s.PROVIDER_TIMEOUT_MS,
    });
  },
};
