// The test call's logic: the worker's data messages decoded, the call's states, and the messages shown.
import {
  CONNECTION_LOST_MESSAGE,
  decodeEvent,
  dtmfCode,
  endMessage,
  initialState,
  isKey,
  KEYPAD_KEYS,
  keyLabel,
  MIC_DENIED_MESSAGE,
  NO_CAPACITY_MESSAGE,
  reduce,
  startErrorMessage,
  suggestedValue,
  type CallAction,
  type CallState,
} from './testCall.js';

const bytes = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
const run = (actions: CallAction[], from: CallState = initialState()) => actions.reduce(reduce, from);
const live = () => run([{ type: 'start' }, { type: 'created', callId: 'c1' }, { type: 'event', event: { type: 'started', call_id: 'c1' } }]);
const said = (s: CallState) => s.lines.map((l) => [l.role, l.text, l.final]);

describe('decodeEvent', () => {
  it('decodes the WebSocket protocol’s shapes from bytes or text', () => {
    expect(decodeEvent(bytes({ type: 'started', call_id: 'c1' }))).toEqual({ type: 'started', call_id: 'c1' });
    expect(decodeEvent(bytes({ type: 'transcript', role: 'bot', text: 'Hello', final: true }))).toEqual({ type: 'transcript', role: 'bot', text: 'Hello', final: true });
    expect(decodeEvent('{"type":"transcript","role":"user","text":"how","final":false}')).toEqual({ type: 'transcript', role: 'user', text: 'how', final: false });
    expect(decodeEvent(bytes({ type: 'ended', reason: 'bot_hangup' }))).toEqual({ type: 'ended', reason: 'bot_hangup' });
    expect(decodeEvent(bytes({ type: 'error', code: 'stt_failed', message: 'STT is down' }))).toEqual({ type: 'error', code: 'stt_failed', message: 'STT is down' });
  });

  it('keeps the keypad mark of a transcript (dtmf: true), and only a true one', () => {
    expect(decodeEvent(bytes({ type: 'transcript', role: 'user', text: '12', final: true, dtmf: true }))).toEqual({ type: 'transcript', role: 'user', text: '12', final: true, dtmf: true });
    expect(decodeEvent(bytes({ type: 'transcript', role: 'bot', text: '1*9', final: true, dtmf: true }))).toMatchObject({ role: 'bot', dtmf: true });
    expect(decodeEvent(bytes({ type: 'transcript', role: 'user', text: '12', final: true, dtmf: 'yes' }))).not.toHaveProperty('dtmf');
    expect(decodeEvent(bytes({ type: 'transcript', role: 'user', text: 'hi', final: true, dtmf: false }))).not.toHaveProperty('dtmf');
  });

  it('ignores anything else', () => {
    for (const bad of ['not json', '[]', 'null', '{"type":"pong"}', '{"type":"transcript","role":"agent","text":"x"}', '{"type":"started"}', '{"type":"ended","reason":3}']) {
      expect(decodeEvent(bad)).toBeNull();
    }
  });
});

