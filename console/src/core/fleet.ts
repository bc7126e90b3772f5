// The dashboard's Workers panel in words (dashboard-page.ts draws it from GET /api/v1/fleet): each live worker's
// calls, load with its bar, what it can still admit, and the fleet's totals line. Pure: unit-tested.
import type { FleetStatus, FleetWorkerStatus } from '@voice-platform/schemas/fleetStatus.js';

/** The worker's default LOAD_THRESHOLD (docs/design.md §15): above it a worker admits nothing more. */
export const DEFAULT_LOAD_THRESHOLD = 0.7;
/** Nearly saturated: its live calls may start to wait. */
const LOAD_FULL = 0.9;

export type LoadLevel = 'low' | 'high' | 'full';

export interface WorkerRow {
  id: string;
  /** `4 / 10`: active of max. */
  calls: string;
  /** Whole percent for the bar's width (0–100), or null when the worker does not report its load. */
  loadPercent: number | null;
  /** `55%`, or `not reported` (an older worker). */
  load: string;
  /** The bar's colour: under the default threshold, over it, nearly saturated. */
  loadLevel: LoadLevel;
  /** What it adds to the fleet's admittable: `3`; an older worker's free slots, `4 (free slots)`; draining: `0`. */
  admittable: string;
  draining: boolean;
  version: string;
}

/** A load (0–1) as a whole percent, clamped to 0–100; null stays null. */
export function loadPercent(load: number | null): number | null {
  return load === null ? null : Math.min(100, Math.max(0, Math.round(load * 100)));
}

export function loadLevel(load: number | null): LoadLevel {
  if (load === null || load < DEFAULT_LOAD_THRESHOLD) return 'low';
  return load < LOAD_FULL ? 'high' : 'full';
}

/** What the worker counts for in the fleet's admittable, as the backend counts it (fleet/routes.ts workerAdmittable). */
export function admittableOf(w: Pick<FleetWorkerStatus, 'draining' | 'max_calls' | 'active_calls' | 'admittable'>): number {
  if (w.draining) return 0;
  const free = Math.max(0, w.max_calls - w.active_calls);
  return w.admittable === null ? free : Math.min(free, w.admittable);
}

export function workerRow(w: FleetWorkerStatus): WorkerRow {
  const pct = loadPercent(w.load);
  const n = admittableOf(w);
  return {
    id: w.worker_id,
    calls: `${w.active_calls} / ${w.max_calls}`,
    loadPercent: pct,
    load: pct === null ? 'not reported' : `${pct}%`,
    loadLevel: loadLevel(w.load),
    admittable: w.admittable === null && !w.draining ? `${n} (free slots)` : String(n),
    draining: w.draining,
    version: w.version,
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The totals line: `2 workers (1 draining) · 5 of 18 call slots in use · 7 admittable, 2 reserved: 5 more calls now`. */
export function totalsLine(t: FleetStatus['totals']): string {
  const workers = `${plural(t.workers, 'worker')}${t.draining_workers ? ` (${t.draining_workers} draining)` : ''}`;
  const open = Math.max(0, t.admittable - t.reservations);
  const admit = t.reservations ? `${t.admittable} admittable, ${t.reservations} reserved: ${plural(open, 'more call')} now` : `${plural(t.admittable, 'more call')} admittable now`;
  return `${workers} · ${t.active_calls} of ${t.max_calls} call slots in use · ${admit}`;
}
