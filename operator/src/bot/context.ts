// What a Bot pass reads beyond the shared kernel (core/context.ts): its own cache, and the fleets' for the
// FleetFound condition.
import type { Cache, KernelContext } from '../core/context.js';
import type { VoiceFleet } from '../fleet/types.js';
import type { BotResource } from './types.js';

export interface BotContext extends KernelContext {
  caches: {
    bots: Cache<BotResource>;
    fleets: Cache<VoiceFleet>;
  };
}
