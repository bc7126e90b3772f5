// The OpenAPI paths of the calls (list, one call, its recording, the worker's reports), built by openapi.ts with
// its helpers.
import { Type, type TSchema } from '@sinclair/typebox';
import { Call as CallSchema, CallControl, CallControlAccepted, CallCreate, CallEvent, CALL_DIRECTIONS, CALL_STATUSES, CURSOR_PATTERN, type ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  ok: (description: string, schema: TSchema | object, headers?: object) => object;
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
  body: (schema: TSchema) => object;
  idParam: (description: string) => object;
  ADMIN: readonly ErrorCode[];
  BODY: readonly ErrorCode[];
  API_KEY: readonly ErrorCode[];
  /** A resource id's schema. */
  idSchema: object;
  timeParam: object;
  /** The note of 401 `unauthorized` for the worker token. */
  WORKER_TOKEN: Partial<Record<ErrorCode, string>>;
}

/** The headers of a recording's 200 and 206 answers. */
const RECORDING_HEADERS = {
  'Content-Length': { description: 'Bytes in this answer', schema: { type: 'integer', minimum: 0 } },
  'Accept-Ranges': { description: '`bytes`', schema: { type: 'string', enum: ['bytes'] } },
  ETag: { description: "The recording's version (for `If-Range`)", schema: { type: 'string' } },
};

// The call record as served, with what its fields mean for a CRM polling it.
const Call = {
  ...CallSchema,
  properties: {
    ...CallSchema.properties,
    end_reason: {
      ...CallSchema.properties.end_reason,
      description:
        'Why the call ended (null until it does). Telephony outcomes (status in brackets): `busy` [busy], `no_answer` [no_answer], ' +
        '`invalid_number` [failed], `sip_error` [failed], `callee_hangup` [completed], `bot_hangup` [completed], `max_duration` [completed]; ' +
        'WebSocket and browser calls also end with `caller_hangup`. Set by the backend: `enqueue_failed` (the job could not be queued), ' +
        '`not_claimed` (status `failed`: the dialler found the dial-out call still `queued` after QUEUED_CALL_TIMEOUT_SECONDS, i.e. no worker ' +
        'ever claimed its job), `not_started` (the same for a WebSocket or browser call its worker recorded but never started) and `worker_lost` (status `failed`: the worker running the call died; the callee was hung up).',
    },
    status_times: { ...CallSchema.properties.status_times, description: 'When each status was reached' },
  },
};
const CallPage = Type.Object({ items: Type.Array(Call), next_cursor: Type.Union([Type.String({ pattern: CURSOR_PATTERN }), Type.Null()]) });

