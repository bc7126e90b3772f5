// The browser test call's logic without the browser: decoding the worker's data messages (topic
// `events`, the WebSocket protocol's JSON shapes), the call's state as a reducer, the messages the page
// shows, and the keypad (docs/design.md §9: what a key press sends). The page (pages/test-call-page.ts)
// only wires LiveKit events into `reduce`.

/** What the worker sends the caller (worker/src/transports/transport.ts ServerMessage). */
export type CallEvent =
  | { type: 'started'; call_id: string }
  /** `dtmf`: a keypad turn (the keys the caller pressed, or the bot's send_dtmf), not speech. */
  | { type: 'transcript'; role: 'user' | 'bot'; text: string; final: boolean; dtmf?: true }
  | { type: 'ended'; reason: string }
  | { type: 'error'; code: string; message: string };

/** The LiveKit data topic the worker publishes the call's events on. */
export const EVENTS_TOPIC = 'events';
/** The worker's identity in the call's room. */
export const BOT_IDENTITY = 'bot';

type Phase = 'idle' | 'starting' | 'waiting' | 'live' | 'ended' | 'failed';

interface TranscriptLine {
  id: number;
  role: 'user' | 'bot';
  text: string;
  final: boolean;
  /** Keys pressed, not words said. */
  dtmf: boolean;
}

export interface CallState {
  phase: Phase;
  callId: string | null;
  lines: TranscriptLine[];
  botSpeaking: boolean;
  userSpeaking: boolean;
  muted: boolean;
  /** Keys pressed on the keypad since the worker last echoed a keypad turn (it collects them to # or a pause). */
  pressed: string;
  /** The end reason from the worker's `ended` message (or `caller_hangup` when we hung up). */
  endReason: string | null;
  /** What went wrong or how the call ended, for the banner. */
  message: string | null;
  nextLineId: number;
}

export type CallAction =
  | { type: 'start' }
  | { type: 'created'; callId: string }
  | { type: 'event'; event: CallEvent }
  | { type: 'speakers'; bot: boolean; user: boolean }
  | { type: 'muted'; muted: boolean }
  /** A key of the keypad was pressed (and is being sent). */
  | { type: 'key'; key: string }
  /** A key could not be sent into the call. */
  | { type: 'keyFailed'; message: string }
  | { type: 'hangup' }
  /** The room connection closed. `roomDeleted`: the worker closed the room (its way of ending the call). */
  | { type: 'disconnected'; roomDeleted: boolean }
  | { type: 'failed'; message: string }
  | { type: 'reset' };

export const initialState = (): CallState => ({
  phase: 'idle',
  callId: null,
  lines: [],
  botSpeaking: false,
  userSpeaking: false,
  muted: false,
  pressed: '',
  endReason: null,
  message: null,
  nextLineId: 1,
});

export const NO_CAPACITY_MESSAGE = 'No voice worker is free right now; try again in a moment.';
export const MIC_DENIED_MESSAGE = 'The browser did not allow the microphone. Allow microphone access for this site and start the test call again.';
const NO_MIC_MESSAGE = 'No microphone was found. Connect one and start the test call again.';
export const CONNECTION_LOST_MESSAGE = 'The connection to the call was lost. The call has ended.';

/** A data message as a CallEvent; anything else (other topics' shapes, bad JSON) is null. */
export function decodeEvent(payload: Uint8Array | string): CallEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(typeof payload === 'string' ? payload : new TextDecoder().decode(payload));
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const m = value as Record<string, unknown>;
  const str = (k: string) => typeof m[k] === 'string';
  switch (m.type) {
    case 'started':
      return str('call_id') ? { type: 'started', call_id: m.call_id as string } : null;
    case 'transcript':
      if (!(m.role === 'user' || m.role === 'bot') || !str('text')) return null;
      return { type: 'transcript', role: m.role, text: m.text as string, final: m.final !== false, ...(m.dtmf === true ? { dtmf: true as const } : {}) };
    case 'ended':
      return str('reason') ? { type: 'ended', reason: m.reason as string } : null;
    case 'error':
      return str('code') ? { type: 'error', code: m.code as string, message: str('message') ? (m.message as string) : '' } : null;
    default:
      return null;
  }
}

const END_MESSAGES: Record<string, string> = {
  bot_hangup: 'The bot ended the call.',
  caller_hangup: 'You hung up.',
  max_duration: 'The call reached the bot’s maximum call length.',
  caller_idle: 'The call ended because no speech came from your microphone.',
  worker_shutdown: 'The voice worker shut down and ended the call.',
  connection_lost: 'The voice worker lost its connection to the call.',
};

/** How a call's end reason reads on the page. */
export function endMessage(reason: string | null): string {
  if (!reason) return 'The call has ended.';
  if (END_MESSAGES[reason]) return END_MESSAGES[reason]!;
  if (reason.startsWith('error:')) return `The call ended with an error (${reason.slice('error:'.length)}).`;
  return `The call has ended (${reason}).`;
}

/** Why a call could not start, from an API error (code + message), a getUserMedia error (name) or anything else. */
export function startErrorMessage(err: unknown): string {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  if (e.name === 'NotAllowedError' || e.name === 'SecurityError' || e.name === 'PermissionDeniedError') return MIC_DENIED_MESSAGE;
  if (e.name === 'NotFoundError' || e.name === 'DevicesNotFoundError' || e.name === 'OverconstrainedError') return NO_MIC_MESSAGE;
  if (e.code === 'fleet_at_capacity') return NO_CAPACITY_MESSAGE;
  if (e.code === 'service_unavailable') return 'Browser test calls are not available: the backend has no LiveKit settings.';
  if (typeof e.message === 'string' && e.message) return e.message;
  return 'The test call could not start.';
}

