// Reads a worker's live and maximum calls from its Prometheus /metrics (docs/design.md §4), and its load
// and admittable calls when it reports them (§5; workers older than those gauges do not).
interface WorkerMetrics {
  activeCalls: number;
  maxCalls: number;
  /** voice_worker_load, 0..1; undefined when the worker does not report it. */
  load?: number;
  /** voice_worker_admittable_calls; undefined when the worker does not report it. */
  admittableCalls?: number;
}

export type Scraper = (url: string, timeoutMs: number) => Promise<WorkerMetrics>;

/** Sums every sample of a metric (any labels) in Prometheus text format; undefined when absent. */
export function sampleSum(text: string, metric: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const rest = line.slice(metric.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue; // a longer name with the same prefix
    const value = Number(rest.replace(/^\{[^}]*\}/, '').trim().split(/\s+/)[0]);
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

export function parseWorkerMetrics(text: string): WorkerMetrics {
  const activeCalls = sampleSum(text, 'voice_worker_active_calls');
  const maxCalls = sampleSum(text, 'voice_worker_max_calls');
  if (activeCalls === undefined || maxCalls === undefined) {
    throw new Error('voice_worker_active_calls or voice_worker_max_calls missing');
  }
  const metrics: WorkerMetrics = { activeCalls, maxCalls };
  const load = sampleSum(text, 'voice_worker_load');
  // A negative load is no reading; above 1 is capped so one odd worker cannot send the fleet to maxReplicas.
  if (load !== undefined && load >= 0) metrics.load = Math.min(1, load);
  const admittable = sampleSum(text, 'voice_worker_admittable_calls');
  // The worker never offers more than its free slots; held to that here too.
  if (admittable !== undefined && admittable >= 0) metrics.admittableCalls = Math.min(Math.floor(admittable), Math.max(0, maxCalls - activeCalls));
  return metrics;
}

export const httpScraper: Scraper = async (url, timeoutMs) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  return parseWorkerMetrics(await res.text());
};