export function callPaths(h: DocHelpers): Record<string, object> {
  return {
    '/api/v1/calls': {
      get: {
        operationId: 'listCalls',
        summary: 'List calls, newest first, with cursor pagination',
        security: [{ adminJwt: [] }],
        description: 'Each filter at most once and non-empty; an unknown query parameter is refused (422 `validation_failed` naming it).',
        parameters: [
          { name: 'bot_id', in: 'query', schema: h.idSchema },
          { name: 'status', in: 'query', schema: { type: 'string', enum: [...CALL_STATUSES] } },
          { name: 'direction', in: 'query', schema: { type: 'string', enum: [...CALL_DIRECTIONS] } },
          { name: 'created_after', in: 'query', schema: h.timeParam },
          { name: 'created_before', in: 'query', schema: h.timeParam },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
          {
            name: 'cursor',
            in: 'query',
            schema: { type: 'string', pattern: CURSOR_PATTERN },
            description:
              '`next_cursor` of the previous page, with the same filters: `<created_at in ms>.<call id>` of the last call of that page; ' +
              'the page starts after that call',
          },
        ],
        responses: { 200: h.ok('A page of calls', CallPage), ...h.errors([...h.ADMIN, 'validation_failed']) },
      },
      post: {
        operationId: 'createCall',
        summary: 'Worker: record a call it started itself (WebSocket or web widget test call)',
        security: [{ workerToken: [] }],
        requestBody: h.body(CallCreate),
        responses: { 201: h.ok('The call', Call), ...h.errors(['unauthorized', ...h.BODY, 'bot_not_found', 'bot_inactive', 'variables_mismatch'], h.WORKER_TOKEN) },
      },
    },
    '/api/v1/calls/{id}': {
      parameters: [h.idParam('Call id')],
      get: {
        operationId: 'getCall',
        summary: 'One call (an API key sees only the calls it placed)',
        security: [{ apiKey: [] }, { adminJwt: [] }],
        responses: {
          200: h.ok('The call', Call),
          ...h.errors([...h.API_KEY, 'unauthorized', 'token_expired', 'call_not_found']),
        },
      },
    },
    '/api/v1/calls/{id}/recording': {
      parameters: [h.idParam('Call id')],
      get: {
        operationId: 'getCallRecording',
        summary: "The call's recording (stereo WAV: callee left, bot right), streamed from object storage",
        description:
          'Read with the rights of `GET /api/v1/calls/{id}`: an admin token, or the API key that placed the call (another key\'s call: 404 ' +
          '`call_not_found`). 404 `recording_not_found` when the call has none (`recording_key` null: not answered, not recorded, or the upload ' +
          'failed: see `recording_error`) or it is no longer in object storage. `Range` (RFC 9110) takes one byte range, `bytes=a-b`, `bytes=a-` ' +
          'or the last n bytes `bytes=-n`: 206 with exactly those bytes and `Content-Range: bytes a-b/<size>` (an end past the file is cut to ' +
          'it); a range that starts past the end (or `-0`) is 416 `range_not_satisfiable` with `Content-Range: bytes */<size>`; several ranges, ' +
          'or a header that does not parse, are ignored (200, the whole file). `If-Range` with another `ETag` than the recording\'s: the whole ' +
          'file. HEAD answers the same headers without the body. Object storage that does not answer within STORAGE_TIMEOUT_MS (or is not ' +
          'configured) is 503 `service_unavailable` naming `storage` in `details.failed`; a store that stalls once the data flows cuts the ' +
          'answer short (fewer bytes than `Content-Length`).',
        security: [{ apiKey: [] }, { adminJwt: [] }],
        parameters: [
          { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'One byte range: `bytes=0-1023`, `bytes=1024-` or `bytes=-1024`' },
          { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' }, description: 'The `ETag` a range was read from: another one gets the whole file' },
        ],
        responses: {
          200: { description: 'The whole recording', headers: RECORDING_HEADERS, content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } } },
          206: {
            description: 'The requested bytes of the recording',
            headers: { ...RECORDING_HEADERS, 'Content-Range': { description: '`bytes a-b/<size>`', schema: { type: 'string', pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$' } } },
            content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } },
          },
          ...h.errors([...h.API_KEY, 'unauthorized', 'token_expired', 'call_not_found', 'recording_not_found', 'range_not_satisfiable', 'service_unavailable'], {
            service_unavailable: 'Object storage (`details.failed: ["storage"]`), MongoDB or Redis is unavailable, or object storage is not configured on this backend',
          }),
        },
      },
    },
    '/api/v1/calls/{id}/control': {
      parameters: [h.idParam('Call id')],
      post: {
        operationId: 'controlCall',
        summary: 'Steer a call in progress: the bot says something now, the model gets an instruction, the call is transferred or ended',
        description:
          'Live supervision (docs/design.md §16). `{"type":"say","text"}`: the bot says the text at once (cutting short what it was saying); ' +
          '`{"type":"instruct","text"}`: the model reads the text before its next reply (a scripted policy ignores it); `{"type":"transfer","to"}`: ' +
          'a cold transfer to an E.164 number or sip: URI; `{"type":"end"}`: the bot hangs up (`end_reason` `supervisor_ended`). The worker ' +
          'running the call acts at once; the control is on the call\'s timeline (an action of type `control`) and in the audit log ' +
          '(`call.control.<type>`). An admin token of an editor or more, or an API key with the scope `calls:control` (only for calls the ' +
          'key placed: another key\'s call is 404). A call not in progress on a worker (not answered yet, or over): 409 `call_not_active`.',
        security: [{ adminJwt: [] }, { apiKey: [] }],
        requestBody: h.body(CallControl),
        responses: {
          202: h.ok('The worker running the call was told', CallControlAccepted),
          ...h.errors([...h.ADMIN, ...h.API_KEY, ...h.BODY, 'call_not_found', 'call_not_active']),
        },
      },
    },
    '/api/v1/calls/{id}/events': {
      parameters: [h.idParam('Call id')],
      post: {
        operationId: 'callEvent',
        summary: 'Worker: report a lifecycle move',
        description:
          'Only forward moves (queued → dialing → ringing → in_progress → completed | failed | busy | no_answer | canceled); a terminal status ' +
          'is final. Repeating the current status is a no-op (it may add recording_key / recording_error). A terminal move releases the ' +
          "call's capacity reservation if it still exists; the `X-Slot-Released` header says whether this request released it. " +
          '`at` (default: the time of receipt) and each `transcript[].at` must be real RFC 3339 date-times (no leap second `:60`, no ' +
          "Feb 30) and may not lie before the call's `created_at`, nor `at` of a move before the call's last status time; the clocks of " +
          'the reporting machines may disagree by up to 60 s, so only times more than 60 s earlier are refused (422 `validation_failed` ' +
          'naming `at` or `transcript.N.at`; nothing is stored).',
        security: [{ workerToken: [] }],
        requestBody: h.body(CallEvent),
        responses: { 200: h.ok('The call after the move', Call), ...h.errors(['unauthorized', ...h.BODY, 'call_not_found', 'conflict'], { ...h.WORKER_TOKEN, conflict: 'Not a forward move' }) },
      },
    },
  };
}
