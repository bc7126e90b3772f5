// The OpenAPI paths of the bots, built by openapi.ts with its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import { Bot, BotCreate, BotPublish, BotToolSecret, BotUpdate, BotVersion, BotVersionList, MAX_BOT_VERSION, VERSION_CURSOR_PATTERN, type ErrorCode } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'body' | 'idParam' | 'ADMIN' | 'BODY'>;

const BotList = Type.Object({ items: Type.Array(Bot) });

export function botPaths(h: Helpers): Record<string, object> {
  return {
    '/api/v1/bots': {
      post: {
        operationId: 'createBot',
        summary: 'Create a bot',
        description: '`{{name}}` placeholders in prompt, greeting and policy replies must name declared `variables` (else 422 `validation_failed`).',
        security: [{ adminJwt: [] }],
        requestBody: h.body(BotCreate),
        responses: { 201: h.ok('The bot', Bot), ...h.errors([...h.ADMIN, ...h.BODY]) },
      },
      get: { operationId: 'listBots', summary: 'List bots', security: [{ adminJwt: [] }], responses: { 200: h.ok('Bots, newest first', BotList), ...h.errors([...h.ADMIN]) } },
    },
    '/api/v1/bots/{id}': {
      parameters: [h.idParam('Bot id')],
      get: { operationId: 'getBot', summary: 'One bot', security: [{ adminJwt: [] }], responses: { 200: h.ok('The bot', Bot), ...h.errors([...h.ADMIN, 'bot_not_found']) } },
      patch: {
        operationId: 'updateBot',
        summary: 'Change a bot (deactivate with `{"active":false}`)',
        security: [{ adminJwt: [] }],
        requestBody: h.body(BotUpdate),
        responses: { 200: h.ok('The bot', Bot), ...h.errors([...h.ADMIN, ...h.BODY, 'bot_not_found', 'conflict'], { conflict: 'Changed concurrently' }) },
      },
    },
    '/api/v1/bots/{id}/versions': {
      parameters: [h.idParam('Bot id')],
      get: {
        operationId: 'listBotVersions',
        summary: "The bot's versions, newest first, with cursor pagination (each without its snapshot)",
        description: 'Every save of the behaviour (every field but `name`, `active` and `require_passing_tests`) is an immutable version. Versions outlive their bot.',
        security: [{ adminJwt: [] }],
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
          { name: 'cursor', in: 'query', schema: { type: 'string', pattern: VERSION_CURSOR_PATTERN }, description: 'The `next_cursor` of the previous page: `<created_at in ms>.<version>` of its last version' },
        ],
        responses: { 200: h.ok('Versions, newest first', BotVersionList), ...h.errors([...h.ADMIN, 'validation_failed', 'bot_not_found']) },
      },
    },
    '/api/v1/bots/{id}/versions/{version}': {
      parameters: [h.idParam('Bot id'), { name: 'version', in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: MAX_BOT_VERSION }, description: 'Version number' }],
      get: {
        operationId: 'getBotVersion',
        summary: 'One version of the bot: its behaviour snapshot (tool header values write-only)',
        security: [{ adminJwt: [] }],
        responses: { 200: h.ok('The version', BotVersion), ...h.errors([...h.ADMIN, 'validation_failed', 'bot_not_found', 'not_found'], { not_found: 'The bot has no such version' }) },
      },
    },
    '/api/v1/bots/{id}/publish': {
      parameters: [h.idParam('Bot id')],
      post: {
        operationId: 'publishBot',
        summary: 'Publish a version: the one calls run (an older version: the rollback)',
        description:
          'Dial-outs, campaigns, inbound and browser test calls run the published version from the next call on; each call records the version it ran (`bot_version`). ' +
          "A bot with `require_passing_tests` publishes only a version whose last test run is all green (done, none failed, some passed), else 409 `tests_failing`.",
        security: [{ adminJwt: [] }],
        requestBody: h.body(BotPublish),
        responses: {
          200: h.ok('The bot, its `published_version` the version asked for', Bot),
          ...h.errors([...h.ADMIN, ...h.BODY, 'bot_not_found', 'not_found', 'tests_failing', 'conflict'], { not_found: 'The bot has no such version', conflict: 'Changed concurrently' }),
        },
      },
    },
    '/api/v1/bots/{id}/tool-secret': {
      parameters: [h.idParam('Bot id')],
      post: {
        operationId: 'rotateBotToolSecret',
        summary: "Create or rotate the secret the bot's HTTP tool requests are signed with",
        description:
          'The secret (`whsec_` + 32 characters) is in this answer only (`Cache-Control: no-store`); HTTP tool requests carry ' +
          '`X-Voice-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` as webhooks do. A rotation replaces it at once.',
        security: [{ adminJwt: [] }],
        responses: { 200: h.ok('The new secret', BotToolSecret), ...h.errors([...h.ADMIN, 'bot_not_found']) },
      },
    },
  };
}
