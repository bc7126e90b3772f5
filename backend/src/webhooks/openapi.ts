// The OpenAPI paths of the call webhooks, and the events they deliver (the document's `webhooks`: what a
// receiver gets, signed), built by openapi.ts with its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import {
  CampaignDetail,
  CURSOR_PATTERN,
  MAX_WEBHOOKS,
  WEBHOOK_MAX_ATTEMPTS,
  Webhook,
  WebhookCallAnalyzedData,
  WebhookCallData,
  WebhookCreate,
  WebhookCreated,
  WebhookDeliveryAttempt,
  WebhookEvent,
  WebhookEventQueued,
  WebhookUpdate,
  type ErrorCode,
  TestRun,
} from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'body' | 'idParam' | 'ADMIN' | 'BODY' | 'plain' | 'json'>;

const WebhookList = Type.Object({ items: Type.Array(Webhook) });
const WebhookDeliveryPage = Type.Object({ items: Type.Array(WebhookDeliveryAttempt), next_cursor: Type.Union([Type.String({ pattern: CURSOR_PATTERN }), Type.Null()]) });
const SIGNING =
  'Each delivery is `POST <url>` with the JSON body `{id, type, created_at, data}` and the headers `Content-Type: application/json`, ' +
  '`X-Voice-Event-Id` (the same on every retry: dedupe on it), `X-Voice-Event-Type` and `X-Voice-Signature: t=<unix seconds>,v1=<hex ' +
  'HMAC-SHA256(secret, "<t>.<raw body>")>`, and the Standard Webhooks (standardwebhooks.com) headers `webhook-id` (the event id), ' +
  '`webhook-timestamp` (this attempt\'s unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>`, ' +
  'the key being the base64 decoding of the secret after `whsec_`: the `standardwebhooks` libraries (npm, PyPI, …) verify it given the secret as shown. ' +
  'Any 2xx within WEBHOOK_TIMEOUT_MS (10 s) is delivered; anything else (other statuses, ' +
  `redirects, timeouts, connection errors) is retried 1, 2, 4 … minutes later, at most ${WEBHOOK_MAX_ATTEMPTS} attempts, then the delivery is \`dead\`. ` +
  'At least once, in no guaranteed order.';
