import { concatPcm } from '../audio/pcm.js';
import { recognise, speech } from '../../testing/audio.js';
import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import { ttsStage } from '../../testing/stages.js';
import { retryPolicy } from '../providers/retry.js';
import { ElevenLabsTts, type ElevenLabsTtsOptions } from './elevenlabs.js';

let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

const tts = (o: Partial<ElevenLabsTtsOptions> = {}) =>
  new ElevenLabsTts({ baseUrl: cloud.url, apiKey: 'xi-local', voiceId: 'JBFqnCBsd6RMkjVDRZzb', speed: 1.1, timeoutMs: 5000, ...o });
async function collect(it: AsyncIterable<Int16Array>, chunks: Int16Array[] = []): Promise<Int16Array> {
  for await (const c of it) chunks.push(c);
  return concatPcm(chunks);
}
const go = () => new AbortController().signal;

describe('ElevenLabs streaming speech', () => {
  it('sends the documented request and streams 16 kHz PCM in order', async () => {
    const provider = tts();
    expect(provider.sampleRate).toBe(16000);
    const pcm = await collect(provider.synthesize('stop calling', go()));
    expect(cloud.requests).toHaveLength(1);
    expect(cloud.requests[0]).toMatchObject({
      path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream?output_format=pcm_16000',
      body: { text: 'stop calling', model_id: 'eleven_flash_v2_5', voice_settings: { stability: 0.5, similarity_boost: 0.75, speed: 1.1 } },
    });
    expect(cloud.requests[0]!.headers['xi-api-key']).toBe('xi-local');
    // Every sample, in order, across the stand-in's odd-sized chunks.
    expect(pcm).toEqual(speech('stop calling', 16000));
    expect(recognise(pcm, 16000, ['stop calling', 'how much'])).toBe('stop calling');
  });

  it('clamps a bot speed outside the range ElevenLabs accepts', async () => {
    await collect(tts({ speed: 2 }).synthesize('how much', go()));
    await collect(tts({ speed: 0.25 }).synthesize('how much', go()));
    expect(cloud.requests.map((r) => r.body.voice_settings.speed)).toEqual([1.2, 0.7]);
  });

  it('retries a sentence from its start when the connection fails before any audio', async () => {
    const whole = await collect(tts().synthesize('what amount', go()));
    cloud.requests.length = 0;
    cloud.faults = ['refuse', 'http_500'];
    const retried = await ttsStage(tts(), 'what amount');
    expect(cloud.requests.length).toBe(3);
    expect(retried.error).toBeNull();
    expect(retried.audio).toEqual(whole);
  });

  it('declares resume none: a stream broken after audio is not retried, nothing is repeated or spliced', async () => {
    expect(tts().resume).toBe('none');
    const whole = await collect(tts().synthesize('what amount', go()));
    cloud.requests.length = 0;
    cloud.faults = ['break_mid_stream'];
    const r = await ttsStage(tts(), 'what amount');
    expect(r.error).toMatchObject({ code: 'tts_stream_broken', fatal: true, message: expect.stringContaining('not retried') });
    expect(cloud.requests.length).toBe(1);
    expect(r.audio.length).toBeGreaterThan(0);
    expect(r.audio.length).toBeLessThan(whole.length);
    expect(r.audio).toEqual(whole.subarray(0, r.audio.length)); // each sample once, in order
  });

  it('fails with tts_unavailable once the retries are spent', async () => {
    cloud.fault = 'http_500';
    expect((await ttsStage(tts(), 'x')).error).toMatchObject({ code: 'tts_unavailable', message: expect.stringContaining('failed after 3 attempts') });
    expect(cloud.requests.length).toBe(3);
  });

  it('fails at once with tts_auth on a rejected key', async () => {
    await expect(collect(tts({ apiKey: 'xi-wrong' }).synthesize('x', go()))).rejects.toMatchObject({ name: 'ProviderError', code: 'tts_auth', retryable: false, status: 401 });
    cloud.requests.length = 0;
    expect((await ttsStage(tts({ apiKey: 'xi-wrong' }), 'x')).error).toMatchObject({ code: 'tts_auth', message: expect.stringContaining('invalid_api_key') });
    expect(cloud.requests.length).toBe(1);
  });

  it('times out a server that never answers, within the retries', async () => {
    const silent = await import('node:http').then(({ createServer }) => createServer(() => undefined));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const started = Date.now();
      expect((await ttsStage(tts({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 300 }), 'x', retryPolicy(1))).error).toMatchObject({
        code: 'tts_unavailable',
        message: expect.stringMatching(/failed after 2 attempts: elevenlabs stream: no data for 300 ms/),
      });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('stops at once when the caller barges in', async () => {
    const abort = new AbortController();
    const played: Int16Array[] = [];
    for await (const c of tts().synthesize('the open amount is forty dollars', abort.signal)) {
      played.push(c);
      abort.abort();
    }
    expect(played).toHaveLength(1);
  });
});
