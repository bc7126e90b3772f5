// The scaling decision, as a pure function of what the operator observed: no clock, no I/O.
// desired = ceil((activeCalls + buffer) / callsPerWorker), clamped to [min, max]; up at once, down only
// after the recommendation has stayed below the current replicas for the whole scale-down delay, and
// never below the number of workers that hold live calls.

export interface WorkerSample {
  name: string;
  /** null when the worker's /metrics could not be read on this pass. */
  activeCalls: number | null;
  maxCalls: number | null;
  ready: boolean;
  /** Has a deletionTimestamp: its calls are finishing there and it adds no capacity. */
  terminating: boolean;
}

export interface ScalePolicy {
  minReplicas: number;
  maxReplicas: number;
  callsPerWorker: number;
  bufferCalls: number;
  bufferPercent: number;
  scaleDownDelayMs: number;
}

/** What a decision carries over to the next pass of the same fleet. */
export interface ScaleMemory {
  /** When the recommendation first fell below the current replicas (epoch ms). */
  belowSinceMs: number;
  /** Highest recommendation seen since then: the scale-down never undershoots a recent peak. */
  peakReplicas: number;
}

export interface ScaleInput {
  policy: ScalePolicy;
  workers: WorkerSample[];
  /** spec.replicas of the Deployment; undefined when it does not exist yet. */
  currentReplicas: number | undefined;
  nowMs: number;
  memory: ScaleMemory | null;
}

type ScaleAction = 'create' | 'up' | 'down' | 'hold' | 'steady';

export interface ScaleDecision {
  action: ScaleAction;
  /** Replicas to set on the Deployment. */
  replicas: number;
  recommendedReplicas: number;
  activeCalls: number;
  capacity: number;
  bufferCalls: number;
  busyWorkers: number;
  scrapeFailures: number;
  reason: string;
  memory: ScaleMemory | null;
  /** Pod name → controller.kubernetes.io/pod-deletion-cost (its active calls), for workers read this pass. */
  deletionCosts: Map<string, number>;
  /** The workers a scale-down of this decision removes first (lowest deletion cost): always idle ones. */
  removable: string[];
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

export function decideScale(input: ScaleInput): ScaleDecision {
  const { policy, nowMs } = input;
  const live = input.workers.filter((w) => !w.terminating);
  const activeCalls = live.reduce((sum, w) => sum + (w.activeCalls ?? 0), 0);
  const capacity = live.reduce((sum, w) => sum + (w.maxCalls ?? 0), 0);
  const scrapeFailures = live.filter((w) => w.activeCalls === null).length;
  // A worker we cannot read may hold calls: it counts as busy.
  const busy = live.filter((w) => w.activeCalls === null || w.activeCalls > 0);
  const idle = live
    .filter((w) => w.activeCalls === 0)
    .sort((a, b) => Number(a.ready) - Number(b.ready) || a.name.localeCompare(b.name));
  const bufferCalls = Math.max(policy.bufferCalls, Math.ceil((activeCalls * policy.bufferPercent) / 100));
  const raw = Math.ceil((activeCalls + bufferCalls) / policy.callsPerWorker);
  const recommendedReplicas = clamp(raw, policy.minReplicas, policy.maxReplicas);

  const deletionCosts = new Map<string, number>();
  for (const w of live) if (w.activeCalls !== null) deletionCosts.set(w.name, w.activeCalls);

  const base = {
    recommendedReplicas,
    activeCalls,
    capacity,
    bufferCalls,
    busyWorkers: busy.length,
    scrapeFailures,
    deletionCosts,
  };
  const numbers = `${activeCalls} active + ${bufferCalls} buffer calls at ${policy.callsPerWorker}/worker`;
  const decision = (action: ScaleAction, replicas: number, reason: string, memory: ScaleMemory | null): ScaleDecision => {
    const removeCount = Math.max(0, live.length - replicas);
    return { ...base, action, replicas, reason, memory, removable: action === 'down' ? idle.slice(0, removeCount).map((w) => w.name) : [] };
  };

  const current = input.currentReplicas;
  if (current === undefined) return decision('create', recommendedReplicas, `created for ${numbers}`, null);
  if (current > policy.maxReplicas) {
    // An explicit limit from the spec, not a load signal: applied at once (workers still drain).
    return decision('down', policy.maxReplicas, `maxReplicas lowered to ${policy.maxReplicas}`, null);
  }
  if (recommendedReplicas > current) {
    return decision('up', recommendedReplicas, `${numbers} need ${recommendedReplicas} workers`, null);
  }
  if (recommendedReplicas === current) return decision('steady', current, `${numbers} fit ${current} workers`, null);

  const memory: ScaleMemory = input.memory
    ? { belowSinceMs: input.memory.belowSinceMs, peakReplicas: Math.max(input.memory.peakReplicas, recommendedReplicas) }
    : { belowSinceMs: nowMs, peakReplicas: recommendedReplicas };
  const target = Math.max(memory.peakReplicas, busy.length, policy.minReplicas);
  if (target >= current) {
    return decision('hold', current, `${busy.length} workers hold live calls; keeping ${current}`, memory);
  }
  if (scrapeFailures > 0) {
    return decision('hold', current, `metrics of ${scrapeFailures} workers unreadable; not scaling down`, memory);
  }
  const waitedMs = nowMs - memory.belowSinceMs;
  if (waitedMs < policy.scaleDownDelayMs) {
    const leftS = Math.ceil((policy.scaleDownDelayMs - waitedMs) / 1000);
    return decision('hold', current, `${numbers} need ${target}; scale-down in ${leftS}s`, memory);
  }
  // Reached the recommendation: start afresh. Held above it by busy workers: keep waiting on them.
  const next = target === recommendedReplicas ? null : { belowSinceMs: memory.belowSinceMs, peakReplicas: recommendedReplicas };
  return decision('down', target, `${numbers} need ${target} for ${Math.round(waitedMs / 1000)}s`, next);
}
