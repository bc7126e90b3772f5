import type { FleetWorkerStatus } from '@voice-platform/schemas/fleetStatus.js';
import { admittableOf, loadLevel, loadPercent, totalsLine, workerRow } from './fleet.js';

const worker = (w: Partial<FleetWorkerStatus> = {}): FleetWorkerStatus => ({
  worker_id: 'w1',
  version: '1.0.0',
  active_calls: 4,
  max_calls: 10,
  load: 0.55,
  admittable: 3,
  draining: false,
  updated_at: '2026-11-29T06:00:00.000Z',
  ...w,
});

describe('the workers panel', () => {
  it('shows load as a whole percent, clamped; none when not reported', () => {
    expect([loadPercent(0), loadPercent(0.554), loadPercent(0.556), loadPercent(1), loadPercent(1.2), loadPercent(null)]).toEqual([0, 55, 56, 100, 100, null]);
  });

  it('colours the bar by the default threshold', () => {
    expect([loadLevel(null), loadLevel(0.69), loadLevel(0.7), loadLevel(0.89), loadLevel(0.9), loadLevel(1)]).toEqual(['low', 'low', 'high', 'high', 'full', 'full']);
  });

  it('counts admittable as the backend does: within free slots, nothing from a draining worker, free slots from an older one', () => {
    expect(admittableOf(worker())).toBe(3);
    expect(admittableOf(worker({ admittable: 9 }))).toBe(6);
    expect(admittableOf(worker({ draining: true }))).toBe(0);
    expect(admittableOf(worker({ admittable: null }))).toBe(6);
    expect(admittableOf(worker({ admittable: null, active_calls: 12 }))).toBe(0);
  });

  it('makes one row per worker', () => {
    expect(workerRow(worker())).toEqual({ id: 'w1', calls: '4 / 10', loadPercent: 55, load: '55%', loadLevel: 'low', admittable: '3', draining: false, version: '1.0.0' });
    expect(workerRow(worker({ load: null, admittable: null }))).toMatchObject({ loadPercent: null, load: 'not reported', loadLevel: 'low', admittable: '6 (free slots)' });
    expect(workerRow(worker({ draining: true, load: 0.95 }))).toMatchObject({ load: '95%', loadLevel: 'full', admittable: '0', draining: true });
    expect(workerRow(worker({ draining: true, admittable: null }))).toMatchObject({ admittable: '0', draining: true });
  });

  it('sums the fleet up in one line', () => {
    expect(totalsLine({ workers: 2, active_calls: 5, max_calls: 18, admittable: 7, reservations: 2, draining_workers: 1 })).toBe(
      '2 workers (1 draining) · 5 of 18 call slots in use · 7 admittable, 2 reserved: 5 more calls now',
    );
    expect(totalsLine({ workers: 1, active_calls: 0, max_calls: 30, admittable: 1, reservations: 0, draining_workers: 0 })).toBe('1 worker · 0 of 30 call slots in use · 1 more call admittable now');
    expect(totalsLine({ workers: 1, active_calls: 3, max_calls: 3, admittable: 0, reservations: 2, draining_workers: 0 })).toBe('1 worker · 3 of 3 call slots in use · 0 admittable, 2 reserved: 0 more calls now');
  });
});
