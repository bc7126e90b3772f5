// What a VoiceFleet pass reads beyond the shared kernel (core/context.ts).
import type * as k8s from '@kubernetes/client-node';
import type { Cache, KernelContext } from '../core/context.js';
import type { ScaleMemory } from './scaling.js';
import type { Scraper } from './scrape.js';
import type { VoiceFleet } from './types.js';

export interface FleetContext extends KernelContext {
  scrape: Scraper;
  caches: {
    fleets: Cache<VoiceFleet>;
    deployments: Cache<k8s.V1Deployment>;
    pods: Cache<k8s.V1Pod>;
  };
  /** Per fleet key: the pending scale-down carried between passes. */
  scaleMemory: Map<string, ScaleMemory>;
}
