// Calls with Deepgram live STT (the local Deepgram-protocol server) over the worker's WebSocket: the
// caller sees interim user transcripts before the final one and the bot answers the final one only;
// a Deepgram connection lost mid-turn for good ends that call at once, not when the caller stops talking.
import { concatPcm } from '../audio/pcm.js';
import { silence, speech } from '../../testing/audio.js';
import { callUntil } from '../../testing/backend.js';
import { TestCaller, withTestCallToken, type ServerMsg } from '../../testing/client.js';
import { useCloudCalls } from '../../testing/cloud-calls.js';

const VARIABLES = { customer_name: 'Sam', amount_due: 'forty' };
const REPLY = 'The open amount is forty dollars.';

const suite = useCloudCalls(
  { name: 'deepgram stt', stt: { provider: 'deepgram', model: 'nova-2', language: 'en-US' } },
  (cloudUrl) => ({ DEEPGRAM_API_KEY: 'dg-local', DEEPGRAM_URL: `${cloudUrl.replace('http', 'ws')}/v1/listen` }),
  VARIABLES,
);
const call = () => suite.call();

const isTranscript = (role: string) => (m: ServerMsg) => m.type === 'transcript' && m.role === role;

describe('Deepgram live STT in a call', () => {
  it('sends interim user transcripts before the final one; the bot replies once, to the final', async () => {
    const { caller, callId } = await call();
    await caller.stream(concatPcm([speech('how much'), silence(800)]));
    await caller.until(() => caller.message('transcript', (m) => m.role === 'bot'), 'bot reply');
    // More of the caller's silence after the reply started: room for a second reply, if there were one.
    await caller.stream(silence(1500));
    caller.send({ type: 'stop' });
    await caller.closed;

    const user = caller.messages.filter(isTranscript('user'));
    expect(user).toEqual([
      { type: 'transcript', role: 'user', text: 'how', final: false },
      { type: 'transcript', role: 'user', text: 'how much', final: false },
      { type: 'transcript', role: 'user', text: 'how much', final: true },
    ]);
    expect(caller.messages.filter(isTranscript('bot'))).toEqual([{ type: 'transcript', role: 'bot', text: REPLY, final: true }]);
    const finalAt = caller.messages.findIndex((m) => isTranscript('user')(m) && m.final === true);
    expect(caller.messages.findIndex(isTranscript('bot'))).toBeGreaterThan(finalAt);
    expect(caller.messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(caller.audio.length).toBeGreaterThan(50);
    expect(suite.cloud.deepgram.length).toBe(1);
    expect(suite.cloud.deepgram[0]!.messages).toContain('Finalize');
    await callUntil(callId, (c) => c.status === 'completed', 'completed');
  });

  it('a connection dropped mid-turn with reconnects refused ends the call at once; another call goes on', async () => {
    const healthy = await call();
    // Only the failing call's streams from here on: its first one breaks, every reconnect is refused.
    suite.cloud.faults = ['break_mid_stream'];
    suite.cloud.fault = 'http_500';
    const failing = await call();

    const longTurn = speech('how much is the open amount on my account this month and when exactly is it due please');
    expect(longTurn.length / 16000).toBeGreaterThan(4); // seconds: far longer than the drop plus two refusals
    let turnSent = false;
    const streaming = failing.caller.stream(longTurn).then(() => (turnSent = true));
    const healthyTurn = healthy.caller.stream(concatPcm([speech('how much'), silence(800)]));

    await failing.caller.until(() => failing.caller.message('ended'), 'ended');
    expect(turnSent).toBe(false); // the caller was still talking
    expect(failing.caller.messages.slice(-2)).toEqual([
      { type: 'error', code: 'stt_unavailable', message: expect.stringContaining('reconnects failed') },
      { type: 'ended', reason: 'error:stt_unavailable' },
    ]);
    expect(failing.caller.messages.filter((m) => m.type === 'transcript' && m.final === true)).toEqual([]);
    await Promise.all([streaming, failing.caller.closed]);
    const bad = await callUntil(failing.callId, (c) => c.status === 'failed', 'failed');
    expect(bad.end_reason).toBe('error:stt_unavailable');

    await healthyTurn;
    await healthy.caller.until(() => healthy.caller.message('transcript', (m) => m.role === 'bot'), 'bot reply');
    healthy.caller.send({ type: 'stop' });
    await healthy.caller.closed;
    expect(healthy.caller.messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(healthy.caller.message('transcript', (m) => m.role === 'user' && m.final === true)).toMatchObject({ text: 'how much' });
    expect(healthy.caller.message('ended')).toEqual({ type: 'ended', reason: 'caller_hangup' });
    const good = await callUntil(healthy.callId, (c) => c.status === 'completed', 'completed');
    expect(good.end_reason).toBe('caller_hangup');
    // One stream per call plus the failing call's refused reconnects (which never became streams).
    expect(suite.cloud.deepgram.length).toBe(2);
  });

  it('a rejected key refuses the call at start: stt_auth and close 4500, not retried', async () => {
    suite.cloud.fault = 'http_401';
    const caller = new TestCaller(withTestCallToken(`${suite.w.wsUrl}/ws/${suite.bot}`));
    await caller.opened;
    caller.send({ type: 'start', variables: VARIABLES });
    expect(await caller.closed).toBe(4500);
    expect(caller.messages).toEqual([{ type: 'error', code: 'stt_auth', message: expect.stringContaining('HTTP 401') }]);
    expect(suite.cloud.deepgram.length).toBe(0);
  });
});
