// The OpenAPI paths of campaigns and the do-not-call list, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import {
  CAMPAIGN_STATUSES,
  CURSOR_PATTERN,
  PHONE_NUMBER_INPUT_MAX_LENGTH,
  CampaignCreate,
  CampaignDetail,
  CampaignPage,
  CONTACT_STATUSES,
  ContactPage,
  ContactsResult,
  ContactsUpload,
  DncAdd,
  DncAdded,
  DncPage,
  MAX_CONTACTS_PER_UPLOAD,
  MAX_CSV_BYTES,
  MAX_CSV_COLUMNS,
  MAX_CSV_ROW_CHARS,
  type ErrorCode,
} from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'requestJson' | 'body' | 'idParam' | 'ADMIN' | 'BODY'>;

const CAMPAIGN_RULES =
  'Beyond the schema: `timezone` must be a zone this server\'s Intl knows (422 `validation_failed` naming `timezone`), each window\'s `end` ' +
  'must be after its `start` (naming `windows.N.end`), `bot_id` must name a bot (404 `bot_not_found`), and `from_number`, when given, must be ' +
  "one of an outbound trunk's numbers (422 `unknown_from_number`; in international format, normalised to E.164, a number that cannot exist " +
  'is 422 `validation_failed` naming `from_number` with the reason: too short, too long, invalid length, invalid country calling code, not a number). ' +
  '`default_region` (ISO 3166-1 alpha-2) is where national contact numbers are read; without it, the country of the caller ID when the contacts are added. ' +
  'The campaign is created `draft`: add contacts, then start it.';

const DIALLER =
  'The dialler role dials `pending` contacts (and `retry_scheduled` ones once `next_attempt_at` has come) while the campaign is `running`: ' +
  'only inside a calling window of the contact\'s own `timezone` (else the campaign\'s); never more than `max_concurrency` of its calls live, ' +
  'never more than `calls_per_second` dials in any second (below 1: one dial per 1/calls_per_second seconds), and only while the fleet has more ' +
  'than CAMPAIGN_FLEET_HEADROOM_SLOTS (default 1) free slots, which API dial-outs keep. Each dial is a dial-out (the same checks, trunk and ' +
  'capacity reservation; call.* webhooks carry `campaign_id`); a dial the fleet has no room for leaves the contact `pending` (no attempt). ' +
  'The do-not-call list is checked right before each dial (`skipped_dnc`). A call that ends `busy`, `no_answer` or `failed` (never `failed` ' +
  '/ `invalid_number`) is retried after `retry.delay_seconds` when `retry.on` names its outcome and attempts are left (`retry_scheduled`); ' +
  'otherwise the contact ends with the outcome. A contact is never dialled twice for one attempt, whatever replicas run or die. When no ' +
  'contact is `pending`, `retry_scheduled` or `dialing`, a running campaign becomes `completed` (`campaign.completed` webhook). If a dial is ' +
  'refused for the bot (gone, inactive) or the trunk, the dialler pauses the campaign with `paused_reason` (the error code).';

