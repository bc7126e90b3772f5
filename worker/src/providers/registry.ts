// A stage's providers by name, like LiveKit Agents' plugins: stt/, llm/ and tts/ each export a registry
// (name → factory), and the composition root (app/providers.ts) picks one per stage for each call by the
// bot's `stt.provider`, `llm.provider` and `voice.provider`. A name no registry has, or a cloud provider
// without its key, fails at call start, by name (`provider_unavailable`).
import { ProviderError, type Stage } from './errors.js';

/** A stage's providers: each name a bot may ask for → the factory that builds it from `Ctx`. */
export type ProviderRegistry<Ctx, P> = Readonly<Record<string, (ctx: Ctx) => P>>;

/** The worker cannot run this provider (no key, unknown name): `provider_unavailable`. */
export const unavailable = (stage: Stage, message: string) => new ProviderError(stage, 'config', message);

/** A setting a cloud provider cannot work without (its key), or `provider_unavailable` naming it. */
export function requireSetting(stage: Stage, value: string, what: string): string {
  if (!value) throw unavailable(stage, `${what} is not set on this worker`);
  return value;
}

/** The factory registered as `name`; own names only, so a bot's "constructor" or "toString" is unknown too. */
export function providerFactory<Ctx, P>(registry: ProviderRegistry<Ctx, P>, stage: Stage, name: string): (ctx: Ctx) => P {
  const make = Object.hasOwn(registry, name) ? registry[name] : undefined;
  if (!make) throw unavailable(stage, `unknown ${stage.toUpperCase()} provider ${JSON.stringify(name)}`);
  return make;
}
