// Calls: the record the API returns, the lifecycle events a worker posts, and the worker's create body
// for WebSocket / web test calls.
import { Type, type Static } from '@sinclair/typebox';
import { CallVariables } from './dialout.js';
import { RESOURCE_ID_PATTERN } from './formats.js';

export const CALL_STATUSES = ['queued', 'dialing', 'ringing', 'in_progress', 'completed', 'failed', 'busy', 'no_answer', 'canceled'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const TERMINAL_CALL_STATUSES: readonly CallStatus[] = ['completed', 'failed', 'busy', 'no_answer', 'canceled'];
/** Forward order: a call may only move to a status of a higher rank; every terminal status ranks 4. */
export const CALL_STATUS_RANK: Record<CallStatus, number> = {
  queued: 0,
  dialing: 1,
  ringing: 2,
  in_progress: 3,
  completed: 4,
  failed: 4,
  busy: 4,
  no_answer: 4,
  canceled: 4,
};
export const CALL_DIRECTIONS = ['outbound', 'inbound', 'websocket', 'web'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

export const CallStatusSchema = Type.Union(CALL_STATUSES.map((s) => Type.Literal(s)));
export const CallDirectionSchema = Type.Union(CALL_DIRECTIONS.map((d) => Type.Literal(d)));

const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** Most transcript entries one call keeps (the rest are dropped, oldest kept). */
export const MAX_TRANSCRIPT_ENTRIES = 500;
export const TranscriptEntry = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('bot')]),
    text: Type.String({ minLength: 1, maxLength: 4000 }),
    at: Type.String({ format: 'date-time' }),
    /** Keys, not words: the caller's keypad turn (user) or keys the bot sent (bot), docs/design.md §9. */
    dtmf: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TranscriptEntry = Static<typeof TranscriptEntry>;

/** Most actions one call keeps (docs/design.md §9). */
export const MAX_CALL_ACTIONS = 200;
// flow: a flow node entered (name: the node; arguments: from, via); handoff: the call handed to another bot (shared/DESIGN.md §18).
export const CALL_ACTION_TYPES = ['tool', 'transfer', 'dtmf_in', 'dtmf_out', 'control', 'flow', 'handoff'] as const;
/** One thing the bot did (or the caller pressed, or a supervisor asked: `control`) during a call: a tool it ran, a transfer, keys in or out. */
export const CallAction = Type.Object(
  {
    type: Type.Union(CALL_ACTION_TYPES.map((t) => Type.Literal(t))),
    name: Type.String({ minLength: 1, maxLength: 64 }),
    at: Type.String({ format: 'date-time' }),
    duration_ms: Type.Integer({ minimum: 0 }),
    status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** The tool's answer as text, at most 1000 characters (never a header value). */
    result: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    error: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CallAction = Static<typeof CallAction>;

/** Who answered an outbound call, when the bot listened first (docs/design.md §10). */
export const ANSWERED_BY = ['human', 'machine', 'fax', 'unknown'] as const;
export const AnsweredBy = Type.Union(ANSWERED_BY.map((a) => Type.Literal(a)));
export type AnsweredBy = Static<typeof AnsweredBy>;

/** A transfer of the call to a person (docs/design.md §9). */
export const CallTransfer = Type.Object(
  {
    mode: Type.Union([Type.Literal('cold'), Type.Literal('warm')]),
    target: Type.String({ minLength: 1, maxLength: 500 }),
    status: Type.Union([Type.Literal('accepted'), Type.Literal('failed')]),
    sip_status_code: Type.Union([Type.Integer({ minimum: 100, maximum: 699 }), Type.Null()]),
    at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type CallTransfer = Static<typeof CallTransfer>;

/** Post-call analysis (docs/design.md §10): `pending` until the dialler has worked it out, then `done`, `failed`
 *  (every attempt failed: `error` says why) or `skipped` (the caller never said or pressed anything). */
export const ANALYSIS_STATUSES = ['pending', 'done', 'failed', 'skipped'] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];
export const CallAnalysis = Type.Object(
  {
    status: Type.Union(ANALYSIS_STATUSES.map((s) => Type.Literal(s))),
    /** A few sentences on the call (the bot's analysis.summary); null otherwise or until done. */
    summary: Type.Union([Type.String(), Type.Null()]),
    /** Each of the bot's analysis fields by name: its value, null when the call did not tell; null until done. */
    data: Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])), Type.Null()]),
    /** Whether the bot's success criterion was met; null without a criterion, or when it could not be judged. */
    success: Type.Union([Type.Boolean(), Type.Null()]),
    /** Why the analysis failed (status failed); null otherwise. */
    error: Type.Union([Type.String(), Type.Null()]),
    completed_at: nullableTime,
  },
  { additionalProperties: false },
);
export type CallAnalysis = Static<typeof CallAnalysis>;