describe('the call’s states', () => {
  it('goes starting → waiting (call created) → live (started)', () => {
    let s = reduce(initialState(), { type: 'start' });
    expect(s.phase).toBe('starting');
    s = reduce(s, { type: 'created', callId: 'c1' });
    expect([s.phase, s.callId]).toEqual(['waiting', 'c1']);
    s = reduce(s, { type: 'event', event: { type: 'started', call_id: 'c1' } });
    expect(s.phase).toBe('live');
  });

  it('keeps final lines in order and updates an interim line in place until it is final', () => {
    let s = live();
    s = run(
      [
        { type: 'event', event: { type: 'transcript', role: 'bot', text: 'Hello Alex.', final: true } },
        { type: 'event', event: { type: 'transcript', role: 'user', text: 'how', final: false } },
        { type: 'event', event: { type: 'transcript', role: 'user', text: 'how much', final: false } },
      ],
      s,
    );
    expect(said(s)).toEqual([
      ['bot', 'Hello Alex.', true],
      ['user', 'how much', false],
    ]);
    s = run(
      [
        { type: 'event', event: { type: 'transcript', role: 'bot', text: 'One moment.', final: true } },
        { type: 'event', event: { type: 'transcript', role: 'user', text: 'how much is it', final: true } },
        { type: 'event', event: { type: 'transcript', role: 'user', text: 'thanks', final: true } },
      ],
      s,
    );
    expect(said(s)).toEqual([
      ['bot', 'Hello Alex.', true],
      ['user', 'how much is it', true],
      ['bot', 'One moment.', true],
      ['user', 'thanks', true],
    ]);
    expect(new Set(s.lines.map((l) => l.id)).size).toBe(4);
  });

  it('drops an interim line whose final text is empty, and ignores empty lines', () => {
    let s = run([{ type: 'event', event: { type: 'transcript', role: 'user', text: 'uh', final: false } }], live());
    s = run([{ type: 'event', event: { type: 'transcript', role: 'user', text: ' ', final: true } }], s);
    expect(s.lines).toEqual([]);
  });

  it('ends with the worker’s reason, and drops interim text', () => {
    const s = run(
      [
        { type: 'event', event: { type: 'transcript', role: 'bot', text: 'Goodbye.', final: true } },
        { type: 'event', event: { type: 'transcript', role: 'user', text: 'by', final: false } },
        { type: 'speakers', bot: true, user: false },
        { type: 'event', event: { type: 'ended', reason: 'bot_hangup' } },
      ],
      live(),
    );
    expect(s).toMatchObject({ phase: 'ended', endReason: 'bot_hangup', message: 'The bot ended the call.', botSpeaking: false, callId: 'c1' });
    expect(said(s)).toEqual([['bot', 'Goodbye.', true]]);
    // What comes after the end (the room closing) changes nothing.
    expect(reduce(s, { type: 'disconnected', roomDeleted: false })).toBe(s);
    expect(reduce(s, { type: 'event', event: { type: 'transcript', role: 'bot', text: 'late', final: true } })).toBe(s);
  });

  it('a fatal pipeline error ends the call failed', () => {
    let s = reduce(live(), { type: 'event', event: { type: 'error', code: 'tts_failed', message: 'the voice is down' } });
    expect([s.phase, s.message]).toEqual(['live', 'The bot reported an error: the voice is down']);
    s = reduce(s, { type: 'event', event: { type: 'ended', reason: 'error:tts_failed' } });
    expect([s.phase, s.message]).toEqual(['failed', 'The call ended with an error (tts_failed).']);
  });

  it('hanging up ends the call as the caller; the room’s closing after it is no dropped connection', () => {
    let s = reduce(live(), { type: 'hangup' });
    expect(s).toMatchObject({ phase: 'ended', endReason: 'caller_hangup', message: 'You hung up.' });
    s = reduce(s, { type: 'disconnected', roomDeleted: false });
    expect(s.phase).toBe('ended');
  });

  it('a dropped connection fails the call; the worker deleting the room ends it', () => {
    expect(reduce(live(), { type: 'disconnected', roomDeleted: false })).toMatchObject({ phase: 'failed', message: CONNECTION_LOST_MESSAGE });
    expect(reduce(live(), { type: 'disconnected', roomDeleted: true })).toMatchObject({ phase: 'ended', message: 'The call has ended.' });
    const waiting = run([{ type: 'start' }, { type: 'created', callId: 'c1' }]);
    expect(reduce(waiting, { type: 'disconnected', roomDeleted: false }).phase).toBe('failed');
  });

  it('a start that fails shows why, and a new start clears the last call', () => {
    const failed = run([{ type: 'start' }, { type: 'failed', message: NO_CAPACITY_MESSAGE }]);
    expect(failed).toMatchObject({ phase: 'failed', message: NO_CAPACITY_MESSAGE, callId: null });
    const again = reduce(live(), { type: 'hangup' });
    const next = reduce(again, { type: 'start' });
    expect(next).toMatchObject({ phase: 'starting', callId: null, lines: [], message: null, endReason: null });
  });

  it('shows who is speaking during the call, never while muted', () => {
    let s = reduce(live(), { type: 'speakers', bot: true, user: true });
    expect([s.botSpeaking, s.userSpeaking]).toEqual([true, true]);
    s = reduce(s, { type: 'muted', muted: true });
    expect([s.muted, s.userSpeaking]).toEqual([true, false]);
    s = reduce(s, { type: 'speakers', bot: false, user: true });
    expect([s.botSpeaking, s.userSpeaking]).toEqual([false, false]);
    s = reduce(s, { type: 'muted', muted: false });
    expect(reduce(s, { type: 'speakers', bot: false, user: true }).userSpeaking).toBe(true);
    expect(reduce(initialState(), { type: 'speakers', bot: true, user: false }).botSpeaking).toBe(false);
  });
});

