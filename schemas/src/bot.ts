// The bot: what the backend stores and validates, what the worker receives, and what the operator's
// Bot CRD embeds. Defaults are the offline providers, so a bot works with no cloud keys.
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { phoneNumberInput } from './phone.js';
import { REDACTION_ENTITIES } from './redact.js';
import { AuditActor } from './audit.js';
import { DEFAULT_HANDOFF_FAILURE, FLOW_CONTEXT_RULES, FLOW_NODE_ID_PATTERN, MAX_FLOW_NODES } from './flow.js';
import { RESOURCE_ID_PATTERN } from './formats.js';

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

export const LlmSettings = providerSettings({
  model: providerItem(),
  temperature: Type.Number({ minimum: 0, maximum: 2 }),
  /** OpenAI-compatible servers: this bot's API root (a self-hosted vLLM, Ollama, llama.cpp), instead of OPENAI_BASE_URL. */
  base_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048 })),
});
export type LlmSettings = Static<typeof LlmSettings>;

/** What a tool does when the LLM (or a scripted intent) calls it (docs/design.md §9). Without `type`: a tool
 *  stored before tool types existed, offered to the LLM but not runnable (its calls answer an error). */
export const TOOL_TYPES = ['http', 'end_call', 'transfer_call', 'send_dtmf'] as const;
export type ToolType = (typeof TOOL_TYPES)[number];
/** Keys a DTMF string may hold. */
export const DTMF_PATTERN = '^[0-9*#]{1,32}$';
export const TOOL_TIMEOUT_MS = { min: 500, max: 20_000, default: 5000 } as const;
export const MAX_TOOL_HEADERS = 10;
/** A tool's `filler` is said once it has run this long without an answer (shared/DESIGN.md §18). */
export const FILLER_AFTER_MS_DEFAULT = 800;
/** Tools one MCP server may offer a call (more: the server is refused). */
export const MAX_MCP_TOOLS = 50;

const TransferDestination = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    // A bot has no region to read a national number in: international format only, checked by libphonenumber (bots/routes.ts).
    number: Type.Optional(
      phoneNumberInput(
        'one of number and sip_uri: in international format (+, country code; spaces and punctuation allowed), stored and answered as E.164; no national formats (a bot has no region); a number that cannot exist (libphonenumber\'s check of its country code and length) is a 422 naming the reason',
      ),
    ),
    sip_uri: Type.Optional(Type.String({ pattern: '^sips?:[^\\s@]+@[^\\s]+$', maxLength: 500 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** The fields every tool type shares; the type's own fields follow (others refused: backend bots/routes.ts). */
const toolFields = {
  name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  description: Type.String({ maxLength: 1000, default: '' }),
  type: Type.Optional(Type.Union(TOOL_TYPES.map((t) => Type.Literal(t)))),
  parameters: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "the arguments' JSON Schema, stored as given (any keys), checked to be a schema; at most 32 levels of nesting (deeper → 422 validation_failed)",
    }),
  ),
  /** http: the address called (http or https; the webhook address guard applies at save and before every call). */
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  // No schema defaults on type-specific fields: a default would add them to tools of every type (the CRD).
  method: Type.Optional(Type.Union([Type.Literal('POST'), Type.Literal('GET')], { description: 'http: POST (the default) or GET' })),
  timeout_ms: Type.Optional(Type.Integer({ minimum: TOOL_TIMEOUT_MS.min, maximum: TOOL_TIMEOUT_MS.max, description: `http: default ${TOOL_TIMEOUT_MS.default}` })),
  /** http: spoken when the call starts, so the line is never silent for long. */
  say_while_waiting: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  /** transfer_call */
  destinations: Type.Optional(Type.Array(TransferDestination, { minItems: 1, maxItems: 20 })),
  mode: Type.Optional(Type.Union([Type.Literal('cold'), Type.Literal('warm')], { description: 'transfer_call: cold (the default) or warm' })),
  announcement: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  whisper: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  on_failure: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  /** http: said when the tool has not answered within filler_after_ms (shared/DESIGN.md §18), so a slow tool is not silence. */
  filler: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  filler_after_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 10_000, description: `http: how long the tool may take before its filler is said (default ${FILLER_AFTER_MS_DEFAULT})` })),
};
const ToolHeaders = Type.Record(Type.String({ pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]{1,64}$' }), Type.String({ maxLength: 4096, pattern: '^[^\\r\\n]*$' }), {
  additionalProperties: false,
  maxProperties: MAX_TOOL_HEADERS,
  description: 'write-only: stored encrypted, never returned or logged (answers show header_names)',
});

