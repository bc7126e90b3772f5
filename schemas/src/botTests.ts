// Bot tests (docs/design.md §17): test cases a bot keeps, and the runs that place each case as a real call
// with a caller that speaks a script, answering the bot's tools with mocks, and check what the call did.
import { Type, type Static } from '@sinclair/typebox';

export const TEST_TRANSPORTS = ['ws', 'room', 'sip'] as const;
export type TestTransport = (typeof TEST_TRANSPORTS)[number];
/** A persona caller's lines at most when its case does not say (caller.persona.max_turns). */
export const PERSONA_MAX_TURNS = 8;
/** Cases one bot keeps at most. */
export const MAX_TEST_CASES = 200;
/** Cases run side by side at most in one run. */
export const MAX_TEST_CONCURRENCY = 8;

const waitFields = {
  /** Wait until the bot has spoken and gone quiet before this step. */
  wait_for_bot: Type.Optional(Type.Literal(true)),
  /** Wait this long (after the previous step) before this step. */
  after_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
};
export const TestScriptStep = Type.Union([
  Type.Object({ say: Type.String({ minLength: 1, maxLength: 500 }), ...waitFields }, { additionalProperties: false }),
  Type.Object({ dtmf: Type.String({ pattern: '^[0-9*#]{1,32}$' }), ...waitFields }, { additionalProperties: false }),
]);
export type TestScriptStep = Static<typeof TestScriptStep>;

export const TestCaller = Type.Union([
  Type.Object({ script: Type.Array(TestScriptStep, { maxItems: 50 }) }, { additionalProperties: false }),
  Type.Object(
    {
      persona: Type.Object(
        {
          /** Who the caller is and how they talk (the persona LLM's instructions). */
          prompt: Type.String({ minLength: 1, maxLength: 4000 }),
          /** What the caller is after in the call. */
          goal: Type.String({ minLength: 1, maxLength: 1000 }),
          /** Lines the caller says at most; then it hears the bot's answer and hangs up (default PERSONA_MAX_TURNS). */
          max_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
]);
export type TestCaller = Static<typeof TestCaller>;

export const TestToolMock = Type.Object(
  {
    /** 2xx: the body is the tool's result; anything else: the tool failed with `http_<status>`. */
    status: Type.Integer({ minimum: 100, maximum: 599 }),
    body: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type TestToolMock = Static<typeof TestToolMock>;
export const TestToolMocks = Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), TestToolMock, { additionalProperties: false });
export type TestToolMocks = Static<typeof TestToolMocks>;

export const TestExpect = Type.Object(
  {
    end_reason: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /** Each must have run (in any order); `arguments` compared field by field (those given only). */
    tools: Type.Optional(Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }, { additionalProperties: false }), { maxItems: 20 })),
    transfer_to: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Fields of the call's analysis `data` and their values. */
    analysis: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Regular expressions (case-insensitive) the bot must have said somewhere in the call. */
    said: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 20 })),
    /** …and must not have said. */
    not_said: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 20 })),
    max_turn_latency_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000 })),
    answered_by: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    /** A criterion the bot's analysis LLM grades the transcript against. */
    judge: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type TestExpect = Static<typeof TestExpect>;

const caseFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  transport: Type.Union(TEST_TRANSPORTS.map((t) => Type.Literal(t))),
  variables: Type.Optional(Type.Record(Type.String(), Type.String())),
  caller: TestCaller,
  tool_mocks: Type.Optional(TestToolMocks),
  expect: TestExpect,
};
export const TestCaseCreate = Type.Object(caseFields, { additionalProperties: false });
export type TestCaseCreate = Static<typeof TestCaseCreate>;
export const TestCase = Type.Object({ id: Type.String(), bot_id: Type.String(), ...caseFields, created_at: Type.String(), updated_at: Type.String() }, { additionalProperties: false });
export type TestCase = Static<typeof TestCase>;

export const TestRunCreate = Type.Object(
  {
    /** Case ids; absent: every case of the bot. */
    cases: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' }), { minItems: 1, maxItems: MAX_TEST_CASES, uniqueItems: true })),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TEST_CONCURRENCY })),
    /** The bot version tested; absent: the latest (a draft included). */
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);
export type TestRunCreate = Static<typeof TestRunCreate>;

export const TestFailure = Type.Object({ expectation: Type.String(), detail: Type.String() }, { additionalProperties: false });
export type TestFailure = Static<typeof TestFailure>;
export const TestCaseResult = Type.Object(
  {
    case_id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('running'), Type.Literal('done')]),
    passed: Type.Union([Type.Boolean(), Type.Null()]),
    failures: Type.Array(TestFailure),
    call_id: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type TestCaseResult = Static<typeof TestCaseResult>;
export const TestRunStatus = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done')]);
export const TestRun = Type.Object(
  {
    id: Type.String(),
    bot_id: Type.String(),
    status: TestRunStatus,
    version: Type.Integer(),
    concurrency: Type.Integer(),
    passed: Type.Integer(),
    failed: Type.Integer(),
    latency: Type.Object({ p50_ms: Type.Union([Type.Number(), Type.Null()]), p95_ms: Type.Union([Type.Number(), Type.Null()]) }, { additionalProperties: false }),
    cases: Type.Array(TestCaseResult),
    created_at: Type.String(),
    completed_at: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type TestRun = Static<typeof TestRun>;
