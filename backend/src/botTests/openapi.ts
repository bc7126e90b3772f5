// The OpenAPI paths of bot tests (docs/design.md §17), built by openapi.ts with its helpers.
import { Type } from '@sinclair/typebox';
import { TestCase, TestCaseCreate, TestRun, TestRunCreate } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'body' | 'idParam' | 'idSchema' | 'ADMIN' | 'BODY' | 'API_KEY'>;

const sub = (h: Helpers, name: string, description: string) => ({ name, in: 'path', required: true, schema: h.idSchema, description });

export function botTestPaths(h: Helpers): Record<string, object> {
  const CASE_RULES =
    'Refused with 422 `validation_failed` naming the field when a case names a tool the bot lacks (`expect.tools.N.name`), mocks an unknown tool ' +
    '(`tool_mocks.<name>`), has an empty script (`caller.script`), a regex that does not compile (`expect.said.N`, `expect.not_said.N`) or a ' +
    "`judge` while the bot has no OpenAI-compatible LLM (`expect.judge`); 422 `transport_unavailable` for `sip` (not placed yet) and for `room` where the backend has no LiveKit settings (`details.available` lists what runs place).";
  return {
    '/api/v1/bots/{id}/tests': {
      parameters: [h.idParam('Bot id')],
      get: { operationId: 'listBotTests', summary: "A bot's test cases", security: [{ adminJwt: [] }], responses: { 200: h.ok('Test cases, oldest first', Type.Object({ items: Type.Array(TestCase) })), ...h.errors([...h.ADMIN, 'bot_not_found']) } },
      post: {
        operationId: 'createBotTest',
        summary: 'Add a test case to a bot',
        description: CASE_RULES,
        security: [{ adminJwt: [] }],
        requestBody: h.body(TestCaseCreate),
        responses: { 201: h.ok('The test case', TestCase), ...h.errors([...h.ADMIN, ...h.BODY, 'bot_not_found', 'transport_unavailable', 'variables_mismatch']) },
      },
    },
    '/api/v1/bots/{id}/tests/{case_id}': {
      parameters: [h.idParam('Bot id'), sub(h, 'case_id', 'Test case id')],
      get: { operationId: 'getBotTest', summary: 'One test case', security: [{ adminJwt: [] }], responses: { 200: h.ok('The test case', TestCase), ...h.errors([...h.ADMIN, 'bot_not_found', 'test_case_not_found']) } },
      put: {
        operationId: 'updateBotTest',
        summary: 'Replace a test case',
        description: CASE_RULES,
        security: [{ adminJwt: [] }],
        requestBody: h.body(TestCaseCreate),
        responses: { 200: h.ok('The test case', TestCase), ...h.errors([...h.ADMIN, ...h.BODY, 'bot_not_found', 'test_case_not_found', 'transport_unavailable', 'variables_mismatch']) },
      },
      delete: { operationId: 'deleteBotTest', summary: 'Delete a test case', security: [{ adminJwt: [] }], responses: { 204: { description: 'Deleted' }, ...h.errors([...h.ADMIN, 'test_case_not_found']) } },
    },
    '/api/v1/bots/{id}/test-runs': {
      parameters: [h.idParam('Bot id')],
      post: {
        operationId: 'createBotTestRun',
        summary: "Run a bot's test cases (all, or `cases`)",
        description:
          'Queued at once (202); the dialler places each case as a real call (`concurrency` side by side), the caller speaking its script with the ' +
          "offline voice, the bot's HTTP tools answered by the case's `tool_mocks`, and checks each expectation against the stored call. A fleet with no " +
          'free slot leaves the run `queued` (never a failed case). `test_run.completed` is sent when every case has its result.',
        security: [{ adminJwt: [] }, { apiKey: [] }],
        requestBody: h.body(TestRunCreate),
        responses: { 202: h.ok('The run, queued', TestRun), ...h.errors([...h.ADMIN, ...h.API_KEY, ...h.BODY, 'bot_not_found', 'transport_unavailable', 'variables_mismatch']) },
      },
      get: { operationId: 'listBotTestRuns', summary: "A bot's test runs", security: [{ adminJwt: [] }, { apiKey: [] }], responses: { 200: h.ok('The last 100 runs, newest first', Type.Object({ items: Type.Array(TestRun) })), ...h.errors([...h.ADMIN, ...h.API_KEY, 'bot_not_found']) } },
    },
    '/api/v1/bots/{id}/test-runs/{run_id}': {
      parameters: [h.idParam('Bot id'), sub(h, 'run_id', 'Test run id')],
      get: { operationId: 'getBotTestRun', summary: 'One test run with each case\'s result', security: [{ adminJwt: [] }, { apiKey: [] }], responses: { 200: h.ok('The run', TestRun), ...h.errors([...h.ADMIN, ...h.API_KEY, 'test_run_not_found']) } },
    },
  };
}
