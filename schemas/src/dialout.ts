// The dial-out request of `POST /api/v1/sip/dialout` and its 201 reply.
import { Type, type Static } from '@sinclair/typebox';
import { PHONE_NUMBER_PATTERN } from './formats.js';
import { VARIABLE_NAME_PATTERN } from './bot.js';

/** Contact data for a call: string → string, at most 50 entries. */
const callVariables = (description?: string) =>
  Type.Record(Type.String({ pattern: VARIABLE_NAME_PATTERN }), Type.String({ maxLength: 4000 }), {
    maxProperties: 50,
    ...(description ? { description } : {}),
  });
export const CallVariables = callVariables();
export type CallVariables = Static<typeof CallVariables>;

export const DialoutRequest = Type.Object(
  {
    bot_id: Type.String({ minLength: 1, maxLength: 128 }),
    to_number: Type.String({ pattern: PHONE_NUMBER_PATTERN, description: 'E.164 phone number' }),
    from_number: Type.Optional(Type.String({ pattern: PHONE_NUMBER_PATTERN, description: "caller ID: one of an outbound trunk's numbers (that trunk places the call); default: the default trunk's first number" })),
    variables: Type.Optional(CallVariables),
    connected_event: Type.Optional(callVariables('alias of variables; never both')),
  },
  { additionalProperties: false },
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
