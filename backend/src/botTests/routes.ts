// Bot tests' API (docs/design.md §17): `/api/v1/bots/{id}/tests` (cases: editors write, viewers read) and
// `/api/v1/bots/{id}/test-runs` (a run is queued here; the dialler's runner, runner.ts, places its calls).
import { ObjectId } from 'mongodb';
import type { Router } from '@koa/router';
import { TestCaseCreate, TestRunCreate, MAX_TEST_CASES, type TestCaseCreate as TestCaseCreateT, type TestTransport } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check, type FieldProblem } from '../core/validate.js';
import { jsonBody } from '../core/body.js';
import type { Context, Next } from 'koa';
import { authenticateAdmin, requireAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import type { Metrics } from '../core/metrics.js';
import { findBot, type BotDoc } from '../bots/store.js';
import { botAtVersion } from '../bots/versions.js';
import { checkVariables } from '../calls/variables.js';
import { availableTestTransports, unavailableReason } from './transports.js';
import { publicTestCase, publicTestRun, testCases, testRuns, type TestCaseDoc, type TestRunDoc } from './store.js';

const RUN_HISTORY_LIMIT = 100;

/** The rules of a case a schema cannot hold: its transport must be one this backend places (`available`), what it
 *  names must exist on the bot, its regexes must compile. */
export function checkTestCase(bot: Pick<BotDoc, 'tools' | 'llm' | 'variables'>, body: TestCaseCreateT, available: readonly TestTransport[]): void {
  if (!available.includes(body.transport)) {
    throw apiError('transport_unavailable', { message: unavailableReason(body.transport), details: { field: 'transport', available } });
  }
  const problems: FieldProblem[] = [];
  const tools = new Set(bot.tools.map((t) => t.name));
  if ('script' in body.caller && body.caller.script.length === 0) problems.push({ field: 'caller.script', message: 'must have at least one step' });
  if ('persona' in body.caller && bot.llm.provider !== 'openai') {
    problems.push({ field: 'caller.persona', message: "a persona caller is played by the bot's LLM: the bot needs an OpenAI-compatible llm (provider openai)" });
  }
  body.expect.tools?.forEach((t, i) => {
    if (!tools.has(t.name)) problems.push({ field: `expect.tools.${i}.name`, message: `the bot has no tool named ${t.name}` });
  });
  for (const name of Object.keys(body.tool_mocks ?? {})) {
    if (!tools.has(name)) problems.push({ field: `tool_mocks.${name}`, message: `the bot has no tool named ${name}` });
  }
  for (const key of ['said', 'not_said'] as const) {
    body.expect[key]?.forEach((re, i) => {
      try {
        new RegExp(re, 'i');
      } catch (err) {
        problems.push({ field: `expect.${key}.${i}`, message: `is not a regular expression: ${(err as Error).message}` });
      }
    });
  }
  if (body.expect.judge !== undefined && bot.llm.provider !== 'openai') {
    problems.push({ field: 'expect.judge', message: "a judge is graded by the bot's analysis LLM: the bot needs an OpenAI-compatible llm (provider openai)" });
  }
  if (problems.length) throw apiError('validation_failed', { details: problems });
  checkVariables(bot.variables, body.variables ?? {}); // 422 variables_mismatch naming them
}

export function botTestRoutes(router: Router, svc: Services, metrics: Metrics): void {
  const admin = requireAdmin(svc);
  const transports = availableTestTransports(svc.settings);
  // Runs are for CI too: an admin token, or an API key with the test_calls scope (the CLI's --api-key).
  const adminOrKey = async (ctx: Context, next: Next) => {
    // As GET /api/v1/fleet: every credential sent must be valid (a bad token beside a good key is refused).
    if (ctx.headers.authorization !== undefined) ctx.state.admin = await authenticateAdmin(svc, ctx);
    if (ctx.state.admin === undefined || ctx.headers['x-api-key'] !== undefined) ctx.state.apiKey = await authenticateKey(svc, metrics, ctx);
    await next();
  };

  const bot = async (id: string) => {
    const b = await findBot(svc.db, id);
    if (!b) throw apiError('bot_not_found');
    return b;
  };
  const oneCase = async (botId: string, caseId: string) => {
    const c = await testCases(svc.db).findOne({ _id: caseId });
    if (!c || c.bot_id !== botId) throw apiError('test_case_not_found');
    return c;
  };

  router.get('/api/v1/bots/:id/tests', admin, async (ctx) => {
    await bot(ctx.params.id!);
    const docs = await testCases(svc.db).find({ bot_id: ctx.params.id! }).sort({ created_at: 1, _id: 1 }).limit(MAX_TEST_CASES).toArray();
    ctx.body = { items: docs.map(publicTestCase) };
  });

  router.post('/api/v1/bots/:id/tests', admin, jsonBody(), async (ctx) => {
    const b = await bot(ctx.params.id!);
    const body = check(TestCaseCreate, ctx.request.body);
    checkTestCase(b, body, transports);
    if ((await testCases(svc.db).countDocuments({ bot_id: b._id })) >= MAX_TEST_CASES) throw apiError('validation_failed', { details: [{ field: 'name', message: `a bot keeps at most ${MAX_TEST_CASES} test cases` }] });
    const now = svc.now();
    const doc: TestCaseDoc = { _id: new ObjectId().toHexString(), bot_id: b._id, name: body.name, transport: body.transport, variables: body.variables ?? {}, caller: body.caller, tool_mocks: body.tool_mocks ?? {}, expect: body.expect, created_at: now, updated_at: now };
    await testCases(svc.db).insertOne(doc);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/bots/${b._id}/tests/${doc._id}`);
    ctx.body = publicTestCase(doc);
  });

  router.get('/api/v1/bots/:id/tests/:case_id', admin, async (ctx) => {
    ctx.body = publicTestCase(await oneCase(ctx.params.id!, ctx.params.case_id!));
  });

  router.put('/api/v1/bots/:id/tests/:case_id', admin, jsonBody(), async (ctx) => {
    const b = await bot(ctx.params.id!);
    const cur = await oneCase(b._id, ctx.params.case_id!);
    const body = check(TestCaseCreate, ctx.request.body);
    checkTestCase(b, body, transports);
    const doc: TestCaseDoc = { ...cur, name: body.name, transport: body.transport, variables: body.variables ?? {}, caller: body.caller, tool_mocks: body.tool_mocks ?? {}, expect: body.expect, updated_at: svc.now() };
    await testCases(svc.db).replaceOne({ _id: cur._id }, doc);
    ctx.body = publicTestCase(doc);
  });

  router.delete('/api/v1/bots/:id/tests/:case_id', admin, async (ctx) => {
    const cur = await oneCase(ctx.params.id!, ctx.params.case_id!);
    await testCases(svc.db).deleteOne({ _id: cur._id });
    ctx.status = 204;
  });

  router.post('/api/v1/bots/:id/test-runs', adminOrKey, jsonBody(), async (ctx) => {
    const head = await bot(ctx.params.id!);
    const body = check(TestRunCreate, ctx.request.body ?? {});
    // A run tests one version (shared/DESIGN.md §17): the one asked for, else the latest, a draft included.
    const b = body.version === undefined ? head : await botAtVersion(svc.db, head, body.version);
    if (!b) throw apiError('validation_failed', { details: [{ field: 'version', message: `the bot has no version ${body.version}` }] });
    const all = await testCases(svc.db).find({ bot_id: b._id }).sort({ created_at: 1, _id: 1 }).limit(MAX_TEST_CASES).toArray();
    let chosen = all;
    if (body.cases) {
      const byId = new Map(all.map((c) => [c._id, c]));
      const missing = body.cases.filter((id) => !byId.has(id));
      if (missing.length) throw apiError('validation_failed', { details: missing.map((id) => ({ field: 'cases', message: `the bot has no test case ${id}` })) });
      chosen = body.cases.map((id) => byId.get(id)!);
    }
    if (!chosen.length) throw apiError('validation_failed', { details: [{ field: 'cases', message: 'the bot has no test cases to run' }] });
    // A case saved before the bot changed may no longer fit it: refused now, not failed later.
    for (const c of chosen) checkTestCase(b, { name: c.name, transport: c.transport, variables: c.variables, caller: c.caller, tool_mocks: c.tool_mocks, expect: c.expect }, transports);
    const now = svc.now();
    const run: TestRunDoc = {
      _id: new ObjectId().toHexString(),
      bot_id: b._id,
      version: body.version ?? head.version,
      status: 'queued',
      concurrency: body.concurrency ?? 1,
      passed: 0,
      failed: 0,
      cases: chosen.map(({ created_at: _c, updated_at: _u, ...spec }) => ({ case_id: spec._id, name: spec.name, status: 'pending', passed: null, failures: [], call_id: null, spec, attempts: 0, latencies_ms: [] })),
      created_at: now,
      started_at: null,
      completed_at: null,
    };
    await testRuns(svc.db).insertOne(run);
    ctx.status = 202;
    ctx.set('Location', `/api/v1/bots/${b._id}/test-runs/${run._id}`);
    ctx.body = publicTestRun(run);
  });

  router.get('/api/v1/bots/:id/test-runs', adminOrKey, async (ctx) => {
    await bot(ctx.params.id!);
    const docs = await testRuns(svc.db).find({ bot_id: ctx.params.id! }).sort({ created_at: -1, _id: -1 }).limit(RUN_HISTORY_LIMIT).toArray();
    ctx.body = { items: docs.map(publicTestRun) };
  });

  router.get('/api/v1/bots/:id/test-runs/:run_id', adminOrKey, async (ctx) => {
    const run = await testRuns(svc.db).findOne({ _id: ctx.params.run_id! });
    if (!run || run.bot_id !== ctx.params.id) throw apiError('test_run_not_found');
    ctx.body = publicTestRun(run);
  });
}