/** An event as a receiver gets it (OpenAPI 3.1 `webhooks`). */
const eventOperation = (h: Helpers, type: string, summary: string, data: object) => ({
  post: {
    operationId: `event_${type.replace(/\W/g, '_')}`,
    summary,
    description: SIGNING,
    // The receiver checks X-Voice-Signature itself: no scheme of this API applies.
    security: [],
    parameters: [
      { name: 'X-Voice-Event-Id', in: 'header', required: true, schema: { type: 'string' } },
      { name: 'X-Voice-Signature', in: 'header', required: true, schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$' } },
      { name: 'webhook-id', in: 'header', required: true, description: 'Standard Webhooks: the event id (as X-Voice-Event-Id)', schema: { type: 'string' } },
      { name: 'webhook-timestamp', in: 'header', required: true, description: "Standard Webhooks: this attempt's unix seconds", schema: { type: 'string', pattern: '^[0-9]+$' } },
      { name: 'webhook-signature', in: 'header', required: true, description: 'Standard Webhooks: `v1,<base64 HMAC-SHA256>`', schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=$' } },
    ],
    requestBody: { required: true, content: h.json({ ...h.plain(WebhookEvent), properties: { ...WebhookEvent.properties, type: { const: type }, data } }) },
    responses: { '2XX': { description: 'Delivered' }, default: { description: 'Not delivered: retried' } },
  },
});

export function webhookPaths(h: Helpers): Record<string, object> {
  return {
    '/api/v1/webhooks': {
      post: {
        operationId: 'createWebhook',
        summary: 'Create a call webhook; its signing secret is in this response only',
        description:
          `At most ${MAX_WEBHOOKS} webhooks (409 \`conflict\`). The \`secret\` (\`whsec_\` + 32 characters) signs every delivery and is never shown again. ${SIGNING}`,
        security: [{ adminJwt: [] }],
        requestBody: h.body(WebhookCreate),
        responses: { 201: h.ok('The webhook, with `secret` shown this once', WebhookCreated, { Location: { description: 'The webhook resource', schema: { type: 'string' } } }), ...h.errors([...h.ADMIN, ...h.BODY, 'conflict']) },
      },
      get: { operationId: 'listWebhooks', summary: 'List webhooks, newest first (no secrets)', security: [{ adminJwt: [] }], responses: { 200: h.ok('Webhooks', WebhookList), ...h.errors([...h.ADMIN]) } },
    },
    '/api/v1/webhooks/{id}': {
      parameters: [h.idParam('Webhook id')],
      get: { operationId: 'getWebhook', summary: 'One webhook (no secret)', security: [{ adminJwt: [] }], responses: { 200: h.ok('The webhook', Webhook), ...h.errors([...h.ADMIN, 'not_found']) } },
      patch: {
        operationId: 'updateWebhook',
        summary: 'Change url, events, description or active',
        description: '`active: false` pauses the webhook: it gets no new events, and deliveries already queued for it wait until it is active again. A new `url` is checked like at creation.',
        security: [{ adminJwt: [] }],
        requestBody: h.body(WebhookUpdate),
        responses: { 200: h.ok('The webhook', Webhook), ...h.errors([...h.ADMIN, ...h.BODY, 'not_found']) },
      },
      delete: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook, its pending deliveries and its deliveries log',
        security: [{ adminJwt: [] }],
        responses: { 204: { description: 'Deleted' }, ...h.errors([...h.ADMIN, 'not_found']) },
      },
    },
    '/api/v1/webhooks/{id}/deliveries': {
      parameters: [h.idParam('Webhook id')],
      get: {
        operationId: 'listWebhookDeliveries',
        summary: 'The delivery attempts of a webhook, newest first, with cursor pagination',
        description: 'One item per attempt. An unknown query parameter is refused (422 `validation_failed` naming it).',
        security: [{ adminJwt: [] }],
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
          {
            name: 'cursor',
            in: 'query',
            schema: { type: 'string', pattern: CURSOR_PATTERN },
            description: '`next_cursor` of the previous page: `<attempted_at in ms>.<attempt id>` of its last item; the page starts after it',
          },
        ],
        responses: { 200: h.ok('A page of attempts', WebhookDeliveryPage), ...h.errors([...h.ADMIN, 'not_found', 'validation_failed']) },
      },
    },
    '/api/v1/webhooks/{id}/test': {
      parameters: [h.idParam('Webhook id')],
      post: {
        operationId: 'testWebhook',
        summary: 'Queue a `webhook.test` event for this webhook only (whatever it subscribes to)',
        description: 'Delivered, signed and retried like any event; watch the deliveries log for the outcome.',
        security: [{ adminJwt: [] }],
        responses: {
          202: h.ok('The event is queued', WebhookEventQueued),
          ...h.errors([...h.ADMIN, 'not_found', 'conflict', 'service_unavailable'], { conflict: 'The webhook is paused', service_unavailable: 'Redis (the event outbox) is unreachable' }),
        },
      },
    },
  };
}

/** The document's `webhooks`: each event type a receiver may get. */
export function webhookEvents(h: Helpers): Record<string, object> {
  return {
    'call.queued': eventOperation(h, 'call.queued', 'A call was created (dial-out accepted, or a WebSocket / browser call started)', h.plain(WebhookCallData)),
    'call.ringing': eventOperation(h, 'call.ringing', "The callee's phone rings", h.plain(WebhookCallData)),
    'call.in_progress': eventOperation(h, 'call.in_progress', 'The call was answered (connected)', h.plain(WebhookCallData)),
    'call.ended': eventOperation(
      h,
      'call.ended',
      'The call ended (any terminal status). For an answered call it waits for the recording report, up to WEBHOOK_RECORDING_WAIT_SECONDS. ' +
        'To a webhook with include_transcript, `data.transcript` holds what was said',
      h.plain(WebhookCallData),
    ),
    'call.analyzed': eventOperation(
      h,
      'call.analyzed',
      "The call's post-call analysis is over (bots with `analysis` settings only): `data` is the call and its `analysis` " +
        '(done, failed after 4 attempts, or skipped: no caller turn). To a webhook with include_transcript, `data.transcript` holds what was said',
      h.plain(WebhookCallAnalyzedData),
    ),
    'campaign.started': eventOperation(h, 'campaign.started', 'A campaign started (POST /api/v1/campaigns/{id}/start); `data` is the campaign with its counts', h.plain(CampaignDetail)),
    'campaign.completed': eventOperation(h, 'campaign.completed', 'A running campaign has no contact left to dial or in a call; `data` is the campaign with its counts', h.plain(CampaignDetail)),
    'test_run.completed': eventOperation(h, 'test_run.completed', "A bot's test run has every case's result (docs/design.md §17); `data` is the run as GET /api/v1/bots/{id}/test-runs/{run_id} answers it", h.plain(TestRun)),
    'webhook.test': eventOperation(h, 'webhook.test', 'Sent on request (POST /api/v1/webhooks/{id}/test)', {
      type: 'object',
      required: ['webhook_id', 'message'],
      properties: { webhook_id: { type: 'string' }, message: { type: 'string' } },
    }),
  };
}
