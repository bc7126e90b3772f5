// What the reconcilers share, as controller.ts builds it: the kernel (core/context.ts) plus what each domain
// reads (bot/context.ts, fleet/context.ts).
import type { BotContext } from './bot/context.js';
import type { FleetContext } from './fleet/context.js';

export interface Context extends FleetContext, BotContext {
  caches: FleetContext['caches'] & BotContext['caches'];
}
