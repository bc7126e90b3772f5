// Outbound SIP trunks (docs/design.md §7): how the platform reaches a carrier. The admin API accepts and
// returns these; the backend mirrors each into LiveKit. `auth_password` is write-only.
import { Type, type Static } from '@sinclair/typebox';
import { phoneNumberInput } from './phone.js';

export const SIP_TRANSPORTS = ['udp', 'tcp', 'tls'] as const;
export type SipTransport = (typeof SIP_TRANSPORTS)[number];

/** `host[:port]`: a DNS name or IPv4 address, optional port 1–65535. No scheme, user or path. */
export const TRUNK_ADDRESS_PATTERN =
  '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$';
const MAX_TRUNK_NUMBERS = 100;

const name = Type.String({ minLength: 1, maxLength: 200 });
const address = Type.String({ minLength: 1, maxLength: 253, pattern: TRUNK_ADDRESS_PATTERN, description: 'host[:port] of the carrier\'s SIP server' });
const transport = Type.Union(SIP_TRANSPORTS.map((t) => Type.Literal(t)));
const numbers = Type.Array(phoneNumberInput('caller ID in international format (+, country code; spaces and punctuation allowed), stored as E.164'), {
  minItems: 1,
  maxItems: MAX_TRUNK_NUMBERS,
  uniqueItems: true,
  description: 'caller IDs this trunk may present (stored and answered as E.164; the same number twice is refused)',
});
/** Printable ASCII without spaces: what SIP digest auth can carry. */
const authUsername = Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' });
const authPassword = Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x20-\\x7e]+$', writeOnly: true });

export const OutboundTrunkCreate = Type.Object(
  {
    name,
    address,
    transport: Type.Optional(transport),
    numbers,
    auth_username: Type.Optional(authUsername),
    auth_password: Type.Optional(authPassword),
    default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, dependentRequired: { auth_password: ['auth_username'] } },
);
export type OutboundTrunkCreate = Static<typeof OutboundTrunkCreate>;

/** PATCH: any field; `auth_username: null` removes the credentials, `default: true` makes it the default. */
export const OutboundTrunkUpdate = Type.Object(
  {
    name: Type.Optional(name),
    address: Type.Optional(address),
    transport: Type.Optional(transport),
    numbers: Type.Optional(numbers),
    auth_username: Type.Optional(Type.Union([authUsername, Type.Null()])),
    auth_password: Type.Optional(
      Type.Union([authPassword, Type.Null()], {
        description: 'a new password needs a username: auth_username in this PATCH or the stored one (else 422 validation_failed); null removes the password',
      }),
    ),
    default: Type.Optional(Type.Literal(true, { description: 'mark this trunk the default; unmark by marking another' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type OutboundTrunkUpdate = Static<typeof OutboundTrunkUpdate>;

export const OutboundTrunk = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    address: Type.String(),
    transport,
    numbers: Type.Array(Type.String()),
    auth_username: Type.Union([Type.String(), Type.Null()]),
    /** Whether a password is stored; the password itself is never returned. */
    has_password: Type.Boolean(),
    default: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type OutboundTrunk = Static<typeof OutboundTrunk>;
