// Reads a worker's live and maximum calls from its Prometheus /metrics (docs/design.md §4).
interface WorkerMetrics {
  activeCalls: number;
  maxCalls: number;
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
  return { activeCalls, maxCalls };
}

export const httpScraper: Scraper = async (url, timeoutMs) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  return parseWorkerMetrics(await res.text());
};