export function campaignPaths(d: Helpers): Record<string, object> {
  const { ok, errors, requestJson, body, idParam, ADMIN, BODY } = d;
  const id = idParam('Campaign id');
  const page = (what: string) => [
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    { name: 'cursor', in: 'query', schema: { type: 'string', pattern: CURSOR_PATTERN }, description: `\`next_cursor\` of the previous page: \`<created_at in ms>.<id>\` of its last ${what}` },
  ];
  const transition = (operationId: string, summary: string, description: string, extra: readonly ErrorCode[] = []) => ({
    parameters: [id],
    post: {
      operationId,
      summary,
      description,
      security: [{ adminJwt: [] }],
      responses: {
        200: ok('The campaign, with contact counts', CampaignDetail),
        ...errors([...ADMIN, 'not_found', 'conflict', ...extra], {
          conflict: 'Not allowed from the current status (`details.status`, `details.allowed_from`), or changed concurrently',
          unknown_from_number: "The campaign's `from_number` is no longer a trunk's number",
        }),
      },
    },
  });
  const botChecks: ErrorCode[] = ['bot_not_found', 'bot_inactive', 'no_outbound_trunk', 'unknown_from_number'];
  return {
    '/api/v1/campaigns': {
      post: {
        operationId: 'createCampaign',
        summary: 'Create a campaign (status `draft`)',
        description: `${CAMPAIGN_RULES}\n\n${DIALLER}`,
        security: [{ adminJwt: [] }],
        requestBody: body(CampaignCreate),
        responses: {
          201: ok('The campaign, with contact counts', CampaignDetail, { Location: { description: 'The campaign resource', schema: { type: 'string' } } }),
          ...errors([...ADMIN, ...BODY, 'bot_not_found', 'unknown_from_number']),
        },
      },
      get: {
        operationId: 'listCampaigns',
        summary: 'List campaigns, newest first, with cursor pagination',
        description: 'An unknown query parameter is refused (422 `validation_failed` naming it).',
        security: [{ adminJwt: [] }],
        parameters: [{ name: 'status', in: 'query', schema: { type: 'string', enum: [...CAMPAIGN_STATUSES] } }, ...page('campaign')],
        responses: { 200: ok('A page of campaigns (no counts: read one campaign for them)', CampaignPage), ...errors([...ADMIN, 'validation_failed']) },
      },
    },
    '/api/v1/campaigns/{id}': {
      parameters: [id],
      get: {
        operationId: 'getCampaign',
        summary: 'One campaign with its contacts counted by status',
        security: [{ adminJwt: [] }],
        responses: { 200: ok('The campaign', CampaignDetail), ...errors([...ADMIN, 'not_found']) },
      },
    },
    '/api/v1/campaigns/{id}/contacts': {
      parameters: [id],
      post: {
        operationId: 'addCampaignContacts',
        summary: 'Add contacts by JSON or CSV: bad rows are reported, good rows kept',
        description:
          `JSON \`{contacts: [{to_number, variables?, timezone?}]}\` (at most ${MAX_CONTACTS_PER_UPLOAD} items, the 64 KiB body limit) or \`text/csv\` ` +
          `(at most ${MAX_CSV_BYTES} bytes, ${MAX_CONTACTS_PER_UPLOAD} data rows, ${MAX_CSV_ROW_CHARS} characters a line, ${MAX_CSV_COLUMNS} columns; RFC 4180 quoting): ` +
          'a header with a `to_number` column, an optional `timezone` column, every other column a variable (an empty cell is no value). ' +
          "Each row is checked on its own: a `to_number` libphonenumber reads (E.164, or national such as `(415) 555-0100` in the campaign's " +
          "`default_region`, else its caller ID's country), stored as E.164, one that cannot exist rejected with the reason (`too short`, `too long`, " +
          "`invalid length`, `invalid country calling code`, `not a number`); a `timezone` Intl knows, and variables that match the bot's declared ones " +
          '(every required one, no other); a bad row is listed in `rejected` (`row` is its 1-based position, the CSV header not counted; `field` ' +
          'names the cell) and never blocks the good ones. A number already in the campaign, or earlier in the upload, counts as a duplicate. ' +
          'Whole-upload problems answer 422 `validation_failed`: no contacts, an unknown field, too many rows; for CSV a missing header or ' +
          '`to_number` column, a repeated or empty column name, an unclosed quote, a line or column count over the limits (`field` `csv`, ' +
          '`csv.header[.N]` or `csv.row.N`). Contacts can be added to a draft, running or paused campaign (else 409 `conflict`).',
        security: [{ adminJwt: [] }],
        requestBody: {
          required: true,
          content: {
            ...(requestJson(ContactsUpload) as object),
            'text/csv': { schema: { type: 'string', description: 'CSV text with a header line' } },
          },
        },
        responses: {
          200: ok('What was added', ContactsResult),
          ...errors([...ADMIN, ...BODY, 'not_found', 'conflict'], {
            payload_too_large: `JSON bodies at most 64 KiB, CSV bodies at most ${MAX_CSV_BYTES} bytes`,
            unsupported_media_type: 'The body is neither `application/json` nor `text/csv`',
            conflict: 'The campaign is completed or canceled, or another upload to it is still running',
          }),
        },
      },
      get: {
        operationId: 'listCampaignContacts',
        summary: "A campaign's contacts in upload order, with their attempts and call ids, with cursor pagination",
        description: 'An unknown query parameter is refused (422 `validation_failed` naming it).',
        security: [{ adminJwt: [] }],
        parameters: [{ name: 'status', in: 'query', schema: { type: 'string', enum: [...CONTACT_STATUSES] } }, ...page('contact')],
        responses: { 200: ok('A page of contacts', ContactPage), ...errors([...ADMIN, 'not_found', 'validation_failed']) },
      },
    },
    '/api/v1/campaigns/{id}/contacts.csv': {
      parameters: [id],
      get: {
        operationId: 'exportCampaignContacts',
        summary: "Every contact of a campaign with its last call's outcome, as a CSV download",
        description:
          'The rows of `GET /api/v1/campaigns/{id}/contacts` (the same `status` filter and order: upload order), all of them in one file, ' +
          'streamed. Columns: `contact_id, to_number, status, attempts` (the count), `last_call_id, last_call_status, last_end_reason` (the ' +
          "last attempt's call: its record's status and end reason, which once it ended are the attempt's), `answered_by, amd_ms` (answering " +
          "machine detection on that call; empty when it did not run), `next_attempt_at`, then, for a bot with post-call analysis settings, " +
          '`analysis_status`, `analysis_summary` (when it asks for a summary), `analysis_success` (when it has a success criterion) and a ' +
          "`data_<field>` column per analysis field (that call's analysis), then a `var_<name>` column for each of the bot's " +
          'declared variables and each other variable name a contact holds (empty cells where a contact has none). RFC 4180: CRLF line ends; ' +
          'a field with a comma, double quote or line break is quoted, its quotes doubled; empty cells for nulls. Spreadsheet-safe: a cell ' +
          'starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `\'` (except a plain signed integer, such as an E.164 ' +
          'number). `limit` and `cursor` are not taken (422 `validation_failed`), nor any other unknown parameter.',
        security: [{ adminJwt: [] }],
        parameters: [{ name: 'status', in: 'query', schema: { type: 'string', enum: [...CONTACT_STATUSES] } }],
        responses: {
          200: {
            description: 'The CSV file (a header line, then one line per contact)',
            headers: { 'Content-Disposition': { description: '`attachment; filename="campaign-<id>-contacts.csv"`', schema: { type: 'string' } } },
            content: { 'text/csv': { schema: { type: 'string' } } },
          },
          ...errors([...ADMIN, 'not_found', 'validation_failed']),
        },
      },
    },
    '/api/v1/campaigns/{id}/start': transition(
      'startCampaign',
      'Start a draft campaign (`campaign.started` webhook)',
      'Checks the bot (exists, active) and the trunk first, with the dial-out codes.',
      botChecks,
    ),
    '/api/v1/campaigns/{id}/pause': transition('pauseCampaign', 'Pause a running campaign', 'No new dials; live calls are not cut, and their contacts settle as they end.'),
    '/api/v1/campaigns/{id}/resume': transition('resumeCampaign', 'Resume a paused campaign', 'Checks the bot (exists, active) and the trunk first, with the dial-out codes.', botChecks),
    '/api/v1/campaigns/{id}/cancel': transition(
      'cancelCampaign',
      'Cancel a campaign (final)',
      'Contacts not dialled yet become `canceled`; live calls are not cut, and their contacts end with their outcome (no retry).',
    ),
    '/api/v1/dnc': {
      post: {
        operationId: 'addDoNotCall',
        summary: 'Add numbers to the do-not-call list',
        description: 'The dialler checks the list right before each campaign dial (contact `skipped_dnc`). Numbers already listed count as duplicates.',
        security: [{ adminJwt: [] }],
        requestBody: body(DncAdd),
        responses: { 200: ok('What was added', DncAdded), ...errors([...ADMIN, ...BODY]) },
      },
      get: {
        operationId: 'listDoNotCall',
        summary: 'The do-not-call list, newest first, with cursor pagination (`number` looks one up)',
        description: 'An unknown query parameter is refused (422 `validation_failed` naming it).',
        security: [{ adminJwt: [] }],
        parameters: [{ name: 'number', in: 'query', schema: { type: 'string', minLength: 1, maxLength: PHONE_NUMBER_INPUT_MAX_LENGTH }, description: 'only this number (E.164, or international with punctuation)' }, ...page('entry')],
        responses: { 200: ok('A page of numbers', DncPage), ...errors([...ADMIN, 'validation_failed']) },
      },
    },
    '/api/v1/dnc/{number}': {
      parameters: [{ name: 'number', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: PHONE_NUMBER_INPUT_MAX_LENGTH }, description: 'E.164 number (URL-encode the `+` as `%2B`); other international formats are normalised' }],
      delete: {
        operationId: 'deleteDoNotCall',
        summary: 'Remove a number from the do-not-call list',
        security: [{ adminJwt: [] }],
        responses: { 204: { description: 'Removed' }, ...errors([...ADMIN, 'not_found', 'validation_failed']) },
      },
    },
  };
}
