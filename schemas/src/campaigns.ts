// The campaign and do-not-call contract (docs/design.md §8) as TypeBox schemas: the backend validates
// requests and builds the OpenAPI document with them; the console checks its forms with the same ones.
import { Type, type Static } from '@sinclair/typebox';
import { CURSOR_PATTERN, RESOURCE_ID_PATTERN } from './formats.js';
import { phoneNumberInput, REGION_PATTERN } from './phone.js';
import { AnsweringMachine } from './bot.js';

export const CAMPAIGN_STATUSES = ['draft', 'running', 'paused', 'completed', 'canceled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export const CONTACT_STATUSES = ['pending', 'dialing', 'completed', 'busy', 'no_answer', 'failed', 'retry_scheduled', 'skipped_dnc', 'canceled'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
/** `voicemail`: an answering machine took the call and the bot hung up (docs/design.md §10). */
export const RETRY_OUTCOMES = ['busy', 'no_answer', 'failed', 'voicemail'] as const;
export type RetryOutcome = (typeof RETRY_OUTCOMES)[number];
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Limits of one contacts upload: rows (JSON items or CSV data rows), CSV bytes, one CSV line, CSV columns. */
export const MAX_CONTACTS_PER_UPLOAD = 5000;
export const MAX_CSV_BYTES = 1024 * 1024;
export const MAX_CSV_ROW_CHARS = 4096;
export const MAX_CSV_COLUMNS = 52; // to_number, timezone and at most 50 variables
const MAX_DNC_PER_REQUEST = 1000;
const MAX_CAMPAIGN_WINDOWS = 50;

/** IANA zone names as Intl knows them (`Europe/Berlin`, `UTC`, `America/Argentina/Buenos_Aires`); the
 *  server also checks that Intl accepts the name. */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,3}$';
const timezone = (description: string) => Type.String({ pattern: TIME_ZONE_PATTERN, maxLength: 64, description });
const HH_MM = '^(?:[01][0-9]|2[0-3]):[0-5][0-9]$';
const HH_MM_END = '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';
const phone = phoneNumberInput('E.164, or a national number read in the default region (normalised to E.164)');
const time = Type.String({ format: 'date-time' });
const nullableTime = Type.Union([time, Type.Null()]);

export const CallingWindow = Type.Object(
  {
    days: Type.Array(Type.Union(WEEKDAYS.map((d) => Type.Literal(d))), { minItems: 1, maxItems: 7, uniqueItems: true }),
    start: Type.String({ pattern: HH_MM, description: 'local time of day the window opens, HH:MM' }),
    end: Type.String({ pattern: HH_MM_END, description: 'local time of day the window closes (exclusive), HH:MM or 24:00; must be after start' }),
  },
  { additionalProperties: false },
);
export type CallingWindow = Static<typeof CallingWindow>;

const RetryRule = Type.Object(
  {
    max_attempts: Type.Integer({ minimum: 1, maximum: 10, description: 'dials of one contact at most, the first included' }),
    delay_seconds: Type.Integer({ minimum: 30, maximum: 604800, description: 'wait after a retried outcome before the next dial' }),
    on: Type.Array(Type.Union(RETRY_OUTCOMES.map((o) => Type.Literal(o))), {
      maxItems: RETRY_OUTCOMES.length,
      uniqueItems: true,
      description: 'outcomes that are retried; `failed` never covers end_reason `invalid_number`; `voicemail` is a call a machine answered (end_reason voicemail, not voicemail_left)',
    }),
  },
  { additionalProperties: false },
);

/** A campaign's answering machine settings over its bot's (docs/design.md §10): what it leaves out is the bot's. */
const AnsweringMachineOverride = Type.Partial(Type.Pick(AnsweringMachine, ['detect', 'on_machine']), { additionalProperties: false });

export const CampaignCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    bot_id: Type.String({ pattern: RESOURCE_ID_PATTERN }),
    from_number: Type.Optional(phoneNumberInput("caller ID: one of a trunk's numbers, in international format (else the default trunk)")),
    default_region: Type.Optional(Type.String({ pattern: REGION_PATTERN, description: "ISO 3166-1 alpha-2 region national contact numbers are read in; default: the country of the caller ID (from_number, else the default trunk's first number)" })),
    timezone: timezone("IANA time zone of the windows for contacts without their own (must be one this server's Intl knows)"),
    windows: Type.Array(CallingWindow, { maxItems: MAX_CAMPAIGN_WINDOWS, description: 'when contacts may be dialled, in their own time zone; empty = always' }),
    max_concurrency: Type.Integer({ minimum: 1, maximum: 1000, description: "this campaign's calls live at once, at most" }),
    calls_per_second: Type.Number({ exclusiveMinimum: 0, maximum: 10, description: 'dials per second at most (below 1: one dial per 1/calls_per_second seconds)' }),
    retry: RetryRule,
    answering_machine: Type.Optional(AnsweringMachineOverride),
  },
  { additionalProperties: false },
);
export type CampaignCreate = Static<typeof CampaignCreate>;

