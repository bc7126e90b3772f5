// Call webhooks (docs/design.md §8): the admin API's bodies, the deliveries log, and what a receiver gets.
// The signing secret appears only in WebhookCreated.
import { Type, type Static } from '@sinclair/typebox';
import { CallAction, CallAnalysis, CallTransfer, callIdentityFields, TranscriptEntry } from './calls.js';
import { CallVariables } from './dialout.js';

/** Event types a webhook can subscribe to. */
export const WEBHOOK_EVENT_TYPES = ['call.queued', 'call.ringing', 'call.in_progress', 'call.ended', 'call.analyzed', 'campaign.started', 'campaign.completed', 'test_run.completed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** Sent to one webhook on request (`POST /api/v1/webhooks/{id}/test`), whatever it subscribes to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
export type WebhookDeliveredType = WebhookEventType | typeof WEBHOOK_TEST_EVENT;

/** The signing secret: `whsec_` and 32 characters of [A-Za-z0-9]. */
export const WEBHOOK_SECRET_PATTERN = '^whsec_[A-Za-z0-9]{32}$';
/** http(s) only, a host, no user name or password (nothing between `//` and the host ends in `@`). */
export const WEBHOOK_URL_PATTERN = '^https?://[^/?#@\\s]+(?:[/?#]\\S*)?$';
/** Attempts per event and webhook: the first, then retries 1, 2, 4, … 64 minutes apart; then `dead`. */
export const WEBHOOK_MAX_ATTEMPTS = 8;
/** The first retry's delay; each later one doubles. */
export const WEBHOOK_FIRST_RETRY_MS = 60_000;
/** Webhooks one deployment may have (each event is fanned out to every subscribed one). */
export const MAX_WEBHOOKS = 100;

const eventType = Type.Union(WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)));
const url = Type.String({
  maxLength: 2048,
  format: 'uri',
  pattern: WEBHOOK_URL_PATTERN,
  description:
    'http:// or https:// URL without credentials. Its host must resolve, and not to a loopback, private, link-local, unique-local ' +
    'or other non-public address (IPv4 or IPv6, IPv4-mapped included), unless the backend runs with WEBHOOK_ALLOW_PRIVATE=true ' +
    '(else 422 validation_failed naming `url`). Checked again before every delivery attempt.',
});
const events = Type.Array(eventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true, description: 'event types to receive' });
const description = Type.String({ maxLength: 500 });
const includeTranscript = Type.Boolean({ description: 'call.ended and call.analyzed carry the call\'s transcript (`data.transcript`); default false' });
const time = Type.String({ format: 'date-time' });
const nullableTime = Type.Union([time, Type.Null()]);

export const WebhookCreate = Type.Object({ url, events, description: Type.Optional(description), include_transcript: Type.Optional(includeTranscript) }, { additionalProperties: false });
export type WebhookCreate = Static<typeof WebhookCreate>;

/** PATCH: any field; `active: false` pauses the webhook (no new events; deliveries already queued wait), `true` resumes it. */
export const WebhookUpdate = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    description: Type.Optional(Type.Union([description, Type.Null()])),
    active: Type.Optional(Type.Boolean()),
    include_transcript: Type.Optional(includeTranscript),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type WebhookUpdate = Static<typeof WebhookUpdate>;

const webhookFields = {
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(eventType),
  description: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  include_transcript: Type.Boolean(),
  created_at: time,
  updated_at: time,
};

export const Webhook = Type.Object(webhookFields, { additionalProperties: false });
export type Webhook = Static<typeof Webhook>;

export const WebhookCreated = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({ pattern: WEBHOOK_SECRET_PATTERN, description: 'the signing secret: in this response only, ever' }),
  },
  { additionalProperties: false },
);
export type WebhookCreated = Static<typeof WebhookCreated>;

const WEBHOOK_ATTEMPT_RESULTS = ['delivered', 'failed', 'dead'] as const;
export type WebhookAttemptResult = (typeof WEBHOOK_ATTEMPT_RESULTS)[number];

/** One delivery attempt of one event to one webhook (the deliveries log). */
export const WebhookDeliveryAttempt = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String(),
    type: Type.String({ description: 'the event type' }),
    attempt: Type.Integer({ minimum: 1, maximum: WEBHOOK_MAX_ATTEMPTS }),
    status: Type.Union(WEBHOOK_ATTEMPT_RESULTS.map((r) => Type.Literal(r)), {
      description: '`delivered`: a 2xx answer; `failed`: retried at next_attempt_at; `dead`: the last attempt failed, no more retries',
    }),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "the receiver's HTTP status; null when it gave none" }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'why the attempt failed; null when delivered' }),
    duration_ms: Type.Integer({ minimum: 0 }),
    attempted_at: time,
    next_attempt_at: Type.Union([time, Type.Null()], { description: 'when the next attempt is due (status failed)' }),
    delivered_at: nullableTime,
  },
  { additionalProperties: false },
);
export type WebhookDeliveryAttempt = Static<typeof WebhookDeliveryAttempt>;

/** `POST /api/v1/webhooks/{id}/test`: the event queued for the webhook. */
export const WebhookEventQueued = Type.Object({ id: Type.String(), type: Type.Literal(WEBHOOK_TEST_EVENT), created_at: time }, { additionalProperties: false });
export type WebhookEventQueued = Static<typeof WebhookEventQueued>;

/** `data` of every call.* event: the call as it was when the event was made (the transcript only in call.ended and
 *  call.analyzed, and only to a webhook with include_transcript: else read it with GET /api/v1/calls/{id}). */
export const WebhookCallData = Type.Object(
  {
    ...callIdentityFields,
    end_reason: Type.Union([Type.String(), Type.Null()]),
    sip_status_code: Type.Union([Type.Integer(), Type.Null()]),
    created_at: time,
    started_at: nullableTime,
    ended_at: nullableTime,
    duration_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'null until the call ends; then from started_at (answered) to ended_at, 0 for a call never answered',
    }),
    recording_key: Type.Union([Type.String(), Type.Null()]),
    recording_error: Type.Union([Type.String(), Type.Null()]),
    variables: CallVariables,
    campaign_id: Type.Union([Type.String(), Type.Null()], { description: 'the campaign that placed the call; null otherwise' }),
    status_times: Type.Record(Type.String(), time),
    actions: Type.Array(CallAction, { description: 'what the bot did so far (tools, transfer, keys)' }),
    transfer: Type.Union([CallTransfer, Type.Null()]),
    transcript: Type.Optional(Type.Array(TranscriptEntry, { description: 'call.ended and call.analyzed to a webhook with include_transcript only: what was said, in order' })),
  },
  { additionalProperties: false },
);
export type WebhookCallData = Static<typeof WebhookCallData>;

/** `data` of call.analyzed: the call (as call.ended's) and its analysis, once done, failed or skipped. */
export const WebhookCallAnalyzedData = Type.Object({ ...WebhookCallData.properties, analysis: CallAnalysis }, { additionalProperties: false });
export type WebhookCallAnalyzedData = Static<typeof WebhookCallAnalyzedData>;

/** The body of every delivery (its raw bytes are what X-Voice-Signature signs). */
export const WebhookEvent = Type.Object(
  {
    id: Type.String({ description: 'the event id (also in X-Voice-Event-Id): the same on every retry; dedupe on it' }),
    type: Type.String(),
    created_at: time,
    data: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);
export type WebhookEvent = Static<typeof WebhookEvent>;