/** The fields that name a call, first in the call record and in every call.* webhook's `data` (webhooks.ts). */
export const callIdentityFields = {
  call_id: Type.String(),
  bot_id: Type.String(),
  direction: CallDirectionSchema,
  to_number: Type.Union([Type.String(), Type.Null()]),
  /** The caller ID presented (outbound) or the caller's number (inbound); null for browser and WebSocket calls. */
  from_number: Type.Union([Type.String(), Type.Null()]),
  status: CallStatusSchema,
};

/** Most turns one call reports (its first turns; docs/design.md §12 analytics, §16 turns). */
export const MAX_TURN_LATENCIES = 200;
/** Largest turn latency a call reports, ms (longer ones are reported as this). */
export const MAX_TURN_LATENCY_MS = 600_000;
const turnMs = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_TURN_LATENCY_MS, description });

/**
 * One turn of the call as the worker timed it (docs/design.md §16), on its own clock. The stage times are the
 * parts of the turn's critical path after the turn's end was decided, in order: the words (`stt_ms`), the
 * model's first sentence (`llm_first_token_ms`, tools apart), the first audio (`tts_first_audio_ms`); so
 * (decided_at − user_end_at) + stt + llm + tool + tts is the latency within a frame (20 ms). A reply prepared
 * during the caller's pause (`preemptive`) waited on none of them: its stages are 0.
 */
export const CallTurn = Type.Object(
  {
    /** 1 for the caller's first turn. */
    index: Type.Integer({ minimum: 1 }),
    /** The caller's words that ended the turn (as recognised). */
    user_text: Type.String({ maxLength: 2000 }),
    /** When the caller stopped speaking. */
    user_end_at: Type.String({ format: 'date-time' }),
    /** When the turn's end was decided (after the end-of-turn silence, or a whole utterance at a pause). */
    decided_at: Type.String({ format: 'date-time' }),
    stt_ms: turnMs('Decided → the final words.'),
    llm_first_token_ms: turnMs("The words → the model's first sentence, without the tools' time."),
    tts_first_audio_ms: turnMs('First sentence → its first audio.'),
    tool_ms: turnMs('Tools run before the first sentence.'),
    latency_ms: turnMs("The caller's end of speech → the bot's first audio sent (the turn latency of analytics)."),
    /** The reply was prepared during the caller's pause and played at once. */
    preemptive: Type.Boolean(),
    /** The caller cut the reply short (a barge-in). */
    interrupted: Type.Boolean(),
    /** The flow node the caller's words were heard in (bots with a flow, shared/DESIGN.md §18). */
    node: Type.Optional(Type.String({ maxLength: 48 })),
  },
  { additionalProperties: false },
);
export type CallTurn = Static<typeof CallTurn>;

export const Call = Type.Object(
  {
    ...callIdentityFields,
    variables: CallVariables,
    /** The bot's version the call ran (shared/DESIGN.md §17); null for calls placed before versions, or refused before one ran. */
    bot_version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    started_at: nullableTime,
    ended_at: nullableTime,
    end_reason: Type.Union([Type.String(), Type.Null()]),
    recording_key: Type.Union([Type.String(), Type.Null()]),
    recording_error: Type.Union([Type.String(), Type.Null()]),
    /** The final SIP response of a telephony call that failed to connect (486, 404, …); null otherwise. */
    sip_status_code: Type.Union([Type.Integer(), Type.Null()]),
    /** What was said, final transcripts in order (empty until the call ends). */
    transcript: Type.Array(TranscriptEntry),
    /** When each status was reached. */
    status_times: Type.Record(Type.String(), Type.String({ format: 'date-time' })),
    /** What the bot did during the call, in order (tools, transfer, keys). */
    actions: Type.Array(CallAction),
    /** The call's transfer to a person, if the bot made one. */
    transfer: Type.Union([CallTransfer, Type.Null()]),
    /** Answering machine detection's verdict (null: not detected). */
    answered_by: Type.Union([AnsweredBy, Type.Null()]),
    /** From the answer to the verdict, ms. */
    amd_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    /** Post-call analysis; null when the bot asks for none (docs/design.md §10). */
    analysis: Type.Union([CallAnalysis, Type.Null()]),
    /** Each turn's stage times, once the call ended (absent for calls that ended before turns were recorded). */
    turns: Type.Optional(Type.Array(CallTurn)),
  },
  { additionalProperties: false },
);
export type Call = Static<typeof Call>;

/** `POST /api/v1/calls/{id}/events` (worker token). */
/** A call event's id: letters, digits and `._:-`, as a request id. */
export const CALL_EVENT_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';