/** A tool as written (POST/PATCH, the Bot resource): `headers` values are write-only. */
export const BotTool = Type.Object({ ...toolFields, headers: Type.Optional(ToolHeaders) }, { additionalProperties: false });
export type BotTool = Static<typeof BotTool>;

/** A tool as the API answers: the header names only. */
export const BotToolPublic = Type.Object({ ...toolFields, header_names: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false });
export type BotToolPublic = Static<typeof BotToolPublic>;

/** An MCP server's tools offered to the bot (shared/DESIGN.md §18): Streamable HTTP, listed at call start. */
const mcpFields = {
  name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'unique among the bot\'s MCP servers' }),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'the Streamable HTTP endpoint (http or https; the address guard of tools applies)' }),
  allowed_tools: Type.Optional(
    Type.Array(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), { maxItems: MAX_MCP_TOOLS, description: 'the tools offered (absent: all the server lists, at most 50)' }),
  ),
};
/** An MCP server as written: `headers` values are write-only, like a tool's. */
export const BotMcpServer = Type.Object({ ...mcpFields, headers: Type.Optional(ToolHeaders) }, { additionalProperties: false });
export type BotMcpServer = Static<typeof BotMcpServer>;
/** An MCP server as the API answers: the header names only. */
export const BotMcpServerPublic = Type.Object({ ...mcpFields, header_names: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false });
export type BotMcpServerPublic = Static<typeof BotMcpServerPublic>;
export const MAX_MCP_SERVERS = 10;
export const MAX_BOT_KNOWLEDGE_BASES = 20;

/** Post-call analysis (docs/design.md §10): what the backend works out of a call's transcript once it ended. */
export const ANALYSIS_FIELD_TYPES = ['string', 'number', 'boolean', 'enum'] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];
/** An analysis field's name: a key of the call's `analysis.data` (and a property of the LLM's structured answer). */
export const ANALYSIS_FIELD_NAME_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
export const MAX_ANALYSIS_FIELDS = 20;
export const MAX_ENUM_VALUES = 50;
/** A value an analysis field holds (and a scripted intent's `sets` gives it). */
export const AnalysisValue = Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]);
export type AnalysisValue = Static<typeof AnalysisValue>;

export const AnalysisField = Type.Object(
  {
    name: Type.String({ pattern: ANALYSIS_FIELD_NAME_PATTERN, description: 'unique among the fields' }),
    type: Type.Union(ANALYSIS_FIELD_TYPES.map((t) => Type.Literal(t))),
    /** What the field means: the LLM reads it. Default ''. */
    description: Type.Optional(Type.String({ maxLength: 1000, default: '' })),
    values: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: MAX_ENUM_VALUES, description: 'enum only, and required for it: the values the field may take (each once)' }),
    ),
  },
  { additionalProperties: false },
);
export type AnalysisField = Static<typeof AnalysisField>;

export const AnalysisSettings = Type.Object(
  {
    /** Write a short summary of the call. */
    summary: Type.Boolean({ default: false }),
    fields: Type.Array(AnalysisField, { maxItems: MAX_ANALYSIS_FIELDS, default: [] }),
    /** What makes the call a success, in words (null: no success verdict). */
    success: Type.Union([Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }), Type.Null()], {
      description: "the success criterion in words; the call's analysis.success says whether it was met (null: none)",
    }),
  },
  { additionalProperties: false },
);
export type AnalysisSettings = Static<typeof AnalysisSettings>;

