// GET /api/v1/config: what a worker needs to run one call, with prompt and greeting rendered.
import type { Router } from '@koa/router';
import { testCaseMocks } from '../botTests/store.js';
import { RESOURCE_ID_PATTERN, renderTemplate, type RuntimeConfig } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { cachedBot, openMcpHeaders, openToolHeaders, toolSecretBox } from '../bots/store.js';
import { botAtVersion, handoffPhrases } from '../bots/versions.js';
import { requestView } from '../core/cacheTable.js';
import { findCall, type CallDoc } from '../calls/store.js';
import { campaigns } from '../campaigns/store.js';
import { requireWorker } from '../auth/worker.js';

const ID = new RegExp(RESOURCE_ID_PATTERN);

export function configRoutes(router: Router, svc: Services): void {
  const box = toolSecretBox(svc.settings.JWT_SECRET);
  router.get('/api/v1/config', requireWorker(svc), async (ctx) => {
    const botId = ctx.query.bot_id;
    const callId = ctx.query.call_id;
    const problems = [];
    if (typeof botId !== 'string' || !ID.test(botId)) problems.push({ field: 'bot_id', message: 'is required (one bot id)' });
    if (callId !== undefined && (typeof callId !== 'string' || !ID.test(callId))) problems.push({ field: 'call_id', message: 'must be one call id' });
    const templates = ctx.query.templates;
    if (templates !== undefined && templates !== 'raw') problems.push({ field: 'templates', message: 'must be raw (or left out)' });
    if (problems.length) throw apiError('validation_failed', { details: problems });

    // The bot through the replica's cache (one Redis round trip for the view instead of a database read).
    const head = await cachedBot(svc, await requestView(svc.cache, ctx.state), botId as string);
    if (!head) throw apiError('bot_not_found');
    if (!head.active) throw apiError('bot_inactive');
    let call: Pick<CallDoc, '_id' | 'bot_id' | 'direction' | 'to_number' | 'variables' | 'campaign_id' | 'bot_version' | 'test'> | null = null;
    if (typeof callId === 'string') {
      // By _id alone, the bot compared here: FerretDB (v1, SQLite) hands SQLite a filter of `_id` and nothing
      // else, and decodes the whole collection, every call's transcript included, for any other. A call being
      // started is in the small collection of calls in progress (calls/store.ts). Only the fields sent back
      // are returned: not the transcript, which grows with the call.
      call = await findCall(svc.db, callId, { _id: 1, bot_id: 1, direction: 1, to_number: 1, variables: 1, campaign_id: 1, bot_version: 1, test: 1 });
      if (!call || call.bot_id !== head._id) throw apiError('call_not_found', 'call not found for this bot');
    }
    // The version the call was placed with (shared/DESIGN.md §17), not the latest draft; without a call (or for
    // a call placed before versions), the published one. The latest is the cached document itself.
    const version = call?.bot_version ?? head.published_version;
    const bot = await botAtVersion(svc.db, head, version);
    if (!bot) throw apiError('not_found', `the bot has no version ${version}`);
    const variables = call?.variables ?? {};
    // `templates=raw`: a handoff's bot, rendered by the worker with the call's variables (those passed on included).
    const render = (text: string) => (templates === 'raw' ? text : renderTemplate(text, variables));
    // A campaign's call: its answering machine settings over the bot's (a small read by _id).
    const override = call?.campaign_id ? (await campaigns(svc.db).findOne({ _id: call.campaign_id }, { projection: { answering_machine: 1 } }))?.answering_machine : null;
    // A bot test's call: its case's tool mocks (docs/design.md §17), so no tool reaches the CRM.
    const toolMocks = call?.test ? await testCaseMocks(svc.db, call.test.run_id, call.test.case_id) : null;
    const body: RuntimeConfig = {
      bot: {
        id: bot._id,
        name: bot.name,
        language: bot.language,
        prompt: render(bot.prompt),
        greeting: render(bot.greeting),
        voice: bot.voice,
        stt: bot.stt,
        llm: bot.llm,
        tools: openToolHeaders(box, bot.tools),
        tool_secret: bot.tool_secret_sealed ? box.open(bot.tool_secret_sealed) : null,
        mcp_servers: openMcpHeaders(box, bot.mcp_servers),
        knowledge_base_ids: bot.knowledge_base_ids,
        policy: bot.policy,
        turn_detection: bot.turn_detection,
        interruption: bot.interruption,
        dtmf: bot.dtmf,
        answering_machine: { ...bot.answering_machine, ...(override ?? {}) },
        audio: bot.audio,
        redaction: bot.redaction,
        recording: bot.recording,
        max_call_seconds: bot.max_call_seconds,
        flow: bot.flow,
        handoff: bot.handoff,
        // What the bots it may hand to listen for: the recogniser's grammar, made once for the call, hears it too.
        ...(bot.handoff ? { handoff_phrases: await handoffPhrases(svc.db, bot.handoff.bots) } : {}),
      },
      call: call ? { id: call._id, direction: call.direction, to_number: call.to_number, variables: call.variables, ...(toolMocks ? { tool_mocks: toolMocks } : {}) } : null,
      audio: { sample_rate: svc.settings.AUDIO_SAMPLE_RATE },
    };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  });
}
