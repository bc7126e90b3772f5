// Inbound numbers (docs/design.md §7): a phone number of ours that a bot answers. The admin API accepts and
// returns these; the backend mirrors each into LiveKit (an inbound trunk and a dispatch rule).
import { Type, type Static } from '@sinclair/typebox';
import { RESOURCE_ID_PATTERN } from './formats.js';
import { phoneNumberInput } from './phone.js';
import { VARIABLE_NAME_PATTERN } from './bot.js';

const V4_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const V4 = `${V4_OCTET}(?:\\.${V4_OCTET}){3}`;
const H = '[0-9A-Fa-f]{1,4}';
// Hex groups only (no embedded IPv4, no zone): every spelling of `::` compression.
const V6 =
  `(?:(?:${H}:){7}${H}|(?:${H}:){1,7}:|(?:${H}:){1,6}:${H}|(?:${H}:){1,5}(?::${H}){1,2}|(?:${H}:){1,4}(?::${H}){1,3}|` +
  `(?:${H}:){1,3}(?::${H}){1,4}|(?:${H}:){1,2}(?::${H}){1,5}|${H}:(?::${H}){1,6}|:(?:(?::${H}){1,7}|:))`;

/** An IPv4 or IPv6 address, optionally with a prefix length (CIDR): `203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`. */
export const IP_OR_CIDR_PATTERN = `^(?:${V4}(?:/(?:3[0-2]|[12]?[0-9]))?|${V6}(?:/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)$`;
export const MAX_ALLOWED_ADDRESSES = 32;

const number = phoneNumberInput('the number callers dial, in international format (stored and answered as E.164); one inbound number per number');
const botId = Type.String({ pattern: RESOURCE_ID_PATTERN, description: 'the bot that answers (a bot id)' });
// The same shape as a dial-out's variables (dialout.ts).
const variables = Type.Record(Type.String({ pattern: VARIABLE_NAME_PATTERN }), Type.String({ maxLength: 4000 }), {
  maxProperties: 50,
  additionalProperties: false,
  description: "every inbound call's variables: they must match the bot's declared variables, as a dial-out's do",
});
const allowedAddresses = Type.Array(Type.String({ pattern: IP_OR_CIDR_PATTERN, maxLength: 43 }), {
  maxItems: MAX_ALLOWED_ADDRESSES,
  uniqueItems: true,
  description: "the carrier's addresses (IPv4/IPv6, optionally CIDR) allowed to call this number; empty: any",
});

export const InboundNumberCreate = Type.Object(
  {
    number,
    bot_id: botId,
    variables: Type.Optional(variables),
    allowed_addresses: Type.Optional(allowedAddresses),
  },
  { additionalProperties: false },
);
export type InboundNumberCreate = Static<typeof InboundNumberCreate>;

/** PATCH: any field; omitted ones keep their value. */
export const InboundNumberUpdate = Type.Object(Type.Partial(InboundNumberCreate).properties, { additionalProperties: false, minProperties: 1 });
export type InboundNumberUpdate = Static<typeof InboundNumberUpdate>;

export const InboundNumber = Type.Object(
  {
    id: Type.String(),
    number: Type.String(),
    bot_id: Type.String(),
    variables: Type.Record(Type.String(), Type.String()),
    allowed_addresses: Type.Array(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type InboundNumber = Static<typeof InboundNumber>;