export const CallEvent = Type.Object(
  {
    status: CallStatusSchema,
    /** The worker's id for this event, the same on every retry of it: an event already applied is not applied again. */
    event_id: Type.Optional(Type.String({ pattern: CALL_EVENT_ID_PATTERN })),
    at: Type.Optional(Type.String({ format: 'date-time' })),
    end_reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    recording_key: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    recording_error: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    sip_status_code: Type.Optional(Type.Integer({ minimum: 100, maximum: 699 })),
    transcript: Type.Optional(Type.Array(TranscriptEntry, { maxItems: MAX_TRANSCRIPT_ENTRIES })),
    /** Actions since the last event, appended to the call's (once per event id). Any status: a repeat of the current one carries them mid-call. */
    actions: Type.Optional(Type.Array(CallAction, { maxItems: MAX_CALL_ACTIONS })),
    transfer: Type.Optional(CallTransfer),
    answered_by: Type.Optional(AnsweredBy),
    amd_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    /** With the end: each turn's latency (the caller's end of speech → the bot's first audio), ms, in order (analytics). */
    turn_latencies_ms: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: MAX_TURN_LATENCY_MS }), { maxItems: MAX_TURN_LATENCIES })),
    /** With the end: each turn's stage times, in order (the same latencies as turn_latencies_ms). */
    turns: Type.Optional(Type.Array(CallTurn, { maxItems: MAX_TURN_LATENCIES })),
  },
  { additionalProperties: false },
);
export type CallEvent = Static<typeof CallEvent>;

/** `POST /api/v1/calls` (worker token): a call the worker itself started (WebSocket or web widget). */
export const CallCreate = Type.Object(
  {
    bot_id: Type.String({ pattern: RESOURCE_ID_PATTERN }),
    direction: Type.Union([Type.Literal('websocket'), Type.Literal('web')]),
    variables: Type.Optional(CallVariables),
    /** A bot test's call (from its test-call token): the call answers its tools with the case's mocks. */
    test: Type.Optional(Type.Object({ run_id: Type.String({ pattern: RESOURCE_ID_PATTERN }), case_id: Type.String({ pattern: RESOURCE_ID_PATTERN }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type CallCreate = Static<typeof CallCreate>;

/** What a supervisor may ask of a live call (docs/design.md §16, `POST /api/v1/calls/{id}/control`). */
export const CALL_CONTROL_TYPES = ['say', 'instruct', 'transfer', 'end'] as const;
export type CallControlType = (typeof CALL_CONTROL_TYPES)[number];
/** Longest text a supervisor has the bot say or gives the model. */
export const MAX_CONTROL_TEXT = 1000;

export const CallControl = Type.Object(
  {
    type: Type.Union(CALL_CONTROL_TYPES.map((t) => Type.Literal(t)), {
      description: '`say`: the bot says `text` now (what it was saying is cut short); `instruct`: the model reads `text` before its next reply (the scripted policy ignores it); `transfer`: the call goes to `to` (cold); `end`: the bot hangs up',
    }),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_CONTROL_TEXT, description: 'For `say` and `instruct`' })),
    to: Type.Optional(Type.String({ pattern: '^(\\+[1-9][0-9]{6,14}|sips?:[^\\s]{3,250})$', description: 'For `transfer`: an E.164 number or a sip: URI' })),
  },
  { additionalProperties: false },
);
export type CallControl = Static<typeof CallControl>;

export const CallControlAccepted = Type.Object(
  {
    call_id: Type.String(),
    type: Type.Union(CALL_CONTROL_TYPES.map((t) => Type.Literal(t))),
    /** When the worker running the call was told (it acts on it at once). */
    at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type CallControlAccepted = Static<typeof CallControlAccepted>;

/** What the backend publishes to the worker running a call (Redis pub/sub on `callControlChannel(id)`). */
export interface CallControlMessage extends CallControl {
  /** Who asked: `user:<email>` or `key:<id>` (the call's timeline shows it). */
  by: string;
  at: string;
}
/** The channel the worker running call `id` listens on for supervisors' controls. */
export const callControlChannel = (id: string): string => `vp:call:${id}:control`;

/**
 * A listener's audio (docs/design.md §16, `GET /api/v1/calls/{id}/listen`): the worker running the call publishes
 * each frame of both sides on `callListenChannel(id)` while someone listens, as one byte naming the side
 * (LISTEN_SIDE) and the frame's PCM (16-bit little-endian, mono, the worker's AUDIO_SAMPLE_RATE, 16 kHz by
 * default); `LISTEN_END` alone when the call is over.
 */
export const LISTEN_SIDE = { caller: 0, bot: 1 } as const;
export const LISTEN_END = 0xff;
/** How long a worker keeps publishing after a listener's last renewal (the backend renews every third of it). */
export const LISTEN_RENEW_MS = 30_000;
export const callListenChannel = (id: string): string => `vp:call:${id}:listen`;
/** The internal control that starts (or keeps up) the audio for listeners, on the call's control channel. */
export interface CallListenRequest {
  type: 'listen';
  /** Epoch ms: publish until then unless renewed. */
  until: number;
}

/** `POST /api/v1/calls/{id}/listen-token`: a LiveKit token that may only subscribe, to hear a call in its room. */
export const CallListenToken = Type.Object(
  {
    call_id: Type.String(),
    room_name: Type.String(),
    livekit_url: Type.String(),
    /** Joins the call's room hidden: subscribe only (no publishing, no data), never seen by the call. */
    access_token: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type CallListenToken = Static<typeof CallListenToken>;
/** How long a listen token may be used to join (the listener stays once joined). */
export const LISTEN_TOKEN_TTL_SECONDS = 300;