/** The call is under way (a hang-up button makes sense). */
export const inCall = (phase: Phase): boolean => phase === 'starting' || phase === 'waiting' || phase === 'live';

/** A transcript message: an interim line is updated in place until its final text arrives. */
function addTranscript(s: CallState, e: Extract<CallEvent, { type: 'transcript' }>): CallState {
  if (e.dtmf) {
    // A keypad turn is whole when it arrives: a line of its own, never the end of an interim spoken line.
    if (!e.text.trim()) return s;
    const line = { id: s.nextLineId, role: e.role, text: e.text, final: true, dtmf: true };
    return { ...s, lines: [...s.lines, line], nextLineId: s.nextLineId + 1, pressed: e.role === 'user' ? '' : s.pressed };
  }
  if (!e.text.trim() && !e.final) return s;
  let open = -1;
  for (let i = s.lines.length - 1; i >= 0; i--) {
    if (s.lines[i]!.role === e.role && !s.lines[i]!.final) {
      open = i;
      break;
    }
  }
  if (open >= 0) {
    const lines = s.lines.slice();
    // An empty final closes an interim that came to nothing.
    if (!e.text.trim()) lines.splice(open, 1);
    else lines[open] = { ...lines[open]!, text: e.text, final: e.final };
    return { ...s, lines };
  }
  if (!e.text.trim()) return s;
  return { ...s, lines: [...s.lines, { id: s.nextLineId, role: e.role, text: e.text, final: e.final, dtmf: false }], nextLineId: s.nextLineId + 1 };
}

const over = (s: CallState, phase: 'ended' | 'failed', endReason: string | null, message: string): CallState => ({
  ...s,
  phase,
  endReason,
  message,
  botSpeaking: false,
  userSpeaking: false,
  pressed: '',
  // Interim text that never became final is dropped: it was not said as shown.
  lines: s.lines.filter((l) => l.final),
});

export function reduce(s: CallState, a: CallAction): CallState {
  switch (a.type) {
    case 'start':
      return { ...initialState(), phase: 'starting', nextLineId: s.nextLineId };
    case 'reset':
      return { ...initialState(), nextLineId: s.nextLineId };
    case 'created':
      return s.phase === 'starting' ? { ...s, phase: 'waiting', callId: a.callId } : s;
    case 'failed':
      return inCall(s.phase) || s.phase === 'idle' ? over(s, 'failed', null, a.message) : s;
    case 'hangup':
      return inCall(s.phase) ? over(s, 'ended', 'caller_hangup', endMessage('caller_hangup')) : s;
    case 'disconnected':
      if (!inCall(s.phase)) return s;
      // The worker deletes the room when it ends the call; its `ended` message may not have arrived first.
      return a.roomDeleted ? over(s, 'ended', null, endMessage(null)) : over(s, 'failed', null, CONNECTION_LOST_MESSAGE);
    case 'muted':
      return { ...s, muted: a.muted, userSpeaking: a.muted ? false : s.userSpeaking };
    case 'speakers':
      return inCall(s.phase) ? { ...s, botSpeaking: a.bot, userSpeaking: a.user && !s.muted } : s;
    case 'key':
      // The last MAX_SHOWN_KEYS keys: the worker makes a turn of at most 32 anyway.
      return s.phase === 'live' && isKey(a.key) ? { ...s, pressed: (s.pressed + a.key).slice(-MAX_SHOWN_KEYS) } : s;
    case 'keyFailed':
      return s.phase === 'live' ? { ...s, message: `A key could not be sent to the bot: ${a.message}` } : s;
    case 'event': {
      if (!inCall(s.phase)) return s;
      const e = a.event;
      switch (e.type) {
        case 'started':
          return { ...s, phase: 'live', callId: s.callId ?? e.call_id };
        case 'transcript':
          return addTranscript(s, e);
        case 'ended':
          return over(s, e.reason.startsWith('error:') ? 'failed' : 'ended', e.reason, endMessage(e.reason));
        case 'error':
          // Fatal errors are followed by `ended`; until then the call goes on.
          return { ...s, message: `The bot reported an error: ${e.message || e.code}` };
      }
    }
  }
  return s;
}

/** A value to prefill a declared variable with, guessed from its name (the admin edits it anyway). */
export function suggestedValue(name: string, today: Date = new Date()): string {
  const n = name.toLowerCase();
  if (/e_?mail/.test(n)) return 'test.caller@example.com';
  if (/phone|mobile|msisdn/.test(n)) return '+15555550100';
  if (/date|day|due_on|deadline/.test(n)) return today.toISOString().slice(0, 10);
  if (/amount|price|total|balance|sum|cost|fee|due/.test(n)) return '42';
  if (/company|business|org/.test(n)) return 'Acme';
  if (/name/.test(n)) return 'Alex';
  if (/count|number|qty|quantity/.test(n)) return '1';
  return `test ${n.replace(/_/g, ' ')}`;
}

/** The keypad's keys, in the order a phone shows them (three a row). */
export const KEYPAD_KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'] as const;
export type KeypadKey = (typeof KEYPAD_KEYS)[number];
const MAX_SHOWN_KEYS = 32;

/** One key of the keypad (a single character of 0–9, * or #). */
export const isKey = (key: string): key is KeypadKey => (KEYPAD_KEYS as readonly string[]).includes(key);

/** RFC 4733 event codes of the keys (0–9 as themselves, * 10, # 11): LiveKit's publishDtmf takes code and key. */
export function dtmfCode(key: KeypadKey): number {
  return key === '*' ? 10 : key === '#' ? 11 : Number(key);
}

/** A key as a screen reader should say it (the button's accessible name). */
export const keyLabel = (key: KeypadKey): string => (key === '*' ? 'Key star' : key === '#' ? 'Key hash' : `Key ${key}`);
