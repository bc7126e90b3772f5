// Calls whose bot speaks with ElevenLabs (the local ElevenLabs-protocol server, reached through
// ELEVENLABS_BASE_URL): the greeting reaches the caller as audio and as the bot transcript; a refused
// connection is retried unheard; a rejected key ends the call with a clean tts_auth error; a stream that
// breaks after audio ends it with tts_stream_broken, never with a second rendition spliced in.
import { recognise, silence } from '../../testing/audio.js';
import { callUntil } from '../../testing/backend.js';
import type { TestCaller } from '../../testing/client.js';
import { useCloudCalls } from '../../testing/cloud-calls.js';

const VARIABLES = { customer_name: 'Sam', amount_due: 'forty' };
const GREETING = 'Hello Sam, this is your payment reminder.';
const replies = ['hello sam this is your payment reminder', 'the open amount is forty dollars', 'understood goodbye sam'];
const VOICE = 'JBFqnCBsd6RMkjVDRZzb';

const suite = useCloudCalls(
  {
    name: 'elevenlabs voice',
    greeting: 'Hello {{customer_name}}, this is your payment reminder.',
    voice: { provider: 'elevenlabs', voice_id: VOICE, speed: 1 },
  },
  (cloudUrl) => ({ ELEVENLABS_API_KEY: 'xi-local', ELEVENLABS_BASE_URL: cloudUrl }),
  VARIABLES,
);
const call = () => suite.call();

/**
 * Streams silence in real time until the bot has spoken and then been quiet for `quietMs`: long enough that
 * a loaded machine's hiccup in the paced audio is not taken for the end of the greeting.
 */
async function waitForBotToFinish(caller: TestCaller, quietMs = 1000): Promise<void> {
  await caller.until(() => caller.audio.length > 0, 'bot audio');
  while (performance.now() - caller.audio[caller.audio.length - 1]!.atMs < quietMs) await caller.stream(silence(100));
}

const speechRequests = () => suite.cloud.requests.filter((r) => r.path.startsWith('/v1/text-to-speech/'));

describe('a call with the ElevenLabs voice', () => {
  it('speaks the greeting through ElevenLabs: the caller gets the bot audio and transcript', async () => {
    const { caller, callId } = await call();
    await waitForBotToFinish(caller);
    expect(caller.message('transcript', (m) => m.role === 'bot')).toEqual({ type: 'transcript', role: 'bot', text: GREETING, final: true });
    expect(recognise(caller.botAudio(), 16000, replies)).toBe('hello sam this is your payment reminder');
    expect(speechRequests()).toHaveLength(1);
    expect(speechRequests()[0]).toMatchObject({
      path: `/v1/text-to-speech/${VOICE}/stream?output_format=pcm_16000`,
      headers: { 'xi-api-key': 'xi-local' },
      body: { text: GREETING, voice_settings: { speed: 1 } },
    });
    caller.send({ type: 'stop' });
    await caller.closed;
    expect(caller.messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'caller_hangup' });
    await callUntil(callId, (c) => c.status === 'completed', 'completed');
  });

  it('retries a refused connection before any audio; the caller hears the greeting once', async () => {
    suite.cloud.faults = ['refuse'];
    const { caller } = await call();
    await waitForBotToFinish(caller);
    expect(speechRequests()).toHaveLength(2);
    expect(caller.messages.filter((m) => m.type === 'transcript' && m.role === 'bot')).toHaveLength(1);
    expect(recognise(caller.botAudio(), 16000, replies)).toBe('hello sam this is your payment reminder');
    caller.send({ type: 'stop' });
    await caller.closed;
    expect(caller.messages.filter((m) => m.type === 'error')).toEqual([]);
  });

  it('a rejected key ends the call with tts_auth, without retrying', async () => {
    suite.cloud.elevenlabsKey = 'xi-rotated';
    const { caller, callId } = await call();
    await caller.closed;
    expect(caller.messages.slice(-2)).toEqual([
      { type: 'error', code: 'tts_auth', message: expect.stringContaining('HTTP 401') },
      { type: 'ended', reason: 'error:tts_auth' },
    ]);
    expect(caller.audio).toEqual([]);
    expect(speechRequests()).toHaveLength(1);
    const failed = await callUntil(callId, (c) => c.status === 'failed', 'failed');
    expect(failed.end_reason).toBe('error:tts_auth');
  });

  it('a stream that breaks after audio ends the call with tts_stream_broken: no retry, nothing spliced', async () => {
    suite.cloud.faults = ['break_mid_stream'];
    const { caller, callId } = await call();
    expect(await caller.closed).toBe(1000);
    expect(caller.messages.slice(-2)).toEqual([
      { type: 'error', code: 'tts_stream_broken', message: expect.stringContaining('not retried') },
      { type: 'ended', reason: 'error:tts_stream_broken' },
    ]);
    expect(speechRequests()).toHaveLength(1);
    const failed = await callUntil(callId, (c) => c.status === 'failed', 'failed');
    expect(failed.end_reason).toBe('error:tts_stream_broken');
  });
});
