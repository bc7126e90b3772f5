// The operator's custom resources (VoiceFleet, Bot): spec and status schemas. The CRDs' openAPIV3Schema
// is generated from these (operator/src/crds), so the API server enforces exactly what is written here.
import { Type, type Static } from '@sinclair/typebox';
import { BotCreate } from './bot.js';

export const VOICE_API_GROUP = 'voiceplatform.io';
export const VOICE_API_VERSION = 'v1alpha1';

const labelMap = Type.Record(Type.String(), Type.String());

/** The load (0..1, voice_worker_load) the operator sizes a fleet for when spec.targetLoad is not set. */
export const DEFAULT_TARGET_LOAD = 0.6;

/** A Kubernetes quantity (`500m`, `1Gi`, 2): integer or string, as in core/v1. */
const Quantity = Type.Unsafe<string | number>({
  'x-kubernetes-int-or-string': true,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
});

/** core/v1 EnvVar; `valueFrom` is passed through to the Deployment as written. */
export const FleetEnvVar = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    value: Type.Optional(Type.String()),
    valueFrom: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type FleetEnvVar = Static<typeof FleetEnvVar>;

export const VoiceFleetSpec = Type.Object(
  {
    image: Type.String({ minLength: 1, maxLength: 512, description: 'Worker image' }),
    imagePullPolicy: Type.Optional(Type.Union([Type.Literal('Always'), Type.Literal('IfNotPresent'), Type.Literal('Never')])),
    minReplicas: Type.Integer({ minimum: 0, maximum: 1000, default: 1 }),
    maxReplicas: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
    callsPerWorker: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 30,
      description: 'Concurrent calls one worker takes (its MAX_CONCURRENT_CALLS)',
    }),
    targetLoad: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      default: DEFAULT_TARGET_LOAD,
      description:
        'Load (0..1) per worker to size for: replicas are at least ceil(sum of the workers\' voice_worker_load / targetLoad)',
    }),
    buffer: Type.Object(
      {
        calls: Type.Integer({ minimum: 0, maximum: 100000, default: 0, description: 'Free call slots kept ready' }),
        percent: Type.Integer({
          minimum: 0,
          maximum: 1000,
          default: 0,
          description: 'Free slots as a percentage of active calls; the larger of calls and percent wins',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    scaleDownDelaySeconds: Type.Integer({ minimum: 0, maximum: 86400, default: 300 }),
    drainTimeoutSeconds: Type.Integer({ minimum: 1, maximum: 86400, default: 600 }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 8000, description: 'Worker HTTP port (/health, /metrics, /ws)' }),
    env: Type.Optional(Type.Array(FleetEnvVar, { maxItems: 200 })),
    envFrom: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 50 })),
    resources: Type.Optional(
      Type.Object(
        {
          limits: Type.Optional(Type.Record(Type.String(), Quantity)),
          requests: Type.Optional(Type.Record(Type.String(), Quantity)),
        },
        { additionalProperties: false },
      ),
    ),
    botSelector: Type.Optional(
      Type.Object({ matchLabels: Type.Optional(labelMap) }, { additionalProperties: false, description: 'Bots this fleet serves' }),
    ),
  },
  {
    additionalProperties: false,
    'x-kubernetes-validations': [
      { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
    ],
  },
);
export type VoiceFleetSpec = Static<typeof VoiceFleetSpec>;

/** metav1.Condition. */
export const Condition = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 316 }),
  status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
  reason: Type.String({ minLength: 1, maxLength: 1024 }),
  message: Type.String({ maxLength: 32768 }),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type Condition = Static<typeof Condition>;

const conditions = Type.Array(Condition, { maxItems: 16 });

export const VoiceFleetStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  replicas: Type.Optional(Type.Integer({ description: 'Worker pods that exist and are not terminating' })),
  readyReplicas: Type.Optional(Type.Integer()),
  desiredReplicas: Type.Optional(Type.Integer({ description: 'Replicas the operator set on the Deployment' })),
  recommendedReplicas: Type.Optional(
    Type.Integer({
      description:
        'max(ceil((activeCalls + bufferCalls) / callsPerWorker), ceil(load / targetLoad), one more when admittable calls ran out), clamped, before the scale-down delay',
    }),
  ),
  activeCalls: Type.Optional(Type.Integer()),
  capacity: Type.Optional(Type.Integer({ description: 'Sum of max calls of the scraped, non-terminating workers' })),
  bufferCalls: Type.Optional(Type.Integer()),
  load: Type.Optional(Type.Number({ description: 'Sum of voice_worker_load of the workers that report it (older workers do not)' })),
  admittableCalls: Type.Optional(
    Type.Integer({ description: 'Sum of voice_worker_admittable_calls: calls the reporting workers can still take within their load threshold' }),
  ),
  loadWorkers: Type.Optional(Type.Integer({ description: 'Workers that reported voice_worker_load on the last pass' })),
  busyWorkers: Type.Optional(Type.Integer({ description: 'Workers with live calls (never removed by a scale-down)' })),
  scrapeFailures: Type.Optional(Type.Integer({ description: 'Workers whose /metrics could not be read on the last pass' })),
  scaleDownPendingSince: Type.Optional(Type.String({ format: 'date-time' })),
  lastScaleTime: Type.Optional(Type.String({ format: 'date-time' })),
  lastScaleReason: Type.Optional(Type.String()),
  conditions: Type.Optional(conditions),
});
export type VoiceFleetStatus = Static<typeof VoiceFleetStatus>;

/** The Bot resource: the bot fields of the backend API plus the fleet that serves it. */
export const BotResourceSpec = Type.Object(
  {
    ...BotCreate.properties,
    fleetRef: Type.Optional(Type.Object({ name: Type.String({ minLength: 1, maxLength: 253 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type BotResourceSpec = Static<typeof BotResourceSpec>;

export const BotResourceStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  botId: Type.Optional(Type.String({ description: 'The bot id in the backend' })),
  lastSyncTime: Type.Optional(Type.String({ format: 'date-time' })),
  conditions: Type.Optional(conditions),
});
export type BotResourceStatus = Static<typeof BotResourceStatus>;
