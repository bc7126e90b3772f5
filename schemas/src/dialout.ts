// The dial-out request of `POST /api/v1/sip/dialout` and its 201 reply.
import { Type, type Static } from '@sinclair/typebox';
import { RESOURCE_ID_PATTERN } from './formats.js';
import { phoneNumberInput, REGION_PATTERN } from './phone.js';
import { VARIABLE_NAME_PATTERN } from './bot.js';

/** Contact data for a call: string → string, at most 50 entries, each name a variable name (no other keys). */
const callVariables = (description?: string) =>
  Type.Record(Type.String({ pattern: VARIABLE_NAME_PATTERN }), Type.String({ maxLength: 4000 }), {
    maxProperties: 50,
    additionalProperties: false,
    ...(description ? { description } : {}),
  });
export const CallVariables = callVariables();
export type CallVariables = Static<typeof CallVariables>;

export const DialoutRequest = Type.Object(
  {
    bot_id: Type.String({ pattern: RESOURCE_ID_PATTERN, description: 'the bot that talks (a bot id)' }),
    to_number: phoneNumberInput('the number to call: E.164, or a national number read in default_region (normalised to E.164)'),
    from_number: Type.Optional(phoneNumberInput("caller ID: one of an outbound trunk's numbers (that trunk places the call), in international format; default: the default trunk's first number")),
    default_region: Type.Optional(Type.String({ pattern: REGION_PATTERN, description: "ISO 3166-1 alpha-2 region a national to_number is read in; default: the caller ID's country" })),
    variables: Type.Optional(CallVariables),
    connected_event: Type.Optional(callVariables('alias of variables; never both (422 conflicting_fields)')),
  },
  {
    additionalProperties: false,
    // `variables` and its alias `connected_event` are mutually exclusive (422 conflicting_fields).
    not: { required: ['variables', 'connected_event'] },
  },
);
export type DialoutRequest = Static<typeof DialoutRequest>;

export const DialoutResponse = Type.Object(
  {
    call_id: Type.String(),
    status: Type.Literal('queued'),
    bot_id: Type.String(),
    to_number: Type.String(),
    from_number: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type DialoutResponse = Static<typeof DialoutResponse>;

/** Longest accepted `Idempotency-Key` header. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** POST /livekit/widget: a browser test call (docs/design.md §7). */
export const WidgetRequest = Type.Object(
  {
    bot_id: Type.String({ pattern: RESOURCE_ID_PATTERN, description: 'the bot that talks (a bot id)' }),
    variables: Type.Optional(CallVariables),
  },
  { additionalProperties: false },
);
export type WidgetRequest = Static<typeof WidgetRequest>;

export const WidgetResponse = Type.Object(
  {
    call_id: Type.String(),
    room_name: Type.String({ description: 'the call\'s LiveKit room (named by the call id)' }),
    livekit_url: Type.String({ description: 'where the browser connects (LIVEKIT_PUBLIC_URL)' }),
    access_token: Type.String({ description: 'a LiveKit token for this room only: join, publish the microphone, subscribe; identity `caller`' }),
    expires_at: Type.String({ format: 'date-time', description: 'the token expires then (at most 10 minutes)' }),
  },
  { additionalProperties: false },
);
export type WidgetResponse = Static<typeof WidgetResponse>;

/** POST /api/v1/test-calls/token: a signed, short-lived, single-use token for one WebSocket test call. */
export const TestCallTokenRequest = Type.Object(
  { bot_id: Type.String({ pattern: RESOURCE_ID_PATTERN, description: 'the bot the token lets one call talk to' }) },
  { additionalProperties: false },
);
export type TestCallTokenRequest = Static<typeof TestCallTokenRequest>;

export const TestCallTokenResponse = Type.Object(
  {
    token: Type.String({ description: 'pass it as `?token=` on `WS /ws/{bot_id}`; good for one call to this bot' }),
    bot_id: Type.String(),
    ws_path: Type.String({ description: 'the worker path with the token, e.g. `/ws/demo-bot?token=vt1…`' }),
    expires_at: Type.String({ format: 'date-time', description: 'a call must start before then (TEST_CALL_TOKEN_TTL_SECONDS, at most 10 minutes)' }),
  },
  { additionalProperties: false },
);
export type TestCallTokenResponse = Static<typeof TestCallTokenResponse>;