describe('the keypad', () => {
  const keys = (digits: string, from: CallState) => run([...digits].map((key) => ({ type: 'key' as const, key })), from);
  const dtmfLine = (role: 'user' | 'bot', text: string): CallAction => ({ type: 'event', event: { type: 'transcript', role, text, final: true, dtmf: true } });

  it('has a phone’s twelve keys with their RFC 4733 codes and spoken names', () => {
    expect(KEYPAD_KEYS.join('')).toBe('123456789*0#');
    expect(KEYPAD_KEYS.map(dtmfCode)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 11]);
    expect(['1', '0', '*', '#'].map((k) => keyLabel(k as never))).toEqual(['Key 1', 'Key 0', 'Key star', 'Key hash']);
    expect(['5', '*', '#'].every(isKey)).toBe(true);
    expect(['a', '12', '', ' ', 'A', '+'].some(isKey)).toBe(false);
  });

  it('shows the keys pressed during the call until the worker echoes them as a keypad turn', () => {
    let s = keys('12#', live());
    expect(s.pressed).toBe('12#');
    s = reduce(s, dtmfLine('user', '12'));
    expect(s.pressed).toBe('');
    expect(s.lines.map((l) => [l.role, l.text, l.final, l.dtmf])).toEqual([['user', '12', true, true]]);
    // Not a key, or not in a live call: nothing pressed.
    expect(reduce(live(), { type: 'key', key: 'x' }).pressed).toBe('');
    expect(keys('1', run([{ type: 'start' }, { type: 'created', callId: 'c1' }])).pressed).toBe('');
    expect(keys('1', reduce(live(), { type: 'hangup' })).pressed).toBe('');
    // At most 32 shown (the worker makes a turn of 32 keys at most).
    expect(keys('1234567890'.repeat(4), live()).pressed).toBe('1234567890'.repeat(4).slice(-32));
  });

  it('a keypad turn is a line of its own: an interim spoken line stays open, the bot’s keys do not clear the caller’s', () => {
    let s = run([{ type: 'event', event: { type: 'transcript', role: 'user', text: 'I want', final: false } }], keys('3', live()));
    s = reduce(s, dtmfLine('user', '3'));
    s = reduce(s, { type: 'event', event: { type: 'transcript', role: 'user', text: 'I want to pay', final: true } });
    expect(s.lines.map((l) => [l.role, l.text, l.final, l.dtmf])).toEqual([
      ['user', 'I want to pay', true, false],
      ['user', '3', true, true],
    ]);
    s = keys('4', s);
    s = reduce(s, dtmfLine('bot', '1*9'));
    expect(s.pressed).toBe('4');
    expect(s.lines.at(-1)).toMatchObject({ role: 'bot', text: '1*9', dtmf: true });
    expect(reduce(s, dtmfLine('user', ' ')).lines).toHaveLength(3);
  });

  it('says so when a key could not be sent, during the call only', () => {
    expect(reduce(live(), { type: 'keyFailed', message: 'not connected' }).message).toBe('A key could not be sent to the bot: not connected');
    const ended = reduce(live(), { type: 'hangup' });
    expect(reduce(ended, { type: 'keyFailed', message: 'not connected' })).toBe(ended);
  });
});

describe('messages', () => {
  it('explains why a call could not start', () => {
    expect(startErrorMessage({ status: 503, code: 'fleet_at_capacity', message: 'Every voice worker is busy.' })).toBe('No voice worker is free right now; try again in a moment.');
    expect(startErrorMessage(Object.assign(new Error('Permission denied'), { name: 'NotAllowedError' }))).toBe(MIC_DENIED_MESSAGE);
    expect(startErrorMessage(Object.assign(new Error('Requested device not found'), { name: 'NotFoundError' }))).toMatch(/^No microphone was found/);
    expect(startErrorMessage({ code: 'variables_mismatch', message: 'The variables do not match the bot’s declared variables (missing customer_name).' })).toBe(
      'The variables do not match the bot’s declared variables (missing customer_name).',
    );
    expect(startErrorMessage(undefined)).toBe('The test call could not start.');
  });

  it('says how the call ended', () => {
    expect(endMessage('caller_idle')).toBe('The call ended because no speech came from your microphone.');
    expect(endMessage('max_duration')).toBe('The call reached the bot’s maximum call length.');
    expect(endMessage('something_new')).toBe('The call has ended (something_new).');
    expect(endMessage(null)).toBe('The call has ended.');
  });

  it('prefills variables with values that fit their names', () => {
    const today = new Date('2026-03-04T10:00:00Z');
    expect(['customer_name', 'amount_due', 'due_date', 'email', 'phone_number', 'company', 'plan'].map((n) => suggestedValue(n, today))).toEqual([
      'Alex',
      '42',
      '2026-03-04',
      'test.caller@example.com',
      '+15555550100',
      'Acme',
      'test plan',
    ]);
  });
});
