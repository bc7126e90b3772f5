// The bot: what the backend stores and validates, what the worker receives, and what the operator's
// Bot CRD embeds. Defaults are the offline providers, so a bot works with no cloud keys.
import { Type, type Static, type TProperties } from '@sinclair/typebox';

/** A variable name usable as `{{name}}` in prompt, greeting and policy replies. */
export const VARIABLE_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';

export const BotVariable = Type.Object(
  {
    name: Type.String({ pattern: VARIABLE_NAME_PATTERN }),
    /** Default false. */
    required: Type.Optional(Type.Boolean({ default: false })),
    /** Default ''. */
    description: Type.Optional(Type.String({ maxLength: 500, default: '' })),
  },
  { additionalProperties: false },
);
export type BotVariable = Static<typeof BotVariable>;

/** A provider choice (voice, speech-to-text, LLM): the provider's name and that provider's own settings. */
const providerSettings = <T extends TProperties>(settings: T) =>
  Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }), ...settings }, { additionalProperties: false });
/** A provider's name for one of its voices or models. */
const providerItem = () => Type.String({ minLength: 1, maxLength: 128 });

export const VoiceSettings = providerSettings({ voice_id: providerItem(), speed: Type.Number({ minimum: 0.25, maximum: 4 }) });
export type VoiceSettings = Static<typeof VoiceSettings>;

export const SttSettings = providerSettings({ model: providerItem(), language: Type.String({ minLength: 2, maxLength: 35 }) });
export type SttSettings = Static<typeof SttSettings>;

export const LlmSettings = providerSettings({ model: providerItem(), temperature: Type.Number({ minimum: 0, maximum: 2 }) });
export type LlmSettings = Static<typeof LlmSettings>;

/** A tool the LLM may call (OpenAI function shape); `parameters` is a JSON Schema object. */
export const BotTool = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.String({ maxLength: 1000, default: '' }),
    parameters: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'the arguments\' JSON Schema, stored as given (any keys); at most 32 levels of nesting (deeper → 422 validation_failed)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BotTool = Static<typeof BotTool>;

/** One intent of the offline `scripted` LLM: matched by its example phrases, answered by `reply`. */
const PolicyIntent = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    examples: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { minItems: 1, maxItems: 100 }),
    reply: Type.String({ minLength: 1, maxLength: 2000, description: 'may hold {{variables}}' }),
    end_call: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
type PolicyIntent = Static<typeof PolicyIntent>;

export const BotPolicy = Type.Object(
  {
    intents: Type.Array(PolicyIntent, { maxItems: 200 }),
    fallback: Type.Object(
      {
        reply: Type.String({ minLength: 1, maxLength: 2000 }),
        end_call: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type BotPolicy = Static<typeof BotPolicy>;

export const TurnDetection = Type.Object(
  { end_of_turn_silence_ms: Type.Integer({ minimum: 100, maximum: 5000, default: 700 }) },
  { additionalProperties: false },
);
export type TurnDetection = Static<typeof TurnDetection>;

export const BOT_DEFAULTS = {
  active: true,
  language: 'en-US',
  prompt: '',
  greeting: '',
  variables: [] as BotVariable[],
  voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 } as VoiceSettings,
  stt: { provider: 'pocketsphinx', model: 'en-us', language: 'en-US' } as SttSettings,
  llm: { provider: 'scripted', model: 'policy', temperature: 0 } as LlmSettings,
  tools: [] as BotTool[],
  policy: null as BotPolicy | null,
  turn_detection: { end_of_turn_silence_ms: 700 } as TurnDetection,
  max_call_seconds: 300,
};

/** The writable fields of a bot (the POST body; every field optional on PATCH except by intent). */
const botFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  active: Type.Boolean(),
  language: Type.String({ minLength: 2, maxLength: 35 }),
  prompt: Type.String({ maxLength: 20000 }),
  greeting: Type.String({ maxLength: 2000 }),
  variables: Type.Array(BotVariable, {
    maxItems: 50,
    description: 'names must be unique; every {{placeholder}} of prompt, greeting and policy replies must name one (else 422 validation_failed)',
  }),
  voice: VoiceSettings,
  stt: SttSettings,
  llm: LlmSettings,
  tools: Type.Array(BotTool, { maxItems: 50 }),
  policy: Type.Union([BotPolicy, Type.Null()]),
  turn_detection: TurnDetection,
  max_call_seconds: Type.Integer({ minimum: 10, maximum: 7200 }),
};

export const BotCreate = Type.Object(
  {
    name: botFields.name,
    active: Type.Optional(botFields.active),
    language: Type.Optional(botFields.language),
    prompt: Type.Optional(botFields.prompt),
    greeting: Type.Optional(botFields.greeting),
    variables: Type.Optional(botFields.variables),
    voice: Type.Optional(botFields.voice),
    stt: Type.Optional(botFields.stt),
    llm: Type.Optional(botFields.llm),
    tools: Type.Optional(botFields.tools),
    policy: Type.Optional(botFields.policy),
    turn_detection: Type.Optional(botFields.turn_detection),
    max_call_seconds: Type.Optional(botFields.max_call_seconds),
  },
  { additionalProperties: false },
);
export type BotCreate = Static<typeof BotCreate>;

export const BotUpdate = Type.Partial(BotCreate, { additionalProperties: false, minProperties: 1 });
export type BotUpdate = Static<typeof BotUpdate>;

/** A bot as the API returns it. */
export const Bot = Type.Object(
  {
    id: Type.String(),
    ...botFields,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type Bot = Static<typeof Bot>;