/** True when the bot asks for anything: a summary, a field or a success verdict (else its calls get no analysis). */
export const analysisWanted = (a: AnalysisSettings | null | undefined): boolean => Boolean(a && (a.summary || a.fields.length || a.success !== null));

/** An intent's example phrases: on a bot, always present (empty for a keypad-only intent, one with `dtmf`). */
const IntentExamples = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 100, description: 'at least one, unless `dtmf` is set' });

/** One intent of the offline `scripted` LLM: matched by its example phrases, answered by `reply`. */
const PolicyIntent = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    examples: IntentExamples,
    reply: Type.String({ minLength: 1, maxLength: 2000, description: 'may hold {{variables}}, {{digits}} and, with an action, {{result.<path>}}' }),
    end_call: Type.Optional(Type.Boolean()),
    /** Runs one of the bot's tools when the intent matches; `reply` is said once it answered. */
    action: Type.Optional(
      Type.Object(
        {
          tool: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: "a tool of the bot's" }),
          arguments: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_]{1,64}$' }), Type.String({ maxLength: 1000, description: 'may hold {{variables}} and {{digits}}' }), { additionalProperties: false, maxProperties: 20 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Said instead of `reply` when the action's tool fails (else the fallback's reply). */
    on_error_reply: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    /** Matches when the caller presses exactly these keys. */
    dtmf: Type.Optional(Type.String({ pattern: DTMF_PATTERN })),
    /** Post-call analysis (docs/design.md §10): when this intent matched a caller's turn, these analysis fields get
     *  these values (a later intent's value wins). */
    sets: Type.Optional(
      Type.Record(Type.String({ pattern: ANALYSIS_FIELD_NAME_PATTERN }), AnalysisValue, {
        additionalProperties: false,
        maxProperties: MAX_ANALYSIS_FIELDS,
        description: "analysis field → value: each name one of the bot's analysis.fields, each value of that field's type (an enum's one of its values)",
      }),
    ),
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

/** A policy as a POST or PATCH body writes it: an intent selected by keys alone (`dtmf`) may leave out `examples`. */
export const BotPolicyInput = Type.Object(
  {
    intents: Type.Array(Type.Object({ ...PolicyIntent.properties, examples: Type.Optional(IntentExamples) }, { additionalProperties: false }), { maxItems: 200 }),
    fallback: BotPolicy.properties.fallback,
  },
  { additionalProperties: false },
);
export type BotPolicyInput = Static<typeof BotPolicyInput>;

/** The stored policy of a written one: every intent with its `examples` (none for a keypad-only intent). */
export const policyWithExamples = (policy: BotPolicyInput): BotPolicy => ({
  ...policy,
  intents: policy.intents.map((intent) => ({ ...intent, examples: intent.examples ?? [] })),
});

// Flows and handoffs (shared/DESIGN.md §18; the graph check and the constants: flow.ts).
const ContextRule = Type.Union(FLOW_CONTEXT_RULES.map((c) => Type.Literal(c)), {
  description: 'append: the history is kept; reset: the new system prompt only; summary: the history replaced by one short summary message',
});
const ToolName = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });

