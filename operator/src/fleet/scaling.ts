// The scaling decision, as a pure function of what the operator observed: no clock, no I/O.
// desired = the largest of three rules, clamped to [min, max]:
//   calls:      ceil((activeCalls + buffer) / callsPerWorker)
//   load:       ceil(Σ load / targetLoad), over the workers that report voice_worker_load
//   admittable: one more than now when every ready worker reports 0 admittable calls (none starting)
// Up at once, down only after the recommendation has stayed below the current replicas for the whole
// scale-down delay, and never below the number of workers that hold live calls.

export interface WorkerSample {
  name: string;
  /** null when the worker's /metrics could not be read on this pass. */
  activeCalls: number | null;
  maxCalls: number | null;
  /** voice_worker_load (0..1); null when unknown: an older worker without the gauge, or unreadable. */
  load: number | null;
  /** voice_worker_admittable_calls; null when unknown, as load. */
  admittableCalls: number | null;
  ready: boolean;
  /** Has a deletionTimestamp: its calls are finishing there and it adds no capacity. */
  terminating: boolean;
}

export interface ScalePolicy {
  minReplicas: number;
  maxReplicas: number;
  callsPerWorker: number;
  /** Load (0..1] one worker is sized for. */
  targetLoad: number;
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
/** The rule whose count the recommendation came from (the calls rule on a tie, as before load existed). */
export type ScaleRule = 'calls' | 'load' | 'admittable';

export interface ScaleDecision {
  action: ScaleAction;
  /** Replicas to set on the Deployment. */
  replicas: number;
  recommendedReplicas: number;
  activeCalls: number;
  capacity: number;
  bufferCalls: number;
  /** Σ load of the live workers that report it; null when none does. */
  load: number | null;
  /** Σ admittable calls of the live workers that report it; null when none does. */
  admittableCalls: number | null;
  /** Live workers that reported their load. */
  loadWorkers: number;
  busyWorkers: number;
  scrapeFailures: number;
  rule: ScaleRule;
  reason: string;
  memory: ScaleMemory | null;
  /** Pod name → controller.kubernetes.io/pod-deletion-cost (its active calls), for workers read this pass. */
  deletionCosts: Map<string, number>;
  /** The workers a scale-down of this decision removes first (lowest deletion cost): always idle ones. */
  removable: string[];
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));
/** Gauges are floats: 0.2 + 0.4 (0.6000000000000001) over 0.6 must be 1 worker, not 2. */
const LOAD_EPSILON = 1e-9;
const sumOrNull = (values: Array<number | null>): number | null => {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
};

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
  const byCalls = Math.ceil((activeCalls + bufferCalls) / policy.callsPerWorker);
  // Workers that do not report load count for nothing here: the calls rule still covers them.
  const load = sumOrNull(live.map((w) => w.load));
  const loadWorkers = live.filter((w) => w.load !== null).length;
  const byLoad = load === null ? 0 : Math.ceil(load / policy.targetLoad - LOAD_EPSILON);
  const admittableCalls = sumOrNull(live.map((w) => w.admittableCalls));
  const current = input.currentReplicas;
  // Admittable ran out: every ready worker says 0 (an older worker, unknown, keeps the rule off). One more
  // worker, unless one is still starting or yet to be created: then hold at the current count.
  const ready = live.filter((w) => w.ready);
  const ranOut = current !== undefined && ready.length > 0 && ready.every((w) => w.admittableCalls === 0);
  const starting = current !== undefined && (live.some((w) => !w.ready) || live.length < current);
  const byAdmittable = ranOut ? (starting ? current : current + 1) : 0;
  const raw = Math.max(byCalls, byLoad, byAdmittable);
  const rule: ScaleRule = raw === byCalls ? 'calls' : raw === byLoad ? 'load' : 'admittable';
  const recommendedReplicas = clamp(raw, policy.minReplicas, policy.maxReplicas);

  const deletionCosts = new Map<string, number>();
  for (const w of live) if (w.activeCalls !== null) deletionCosts.set(w.name, w.activeCalls);

  const base = {
    recommendedReplicas,
    activeCalls,
    capacity,
    bufferCalls,
    load,
    admittableCalls,
    loadWorkers,
    busyWorkers: busy.length,
    scrapeFailures,
    rule,
    deletionCosts,
  };
  // The reason names the rule that drove the count: `${numbers} need N workers`.
  const numbers =
    rule === 'load'
      ? `load ${round2(load ?? 0)} of ${loadWorkers} workers at targetLoad ${policy.targetLoad}`
      : rule === 'admittable'
        ? `0 admittable calls on ${ready.length} ready workers${starting ? ' (more starting)' : ''}`
        : `${activeCalls} active + ${bufferCalls} buffer calls at ${policy.callsPerWorker}/worker`;
  const decision = (action: ScaleAction, replicas: number, reason: string, memory: ScaleMemory | null): ScaleDecision => {
    const removeCount = Math.max(0, live.length - replicas);
    return { ...base, action, replicas, reason, memory, removable: action === 'down' ? idle.slice(0, removeCount).map((w) => w.name) : [] };
  };

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

const round2 = (n: number): string => String(Math.round(n * 100) / 100);
