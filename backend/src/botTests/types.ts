// The schemas' bot-test types under the names this folder uses.
export type { TestCase, TestCaseCreate, TestCaseResult, TestExpect, TestFailure, TestRun, TestRunCreate, TestToolMocks, TestTransport, TestScriptStep } from '@voice-platform/schemas';
export type { TestCaller as TestCallerT } from '@voice-platform/schemas';
