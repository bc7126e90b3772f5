// The fleet as administrators see it (docs/design.md §15): `GET /api/v1/fleet`, every live worker's heartbeat
// (fleet.ts WorkerHeartbeat) with its load and what it can still admit, and the fleet's totals.
import { Type, type Static } from '@sinclair/typebox';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const FleetWorkerStatus = Type.Object(
  {
    worker_id: Type.String({ minLength: 1 }),
    version: Type.String({ description: "The worker's version" }),
    active_calls: Count('Calls the worker runs now'),
    max_calls: Count('Its MAX_CONCURRENT_CALLS: a hard ceiling'),
    load: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description:
        'How busy it is, 0–1: the highest of its CPU (with its decoder children) over its CPU allowance, its event-loop lag and the age of ' +
        'its oldest queued decode or synthesis; null from a worker too old to report it',
    }),
    admittable: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'Calls it can still take within its LOAD_THRESHOLD (never more than max_calls − active_calls); null from a worker too old to report it (its free slots count then)',
    }),
    draining: Type.Boolean({ description: 'Finishing its calls before it stops: it takes no new one' }),
    updated_at: Type.String({ format: 'date-time', description: 'Its last heartbeat' }),
  },
  { additionalProperties: false },
);
export type FleetWorkerStatus = Static<typeof FleetWorkerStatus>;

export const FleetStatus = Type.Object(
  {
    workers: Type.Array(FleetWorkerStatus, { description: 'The live workers (heartbeat not expired), by id' }),
    totals: Type.Object(
      {
        workers: Count('Live workers'),
        active_calls: Count('Calls running on them'),
        max_calls: Count('Their slots'),
        admittable: Count(
          'New calls the fleet can take now, before reservations: Σ over the workers not draining of min(admittable, max_calls − active_calls) (a worker without admittable counts its free slots)',
        ),
        reservations: Count('Calls placed and not yet claimed by a worker: each holds one of the admittable'),
        draining_workers: Count('Workers draining (they admit nothing)'),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type FleetStatus = Static<typeof FleetStatus>;
