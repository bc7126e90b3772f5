// The CustomResourceDefinitions of the operator, built from the shared schemas.
import {
  BotResourceSpec,
  BotResourceStatus,
  VOICE_API_GROUP,
  VOICE_API_VERSION,
  VoiceFleetSpec,
  VoiceFleetStatus,
} from '@voice-platform/schemas';
import { toStructural } from './structural.js';

type Json = Record<string, unknown>;

interface CrdInput {
  /** The kind; its singular and plural names follow from it (`Bot` → `bot`, `bots`). */
  kind: string;
  shortNames: string[];
  description: string;
  /** The schemas of `spec` and `status`. */
  schemas: { spec: unknown; status: unknown };
  columns: Json[];
}

/** A printer column that shows a field of the object (`jsonPath` from its root, e.g. `.spec.active`). */
const column = (name: string, type: 'string' | 'integer' | 'number' | 'boolean' | 'date', jsonPath: string): Json => ({ name, type, jsonPath });
/** A printer column that shows the status (True/False/Unknown) of the condition of this type. */
const conditionColumn = (type: string): Json => column(type, 'string', `.status.conditions[?(@.type=="${type}")].status`);

function crd(input: CrdInput): Json {
  const singular = input.kind.toLowerCase();
  const plural = `${singular}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${VOICE_API_GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'voice-platform' },
    },
    spec: {
      group: VOICE_API_GROUP,
      scope: 'Namespaced',
      names: {
        kind: input.kind,
        listKind: `${input.kind}List`,
        plural,
        singular,
        shortNames: input.shortNames,
        categories: ['voice-platform'],
      },
      versions: [
        {
          name: VOICE_API_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [...input.columns, column('Age', 'date', '.metadata.creationTimestamp')],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: input.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: toStructural(input.schemas.spec),
                status: toStructural(input.schemas.status),
              },
            },
          },
        },
      ],
    },
  };
}

function voiceFleetCrd(): Json {
  return crd({
    kind: 'VoiceFleet',
    shortNames: ['vf', 'fleet'],
    description: 'A fleet of voice workers, scaled on live calls and load by the voice-platform operator.',
    schemas: { spec: VoiceFleetSpec, status: VoiceFleetStatus },
    columns: [
      column('Replicas', 'integer', '.status.replicas'),
      column('Desired', 'integer', '.status.desiredReplicas'),
      column('Active Calls', 'integer', '.status.activeCalls'),
      column('Capacity', 'integer', '.status.capacity'),
      column('Load', 'number', '.status.load'),
      conditionColumn('Ready'),
    ],
  });
}

function botCrd(): Json {
  return crd({
    kind: 'Bot',
    shortNames: ['vbot'],
    description: 'A voice bot, kept in sync with the platform backend by the voice-platform operator.',
    schemas: { spec: BotResourceSpec, status: BotResourceStatus },
    columns: [
      column('Bot ID', 'string', '.status.botId'),
      column('Fleet', 'string', '.spec.fleetRef.name'),
      column('Active', 'boolean', '.spec.active'),
      conditionColumn('Synced'),
    ],
  });
}

export function allCrds(): Json[] {
  return [voiceFleetCrd(), botCrd()];
}
