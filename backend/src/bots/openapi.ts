// The OpenAPI paths of the bots, built by openapi.ts with its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import { Bot, BotCreate, BotToolSecret, BotUpdate, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  idParam: (description: string) => object;
  ADMIN: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
}

const BotList = Type.Object({ items: Type.Array(Bot) });

export function botPaths(h: DocHelpers): Record<string, object> {
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
