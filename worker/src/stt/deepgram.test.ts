import { concatPcm } from '../audio/pcm.js';
import { silence, speech } from '../../testing/audio.js';
import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import { retryPolicy } from '../providers/retry.js';
import type { ProviderError } from '../providers/errors.js';
import { DeepgramStt } from './deepgram.js';
import { openSttSession, type SttListener } from './stt.js';

let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

const stt = () =>
  new DeepgramStt({ url: `${cloud.url.replace('http', 'ws')}/v1/listen`, apiKey: 'dg-local', model: 'nova-2', language: 'en-US', sampleRate: 16000, timeoutMs: 2000 });
/** The STT stage's session around the provider: its retries and reconnects (PROVIDER_RETRIES 2). */
const staged = (listener: SttListener = {}) => openSttSession(stt(), listener, retryPolicy(2));

async function turn(pcm: Int16Array): Promise<string> {
  const session = await staged();
  for (let i = 0; i < pcm.length; i += 320) session.push(pcm.slice(i, i + 320));
  const text = await session.endOfTurn(new AbortController().signal);
  session.close();
  return text;
}

describe('Deepgram live streaming', () => {
  it('streams linear16 audio and returns the final transcript after Finalize', async () => {
    expect(await turn(speech('how much'))).toBe('how much');
    const conn = cloud.deepgram[0]!;
    expect(conn.auth).toBe('Token dg-local');
    const q = new URL(conn.url, 'ws://x').searchParams;
    expect(Object.fromEntries(q)).toMatchObject({ model: 'nova-2', language: 'en-US', encoding: 'linear16', sample_rate: '16000', channels: '1', interim_results: 'true' });
    expect(conn.audioBytes).toBe(speech('how much').length * 2);
    expect(conn.messages).toContain('Finalize');
  });

  it('declares resume turn: one session reports a dropped socket at once as stt_stream_broken', async () => {
    expect(stt().resume).toBe('turn');
    cloud.faults = ['break_mid_stream'];
    let reportError!: (err: ProviderError) => void;
    const failed = new Promise<ProviderError>((resolve) => (reportError = resolve));
    const session = await stt().open({ error: (err) => reportError(err) });
    const pcm = speech('how much');
    for (let i = 0; i < pcm.length; i += 320) session.push(pcm.slice(i, i + 320));
    expect(await failed).toMatchObject({ name: 'ProviderError', code: 'stt_stream_broken', retryable: true });
    await expect(session.endOfTurn(new AbortController().signal)).rejects.toMatchObject({ code: 'stt_stream_broken' });
    session.close();
    expect(cloud.deepgram.length).toBe(1); // the provider makes one attempt
  });

  it('the stage reconnects after a dropped socket and replays the turn: every word once', async () => {
    cloud.faults = ['break_mid_stream'];
    const pcm = speech('how much');
    const session = await staged();
    for (let i = 0; i < pcm.length; i += 320) session.push(pcm.slice(i, i + 320));
    // The reconnect happens in the background; the turn's end waits for it.
    const text = await session.endOfTurn(new AbortController().signal);
    session.close();
    expect(text).toBe('how much');
    expect(cloud.deepgram.length).toBe(2);
    expect(cloud.deepgram[1]!.audioBytes).toBeGreaterThan(16000);
  });

  it('delivers interim hypotheses in order before the final, skipping empty and unchanged ones', async () => {
    const events: string[] = [];
    const session = await stt().open({ interim: (text) => events.push(`interim:${text}`) });
    // Silence first (empty interims), then speech, then silence again (the last hypothesis repeated).
    const pcm = concatPcm([silence(300), speech('how much'), silence(500)]);
    for (let i = 0; i < pcm.length; i += 320) session.push(pcm.slice(i, i + 320));
    events.push(`final:${await session.endOfTurn(new AbortController().signal)}`);
    session.close();

    const sent = cloud.deepgram[0]!.results;
    const interims = sent.filter((r) => !r.isFinal).map((r) => r.transcript);
    expect(interims.filter((t) => t === '').length).toBeGreaterThan(0);
    expect(interims.filter((t) => t === 'how much').length).toBeGreaterThan(1);
    expect(sent.at(-1)).toEqual({ transcript: 'how much', isFinal: true });
    expect(events).toEqual(['interim:how', 'interim:how much', 'final:how much']);
  });

  it('reports a lost connection at once when the reconnects are refused, before the turn ends', async () => {
    cloud.faults = ['break_mid_stream'];
    cloud.fault = 'http_500';
    let reportError!: (err: ProviderError) => void;
    const failed = new Promise<ProviderError>((resolve) => (reportError = resolve));
    const session = await staged({ error: (err) => reportError(err) });
    const pcm = speech('how much');
    for (let i = 0; i < pcm.length; i += 320) session.push(pcm.slice(i, i + 320));
    // No endOfTurn yet: the failure surfaces without it.
    const err = await failed;
    expect(err).toMatchObject({ code: 'stt_unavailable', message: expect.stringContaining('2 reconnects failed') });
    expect(err.message).toContain('HTTP 503');
    expect(cloud.deepgram.length).toBe(1);
    await expect(session.endOfTurn(new AbortController().signal)).rejects.toBe(err);
    session.close();
  });

  it('fails the turn with stt_unavailable when every reconnect fails', async () => {
    cloud.fault = 'break_mid_stream';
    await expect(turn(speech('how much'))).rejects.toMatchObject({ code: 'stt_unavailable' });
  });

  it('retries a refused handshake before the first byte; a rejected key fails at once with stt_auth', async () => {
    cloud.faults = ['http_500'];
    expect(await turn(speech('how much'))).toBe('how much');
    expect(cloud.deepgram.length).toBe(1);
    cloud.reset();
    cloud.fault = 'http_401';
    await expect(staged()).rejects.toMatchObject({ code: 'stt_auth', status: 401, retryable: false });
  });
});