const counts = Type.Object(
  Object.fromEntries(CONTACT_STATUSES.map((s) => [s, Type.Integer({ minimum: 0 })])) as Record<ContactStatus, ReturnType<typeof Type.Integer>>,
  { additionalProperties: false, description: 'contacts by status' },
);

export const Campaign = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    bot_id: Type.String(),
    from_number: Type.Union([Type.String(), Type.Null()]),
    /** The region national contact numbers are read in; null: the caller ID's country at upload time. */
    default_region: Type.Union([Type.String(), Type.Null()]),
    timezone: Type.String(),
    windows: Type.Array(CallingWindow),
    max_concurrency: Type.Integer(),
    calls_per_second: Type.Number(),
    retry: RetryRule,
    /** Overrides the bot's answering machine settings for this campaign's calls; null: the bot's. */
    answering_machine: Type.Union([AnsweringMachineOverride, Type.Null()]),
    status: Type.Union(CAMPAIGN_STATUSES.map((s) => Type.Literal(s))),
    /** Why the dialler paused a running campaign by itself (bot gone or inactive, no trunk); null otherwise. */
    paused_reason: Type.Union([Type.String(), Type.Null()]),
    created_at: time,
    updated_at: time,
    started_at: nullableTime,
    completed_at: nullableTime,
    canceled_at: nullableTime,
  },
  { additionalProperties: false },
);
export type Campaign = Static<typeof Campaign>;

export const CampaignDetail = Type.Object({ ...Campaign.properties, counts }, { additionalProperties: false });
export type CampaignDetail = Static<typeof CampaignDetail>;

const cursor = Type.Union([Type.String({ pattern: CURSOR_PATTERN }), Type.Null()]);
export const CampaignPage = Type.Object({ items: Type.Array(Campaign), next_cursor: cursor });

/** One contact row as the server checks it (JSON item or CSV row); reported per row, never for the whole upload. */
export const ContactInput = Type.Object(
  {
    to_number: phone,
    variables: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 2000 }), { maxProperties: 50 })),
    timezone: Type.Optional(timezone('IANA time zone of this contact; else the campaign\'s')),
  },
  { additionalProperties: false },
);

export const ContactsUpload = Type.Object(
  {
    contacts: Type.Array(
      // Items are checked one by one: a bad row is reported in `rejected`, never refused with the upload.
      Type.Unknown({ description: 'Each item `{to_number (E.164, or national in the campaign\'s default_region), variables? (string → string, at most 50, matching the bot\'s declared variables), timezone? (IANA)}`; an item that is not is reported in `rejected`' }),
      { minItems: 1, maxItems: MAX_CONTACTS_PER_UPLOAD },
    ),
  },
  { additionalProperties: false },
);

export const ContactsResult = Type.Object(
  {
    added: Type.Integer({ minimum: 0 }),
    duplicates: Type.Integer({ minimum: 0, description: 'rows whose number is already in the campaign, or earlier in this upload' }),
    rejected: Type.Array(
      Type.Object(
        { row: Type.Integer({ minimum: 1, description: '1-based position in the upload (CSV: data rows, the header not counted)' }), field: Type.String(), message: Type.String() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ContactsResult = Static<typeof ContactsResult>;

const ContactAttempt = Type.Object(
  {
    call_id: Type.String(),
    status: Type.String({ description: 'the call status: `queued` while it is live, then its terminal status' }),
    end_reason: Type.Union([Type.String(), Type.Null()]),
    at: time,
  },
  { additionalProperties: false },
);

export const Contact = Type.Object(
  {
    id: Type.String(),
    campaign_id: Type.String(),
    to_number: Type.String(),
    variables: Type.Record(Type.String(), Type.String()),
    timezone: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union(CONTACT_STATUSES.map((s) => Type.Literal(s))),
    attempts: Type.Array(ContactAttempt),
    next_attempt_at: nullableTime,
    /** Why the contact ended without a call (e.g. `variables_mismatch` after the bot changed); null otherwise. */
    error: Type.Union([Type.String(), Type.Null()]),
    created_at: time,
    updated_at: time,
  },
  { additionalProperties: false },
);
export type Contact = Static<typeof Contact>;
export const ContactPage = Type.Object({ items: Type.Array(Contact), next_cursor: cursor });

export const DncAdd = Type.Object(
  { numbers: Type.Array(phone, { minItems: 1, maxItems: MAX_DNC_PER_REQUEST }) },
  { additionalProperties: false },
);
export const DncAdded = Type.Object(
  { added: Type.Integer({ minimum: 0 }), duplicates: Type.Integer({ minimum: 0, description: 'numbers already listed (or repeated in the request)' }) },
  { additionalProperties: false },
);
export const DncEntry = Type.Object({ number: Type.String(), created_at: time }, { additionalProperties: false });
export const DncPage = Type.Object({ items: Type.Array(DncEntry), next_cursor: cursor });
