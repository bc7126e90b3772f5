// The worker-facing runtime config of `GET /api/v1/config?bot_id=…[&call_id=…]`.
import { Type, type Static } from '@sinclair/typebox';
import { AnsweringMachine, AudioSettings, BotFlow, BotMcpServer, HandoffSettings, RecordingSettings, RedactionSettings, BotPolicy, BotTool, InterruptionSettings, KeypadSettings, LlmSettings, SttSettings, TurnDetection, VoiceSettings } from './bot.js';
import { CallDirectionSchema } from './calls.js';
import { CallVariables } from './dialout.js';
import { TestToolMocks } from './botTests.js';

export const RuntimeConfig = Type.Object(
  {
    bot: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        language: Type.String(),
        /** Rendered with the call's variables (unknown or absent ones become empty). */
        prompt: Type.String(),
        /** Rendered like `prompt`. */
        greeting: Type.String(),
        voice: VoiceSettings,
        stt: SttSettings,
        llm: LlmSettings,
        /** Header values in the clear: the worker sends them. */
        tools: Type.Array(BotTool),
        /** Signs the bot's HTTP tool requests (X-Voice-Signature); null when the bot has none. */
        tool_secret: Type.Union([Type.String(), Type.Null()]),
        /** Header values in the clear. Absent from an older backend: none. */
        mcp_servers: Type.Optional(Type.Array(BotMcpServer)),
        /** The bot has knowledge bases: each turn asks GET /api/v1/config/knowledge. Absent from an older backend: none. */
        knowledge_base_ids: Type.Optional(Type.Array(Type.String())),
        /** Raw: the worker renders replies with `call.variables`. */
        policy: Type.Union([BotPolicy, Type.Null()]),
        turn_detection: TurnDetection,
        interruption: InterruptionSettings,
        dtmf: KeypadSettings,
        /** The bot's, with the call's campaign's override applied. */
        answering_machine: AnsweringMachine,
        audio: AudioSettings,
        /** Absent from an older backend: no redaction. */
        redaction: Type.Optional(RedactionSettings),
        /** Absent from an older backend: recorded. */
        recording: Type.Optional(RecordingSettings),
        max_call_seconds: Type.Integer(),
        /** Flows and handoffs (§18); absent from an older backend: none. Node intents have their `examples` (none for keys alone). */
        flow: Type.Optional(Type.Union([BotFlow, Type.Null()])),
        handoff: Type.Optional(Type.Union([HandoffSettings, Type.Null()])),
        /** With `handoff`: the example phrases of the bots it may hand the call to, for the offline recogniser's grammar. */
        handoff_phrases: Type.Optional(Type.Array(Type.String(), { maxItems: 2000 })),
      },
      { additionalProperties: false },
    ),
    call: Type.Union([
      Type.Object(
        {
          id: Type.String(),
          direction: CallDirectionSchema,
          to_number: Type.Union([Type.String(), Type.Null()]),
          variables: CallVariables,
          /** A bot test's call: each named tool answers its mock instead of running (docs/design.md §17). */
          tool_mocks: Type.Optional(TestToolMocks),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    audio: Type.Object({ sample_rate: Type.Integer() }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);
export type RuntimeConfig = Static<typeof RuntimeConfig>;