export const FlowWhen = Type.Union(
  [
    Type.Object({ intent: Type.String({ minLength: 1, maxLength: 64, description: "an intent of the node's (or of a global node's); with an LLM, what the go_to function is for" }) }, { additionalProperties: false }),
    Type.Object(
      {
        tool_result: Type.Object(
          {
            tool: ToolName,
            /** Dotted path into the tool's JSON result (absent: any answer that is not an error). */
            path: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            /** Compared as JSON with the value at `path` (absent: the value is there and not null/false). */
            equals: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object({ variable: Type.Object({ name: Type.String({ pattern: VARIABLE_NAME_PATTERN }), equals: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }) }, { additionalProperties: false }),
  ],
  { description: 'one of: {intent}, {tool_result: {tool, path?, equals?}}, {variable: {name, equals}}' },
);
export type FlowWhen = Static<typeof FlowWhen>;

export const FlowTransition = Type.Object(
  { to: Type.String({ pattern: FLOW_NODE_ID_PATTERN }), when: FlowWhen, context: Type.Optional(ContextRule) },
  { additionalProperties: false },
);
export type FlowTransition = Static<typeof FlowTransition>;

export const FlowNode = Type.Object(
  {
    /** Added to the bot's prompt while the call is in this node (LLM). */
    prompt: Type.Optional(Type.String({ maxLength: 5000 })),
    /** Said on entering the node (after the reply that led here). */
    say: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    /** The bot's tools offered in this node, and only these (absent: none). */
    tools: Type.Optional(Type.Array(ToolName, { maxItems: 50 })),
    /** The scripted policy's intents in this node (the bot policy's fallback stays the fallback). */
    intents: Type.Optional(Type.Array(BotPolicyInput.properties.intents.items, { maxItems: 100 })),
    transitions: Type.Array(FlowTransition, { maxItems: 50 }),
    /** The call ends once this node's `say` is said. */
    end_call: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type FlowNode = Static<typeof FlowNode>;

export const BotFlow = Type.Object(
  {
    start: Type.String({ pattern: FLOW_NODE_ID_PATTERN }),
    nodes: Type.Record(Type.String({ pattern: FLOW_NODE_ID_PATTERN }), FlowNode, { additionalProperties: false, minProperties: 1, maxProperties: MAX_FLOW_NODES }),
    /** Entered from any node when one of their own intents matches (LLM: offered as go_to from every node). */
    global_nodes: Type.Optional(Type.Array(Type.String({ pattern: FLOW_NODE_ID_PATTERN }), { maxItems: MAX_FLOW_NODES, description: 'default []' })),
    context: Type.Optional(Type.Union(FLOW_CONTEXT_RULES.map((c) => Type.Literal(c)), { description: "the transitions' context rule unless a transition sets its own; default append" })),
  },
  { additionalProperties: false },
);
export type BotFlow = Static<typeof BotFlow>;


/** The bots a call may be handed to (the built-in `handoff` tool); null: none. */
export const HandoffSettings = Type.Object(
  {
    bots: Type.Array(Type.String({ pattern: RESOURCE_ID_PATTERN }), { minItems: 1, maxItems: 20, description: 'ids of active bots (checked at save: 422 naming each one missing or inactive)' }),
    greeting: Type.Optional(Type.Boolean({ description: 'the other bot says its greeting when it takes the call; default true' })),
    on_failure: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: `default "${DEFAULT_HANDOFF_FAILURE}"; ` +  'said when the other bot cannot take the call (missing, inactive, unreachable); the call goes on with this bot' })),
  },
  { additionalProperties: false },
);
export type HandoffSettings = Static<typeof HandoffSettings>;

/** How the bot knows the caller's turn is over (docs/design.md §11). */
export const TURN_DETECTION_MODES = ['smart', 'fixed'] as const;
export const TurnDetection = Type.Object(
  {
    mode: Type.Union(TURN_DETECTION_MODES.map((m) => Type.Literal(m)), {
      default: 'smart',
      description: 'smart: a complete utterance ends the turn after min_silence_ms, an incomplete one waits up to end_of_turn_silence_ms; fixed: every turn ends after end_of_turn_silence_ms',
    }),
    end_of_turn_silence_ms: Type.Integer({ minimum: 100, maximum: 5000, default: 700, description: 'fixed: the silence that ends a turn; smart: the longest it waits for an incomplete utterance' }),
    min_silence_ms: Type.Integer({ minimum: 100, maximum: 5000, default: 250, description: 'smart: the silence that ends a complete utterance; at most end_of_turn_silence_ms' }),
  },
  { additionalProperties: false },
);
export type TurnDetection = Static<typeof TurnDetection>;

/** Barge-in while the bot speaks (docs/design.md §11). */
export const InterruptionSettings = Type.Object(
  {
    ignore_backchannels: Type.Boolean({ default: true, description: 'acknowledgements alone ("uh-huh", "okay", "yeah") do not stop the bot; other speech does within 300 ms' }),
    min_words: Type.Integer({ minimum: 1, maximum: 10, default: 2, description: 'an utterance of this many words stops the bot even if they are all acknowledgements' }),
  },
  { additionalProperties: false },
);
export type InterruptionSettings = Static<typeof InterruptionSettings>;

/** The keypad (docs/design.md §9): the caller's keys form one turn at `#`, or once no key came for this long. */
export const KeypadSettings = Type.Object(
  { inter_digit_timeout_ms: Type.Integer({ minimum: 300, maximum: 10_000, default: 1500 }) },
  { additionalProperties: false },
);
export type KeypadSettings = Static<typeof KeypadSettings>;

/** Answering machine detection on outbound SIP calls (docs/design.md §10). */
export const ON_MACHINE = ['hangup', 'leave_message'] as const;
export const AnsweringMachine = Type.Object(
  {
    /** Listen before greeting: a person is greeted, a machine gets on_machine. */
    detect: Type.Boolean({ default: false }),
    on_machine: Type.Union(ON_MACHINE.map((o) => Type.Literal(o)), { default: 'hangup', description: 'hangup: the call ends completed / voicemail; leave_message: `message` after the beep, then completed / voicemail_left' }),
    /** Said to the machine (leave_message); may hold {{variables}}. */
    message: Type.String({ maxLength: 1000, default: '', description: 'leave_message: what is said after the beep ({{variables}}); required for leave_message' }),
    max_wait_for_beep_seconds: Type.Integer({ minimum: 5, maximum: 120, default: 30, description: 'leave_message: the message goes at the latest this long after the machine was detected' }),
  },
  { additionalProperties: false },
);
export type AnsweringMachine = Static<typeof AnsweringMachine>;

/** What the worker does to the caller's audio before it listens (docs/design.md §15). */
export const AudioSettings = Type.Object(
  {
    noise_suppression: Type.Boolean({ default: false, description: "RNNoise on the caller's audio before voice activity detection and recognition (noisy lines); costs some CPU per call" }),
  },
  { additionalProperties: false },
);
export type AudioSettings = Static<typeof AudioSettings>;

/** Redaction (shared/DESIGN.md §16; the masking itself: redact.ts): what is masked in everything stored, sent or logged of
 *  the bot's calls. A bot stored before the setting has none (no redaction). */
export const RedactionSettings = Type.Object(
  {
    entities: Type.Array(Type.Union(REDACTION_ENTITIES.map((e) => Type.Literal(e))), {
      // No uniqueItems: Kubernetes refuses it in a CRD; the backend keeps each once.
      maxItems: REDACTION_ENTITIES.length * 4,
      default: [],
      description: 'what is masked: card_number (13–19 digits passing the Luhn check, keypad digits included), ssn, email, phone; each shown as [entity]; one listed twice is kept once; an unknown one is a 422 naming it',
    }),
    mode: Type.Literal('mask', { default: 'mask', description: 'mask: replaced by [entity] (the only mode)' }),
    redact_llm: Type.Boolean({ default: false, description: "the live call's LLM gets the caller's words masked too (else it gets them as said: it may have to act on them)" }),
  },
  { additionalProperties: false },
);
export type RedactionSettings = Static<typeof RedactionSettings>;

/** The call recording (shared/DESIGN.md §16). A bot stored before the setting records. */
export const RecordingSettings = Type.Object(
  {
    enabled: Type.Boolean({ default: true, description: 'false: no recording is made (the call has no recording_key)' }),
    redact_keypad_tones: Type.Boolean({ default: false, description: "the caller's channel is silent around each key the caller pressed (from 40 ms before to 300 ms after)" }),
  },
  { additionalProperties: false },
);
export type RecordingSettings = Static<typeof RecordingSettings>;

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
  mcp_servers: [] as BotMcpServer[],
  knowledge_base_ids: [] as string[],
  policy: null as BotPolicy | null,
  turn_detection: { mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 } as TurnDetection,
  interruption: { ignore_backchannels: true, min_words: 2 } as InterruptionSettings,
  dtmf: { inter_digit_timeout_ms: 1500 } as KeypadSettings,
  answering_machine: { detect: false, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: 30 } as AnsweringMachine,
  audio: { noise_suppression: false } as AudioSettings,
  analysis: { summary: false, fields: [], success: null } as AnalysisSettings,
  redaction: { entities: [], mode: 'mask', redact_llm: false } as RedactionSettings,
  recording: { enabled: true, redact_keypad_tones: false } as RecordingSettings,
  max_call_seconds: 300,
  require_passing_tests: false,
  // Flows and handoffs (§18): none unless set.
  flow: null as BotFlow | null,
  handoff: null as HandoffSettings | null,
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
  mcp_servers: Type.Array(BotMcpServer, { maxItems: MAX_MCP_SERVERS }),
  knowledge_base_ids: Type.Array(Type.String({ pattern: '^[a-f0-9]{24}$' }), { maxItems: MAX_BOT_KNOWLEDGE_BASES, description: 'knowledge bases each turn retrieves passages from (each must exist)' }),
  policy: Type.Union([BotPolicy, Type.Null()]),
  turn_detection: TurnDetection,
  interruption: InterruptionSettings,
  dtmf: KeypadSettings,
  answering_machine: AnsweringMachine,
  audio: AudioSettings,
  analysis: AnalysisSettings,
  redaction: RedactionSettings,
  recording: RecordingSettings,
  max_call_seconds: Type.Integer({ minimum: 10, maximum: 7200 }),
  require_passing_tests: Type.Boolean({
    description: 'a save makes a draft version, published only by POST /api/v1/bots/{id}/publish once that version\'s last test run is all green (default false: a save publishes itself)',
  }),
  // Flows and handoffs (§18): checked at save by flowProblems (flow.ts) and the backend.
  flow: Type.Union([BotFlow, Type.Null()]),
  handoff: Type.Union([HandoffSettings, Type.Null()]),
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
    /** Header values left out keep the same-named server's (like tools' headers). */
    mcp_servers: Type.Optional(botFields.mcp_servers),
    knowledge_base_ids: Type.Optional(botFields.knowledge_base_ids),
    policy: Type.Optional(Type.Union([BotPolicyInput, Type.Null()])),
    /** Fields left out keep their defaults (on PATCH: their current values). */
    turn_detection: Type.Optional(Type.Partial(botFields.turn_detection)),
    /** Fields left out keep their defaults (on PATCH: their current values). */
    interruption: Type.Optional(Type.Partial(botFields.interruption)),
    dtmf: Type.Optional(botFields.dtmf),
    /** Fields left out keep their defaults (on PATCH: their current values). */
    answering_machine: Type.Optional(Type.Partial(botFields.answering_machine)),
    /** Fields left out keep their defaults (on PATCH: their current values). */
    audio: Type.Optional(Type.Partial(botFields.audio)),
    /** Fields left out keep their defaults (on PATCH: their current values); `fields` is replaced whole. */
    analysis: Type.Optional(Type.Partial(botFields.analysis)),
    /** Fields left out keep their defaults (on PATCH: their current values); `entities` is replaced whole. */
    redaction: Type.Optional(Type.Partial(botFields.redaction)),
    /** Fields left out keep their defaults (on PATCH: their current values). */
    recording: Type.Optional(Type.Partial(botFields.recording)),
    max_call_seconds: Type.Optional(botFields.max_call_seconds),
    /** Default false. Acts at once (not versioned), like `name` and `active`. */
    require_passing_tests: Type.Optional(botFields.require_passing_tests),
    /** Replaced whole; null removes it. */
    flow: Type.Optional(botFields.flow),
    /** Replaced whole (fields left out: their defaults); null removes it. */
    handoff: Type.Optional(botFields.handoff),
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
    tools: Type.Array(BotToolPublic, { maxItems: 50 }),
    mcp_servers: Type.Array(BotMcpServerPublic, { maxItems: MAX_MCP_SERVERS }),
    /** A tool secret exists (POST /api/v1/bots/{id}/tool-secret): HTTP tool requests are signed with it. */
    has_tool_secret: Type.Boolean(),
    /** The latest version (shared/DESIGN.md §17): the behaviour these fields show. */
    version: Type.Integer({ minimum: 1, description: 'the latest version: the behaviour the fields of this answer show (a draft when above published_version)' }),
    published_version: Type.Integer({ minimum: 1, description: 'the version calls run (dial-outs, campaigns, inbound and browser test calls)' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type Bot = Static<typeof Bot>;

/** The fields a version holds: every field of a bot but `name`, `active` and `require_passing_tests`, which act at once. */
export const BOT_UNVERSIONED_FIELDS = ['name', 'active', 'require_passing_tests'] as const;

/** A version's behaviour snapshot: the bot's versioned fields as they were saved (tool header values write-only). */
export const BotConfigSnapshot = Type.Omit(Type.Object({ ...botFields, tools: Type.Array(BotToolPublic, { maxItems: 50 }), mcp_servers: Type.Array(BotMcpServerPublic, { maxItems: MAX_MCP_SERVERS }) }, { additionalProperties: false }), [...BOT_UNVERSIONED_FIELDS]);
export type BotConfigSnapshot = Static<typeof BotConfigSnapshot>;

/** One immutable version of a bot's behaviour (`GET /api/v1/bots/{id}/versions/{version}`). */
export const BotVersion = Type.Object(
  {
    bot_id: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    config: BotConfigSnapshot,
    created_by: AuditActor,
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type BotVersion = Static<typeof BotVersion>;

/** Highest version number a request may name (9 digits). */
export const MAX_BOT_VERSION = 999_999_999;
/** A page of versions ends at `<created_at ms>.<version>` (the `next_cursor` of the versions list). */
export const VERSION_CURSOR_PATTERN = '^(?:0|[1-9][0-9]{0,14})\\.[1-9][0-9]{0,8}$';

/** `GET /api/v1/bots/{id}/versions`: newest first, cursor-paginated like the other lists. */
export const BotVersionList = Type.Object(
  {
    items: Type.Array(Type.Omit(BotVersion, ['config'])),
    next_cursor: Type.Union([Type.String({ pattern: VERSION_CURSOR_PATTERN }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type BotVersionList = Static<typeof BotVersionList>;

/** `POST /api/v1/bots/{id}/publish`: the version calls are to run (an older one: the rollback). */
export const BotPublish = Type.Object({ version: Type.Integer({ minimum: 1, maximum: MAX_BOT_VERSION, description: 'a version of this bot' }) }, { additionalProperties: false });
export type BotPublish = Static<typeof BotPublish>;

/** `POST /api/v1/bots/{id}/tool-secret`: the new secret, shown in this answer only. */
export const BotToolSecret = Type.Object({ bot_id: Type.String(), secret: Type.String({ pattern: '^whsec_[A-Za-z0-9]{32}$' }) }, { additionalProperties: false });
export type BotToolSecret = Static<typeof BotToolSecret>;
